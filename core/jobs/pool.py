"""The pool of jobs: long work run in processes of its own (at most ``workers`` at once,
the rest queued), with its progress, per-client limits, time limit and kept results."""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import multiprocessing
import multiprocessing.util  # (its exit handler registered before _end_all's)
import os
import secrets
import signal
import threading
import time
import weakref
from collections.abc import Callable, Sequence
from multiprocessing.connection import Connection
from typing import Any

from .job import Busy, Job, UnknownJob, error_of, outcome_of
from .shelf import Shelf


def _child(send: Connection, function: Callable[..., Any], arguments: tuple[Any, ...]) -> None:
    """A job's process: leads a process group of its own (so that ending the job ends
    the processes it starts too: :func:`_signal`), runs ``function(*arguments,
    progress)`` and sends its progress (at most ten times a second), then its result or
    its error, to the parent."""
    if hasattr(os, "setpgrp"):
        os.setpgrp()
    last = [0.0]

    def progress(done: int, total: int, stage: str) -> None:
        now = time.monotonic()
        if now - last[0] >= 0.1 or done >= total:
            last[0] = now
            send.send(("progress", done, total, stage))

    try:  # (whatever it raises is reported as the job's failure, not lost)
        send.send(outcome_of(function, (*arguments, progress)))
    finally:
        send.close()


def _signal(process: Any, number: int) -> None:
    """Send signal ``number`` to a job's process group (made by :func:`_child`: the job's
    process and whatever it started) or, while there is none yet, to its process alone.
    (A group of the job's process id is the job's: only that process can have made it.)"""
    if process.pid is None:
        return
    with contextlib.suppress(ProcessLookupError, PermissionError):
        if hasattr(os, "killpg"):
            try:
                os.killpg(process.pid, number)
                return
            except ProcessLookupError:  # (no group yet: it has started nothing)
                pass
        if process.is_alive():
            os.kill(process.pid, number)


Outcome = tuple[str, dict[str, Any]]
"""How a job ended: its state and the changes to its record (``result`` or ``error``)."""


def _follow(
    job: Job,
    process: Any,
    receive: Connection,
    timeout: float,
    shelve: Callable[[], None] | None,
) -> tuple[Outcome | None, bool]:
    """Take the messages of a job's process until it ends (or the job is ended, or runs
    past ``timeout`` seconds): its outcome (None: the job was ended meanwhile), and
    whether the process said how it ended. ``shelve()`` every half second (publishing
    the pool's open jobs)."""
    deadline = time.monotonic() + timeout
    published = 0.0
    while not job.ended:
        if shelve is not None and time.monotonic() - published > 0.5:
            published = time.monotonic()
            shelve()
            if job.ended:
                break
        if time.monotonic() > deadline:
            _signal(process, signal.SIGTERM)
            message = f"the job ran longer than {timeout:g} s and was ended"
            return ("failed", {"error": error_of(TimeoutError(message), 503)}), False
        if not receive.poll(0.2):
            continue
        try:
            message = receive.recv()
        except EOFError:  # the process ended without a word: killed, or crashed
            process.join(5)
            ended = RuntimeError(f"the job's process ended (exit code {process.exitcode})")
            return ("failed", {"error": error_of(ended, 500)}), False
        if message[0] == "progress":
            _, job.done, job.total, job.stage = message
        elif message[0] == "result":
            return ("done", {"result": message[1], "done": job.total}), True
        else:
            return ("failed", {"error": message[1]}), True
    return None, False


ENDED_KEPT = 4
"""Ended jobs kept (until ``keep`` runs out) per client and in all, as a multiple of the
pool's ``per_client`` and ``queued`` limits."""


_POOLS: weakref.WeakSet[JobPool] = weakref.WeakSet()


def _end_all() -> None:
    """At exit: end every running job's processes (a job's process is not daemonic, so
    multiprocessing would otherwise wait for it at exit). Registered after
    multiprocessing's own exit handler, so it runs before it."""
    for pool in list(_POOLS):
        for job in list(pool._jobs.values()):
            if job.process is not None:
                _signal(job.process, signal.SIGKILL)


atexit.register(_end_all)


class JobPool:
    """Jobs run in at most ``workers`` processes at once, the rest queued in order.

    Args:
        workers: the most jobs running at once (>= 1).
        per_client: the most unfinished (queued or running) jobs of one client.
        queued: the most unfinished jobs in all.
        keep: seconds an ended job (and its result) stays readable.
        timeout: seconds a job may run before it is ended (failed, status 503).
        method: the multiprocessing start method (``forkserver``: each job's process
            is forked from a clean server process, not from the threaded service).
        shelf: a :class:`Shelf` where the pool publishes its jobs, so that the other
            worker processes of the service can answer and cancel them.
        preload: modules the forkserver imports before it forks the first job's
            process (process-wide, and only before the forkserver has started): each job
            then starts without importing them (the lab: 0.4 against 0.15 s a job).
    """

    def __init__(
        self,
        workers: int = 1,
        *,
        per_client: int = 2,
        queued: int = 16,
        keep: float = 600.0,
        timeout: float = 3600.0,
        method: str = "forkserver",
        shelf: Shelf | None = None,
        preload: Sequence[str] = (),
    ) -> None:
        self.workers = workers
        self.per_client = per_client
        self.queued = queued
        self.keep = keep
        self.timeout = timeout
        self._context = multiprocessing.get_context(method)
        if method == "forkserver" and preload:
            # (the modules a job needs imported once, by the server, not by every job)
            self._context.set_forkserver_preload(list(preload))
        self._jobs: dict[str, Job] = {}
        self._lock = threading.Lock()
        self._closed = False
        self.shelf = shelf
        _POOLS.add(self)

    def submit(self, client: str, function: Callable[..., Any], *arguments: Any) -> Job:
        """Queue ``function(*arguments, progress)`` (a module-level function, whose
        arguments and result can be pickled; ``progress(done, total, stage)``) for
        ``client``.

        :raises Busy: the client, or the pool, has too many unfinished jobs.
        """
        with self._lock:
            self._forget_old()
            open_jobs = [j for j in self._jobs.values() if not j.ended]
            mine = sum(1 for j in open_jobs if j.client == client)
            if mine >= self.per_client:
                raise Busy(
                    f"you have {mine} lab jobs queued or running, the most one client may "
                    f"have (--lab-jobs-per-client {self.per_client}): wait for one to end "
                    "or cancel it"
                )
            if len(open_jobs) >= self.queued:
                raise Busy(
                    f"the service has {len(open_jobs)} lab jobs queued or running, the most "
                    "it takes: try again later"
                )
            job = Job(secrets.token_urlsafe(16), client, function, arguments)
            self._jobs[job.id] = job
            self._start_next()
        self._publish(job)
        return job

    def get(self, job_id: str) -> Job:
        """The job of this id.

        :raises UnknownJob: no such job (or it ended more than ``keep`` seconds ago).
        """
        with self._lock:
            self._forget_old()
            job = self._jobs.get(job_id)
        if job is None:
            raise UnknownJob(
                f"no lab job {job_id[:64]!r} (results are kept {self.keep:g} s after a job ends)",
                field="job_id",
            )
        return job

    def cancel(self, job_id: str) -> Job:
        """End the job: a queued one never starts, a running one's process is ended."""
        job = self.get(job_id)
        with self._lock:
            if not job.ended:
                self._end(job, "cancelled", stage="cancelled")
                if job.process is not None:  # (its watcher makes sure it is gone)
                    _signal(job.process, signal.SIGTERM)
                self._start_next()
            self._publish(job)  # under the lock, as in _watch
        return job

    def snapshot(self, job_id: str) -> dict[str, Any]:
        """The job as the service answers it (:meth:`Job.to_dict`), this pool's or,
        through the shelf, another worker's.

        :raises UnknownJob: neither holds it.
        """
        try:
            return self.get(job_id).to_dict()
        except UnknownJob:
            found = self.shelf.read(job_id) if self.shelf is not None else None
            if found is None:
                raise
            return found

    def cancel_anywhere(self, job_id: str) -> dict[str, Any]:
        """Cancel the job, this pool's at once, another worker's by asking it through the
        shelf (it ends the job within a second: poll for ``cancelled``)."""
        try:
            return self.cancel(job_id).to_dict()
        except UnknownJob:
            found = self.shelf.read(job_id) if self.shelf is not None else None
            if found is None or self.shelf is None:
                raise
            self.shelf.ask_cancel(job_id)
            return found

    async def wait(self, job_id: str, every: float = 0.05) -> Job:
        """The job once it has ended (polled every ``every`` seconds, not blocking)."""
        while not (job := self.get(job_id)).ended:
            await asyncio.sleep(every)
        return job

    def join(self, job_id: str, timeout: float) -> Job:
        """The job once it has ended, blocking at most ``timeout`` seconds (tests)."""
        deadline = time.monotonic() + timeout
        while not (job := self.get(job_id)).ended and time.monotonic() < deadline:
            time.sleep(0.02)
        return job

    def close(self) -> None:
        """Cancel every unfinished job; no more start."""
        with self._lock:
            self._closed = True
            jobs = [j for j in self._jobs.values() if not j.ended]
        for job in jobs:
            self.cancel(job.id)

    # -- under the lock ----------------------------------------------------------------

    def _forget_old(self) -> None:
        """Drop ended jobs past ``keep`` seconds, and the oldest ended ones beyond
        :data:`ENDED_KEPT` times the limits (per client and in all): a client that
        submits and cancels in a loop keeps no more than that in memory."""
        now = time.time()
        ended = sorted((j for j in self._jobs.values() if j.ended), key=lambda j: j.finished or now)
        per_client: dict[str, int] = {}
        drop = []
        for total, job in enumerate(reversed(ended), start=1):  # newest first
            per_client[job.client] = per_client.get(job.client, 0) + 1
            if (
                now - (job.finished or now) > self.keep
                or per_client[job.client] > ENDED_KEPT * self.per_client
                or total > ENDED_KEPT * self.queued
            ):
                drop.append(job.id)
        for job_id in drop:
            del self._jobs[job_id]
            if self.shelf is not None:
                self.shelf.remove(job_id)
        if self.shelf is not None:
            self.shelf.sweep()

    def _end(self, job: Job, state: str, **changes: Any) -> None:
        job.state = state
        job.finished = time.time()
        job.position = 0
        for name, value in changes.items():
            setattr(job, name, value)
        job.function, job.arguments = _ended, ()  # (the input is no longer needed)

    def _start_next(self) -> None:
        waiting = [j for j in self._jobs.values() if j.state == "queued"]
        running = sum(1 for j in self._jobs.values() if j.state == "running")
        starting = waiting[: max(0, self.workers - running)]
        for place, job in enumerate(waiting[len(starting) :]):
            job.position = running + len(starting) + place
        if self._closed:
            return
        for job in starting:
            job.state, job.started, job.stage, job.position = "running", time.time(), "starting", 0
            threading.Thread(
                target=self._watch, args=(job,), name=f"rankcraft-job-{job.id[:6]}", daemon=True
            ).start()

    # -- a job's watcher thread ----------------------------------------------------------

    def _watch(self, job: Job) -> None:
        """Start the job's process (pickling its input here, not on the service's loop),
        take its messages until it ends, and start the next job."""
        started = self._start_process(job)
        if started is None:
            return
        process, receive = started
        outcome: Outcome | None = None
        answered = False  # (the job's process said how it ended, its children ended)
        try:
            shelve = self._shelve_open if self.shelf is not None else None
            outcome, answered = _follow(job, process, receive, self.timeout, shelve)
        finally:
            self._finish(job, process, receive, outcome, answered)

    def _start_process(self, job: Job) -> tuple[Any, Connection] | None:
        """The job's process, started, and the end of the pipe it answers on; None when
        the job was cancelled while starting, or its process could not start (the job
        failed, reported)."""
        receive, send = self._context.Pipe(duplex=False)
        try:
            process = self._context.Process(  # type: ignore[attr-defined]
                # not daemonic: a lab job forks the processes that replay its rulesets
                # (rankcraft.processes); it leads their process group, which ending the job
                # ends (_signal), and the pool ends at exit (_end_all)
                target=_child,
                args=(send, job.function, job.arguments),
                daemon=False,
            )
            with self._lock:
                if job.ended:  # cancelled while starting
                    return None
                job.process = process
            process.start()
            if job.ended:  # cancelled while its process started
                _signal(process, signal.SIGTERM)
        except Exception as exc:  # the process could not start: the job fails, reported
            with self._lock:
                self._end(job, "failed", error=error_of(exc, 500), stage="failed")
                self._start_next()
            return None
        finally:
            send.close()
        return process, receive

    def _finish(
        self,
        job: Job,
        process: Any,
        receive: Connection,
        outcome: Outcome | None,
        answered: bool,
    ) -> None:
        """After the job's process: make sure it (and what it started, unless it said how
        it ended) is gone, end the job with its outcome and start the next one."""
        receive.close()
        process.join(5)
        if not answered:  # cancelled, late or crashed: what it started goes with it
            _signal(process, signal.SIGKILL)
        if process.is_alive():
            process.kill()
            process.join()
        with self._lock:
            if outcome is not None and not job.ended:
                state, changes = outcome
                self._end(job, state, stage=state, **changes)
            job.process = None
            self._start_next()
            # published under the lock: whoever sees the job ended (``get``) finds the
            # shelf saying so too (another worker's pool reads only the shelf)
            self._publish(job)

    def _publish(self, job: Job) -> None:
        if self.shelf is not None:
            self.shelf.publish(job)

    def _shelve_open(self) -> None:
        """Publish every unfinished job of this pool (their progress, and that this worker
        still holds them), and cancel those another worker was asked to cancel."""
        assert self.shelf is not None
        with self._lock:
            open_jobs = [j for j in self._jobs.values() if not j.ended]
        for job in open_jobs:
            if self.shelf.cancel_asked(job.id):
                self.cancel(job.id)
            else:
                self.shelf.publish(job)


def _ended(*arguments: Any) -> None:  # pragma: no cover - never called
    """What an ended job holds instead of its function."""
