"""Independent pieces of work run in parallel processes, their results in order.

The features that replay a whole history once per ruleset (the ruleset lab's
comparison, ``rankcraft evaluate`` with several rulesets) give each ruleset's replay a
process of its own: :func:`run_each` runs ``work(index, tick)`` for every index in at
most ``processes`` processes, tells ``progress`` how far each has come (what it
passed to ``tick``, through shared memory), and answers the results in the order of the
indexes: the same as running them one after another in this process.

The processes are *forked*: ``work`` (a closure over the parsed history and the loaded
rulesets) and its inputs are not pickled, only its result is sent back. Forking is safe
only from a process with a single thread; :func:`can_fork` says whether this one may
fork children (a single thread, not a daemonic process, an OS with ``fork``), and
:func:`run_each` runs the pieces here, one after another, when it may not (same
results, no speed-up).

An error in a piece is raised here, as the first failing piece in index order would
have raised it when run one after another (the pieces after it are ended; the ones
before it are waited for); ending this process (Ctrl-C, or a lab job cancelled by
ending its process group) ends its children too.

>>> run_each(lambda i, tick: i * i, 4, processes=2)
[0, 1, 4, 9]
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import pickle
import sys
import threading
from collections.abc import Callable, Sequence
from multiprocessing.connection import Connection, wait
from typing import Any, TypeVar

__all__ = ["can_fork", "default_processes", "run_each"]

T = TypeVar("T")

Work = Callable[[int, Callable[[int], None]], T]
"""One piece: ``work(index, tick)``, where ``tick(done)`` tells how far it has come."""


def default_processes() -> int:
    """The processes a replay-bound feature uses by default: one per core."""
    return os.cpu_count() or 1


def can_fork() -> bool:
    """Whether this process may fork children that run Python safely: it has one thread
    (a fork copies only the calling thread, and a lock another thread held would stay
    held in the child), it is not a daemonic ``multiprocessing`` process (which may not
    have children), and the OS forks."""
    return (
        hasattr(os, "fork")
        and threading.active_count() == 1
        and not multiprocessing.current_process().daemon
    )


def _worker(work: Work[Any], conn: Connection, slots: Any) -> None:
    """A child: takes indexes from the parent until told to stop (None), runs
    ``work(index, tick)`` for each and sends back its result (or error)."""
    while True:
        try:
            index = conn.recv()
        except EOFError:
            return
        if index is None:
            return

        def tick(done: int, index: int = index) -> None:
            slots[index] = done

        try:
            message: tuple[str, Any] = ("result", work(index, tick))
        except BaseException as exc:  # sent to the parent, which raises it
            message = ("error", exc)
        try:
            payload = pickle.dumps(message)
            pickle.loads(payload)  # (an error that does not unpickle is sent as its text)
        except Exception as exc:
            what = message[1] if message[0] == "error" else exc
            payload = pickle.dumps(("error", RuntimeError(f"{type(what).__name__}: {what}")))
        conn.send_bytes(payload)


def run_each(
    work: Work[T],
    count: int,
    *,
    processes: int,
    progress: Callable[[Sequence[int], int], None] | None = None,
    every: float = 0.1,
) -> list[T]:
    """``[work(i, tick) for i in range(count)]``, in ``min(processes, count)`` forked
    processes, each taking the next index when it is free (here, one after another, when
    ``processes`` is 1, ``count`` is 1 or this process may not fork: :func:`can_fork`).
    Every process is forked before anything else happens here (before ``progress`` is
    first called, which may start a thread: a terminal's progress bar).

    :param progress: called about every ``every`` seconds, and once at the end, with
        each piece's last ``tick`` and how many pieces have finished.
    """
    if processes <= 1 or count <= 1 or not can_fork():
        return _one_by_one(work, count, progress)
    context = multiprocessing.get_context("fork")
    for stream in (sys.stdout, sys.stderr):  # (a child would write what is buffered again)
        if stream is not None:
            stream.flush()
    slots = context.Array("q", count, lock=False)
    workers: list[tuple[Any, Connection]] = []
    results: dict[int, T] = {}
    errors: dict[int, BaseException] = {}
    try:
        for _ in range(min(processes, count)):
            mine, theirs = context.Pipe()
            process = context.Process(target=_worker, args=(work, theirs, slots))
            process.start()
            theirs.close()
            workers.append((process, mine))
        _hand_out(workers, count, slots, results, errors, progress, every)
    finally:
        _stop(workers)
    if errors:
        raise errors[min(errors)]
    return [results[i] for i in range(count)]


def _hand_out(
    workers: list[tuple[Any, Connection]],
    count: int,
    slots: Any,
    results: dict[int, Any],
    errors: dict[int, BaseException],
    progress: Callable[[Sequence[int], int], None] | None,
    every: float,
) -> None:
    """Give each worker the next index when it is free, keeping each piece's result (or
    error) by its index, until no piece is running; after an error, the pieces after the
    first failed one are ended. ``progress`` is told about every ``every`` seconds (see
    :func:`run_each`)."""
    busy: dict[Connection, int] = {}
    for index, (_, conn) in enumerate(workers):
        conn.send(index)
        busy[conn] = index
    following = len(workers)
    processes_of = {conn: process for process, conn in workers}
    while busy:
        for ready in wait(list(busy), timeout=every):
            assert isinstance(ready, Connection)
            conn = ready
            index = busy.pop(conn)
            kind, value = _receive(conn, processes_of[conn])
            if kind == "result":
                results[index] = value
            else:
                errors[index] = value
                continue
            if not errors and following < count:
                conn.send(following)
                busy[conn] = following
                following += 1
        if errors:  # the pieces after the first failed one are not needed
            first = min(errors)
            for conn in [c for c, i in busy.items() if i > first]:
                del busy[conn]
                processes_of[conn].kill()
        if progress is not None:
            progress(list(slots), len(results))


def _receive(conn: Connection, process: Any) -> tuple[str, Any]:
    """A worker's answer: ``("result", value)`` or ``("error", exception)``."""
    try:
        kind, value = pickle.loads(conn.recv_bytes())
    except EOFError:  # ended without a word: killed, or crashed
        process.join(5)
        code = process.exitcode
        kind, value = "error", RuntimeError(f"a process ended (exit code {code})")
    return kind, value


def _stop(workers: list[tuple[Any, Connection]]) -> None:
    """Tell every worker to stop, and wait for it (ended when it does not)."""
    for _, conn in workers:
        with contextlib.suppress(OSError):
            conn.send(None)
    for process, conn in workers:
        process.join(1)
        if process.is_alive():
            process.kill()
            process.join()
        conn.close()


def _one_by_one(
    work: Work[T], count: int, progress: Callable[[Sequence[int], int], None] | None
) -> list[T]:
    slots = [0] * count
    results: list[T] = []
    for index in range(count):

        def tick(done: int, index: int = index) -> None:
            slots[index] = done
            if progress is not None:
                progress(slots, len(results))

        results.append(work(index, tick))
    if progress is not None:
        progress(slots, len(results))
    return results
