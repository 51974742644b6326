"""The service's worker processes: short pieces of CPU work that an anonymous request may
cause (decoding a large body, checking a ruleset's TOML, integrating a forecast's places),
done in processes of their own, so that neither the service's loop nor the league's
thread (which share one interpreter lock) pays for them."""

from __future__ import annotations

import asyncio
import contextlib
import multiprocessing
import os
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from multiprocessing.connection import Connection
from typing import Any

from ..errors import InputError
from ..manager import DISABLE_ENV, PLUGINS_DIR_ENV
from .job import Busy, Refused, error_of, outcome_of

PASSED_ENV = (PLUGINS_DIR_ENV, DISABLE_ENV)
"""The environment a piece of work runs with, as the service has it when it asks (the
worker processes were forked when the first piece came)."""


def _serve(receive: Connection) -> None:
    """A worker process: run each ``(function, arguments, environment)`` it is sent, and
    send back its outcome (:func:`~.job.outcome_of`), until the pipe closes."""
    while True:
        try:
            function, arguments, environment = receive.recv()
        except (EOFError, OSError):
            return
        for name, value in environment.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        outcome = outcome_of(function, arguments)
        try:
            receive.send(outcome)
        except OSError:  # (the service is gone)
            return


class Worker:
    """Pieces of work run in at most ``processes`` worker processes, one piece at a time
    each, the rest waiting in order.

    Args:
        processes: the most pieces running at once (>= 1).
        queued: the most pieces waiting or running (429 beyond).
        timeout: seconds a piece may run; its process is then ended (503).
        method: the multiprocessing start method.
        preload: modules the forkserver imports before its first fork.
    """

    def __init__(
        self,
        processes: int = 1,
        *,
        queued: int = 32,
        timeout: float = 60.0,
        method: str = "forkserver",
        preload: Sequence[str] = (),
    ) -> None:
        self.processes = processes
        self.queued = queued
        self.timeout = timeout
        self._context = multiprocessing.get_context(method)
        if method == "forkserver" and preload:
            self._context.set_forkserver_preload(list(preload))
        self._threads = ThreadPoolExecutor(processes, thread_name_prefix="rankcraft-worker")
        self._idle: list[tuple[Any, Connection]] = []
        self._lock = threading.Lock()
        self._pending = 0
        self._closed = False

    async def run(self, function: Callable[..., Any], *arguments: Any) -> Any:
        """``function(*arguments)`` (a module-level function, its arguments and result
        picklable) in a worker process, awaited here.

        :raises Busy: ``queued`` pieces are waiting or running already.
        :raises Refused: the piece raised (its error, as the service answers it).
        """
        with self._lock:
            if self._pending >= self.queued:
                raise Busy(
                    f"the service has {self._pending} requests waiting for its worker "
                    "processes, the most it takes: try again later"
                )
            self._pending += 1
        environment = {name: os.environ.get(name) for name in PASSED_ENV}
        try:
            loop = asyncio.get_running_loop()
            kind, value = await loop.run_in_executor(
                self._threads, self._call, function, arguments, environment
            )
        finally:
            with self._lock:
                self._pending -= 1
        if kind == "error":
            raise Refused(value)
        return value

    def _call(
        self, function: Callable[..., Any], arguments: tuple[Any, ...], environment: Any
    ) -> tuple[str, Any]:
        """In one of the worker's threads: the piece sent to an idle process (or a new
        one), its outcome awaited at most ``timeout`` seconds."""
        process, send = self._take()
        try:
            send.send((function, arguments, environment))
            if not send.poll(self.timeout):
                self._end(process, send)
                error = TimeoutError(f"the work took longer than {self.timeout:g} s and was ended")
                return "error", error_of(error, 503)
            outcome: tuple[str, Any] = send.recv()
        except (EOFError, OSError) as exc:
            self._end(process, send)
            code = process.exitcode
            ended = RuntimeError(f"a worker process ended (exit code {code}): {exc}")
            return "error", error_of(ended, 500)
        with self._lock:
            if self._closed:
                self._end(process, send)
            else:
                self._idle.append((process, send))
        return outcome

    def _take(self) -> tuple[Any, Connection]:
        with self._lock:
            if self._closed:
                raise InputError("the service is stopping")
            if self._idle:
                return self._idle.pop()
        mine, theirs = self._context.Pipe()
        process = self._context.Process(  # type: ignore[attr-defined]
            target=_serve, args=(theirs,), name="rankcraft-worker", daemon=True
        )
        process.start()
        theirs.close()
        return process, mine

    @staticmethod
    def _end(process: Any, send: Connection) -> None:
        with contextlib.suppress(OSError):
            send.close()
        if process.is_alive():
            process.kill()
        process.join(5)

    def close(self) -> None:
        """End the idle worker processes (a busy one ends when its piece does)."""
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
        for process, send in idle:
            self._end(process, send)
        self._threads.shutdown(wait=False, cancel_futures=True)
