"""Publishing ``rankcraft consume``'s events from a second process (the relay), so that
rating and publishing run on two cores.

:class:`Relay` offers what :class:`rankcraft.jetstream.Publisher` offers the outbox
(:meth:`Relay.send` a round, :meth:`Relay.confirm` it, :meth:`Relay.forget` the rounds
under way) and hands each round to a child process over a pipe; the child publishes it
with a :class:`~rankcraft.jetstream.Publisher` on a NATS connection of its own, waits for
JetStream's acknowledgements and says which rounds were stored (or why not). The outbox
is unchanged: a round's rows leave the league's outbox only once the child has said that
JetStream acknowledged every event of it; a child that dies, or says nothing in time,
makes the outbox published again from the store (through a new child), JetStream
dropping the copies it holds (their ``Nats-Msg-Id``).

The child is forked (Linux) when the relay starts: it reads nothing of the league, has
no signal handler of its own (SIGTERM and SIGINT are for the consumer, which finishes
its batch and closes the pipe) and ends when the pipe closes, so a consumer killed with
SIGKILL leaves no child behind. Where fork is not the platform's way, the consumer
publishes in its own process (:func:`relay_possible`).
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import multiprocessing
import os
import pickle
import signal
import struct
import sys
import threading
from collections.abc import Callable, Sequence
from multiprocessing.connection import Connection
from typing import Any

from .jetstream import Publisher, Round, connect, nats_client, transient

__all__ = ["Relay", "relay_possible"]

_HEAD = struct.Struct("<cQ")
"""A frame from the child: its kind (``A``: a round stored, ``E``: a round refused, its
reason following; ``L``: a line for the log) and the round's number."""

HAND_WAIT = 30.0
"""Seconds a round may take to reach the child (a healthy one takes a 20,000-event round
in about 30 ms)."""
_SIGNALS = {signal.SIGTERM, signal.SIGINT}

MARGIN = 5.0
"""Seconds the consumer waits for a round beyond the child's own deadline (which starts
when the child has the round)."""


def relay_possible() -> bool:
    """Whether a relay can be forked here (Linux; elsewhere events are published by the
    consumer's own process)."""
    return sys.platform.startswith("linux")


class Relay:
    """The consumer's side of the relay: rounds handed to the child, their outcome read
    back. ``say``: where the child's log lines go."""

    def __init__(self, url: str, subject: str, say: Callable[[str], None]) -> None:
        self.url, self.subject, self.say = url, subject, say
        self.rounds: dict[int, Round] = {}
        self.made = 0
        self.started = 0  # children forked (a child that ended is replaced)
        self.writing: asyncio.Future[None] | None = None  # (a round being written)
        self.child: Any = None
        self.to_child: Connection | None = None
        self.from_child: Connection | None = None

    async def start(self) -> Relay:
        """Fork the child (its NATS connection is its own)."""
        context = multiprocessing.get_context("fork")
        down_r, down_w = context.Pipe(duplex=False)
        up_r, up_w = context.Pipe(duplex=False)
        # (tests only: the first child dies on its first round, see consume.KILL_ENV)
        dies = self.started == 0 and os.environ.get("RANKCRAFT_CONSUME_KILL") == "relay"
        self.child = context.Process(
            target=_child, args=(down_r, up_w, self.url, self.subject, dies), daemon=True
        )
        # (a signal in the child's first moments would reach the consumer's own handler
        # through asyncio's wake-up socket: held back until the child ignores them)
        held = signal.pthread_sigmask(signal.SIG_BLOCK, _SIGNALS)
        try:
            self.child.start()
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, held)
        self.started += 1
        down_r.close()
        up_w.close()
        self.to_child, self.from_child = down_w, up_r
        asyncio.get_running_loop().add_reader(up_r.fileno(), self._read)
        return self

    def _read(self) -> None:
        """What the child said: each round's outcome, log lines; its end fails the
        rounds under way."""
        conn = self.from_child
        assert conn is not None
        try:
            while conn.poll():
                frame = conn.recv_bytes()
                kind, number = _HEAD.unpack_from(frame)
                if kind == b"L":
                    self.say(frame[_HEAD.size :].decode())
                    continue
                found = self.rounds.get(number)
                if found is None or found.done.is_set():
                    continue
                if kind == b"A":
                    found.acked = found.count
                else:
                    found.error = frame[_HEAD.size :].decode()
                found.done.set()
        except (EOFError, OSError):
            self._lost("the relay process ended")

    def _lost(self, why: str) -> None:
        """The child is gone: every round under way fails (published again later)."""
        for sent in self.rounds.values():
            if not sent.done.is_set():
                sent.error = why
                sent.done.set()
        self._close_pipes()

    def _close_pipes(self) -> None:
        """Stop reading the child and close both pipes; the one to the child is left to
        the write under way, if any (:meth:`_hand` closes it when the write ends: closed
        under a writing thread, the connection fails in a way no caller expects)."""
        if self.from_child is not None:
            with contextlib.suppress(ValueError, OSError):
                asyncio.get_running_loop().remove_reader(self.from_child.fileno())
        for conn in (self.to_child, self.from_child):
            if conn is not None and not (conn is self.to_child and self.writing is not None):
                with contextlib.suppress(OSError):
                    conn.close()
        self.to_child = self.from_child = None

    async def send(self, events: Sequence[tuple[str, str]]) -> Round:
        """Hand ``events`` ((id, JSON text) each) to the child as one round (a child that
        ended is forked again first)."""
        if self.to_child is None:
            await self.stop()
            await self.start()
        self.made += 1
        made = self.rounds[self.made] = Round(str(self.made), len(events))
        if events:
            frame = pickle.dumps((self.made, list(events)), pickle.HIGHEST_PROTOCOL)
            await self._hand(frame)
        return made

    async def _hand(self, frame: bytes) -> None:
        """Write ``frame`` to the child, from a thread (the pipe may be full while the
        child catches up; the consumer's loop goes on meanwhile). A child that has not
        taken it within :data:`HAND_WAIT` seconds is stuck: it is killed (the write then
        ends, its pipe broken), and what it had is published again through a new one.
        The pipe is closed only once no write is under way (:meth:`_close_pipes`)."""
        conn, child = self.to_child, self.child
        assert conn is not None
        writing = self.writing = asyncio.get_running_loop().run_in_executor(
            None, conn.send_bytes, frame
        )
        try:
            done, _ = await asyncio.wait({writing}, timeout=HAND_WAIT)
            if not done:
                self._lost("the relay process was stuck (killed)")
                if child is not None:
                    child.kill()
                with contextlib.suppress(Exception):
                    await writing
                return
            writing.result()
        except (OSError, ValueError, TypeError):  # (the child ended while it was written)
            self._lost("the relay process ended")
        finally:
            self.writing = None
            if self.to_child is not conn:  # (closed meanwhile: its close was left to us)
                with contextlib.suppress(OSError):
                    conn.close()

    async def confirm(self, sent: Round, timeout: float) -> None:
        """Wait until the child says every event of ``sent`` is stored.

        :raises nats.errors.TimeoutError: not in time (a server away, a child stuck).
        :raises nats.errors.Error: JetStream refused one, or the child ended."""
        import nats

        try:
            await asyncio.wait_for(sent.done.wait(), timeout + MARGIN)
        except TimeoutError:
            raise nats.errors.TimeoutError from None
        finally:
            self.rounds.pop(int(sent.reply), None)
        if sent.error is not None:
            raise nats.errors.Error(f"nats: an event was not stored: {sent.error}")

    def forget(self) -> None:
        """Give up every round under way (their events are published again)."""
        self.rounds.clear()

    async def stop(self) -> None:
        """Close the pipe (the child ends) and wait for the child."""
        self._close_pipes()
        child, self.child = self.child, None
        if child is None:
            return
        for _ in range(100):  # (it closes its NATS connection first: up to 5 s)
            if not child.is_alive():
                break
            await asyncio.sleep(0.05)
        if child.is_alive():
            child.kill()
        # (the child closed multiprocessing's sentinel pipe with the rest it inherited,
        # so a join's timeout is not kept: it is called once the child is ended)
        child.join()


def _child(down: Connection, up: Connection, url: str, subject: str, dies: bool = False) -> None:
    """The relay process: publish the rounds read from ``down``, say on ``up`` how each
    went, until ``down`` closes."""
    # the consumer's signals are its own: it finishes its batch and closes the pipe
    signal.set_wakeup_fd(-1)
    for sig in _SIGNALS:
        signal.signal(sig, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, _SIGNALS)
    _close_inherited(down.fileno(), up.fileno())
    # what the consumer held when it forked is never the child's garbage: out of the
    # collector's walks (which would also copy every page of it); the child's own is
    # collected (a consumer pauses its collector, and a child forked then inherits that)
    gc.freeze()
    gc.enable()
    with contextlib.suppress(BaseException):
        asyncio.run(_serve(down, up, url, subject, dies))
    # (multiprocessing ends a forked child with os._exit: nothing of the consumer's,
    # its exit handlers or buffers, runs here)


def _close_inherited(*keep: int) -> None:
    """Close every descriptor the child inherited but ``keep`` (the consumer's NATS
    socket, its database files, its event loop's, the pipe ends that are the consumer's,
    its standard streams: on /dev/null instead), so that none outlives the consumer."""
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        if fd not in keep:
            os.dup2(null, fd)
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        if fd > 2 and fd not in keep:
            with contextlib.suppress(OSError):
                os.close(fd)


async def _serve(down: Connection, up: Connection, url: str, subject: str, dies: bool) -> None:
    def tell(kind: bytes, number: int, text: str = "") -> None:
        with contextlib.suppress(OSError):
            up.send_bytes(_HEAD.pack(kind, number) + text.encode())

    nats = nats_client()
    try:
        nc = await connect(nats, url, lambda line: tell(b"L", 0, line))
    except Exception as exc:  # (every round then fails: the consumer tries again later)
        tell(b"L", 0, f"consume: the relay cannot connect: {exc}\n")
        return
    loop = asyncio.get_running_loop()
    rounds: asyncio.Queue[bytes | None] = asyncio.Queue()
    threading.Thread(target=_reader, args=(down, loop, rounds), daemon=True).start()
    publisher = await Publisher(nc, subject).start()
    confirming: set[asyncio.Task[None]] = set()

    async def confirm(number: int, sent: Round) -> None:
        try:
            await publisher.confirm(sent, 2 + sent.count / 1000)
        except transient(nats) as exc:
            tell(b"E", number, str(exc) or type(exc).__name__)
            return
        tell(b"A", number)

    try:
        while (frame := await rounds.get()) is not None:
            number, events = pickle.loads(frame)
            if dies:
                os.kill(os.getpid(), signal.SIGKILL)
            try:
                sent = await publisher.send(events)
            except transient(nats) as exc:
                tell(b"E", number, str(exc) or type(exc).__name__)
                continue
            task = asyncio.create_task(confirm(number, sent))
            confirming.add(task)
            task.add_done_callback(confirming.discard)
    finally:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(nc.close(), 5)


def _reader(down: Connection, loop: asyncio.AbstractEventLoop, rounds: Any) -> None:
    """Read the rounds from the pipe as they come (the consumer never waits for the
    child's loop to take them); None once it closes."""
    while True:
        try:
            frame: bytes | None = down.recv_bytes()
        except (EOFError, OSError):
            frame = None
        with contextlib.suppress(RuntimeError):  # (the loop closed)
            loop.call_soon_threadsafe(rounds.put_nowait, frame)
        if frame is None:
            return
