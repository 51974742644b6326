"""A league fed from NATS JetStream (``rankcraft consume``, docs/deploy.md).

A durable pull consumer reads one league's subject in the log's order, in batches of up
to ``batch`` messages. Each batch's valid matches are rated in ONE league transaction,
with the rating-change events written to the league's ``outbox`` in the same
transaction; then the batch is acknowledged (``AckPolicy.ALL``: the last message acks
them all), then its events are published to the events subject, each with a
``Nats-Msg-Id`` (``<subject>:<match id>:<player>``) against doubles, and removed from the
outbox once JetStream has acknowledged storing every one of them.

So a consumer that dies at any point loses nothing and doubles nothing: before the
commit, the batch is redelivered and rated; after it, the redelivered matches are passed
over (``skip_seen``: their ids are recorded) and the outbox, published first on start,
is published again, JetStream dropping the events it already holds. A message that is
not a valid match goes to the dead-letter subject, with the error naming the field, and
the consumer goes on. A late match (earlier than a player's latest) is placed at its
time where the ruleset says ``[history] late = "rerate"`` (as ``League.record`` does:
an edit of its own, its events put in the outbox after it, an edit's number kept in the
league's meta so that a consumer dying between the two puts them there on its next
start), and dead-lettered with the reason where it says ``"refuse"``.

For throughput (docs/performance.md, "Consuming from JetStream"): the events are written
from the entries the league kept while rating the batch (:mod:`rankcraft.ratingevents`),
not read back; the messages are pulled and the events published by
:mod:`rankcraft.jetstream` (one timer per batch, acknowledgements counted per round);
and a batch's events are published while the next batch is fetched and rated, the
outbox rows removed in the next transaction once all are acknowledged.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import os
import signal
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TextIO

import attrs

from .collector import collect, paused
from .engine import League, collecting
from .errors import InputError, LateMatchError, MatchError
from .io import parse_match
from .jetstream import Publisher, Puller, connect, nats_client, transient
from .model import Match
from .outboxing import Outbox
from .rated import compact_json
from .ratingevents import EventWriter, events_of, packed
from .relay import Relay, relay_possible
from .store.base import CONSUMED, FED_BY

KILL_ENV = "RANKCRAFT_CONSUME_KILL"
"""Tests only: ``commit`` or ``ack`` makes the consumer SIGKILL itself right after the
first batch's commit (before its acknowledgement) or after its acknowledgement (before
the outbox is published); ``relay``: the first relay process SIGKILLs itself when it is
handed its first round (:mod:`rankcraft.relay`)."""

LATE_EDIT = "consume_late_edit"
"""The meta key keeping the number of the last late edit whose events are in the outbox
(a consumer killed between placing a late match and keeping its events keeps them on its
next start)."""


@attrs.frozen
class ConsumeOptions:
    """What ``rankcraft consume`` reads and where it writes (see its ``--help``)."""

    nats: str
    stream: str
    subject: str
    batch: int = 10_000
    durable: str | None = None
    dead_letter: str | None = None
    events: str | None = None
    max_messages: int | None = None
    idle_exit: float | None = None
    ack_wait: float = 30.0
    fetch_wait: float = 1.0
    log_every: float = 5.0
    pack: int = 1
    relay: bool = True

    @property
    def dead_subject(self) -> str:
        return self.dead_letter or f"{self.subject}.dead"

    @property
    def events_subject(self) -> str:
        return self.events or f"{self.subject}.ratings"

    def durable_for(self, db: str) -> str:
        """``durable``, else a name derived from the database and the subject."""
        if self.durable:
            return self.durable
        if "://" not in db:
            db = os.path.abspath(db)
        return "rankcraft-" + hashlib.sha256(f"{db}\0{self.subject}".encode()).hexdigest()[:16]


def check_options(options: ConsumeOptions) -> None:
    """Refuse option values that would do nothing or something else than asked."""
    if not 1 <= options.batch <= 100_000:
        raise InputError(f"'--batch' must be a whole number in [1, 100000]: {options.batch}")
    if not 1 <= options.pack <= 10_000:
        raise InputError(f"'--pack' must be a whole number in [1, 10000]: {options.pack}")
    if options.max_messages is not None and options.max_messages < 1:
        raise InputError(f"'--max-messages' must be a whole number >= 1: {options.max_messages}")
    if options.idle_exit is not None and not options.idle_exit >= 0:
        raise InputError(f"'--idle-exit' must be a number of seconds >= 0: {options.idle_exit}")
    if not options.nats.startswith(("nats://", "tls://", "ws://", "wss://")):
        raise InputError(f"'--nats' must be a nats://HOST:PORT URL: {options.nats}")
    for name in ("stream", "subject", "durable", "dead_letter", "events"):
        value = getattr(options, name)
        if value is not None and (not value or any(c in value for c in " \t\r\n")):
            raise InputError(
                f"'--{name.replace('_', '-')}' must be a name without spaces: {value!r}"
            )


class _Refused(Exception):
    """A match the league refused inside a batch (its place in the batch's fresh list)."""

    def __init__(self, index: int, error: MatchError) -> None:
        super().__init__(str(error))
        self.index, self.error = index, error


_decode = json.JSONDecoder().decode


def decoded(msgs: Sequence[Any]) -> tuple[list[tuple[Any, Match]], list[tuple[Any, str]]]:
    """The messages that are matches, each with its match; the others with their error."""
    good, bad = [], []
    for msg in msgs:
        try:  # (UTF-8 text decoded, as json.loads does, without guessing its encoding)
            text = msg.data.decode()
            data = _decode(text[1:] if text[:1] == "\ufeff" else text)
        except ValueError as exc:
            bad.append((msg, f"not a JSON match: {exc}"))
            continue
        try:
            good.append((msg, parse_match(data)))
        except MatchError as exc:
            bad.append((msg, str(exc)))
    return good, bad


def _die_at(point: str) -> None:
    if os.environ.get(KILL_ENV) == point:
        os.kill(os.getpid(), signal.SIGKILL)


@attrs.define
class Counts:
    """What a consumer did: messages taken, matches rated, passed over, dead-lettered,
    events published (each acknowledged by JetStream; with ``pack``, the messages that
    carry them); ``lag``: messages behind at the last fetch."""

    consumed: int = 0
    rated: int = 0
    skipped: int = 0
    dead: int = 0
    published: int = 0
    lag: int | None = None
    started: float = attrs.field(factory=time.monotonic)

    def to_dict(self) -> dict[str, Any]:
        seconds = time.monotonic() - self.started
        rate = self.consumed / seconds if seconds > 0 else 0.0
        found = attrs.asdict(self, filter=lambda a, _: a.name != "started")
        return {**found, "seconds": round(seconds, 3), "per_second": round(rate, 1)}

    def line(self) -> str:
        d = self.to_dict()
        lag = "?" if self.lag is None else f"{self.lag:,}"
        return (
            f"consume: {self.consumed:,} messages ({d['per_second']:,.0f}/s), "
            f"{self.rated:,} rated, {self.skipped:,} passed over, {self.dead:,} dead, "
            f"{self.published:,} events published, lag {lag}\n"
        )


class Consumer:
    """One league's consumer (:func:`consume` runs it)."""

    def __init__(self, league: League, options: ConsumeOptions, db: str, log: TextIO | None):
        self.league, self.options, self.log = league, options, log
        self.durable = options.durable_for(db)
        self.counts = Counts()
        self.stopping = False
        self.last_delivery = 0  # the consumer sequence of the last message handled
        self.connected: Callable[[], bool] = lambda: True
        self.reconnected = -1e9  # (time.monotonic() of the last reconnection)
        self._logged = time.monotonic()
        self.writer = EventWriter(league.skill_class, league.rank_class, options.subject)
        self.rerates = league.ruleset.history.late == "rerate"
        self.nc: Any = None
        self.outbox: Any = None  # (an Outbox once connected)

    def _reconnected(self) -> None:
        self.reconnected = time.monotonic()

    def stop(self) -> None:
        """Stop after the batch under way (SIGTERM)."""
        self.stopping = True

    async def run(self) -> Counts:
        nats = nats_client()
        self.nc = nc = await connect(nats, self.options.nats, self._write, self._reconnected)
        self.connected = lambda: bool(nc.is_connected)
        try:
            js = nc.jetstream()
            publisher = await self._publisher(nc)
            self.outbox = Outbox(self.league, publisher, self.counts)
            self._keep_late_events()  # (a late match placed by a consumer that died)
            await self.outbox.publish()  # (what a consumer killed after a commit left)
            sub = await self._subscribe(nats, js)
            with _on_sigterm(self.stop), paused():
                await self._loop(nats, js, sub)
            await self._publish_last(nats)
        finally:
            if isinstance(self.outbox and self.outbox.publisher, Relay):
                await self.outbox.publisher.stop()
            await nc.close()
        self._write(self.counts.line())
        return self.counts

    async def _publisher(self, nc: Any) -> Publisher | Relay:
        """Where the events are published: a relay process (:mod:`rankcraft.relay`),
        else this process's connection."""
        subject = self.options.events_subject
        if self.options.relay and relay_possible():
            return await Relay(self.options.nats, subject, self._write).start()
        return await Publisher(nc, subject).start()

    async def _subscribe(self, nats: Any, js: Any) -> Any:
        """Bind to the durable consumer, made again from its acknowledgement floor when
        it has deliveries not acknowledged (a consumer that died, a delivery lost in a
        reconnection): acknowledging a later batch would acknowledge them too (AckPolicy
        ALL), so they are read again, in order, the recorded ones passed over."""
        from nats.js.api import AckPolicy, ConsumerConfig, DeliverPolicy

        o = self.options
        try:
            info = await js.consumer_info(o.stream, self.durable)
        except nats.js.errors.NotFoundError:
            info = None
        if info is not None and info.config.filter_subject != o.subject:
            raise InputError(
                f"'--durable' {self.durable!r} reads {info.config.filter_subject!r}, "
                f"not {o.subject!r}"
            )
        clean = info is not None and not info.num_ack_pending
        if clean and info.delivered.stream_seq == info.ack_floor.stream_seq:
            self.last_delivery = info.delivered.consumer_seq
            return await Puller(self.nc, o.stream, self.durable).start()
        start = info.ack_floor.stream_seq if info is not None else 0
        if info is not None:
            await js.delete_consumer(o.stream, self.durable)
        config = ConsumerConfig(
            durable_name=self.durable,
            ack_policy=AckPolicy.ALL,
            deliver_policy=DeliverPolicy.BY_START_SEQUENCE if start else DeliverPolicy.ALL,
            opt_start_seq=start + 1 if start else None,
            max_ack_pending=-1,
            ack_wait=o.ack_wait,
            filter_subject=o.subject,
        )
        try:
            await js.add_consumer(o.stream, config)
        except nats.js.errors.NotFoundError:
            raise InputError(f"'--stream' names no stream on {o.nats}: {o.stream}") from None
        self.last_delivery = 0
        return await Puller(self.nc, o.stream, self.durable).start()

    async def _loop(self, nats: Any, js: Any, sub: Any) -> None:
        o, counts = self.options, self.counts
        idle_since = time.monotonic()
        wait = o.fetch_wait if o.idle_exit is None else min(o.fetch_wait, max(o.idle_exit, 0.2))
        while not self.stopping:
            want = o.batch
            if o.max_messages is not None:
                want = min(want, o.max_messages - counts.consumed)
                if want <= 0:
                    break
            try:
                more = o.batch if o.max_messages is None else o.max_messages - counts.consumed
                msgs = await sub.fetch(want, timeout=wait, ahead=min(o.batch, more - want))
            except transient(nats) as exc:
                timed_out = isinstance(exc, TimeoutError | nats.errors.TimeoutError)
                if not timed_out:
                    await asyncio.sleep(0.2)  # (the server restarting: the client reconnects)
                back = time.monotonic() - self.reconnected < 3  # (JetStream recovering)
                if not timed_out or not self.connected() or back:
                    idle_since = time.monotonic()  # (a server away is not an idle log)
                elif o.idle_exit is not None and time.monotonic() - idle_since >= o.idle_exit:
                    break
                await self._publish_quietly(nats)
                self._progress()
                continue
            idle_since = time.monotonic()
            first, last = msgs[0].metadata.sequence, msgs[-1].metadata.sequence
            if first.consumer != self.last_delivery + 1 or (
                last.consumer - first.consumer != len(msgs) - 1
            ):  # (a delivery went missing: before the batch, or within it)
                sub = await self._recover(nats, js, sub)
                continue
            self.last_delivery = last.consumer
            try:
                await self.handle(js, msgs)
            except transient(nats):  # (committed or not: read on from the floor)
                sub = await self._recover(nats, js, sub)
            self._progress()
            collect()

    async def _recover(self, nats: Any, js: Any, sub: Any) -> Any:
        """The subscription made again once the server answers (what was not
        acknowledged is read again, the recorded matches passed over)."""
        with contextlib.suppress(*transient(nats)):
            await sub.close()
        while True:
            await asyncio.sleep(0.2)
            with contextlib.suppress(*transient(nats)):
                return await self._subscribe(nats, js)

    async def handle(self, js: Any, msgs: Sequence[Any]) -> None:
        """Rate a batch, dead-letter its refused messages, acknowledge, publish."""
        good, bad = decoded(msgs)
        rated, skipped, refused, events, upto = self._commit(good)
        _die_at("commit")
        counts = self.counts
        counts.consumed += len(msgs)
        counts.rated += rated
        counts.skipped += skipped
        counts.dead += len(bad) + len(refused)
        counts.lag = msgs[-1].metadata.num_pending
        for msg, error in [*bad, *refused]:
            await self._dead_letter(js, msg, error)
        await msgs[-1].ack_sync()  # (AckPolicy.ALL: the whole batch)
        _die_at("ack")
        await self.outbox.send(events, upto)

    def _commit(
        self, good: list[tuple[Any, Match]]
    ) -> tuple[int, int, list[tuple[Any, str]], list[tuple[str, str]], int]:
        """Rate the batch's new matches and keep their events, in one transaction; a
        match the league refuses is taken out and the batch rated again without it; a
        late one, where the ruleset re-rates, is placed at its time (:meth:`_place`)
        after those before it are committed. Returns the matches rated, passed over,
        the refused messages with their errors, the last transaction's events and the
        number of its last outbox row."""
        refused: list[tuple[Any, str]] = []
        rated = skipped = 0
        while True:
            try:
                done, passed, events, upto = self._commit_once(good)
                return rated + done, skipped + passed, refused, events, upto
            except _Refused as exc:
                msg, match = good[exc.index]
                before, after = good[: exc.index], good[exc.index + 1 :]
                error: str | None = str(exc.error)
                if self.rerates and isinstance(exc.error, LateMatchError):
                    done, passed, _, _ = self._commit_once(before)  # (then it, on its own)
                    self.outbox.stale = True  # (several transactions: published from the store)
                    rated, skipped, before = rated + done, skipped + passed, []
                    error = self._place(match)
                    collect()  # (a re-rate leaves cycles)
                    rated += error is None
                if error is not None:
                    refused.append((msg, error))
                good = [*before, *after]

    def _commit_once(
        self, good: list[tuple[Any, Match]]
    ) -> tuple[int, int, list[tuple[str, str]], int]:
        league = self.league
        with league.batch():
            seen = league.store.recorded({m.id for _, m in good})
            fresh: list[tuple[Any, Match]] = []
            for item in good:  # (an id twice in a batch: the first one counts)
                if item[1].id not in seen:
                    seen.add(item[1].id)
                    fresh.append(item)  # (the same tuple: its place in good is found by it)
            try:
                with collecting(league) as entries:
                    league.record_many([m for _, m in fresh], skip_seen=True, close=False)
            except MatchError as exc:
                if exc.item is None:
                    raise
                index = next(i for i, g in enumerate(good) if g is fresh[exc.item])
                raise _Refused(index, exc) from None
            events = packed(self.writer.events(entries), self.options.pack)
            upto = self.outbox.keep(events)
            self._say(league, len(good))
        self.outbox.kept()
        return len(fresh), len(good) - len(fresh), events, upto

    def _place(self, match: Match) -> str | None:
        """Place a late match at its time (an edit of its own: ``League.record``), then
        keep its events; the error that refuses it, else None."""
        try:
            self.league.record(match)
        except InputError as exc:  # (a voided id; an edit the league cannot make...)
            return str(exc)
        self._keep_late_events()
        return None

    def _keep_late_events(self) -> None:
        """Keep in the outbox the events of the late matches placed since the edit whose
        number the league's meta keeps (:data:`LATE_EDIT`), and that number, in one
        transaction; on a first start the number of the league's last edit is kept."""
        league, store = self.league, self.league.store
        kept = store.get_meta(LATE_EDIT)
        edits = [e for e in league.edits() if kept is None or e.n > int(kept)]
        if not edits and kept is not None:
            return
        late = [e.match_id for e in edits if e.kind == "late"] if kept is not None else []
        with league.batch():
            if late:
                events = events_of(league, self.options.subject, late)
                self.outbox.keep(packed(events, self.options.pack))
                self.outbox.stale = True  # (published from the store, in order)
            store.set_meta(LATE_EDIT, str(max((e.n for e in edits), default=0)))
        self.outbox.kept()

    def _say(self, league: League, taking: int) -> None:
        """Keep in the league, in the batch's transaction, which log feeds it (the HTTP
        service refuses writes) and how the consumer is doing (``/health`` shows it)."""
        options = self.options
        log = f"{options.nats} {options.stream} {options.subject}"
        said = {**self.counts.to_dict(), "log": log, "taking": taking, "durable": self.durable}
        league.store.set_meta(FED_BY, log)
        league.store.set_meta(CONSUMED, json.dumps(said))

    async def _dead_letter(self, js: Any, msg: Any, error: str) -> None:
        seq = msg.metadata.sequence.stream
        envelope = {
            "error": error,
            "stream": self.options.stream,
            "subject": msg.subject,
            "stream_seq": seq,
            "data": msg.data.decode("utf-8", "replace"),
        }
        said = " ".join(error.split())[:1000]  # (a header is one line)
        headers = {"Nats-Msg-Id": f"dead:{self.options.stream}:{seq}", "Rankcraft-Error": said}
        await js.publish(
            self.options.dead_subject, compact_json(envelope).encode(), headers=headers
        )

    async def _publish_quietly(self, nats: Any) -> None:
        """The outbox published when the server is back (it keeps what it could not)."""
        with contextlib.suppress(*transient(nats)):
            await self.outbox.publish()

    async def _publish_last(self, nats: Any) -> None:
        """The outbox published before the consumer stops, the server given 10 s to come
        back; what is left is published by the next start."""
        deadline = time.monotonic() + 10
        while self.outbox.waiting() and time.monotonic() < deadline:
            await self._publish_quietly(nats)
            if self.outbox.waiting():
                await asyncio.sleep(0.2)
        if self.outbox.waiting():
            self._write("consume: events left in the outbox: the next start publishes them\n")

    def _progress(self) -> None:
        now = time.monotonic()
        if now - self._logged >= self.options.log_every:
            self._logged = now
            self._write(self.counts.line())

    def _write(self, text: str) -> None:
        if self.log is not None:
            self.log.write(text)
            self.log.flush()


@contextlib.contextmanager
def _on_sigterm(stop: Any) -> Iterator[None]:
    """SIGTERM calls ``stop`` (the batch under way is finished) while the loop runs."""
    loop = asyncio.get_running_loop()
    try:
        loop.add_signal_handler(signal.SIGTERM, stop)
    except (NotImplementedError, RuntimeError, ValueError):  # (not the main thread)
        yield
        return
    try:
        yield
    finally:
        loop.remove_signal_handler(signal.SIGTERM)


def consume(league: League, options: ConsumeOptions, db: str, log: TextIO | None) -> Counts:
    """Run a consumer on ``league`` until it is stopped (``max_messages``, ``idle_exit``,
    SIGTERM); what it did."""
    check_options(options)
    return asyncio.run(Consumer(league, options, db, log).run())


async def _preflight(options: ConsumeOptions) -> None:
    nats = nats_client()
    nc = await connect(nats, options.nats)
    js = nc.jetstream()
    try:
        try:
            await js.stream_info(options.stream)
        except nats.js.errors.NotFoundError:
            raise InputError(
                f"'--stream' names no stream on {options.nats}: {options.stream}"
            ) from None
        for option, subject in (
            ("--subject", options.subject),
            ("--events", options.events_subject),
            ("--dead-letter", options.dead_subject),
        ):
            try:
                await js.find_stream_name_by_subject(subject)
            except nats.js.errors.NotFoundError:
                raise InputError(
                    f"'{option}' is a subject no stream on {options.nats} takes (add it to "
                    f"a stream's subjects): {subject}"
                ) from None
    finally:
        await nc.close()


def preflight(options: ConsumeOptions) -> None:
    """Refuse options that name no stream, or subjects no stream takes (before the league
    is opened: a refused command creates nothing)."""
    check_options(options)
    asyncio.run(_preflight(options))


async def _status(league: League, options: ConsumeOptions, db: str) -> dict[str, Any]:
    nats = nats_client()
    nc = await connect(nats, options.nats)
    durable = options.durable_for(db)
    try:
        info = await nc.jetstream().consumer_info(options.stream, durable)
    except nats.js.errors.NotFoundError:
        raise InputError(
            f"no consumer {durable!r} on stream {options.stream!r} (the first "
            "`rankcraft consume` makes it)"
        ) from None
    finally:
        await nc.close()
    return {
        "stream": options.stream,
        "subject": options.subject,
        "durable": durable,
        "lag": info.num_pending,
        "ack_pending": info.num_ack_pending,
        "acked": info.ack_floor.consumer_seq if info.ack_floor else 0,
        "acked_stream_seq": info.ack_floor.stream_seq if info.ack_floor else 0,
        "matches": league.match_count,
        "outbox": len(league.store.outbox(1_000_000)),
    }


def status(league: League, options: ConsumeOptions, db: str) -> dict[str, Any]:
    """The consumer's lag (messages behind), acknowledged count and the league's matches."""
    check_options(options)
    return asyncio.run(_status(league, options, db))
