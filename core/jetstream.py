"""The two JetStream exchanges of ``rankcraft consume``, written for throughput on the
core NATS client (nats-py): pulling a durable consumer's messages in large batches, and
publishing events with their acknowledgements counted.

nats-py's ``PullSubscription.fetch`` waits for each message of a batch with its own
timer, and ``JetStreamContext.publish_async`` makes a future, a token and a callback per
message: at thousands of messages a second these cost more than the rating. Here:

- :class:`Puller` sends the consumer's pull requests itself (``CONSUMER.MSG.NEXT``), each
  with a reply subject of its own under one inbox whose subscription appends each
  delivery to a list; a batch ends when it is full or the server says the request is
  over (a status message on that request's subject), so a batch costs one timer, not
  one per message.
- :class:`Publisher` publishes each event with core NATS, its ``Nats-Msg-Id`` header
  and a reply subject per round; JetStream answers each with an acknowledgement (or an
  error) on that subject, which one subscription counts. A round is confirmed when every
  event of it is acknowledged: only then may the caller forget the events (remove them
  from its outbox). An error, a round not confirmed in time, or a server lost mid-way
  leaves them to be published again, JetStream dropping the copies it holds.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Sequence
from typing import Any

from .errors import RankcraftError
from .extras import missing

__all__ = ["Publisher", "Puller", "Round", "connect", "nats_client", "transient"]


class Puller:
    """Pulls the messages of one durable pull consumer (``stream``, ``durable``) over the
    connection ``nc``, in batches (:meth:`fetch`); :meth:`start` subscribes."""

    def __init__(self, nc: Any, stream: str, durable: str, api: str = "$JS.API") -> None:
        self.nc = nc
        self.next_subject = f"{api}.CONSUMER.MSG.NEXT.{stream}.{durable}"
        self.inbox = nc.new_inbox()
        self.asked = 0  # requests made: each has its own reply subject, inbox.N
        self.current = ""  # the reply subject of the request under way
        self.got: list[Any] = []  # deliveries not yet handed out, in order
        self.want = 0
        self.status: str | None = None  # the status that ended the last request
        self.ended = asyncio.Event()
        self.sub: Any = None
        self.ahead = False  # a request sent ahead (:meth:`fetch`) may be under way

    async def start(self) -> Puller:
        self.sub = await self.nc.subscribe(self.inbox + ".*", cb=self._on_msg)
        return self

    async def close(self) -> None:
        if self.sub is not None:
            await self.sub.unsubscribe()

    async def _on_msg(self, msg: Any) -> None:
        headers = msg.headers
        if headers is not None and not msg.reply:  # (a delivery has its ack subject)
            status = headers.get("Status")
            if status == "100":  # (an idle heartbeat)
                return
            if status:  # (the end of a request; an earlier one's is late: passed over)
                if msg.subject == self.current:
                    self.status = status
                    self.ended.set()
                return
        self.got.append(msg)
        if len(self.got) >= self.want:
            self.ended.set()

    async def fetch(self, batch: int, timeout: float, ahead: int = 0) -> list[Any]:
        """Up to ``batch`` messages, in the consumer's order: those the server has now,
        else the first to arrive within ``timeout`` seconds (with those arriving with
        them until the batch is full or the request expires). With ``ahead``, when the
        server holds more, up to that many more are asked for before this returns: they
        arrive while the caller works on these (the next call takes them).

        :raises nats.errors.TimeoutError: none arrived. :raises nats.errors.Error: the
            server ended the request with another status (the consumer deleted...)."""
        import nats

        loop = asyncio.get_running_loop()
        if self.ahead:  # (the request sent ahead brings the next batch: its end awaited)
            self.ahead = False
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.ended.wait(), timeout)
        # (from here: a request sent ahead and lost, in a server's restart, still leaves
        # this call its own requests and their time)
        deadline = loop.time() + timeout
        if len(self.got) < batch:
            await self._request(batch, deadline, True)
            if not self.got:
                await self._request(batch, deadline, False)
        if not self.got:
            if self.status not in (None, "404", "408"):
                raise nats.errors.Error(f"nats: pull request ended with status {self.status}")
            raise nats.errors.TimeoutError
        taken, self.got = self.got[:batch], self.got[batch:]
        if ahead > len(self.got) and taken[-1].metadata.num_pending > len(self.got):
            await self._ask(ahead, True)
            self.ahead = True
        return taken

    async def _request(self, batch: int, deadline: float, no_wait: bool) -> None:
        """Ask for the messages that fill ``batch`` and wait until they came, the server
        said it has no more (``no_wait``) or the request expired."""
        left = deadline - asyncio.get_running_loop().time()
        if left <= 0.01:
            return
        await self._ask(batch, no_wait, left)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.ended.wait(), left)

    async def _ask(self, batch: int, no_wait: bool, left: float = 0.0) -> None:
        """Send a request for the messages that fill ``batch`` (with ``no_wait``: those
        the server has now; else those arriving within ``left`` seconds)."""
        self.want, self.status = batch, None
        self.ended.clear()
        ask: dict[str, Any] = {"batch": batch - len(self.got)}
        if no_wait:
            ask["no_wait"] = True
        else:  # (the server ends it a little before the client gives up waiting)
            ask["expires"] = max(int((left - 0.05) * 1e9), 10_000_000)
        self.asked += 1
        self.current = f"{self.inbox}.{self.asked}"
        await self.nc.publish(self.next_subject, json.dumps(ask).encode(), reply=self.current)


class Round:
    """Events published together, on one reply subject: how many, how many
    acknowledged, the first error."""

    __slots__ = ("acked", "count", "done", "error", "reply")

    def __init__(self, reply: str, count: int) -> None:
        self.reply, self.count, self.acked = reply, count, 0
        self.error: str | None = None
        self.done = asyncio.Event()
        if count == 0:
            self.done.set()


class Publisher:
    """Publishes events to ``subject`` over the connection ``nc``, each with its
    ``Nats-Msg-Id``, JetStream's acknowledgements counted per :class:`Round`;
    :meth:`start` subscribes to them."""

    def __init__(self, nc: Any, subject: str) -> None:
        self.nc, self.subject = nc, subject
        self.prefix = nc.new_inbox()
        self.rounds: dict[str, Round] = {}
        self.made = 0
        self.sub: Any = None

    async def start(self) -> Publisher:
        self.sub = await self.nc.subscribe(self.prefix + ".*", cb=self._on_ack)
        return self

    async def _on_ack(self, msg: Any) -> None:
        found = self.rounds.get(msg.subject)
        if found is None or found.done.is_set():  # (a round given up, or failed)
            return
        data = msg.data
        if not data or (b'"error"' in data and "error" in json.loads(data)):
            said = msg.headers.get("Status") if msg.headers else None
            found.error = data.decode("utf-8", "replace") if data else f"status {said}"
            found.done.set()
            return
        found.acked += 1
        if found.acked >= found.count:
            found.done.set()

    async def send(self, events: Sequence[tuple[str, str]]) -> Round:
        """Publish ``events`` ((id, JSON text) each), in order, as one round (their
        acknowledgements arrive while the caller goes on)."""
        self.made += 1
        reply = f"{self.prefix}.{self.made}"
        made = self.rounds[reply] = Round(reply, len(events))
        publish, subject = self.nc.publish, self.subject
        try:
            for eid, text in events:
                await publish(subject, text.encode(), reply, {"Nats-Msg-Id": eid})
        except BaseException:
            del self.rounds[reply]
            raise
        return made

    async def confirm(self, sent: Round, timeout: float) -> None:
        """Wait until every event of ``sent`` is acknowledged.

        :raises nats.errors.TimeoutError: not within ``timeout`` seconds (a server away).
        :raises nats.errors.Error: JetStream refused one (the round is given up)."""
        import nats

        try:
            await asyncio.wait_for(sent.done.wait(), timeout)
        except TimeoutError:
            raise nats.errors.TimeoutError from None
        finally:
            self.rounds.pop(sent.reply, None)
        if sent.error is not None:
            raise nats.errors.Error(f"nats: an event was not stored: {sent.error}")

    def forget(self) -> None:
        """Give up every round under way (their events are published again)."""
        self.rounds.clear()


def nats_client() -> Any:
    """The ``nats`` package (nats-py), or the error naming the extra that installs it."""
    try:
        import nats
    except ImportError:
        raise missing("consuming from NATS JetStream needs", "nats-py", "stream") from None
    return nats


def transient(nats: Any) -> tuple[type[BaseException], ...]:
    """The errors of a connection lost or a server restarting (the client reconnects)."""
    return (TimeoutError, OSError, nats.errors.Error)


async def connect(nats: Any, url: str, say: Any = None, back: Any = None) -> Any:
    """A connection that reconnects for ever once made; the error if none is made.
    ``say``: where its errors and reconnections are told, one line each; ``back``:
    called on each reconnection."""

    async def told(what: str, error: BaseException | None = None) -> None:
        if say is not None:
            say(f"consume: NATS {what}{f': {error}' if error else ''}\n")

    async def on_error(error: Exception) -> None:
        await told("error", error)

    async def on_reconnect() -> None:
        if back is not None:
            back()
        await told("reconnected")

    try:
        return await nats.connect(
            url,
            connect_timeout=2,
            allow_reconnect=True,
            max_reconnect_attempts=-1,
            reconnect_time_wait=0.5,
            error_cb=on_error,
            reconnected_cb=on_reconnect,
            skip_subject_validation=True,  # (check_options refused spaces in subjects)
        )
    except (OSError, TimeoutError, nats.errors.Error) as exc:
        raise RankcraftError(f"no NATS server answers at {url}: {exc}") from None
