"""A job of the service's pool: its record (:class:`Job`, what the service answers of
it), the errors of asking for one, and how a job's error is written."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import attrs

from ..errors import InputError, PluginError
from ..manager import plugin_in_traceback

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


class Refused(InputError):
    """Work done elsewhere (a worker process's) that failed: ``error``, its error as the
    service answers it (:func:`error_of`, with whatever else it says: a ruleset's
    ``index``, ``at`` and ``line``), and ``status``, its HTTP status."""

    def __init__(self, error: dict[str, Any]) -> None:
        super().__init__(str(error.get("message", "")))
        self.error = error
        self.status = int(error.get("status", 500))
        self._field = error.get("field")
        self.headers = {"Retry-After": "5"} if self.status in (429, 503) else {}


def error_of(exc: Exception, status: int) -> dict[str, Any]:
    """A job's error as the service answers it: its status, type, message and field."""
    return {
        "status": status,
        "type": type(exc).__name__,
        "message": str(exc),
        "field": getattr(exc, "field", None),
    }


def plugin_error(exc: BaseException) -> PluginError:
    """What an exception that is not an ``Exception`` (``KeyboardInterrupt``,
    ``SystemExit``, ``GeneratorExit``, ...) is answered as: a :class:`PluginError` that
    names the plugin whose code raised it (:func:`~rankcraft.manager.plugin_in_traceback`)."""
    plugin = plugin_in_traceback(exc)
    where = f"plugin {plugin!r}" if plugin is not None else "the service's code"
    return PluginError(
        f"{where} raised {type(exc).__name__} ({str(exc)[:200]!r}); the request changed nothing"
    )


def outcome_of(function: Callable[..., Any], arguments: tuple[Any, ...]) -> tuple[str, Any]:
    """``("result", function(*arguments))``, or ``("error", its error)`` (:func:`error_of`):
    400 for bad input, 500 for anything else it raises, whatever that is."""
    try:
        return "result", function(*arguments)
    except Refused as exc:
        return "error", exc.error
    except InputError as exc:
        return "error", error_of(exc, 400)
    except Exception as exc:
        return "error", error_of(exc, 500)
    except BaseException as exc:  # (a plugin's KeyboardInterrupt, SystemExit, ...)
        return "error", error_of(plugin_error(exc), 500)


def waiting(seconds: float, steps: int, progress: Callable[[int, int, str], None]) -> Any:
    """A job that waits ``steps`` times ``seconds``, saying so (tests and examples)."""
    for step in range(steps):
        time.sleep(seconds)
        progress(step + 1, steps, "waiting")
    return {"waited": round(seconds * steps, 6)}
