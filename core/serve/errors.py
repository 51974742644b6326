"""The service's errors and its error answers: the refusals it makes before a request
reaches the league (each with its HTTP status), the status of every error, and the JSON
``{"error": {"status", "type", "message", "field"}}`` it answers them with."""

from __future__ import annotations

from typing import Any

from ..engine import UnknownPlayerError
from ..errors import DuplicateMatchError, InputError, LateMatchError
from ..extras import missing
from ..jobs import Busy, Escaped, Refused, UnknownJob, plugin_error

try:
    from starlette.exceptions import HTTPException
    from starlette.requests import ClientDisconnect, Request
    from starlette.responses import JSONResponse
except ImportError:  # pragma: no cover - checked by cli.cmd_serve before use
    raise missing("the HTTP service needs", "Starlette and uvicorn", "serve") from None


class NotFoundError(InputError):
    """A match id the league does not hold (HTTP 404)."""


class ServiceError(InputError):
    """A request the service refuses before it reaches the league; ``status`` is the HTTP
    status, ``headers`` go with the answer."""

    status = 400

    def __init__(
        self, message: str, *, field: str | None = None, headers: dict[str, str] | None = None
    ) -> None:
        super().__init__(message)
        self._field = field
        self.headers = headers or {}


class RequestError(ServiceError):
    """A request body or parameter the service refuses (400)."""


class LimitError(ServiceError):
    """A match or prediction beyond the service's limits (``Settings``)."""


class Unauthorized(ServiceError):
    """No token, or one that is malformed, unknown or revoked."""

    status = 401


class Forbidden(ServiceError):
    """A token whose scope does not allow the request."""

    status = 403


class Conflict(ServiceError):
    """A request the league's state refuses, such as voiding a void match (409)."""

    status = 409


class RequestTimeout(ServiceError):
    """A request body that did not arrive in time."""

    status = 408


class PayloadTooLarge(ServiceError):
    """A request body larger than ``Settings.max_body``."""

    status = 413


class UnsupportedMediaType(ServiceError):
    """A request body that is not declared ``application/json``."""

    status = 415


def status_of(exc: InputError) -> int:
    """The HTTP status of an error."""
    if isinstance(exc, ServiceError | Busy | UnknownJob | Refused):
        return exc.status
    if isinstance(exc, UnknownPlayerError | NotFoundError):
        return 404
    if isinstance(exc, DuplicateMatchError | LateMatchError):
        return 409
    return 400


def error_body(status: int, kind: str, message: str, field: str | None) -> dict[str, Any]:
    """The JSON of an error answer (text that is not UTF-8, such as a lone surrogate
    quoted from the request, is written as its escape)."""
    return {
        "error": {
            "status": status,
            "type": kind,
            "message": _text(message),
            "field": None if field is None else _text(field),
        }
    }


def _text(value: str) -> str:
    return value.encode("utf-8", "backslashreplace").decode("utf-8")


def item_error(index: int, exc: InputError) -> dict[str, Any]:
    """One refused item of a batch: its 0-based index, status, type, message, field."""
    return {
        "index": index,
        "status": status_of(exc),
        "type": type(exc).__name__,
        "message": _text(str(exc)),
        "field": None if exc.field is None else _text(exc.field),
    }


def fail(exc: Exception) -> JSONResponse:
    """The answer to an error: rankcraft's, Starlette's (404, 405), a client gone, or any
    other (500)."""
    headers: dict[str, str] = {}
    if isinstance(exc, Escaped):
        exc = plugin_error(exc.exception)
    if isinstance(exc, Refused):  # (its error as the work elsewhere wrote it)
        error = {k: _text(v) if isinstance(v, str) else v for k, v in exc.error.items()}
        return JSONResponse({"error": error}, status_code=exc.status, headers=exc.headers)
    if isinstance(exc, InputError):
        status = status_of(exc)
        body = error_body(status, type(exc).__name__, str(exc), exc.field)
        if isinstance(exc, ServiceError | Busy):
            headers = exc.headers
    elif isinstance(exc, HTTPException):
        status = exc.status_code
        body = error_body(status, "HTTPException", str(exc.detail), None)
        headers = dict(exc.headers or {})
    elif isinstance(exc, ClientDisconnect):  # nobody is left to read the answer
        status = 400
        body = error_body(status, "ClientDisconnect", "the client went away", None)
    else:
        status = 500
        body = error_body(status, type(exc).__name__, str(exc), None)
    return JSONResponse(body, status_code=status, headers=headers)


async def answer_error(request: Request, exc: Exception) -> JSONResponse:
    """The application's handler of every exception: its answer, as JSON (:func:`fail`)."""
    return fail(exc)
