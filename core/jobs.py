"""Work the HTTP service does off its event loop: the league's thread and a pool of jobs.

The service's event loop only reads requests and writes answers; it never waits on the
league or on a long computation, so ``/health`` and every other request keep answering.

- :class:`LeagueThread`: one thread with its own event loop that runs every handler
  touching the league, one at a time (a league is not shared between threads), its
  request body brought over from the service's loop (:func:`LeagueThread.handler`).
- :class:`JobPool`: long work (a ruleset lab's replays) as *jobs*: submitted, queued,
  run in at most ``workers`` processes at once (each job its own process, so that a
  job can be cancelled by ending it), with its progress (``done`` of ``total``), a
  limit of unfinished jobs per client and in all, a time limit, and its result kept
  ``keep`` seconds after it ends.

>>> pool = JobPool(workers=1)
>>> job = pool.submit("me", waiting, 0.01, 3)
>>> _ = pool.join(job.id, 60)
>>> pool.get(job.id).state, pool.get(job.id).to_dict()["result"]
('done', {'waited': 0.03})
>>> pool.close()
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import json
import multiprocessing
import multiprocessing.util  # (its exit handler registered before _end_all's)
import os
import re
import secrets
import signal
import threading
import time
import weakref
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from multiprocessing.connection import Connection
from typing import Any, TypeVar

import attrs

from .errors import InputError

__all__ = ["Busy", "Job", "JobPool", "LeagueThread", "Shelf", "UnknownJob", "waiting"]

T = TypeVar("T")

STATES = ("queued", "running", "done", "failed", "cancelled")
"""A job's states, in the order it may pass them (it ends in one of the last three)."""


class Busy(InputError):
    """A job refused because its client, or the service, has too many unfinished jobs
    (HTTP 429, with ``Retry-After``)."""

    status = 429

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self._field = field
        self.headers = {"Retry-After": "5"}


class UnknownJob(InputError):
    """A job id the service does not hold (never, or no longer: HTTP 404)."""

    status = 404

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self._field = field


# -- the league's thread ----------------------------------------------------------------


class LeagueThread:
    """A thread with its own event loop on which the league's handlers run, one league
    call at a time, while the service's loop keeps answering. Started at first use;
    :meth:`close` (or the garbage collection of its owner, :meth:`close_with`) ends it."""

    def __init__(self, name: str = "rankcraft-league") -> None:
        self._name = name
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def _started(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None:
                loop = asyncio.new_event_loop()
                thread = threading.Thread(target=loop.run_forever, name=self._name, daemon=True)
                thread.start()
                self._loop, self._thread = loop, thread
            return self._loop

    async def run(self, work: Coroutine[Any, Any, T]) -> T:
        """Run the coroutine ``work`` on the league's loop and wait for it here."""
        future = asyncio.run_coroutine_threadsafe(work, self._started())
        return await asyncio.wrap_future(future)

    async def call(self, function: Callable[[], T]) -> T:
        """``function()`` on the league's thread."""

        async def work() -> T:
            return function()

        return await self.run(work())

    def handler(
        self, endpoint: Callable[[Any], Awaitable[T]]
    ) -> Callable[[Any], Coroutine[Any, Any, T]]:
        """``endpoint`` (a Starlette handler) run on the league's thread. The request
        it gets reads its body from the service's loop (where the connection lives)."""
        from starlette.requests import Request

        async def on_league_thread(request: Request) -> T:
            service = asyncio.get_running_loop()
            receive = request.receive

            async def bridged() -> Any:
                return await asyncio.wrap_future(
                    asyncio.run_coroutine_threadsafe(receive(), service)  # type: ignore[arg-type]
                )

            async def work() -> T:
                return await endpoint(Request(request.scope, bridged))

            return await self.run(work())

        return on_league_thread

    def close(self) -> None:
        """Stop the thread (after the work it runs) and close its loop."""
        with self._lock:
            loop, thread = self._loop, self._thread
            self._loop = self._thread = None
        if loop is None or thread is None:
            return
        loop.call_soon_threadsafe(loop.stop)
        thread.join(30)
        if not thread.is_alive():
            loop.close()

    def close_with(self, owner: object) -> None:
        """Close this thread when ``owner`` is garbage-collected (an application that
        was never shut down, as in tests)."""
        weakref.finalize(owner, self.close)


# -- jobs -----------------------------------------------------------------------------------


@attrs.define(eq=False)
class Job:
    """One job: who asked, its state, progress and outcome.

    Attributes:
        id: random, URL-safe (128 bits): whoever knows it may read or cancel the job.
        client: whom the per-client limit counts it for (a token, or an address).
        state: one of :data:`STATES`.
        done, total: progress in the job's own unit (the lab: matches replayed, over
            all rulesets); ``total`` 0 while unknown.
        stage: what the job is doing, in words.
        created, started, finished: times (``time.time()``, seconds).
        position: while queued, how many jobs are ahead of it (running or queued).
        result: the job's answer once ``done``.
        error: ``{"status", "type", "message", "field"}`` once ``failed``.
    """

    id: str
    client: str
    function: Callable[..., Any] = attrs.field(repr=False)
    arguments: tuple[Any, ...] = attrs.field(repr=False)
    state: str = "queued"
    done: int = 0
    total: int = 0
    stage: str = "waiting for a free worker"
    created: float = attrs.field(factory=time.time)
    started: float | None = None
    finished: float | None = None
    result: Any = attrs.field(default=None, repr=False)
    error: dict[str, Any] | None = None
    process: Any = attrs.field(default=None, repr=False)
    position: int = 0

    @property
    def ended(self) -> bool:
        return self.state in ("done", "failed", "cancelled")

    def to_dict(self, result: bool = True) -> dict[str, Any]:
        """The job as the service answers it (``result``: with its result, once done)."""
        now = self.finished or time.time()
        return {
            "id": self.id,
            "state": self.state,
            "done": self.done,
            "total": self.total,
            "stage": self.stage,
            "queued_behind": self.position,
            "seconds": round(now - (self.started or now), 3),
            "error": self.error,
            "result": self.result if result and self.state == "done" else None,
        }


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

    try:
        result = function(*arguments, progress)
    except InputError as exc:
        send.send(("error", _error_of(exc, 400)))
    except Exception as exc:  # reported as the job's failure, not lost
        send.send(("error", _error_of(exc, 500)))
    else:
        send.send(("result", result))
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


def _error_of(exc: Exception, status: int) -> dict[str, Any]:
    return {
        "status": status,
        "type": type(exc).__name__,
        "message": str(exc),
        "field": getattr(exc, "field", None),
    }


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
                    return
                job.process = process
            process.start()
            if job.ended:  # cancelled while its process started
                _signal(process, signal.SIGTERM)
        except Exception as exc:  # the process could not start: the job fails, reported
            with self._lock:
                self._end(job, "failed", error=_error_of(exc, 500), stage="failed")
                self._start_next()
            return
        finally:
            send.close()
        deadline = time.monotonic() + self.timeout
        outcome: tuple[str, dict[str, Any]] | None = None
        answered = False  # (the job's process said how it ended, its children ended)
        published = 0.0
        try:
            while outcome is None and not job.ended:
                if self.shelf is not None and time.monotonic() - published > 0.5:
                    published = time.monotonic()
                    self._shelve_open()
                    if job.ended:
                        break
                if time.monotonic() > deadline:
                    _signal(process, signal.SIGTERM)
                    message = f"the job ran longer than {self.timeout:g} s and was ended"
                    outcome = ("failed", {"error": _error_of(TimeoutError(message), 503)})
                    break
                if not receive.poll(0.2):
                    continue
                try:
                    message = receive.recv()
                except EOFError:  # the process ended without a word: killed, or crashed
                    process.join(5)
                    outcome = (
                        "failed",
                        {
                            "error": _error_of(
                                RuntimeError(
                                    f"the job's process ended (exit code {process.exitcode})"
                                ),
                                500,
                            )
                        },
                    )
                    break
                if message[0] == "progress":
                    _, job.done, job.total, job.stage = message
                elif message[0] == "result":
                    outcome, answered = ("done", {"result": message[1], "done": job.total}), True
                else:
                    outcome, answered = ("failed", {"error": message[1]}), True
        finally:
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


class Shelf:
    """A folder where each worker process's :class:`JobPool` publishes its jobs (one JSON
    file each, written whole), so that any worker answers a job's state and result, and
    asks the one holding it to cancel it (a ``.cancel`` file beside). A job whose file
    has not been written for :data:`STALE` seconds while unfinished was held by a worker
    that went away: it is answered as failed. The folder is the user's own (mode 0700).
    """

    STALE = 30.0

    def __init__(self, folder: str, keep: float) -> None:
        os.makedirs(folder, mode=0o700, exist_ok=True)
        if os.stat(folder).st_uid != os.getuid():
            raise InputError(f"the lab's job folder {folder!r} belongs to another user")
        self.folder = folder
        self.keep = keep

    def _path(self, job_id: str, suffix: str = ".json") -> str | None:
        if not _JOB_ID.fullmatch(job_id):
            return None
        return os.path.join(self.folder, job_id + suffix)

    def publish(self, job: Job) -> None:
        path = self._path(job.id)
        if path is None:
            return
        part = f"{path}.{os.getpid()}.{threading.get_ident()}.part"
        try:
            with open(part, "w", encoding="utf-8") as out:
                json.dump(job.to_dict(), out)
            os.replace(part, path)
        finally:
            if os.path.exists(part):
                os.remove(part)

    def sweep(self) -> None:
        """Remove the files no worker will read again: older than ``keep`` and
        :data:`STALE` together (a worker that restarted never removes its jobs' files)."""
        limit = time.time() - self.keep - self.STALE
        try:
            names = os.listdir(self.folder)
        except OSError:
            return
        for name in names:
            if not name.endswith((".json", ".cancel", ".part")):
                continue
            path = os.path.join(self.folder, name)
            try:
                if os.stat(path).st_mtime < limit:
                    os.remove(path)
            except OSError:
                pass  # (another worker swept it first)

    def read(self, job_id: str) -> dict[str, Any] | None:
        path = self._path(job_id)
        try:
            with open(path or "", encoding="utf-8") as source:
                found: dict[str, Any] = json.load(source)
            age = time.time() - os.stat(path or "").st_mtime
        except (OSError, ValueError):
            return None
        if found["state"] in ("queued", "running") and age > self.STALE:
            message = "the worker process that held the job went away"
            return {**found, "state": "failed", "error": _error_of(RuntimeError(message), 500)}
        return None if found["state"] not in ("queued", "running") and age > self.keep else found

    def ask_cancel(self, job_id: str) -> None:
        path = self._path(job_id, ".cancel")
        if path is not None:
            with open(path, "w", encoding="utf-8"):
                pass

    def cancel_asked(self, job_id: str) -> bool:
        path = self._path(job_id, ".cancel")
        return path is not None and os.path.exists(path)

    def remove(self, job_id: str) -> None:
        for suffix in (".json", ".cancel"):
            path = self._path(job_id, suffix)
            if path is not None and os.path.exists(path):
                os.remove(path)


_JOB_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")


def _ended(*arguments: Any) -> None:  # pragma: no cover - never called
    """What an ended job holds instead of its function."""


def waiting(seconds: float, steps: int, progress: Callable[[int, int, str], None]) -> Any:
    """A job that waits ``steps`` times ``seconds``, saying so (tests and examples)."""
    for step in range(steps):
        time.sleep(seconds)
        progress(step + 1, steps, "waiting")
    return {"waited": round(seconds * steps, 6)}
