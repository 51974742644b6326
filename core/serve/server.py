"""How uvicorn runs the service (``rankcraft serve``): its HTTP/1.1 protocol with read
deadlines, its logging, and the line that says the service is ready."""

from __future__ import annotations

import asyncio
import functools
import json
import threading
from collections.abc import Callable
from typing import Any

from ..extras import missing
from .errors import error_body
from .settings import Settings

try:
    import h11
    from uvicorn.protocols.http.h11_impl import H11Protocol
except ImportError:  # pragma: no cover - checked by cli.cmd_serve before use
    raise missing("the HTTP service needs", "Starlette and uvicorn", "serve") from None


class GuardedH11Protocol(H11Protocol):
    """uvicorn's HTTP/1.1 protocol with the read deadlines it lacks.

    uvicorn (h11) waits forever for a request's line and headers, and for a body the
    application does not read: each slow client holds a connection. This protocol closes
    a connection whose request line and headers are not complete ``header_timeout``
    seconds after its first byte (or after connecting), and one whose body is not
    complete ``body_timeout`` + 1 seconds after its headers (the application answers 408
    at ``body_timeout``). Deadlines run from the start of each phase, so sending a byte
    at a time does not extend them. The settings come from ``$RANKCRAFT_SERVE_SETTINGS``.
    """

    settings: Settings | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # uvicorn answers past --limit-concurrency with a plain-text 503; the limit is
        # kept here instead and answered as the service's other errors are (JSON)
        self._most, self.limit_concurrency = self.limit_concurrency, None
        self.app = functools.partial(_within_limit, self, self.app)
        cls = type(self)
        if cls.settings is None:
            cls.settings = Settings.from_env()
        self._limits = {
            h11.IDLE: cls.settings.header_timeout,
            h11.SEND_BODY: cls.settings.body_timeout + 1.0,
        }
        self._phase: Any = None
        self._deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._watch()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        self._watch()

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel()
        super().connection_lost(exc)

    def _cancel(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _watch(self) -> None:
        state = self.conn.their_state
        phase = state if state in self._limits else None
        if phase is self._phase:
            return  # a deadline runs from the start of its phase, not from the last byte
        self._phase = phase
        self._cancel()
        if phase is not None:
            self._deadline = self.loop.call_later(self._limits[phase], self._expired)

    def _expired(self) -> None:
        self._deadline = None
        if not self.transport.is_closing():
            self.transport.close()


async def _within_limit(
    protocol: GuardedH11Protocol, app: Any, scope: Any, receive: Any, send: Any
) -> None:
    """``app``, unless the worker holds more connections or requests under way than
    ``--limit-concurrency``: then a JSON 503 (``Retry-After``), the connection closed."""
    most = protocol._most
    if most is None or (len(protocol.connections) < most and len(protocol.tasks) <= most):
        await app(scope, receive, send)
        return
    message = (
        f"the service is at its limit of {most} connections or requests at once "
        "(--limit-concurrency): try again later"
    )
    protocol.logger.warning("Exceeded concurrency limit.")
    body = json.dumps(error_body(503, "ServiceUnavailable", message, None)).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        (b"retry-after", b"5"),
        (b"connection", b"close"),
    ]
    await send({"type": "http.response.start", "status": 503, "headers": headers})
    await send({"type": "http.response.body", "body": body, "more_body": False})


def log_config(access_log: bool = True) -> dict[str, Any]:
    """uvicorn's logging configuration for ``rankcraft serve``: one access line per request
    on standard output (unless ``access_log`` is off: ``--no-access-log``), and only
    warnings and errors of the server on standard error."""
    from uvicorn.config import LOGGING_CONFIG

    config: dict[str, Any] = json.loads(json.dumps(LOGGING_CONFIG))
    config["loggers"]["uvicorn"]["level"] = "WARNING"
    config["loggers"]["uvicorn.error"]["level"] = "WARNING"
    config["loggers"]["uvicorn.access"]["level"] = "INFO" if access_log else "WARNING"
    return config


def announce_when_ready(
    host: str, port: int, say: Callable[[str], None], *, timeout: float = 120.0
) -> threading.Thread:
    """Start a thread that asks ``GET /health`` until a worker answers it, then calls
    ``say`` with the line that the service is ready (or that it did not answer in
    ``timeout`` seconds). A listening socket is not enough: a worker must be accepting
    connections and answering with the league open."""
    import http.client
    import time

    target = {"0.0.0.0": "127.0.0.1", "::": "::1", "": "127.0.0.1"}.get(host, host)

    def poll() -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                connection = http.client.HTTPConnection(target, port, timeout=2)
                connection.request("GET", "/health")
                answer = connection.getresponse()
                body = json.loads(answer.read())
                connection.close()
                if answer.status == 200:
                    shown = f"[{host}]" if ":" in host else host
                    say(
                        f"rankcraft serve: ready on http://{shown}:{port}/ "
                        f"({body.get('matches', 0):,} matches; the page at /, the API at /docs)"
                    )
                    return
            except (OSError, ValueError, http.client.HTTPException):
                pass
            time.sleep(0.05)
        say(f"rankcraft serve: no worker answered /health within {timeout:g} s")

    thread = threading.Thread(target=poll, name="rankcraft-ready", daemon=True)
    thread.start()
    return thread
