"""Tokens at the door: a request goes through only with a token of the scope its endpoint
needs (``Authorization: Bearer rk_...``, :mod:`rankcraft.tokens`); reads need one only
with :attr:`~rankcraft.serve.Settings.auth_reads`."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from ..engine import League
from ..extras import missing
from ..store.base import FED_BY
from ..tokens import authenticate
from .errors import Conflict, Forbidden, Unauthorized
from .settings import Settings

try:
    from starlette.requests import Request
    from starlette.responses import JSONResponse
except ImportError:  # pragma: no cover - checked by cli.cmd_serve before use
    raise missing("the HTTP service needs", "Starlette and uvicorn", "serve") from None

Handler = Callable[[Request], Awaitable[JSONResponse]]


def bearer(request: Request, league: League, scope: str) -> None:
    """Let the request through only with a token that allows ``scope``; its name is left
    in ``request.state.token_name`` (what an edit's audit keeps as ``by``)."""
    challenge = f'Bearer realm="rankcraft", scope="{scope}"'
    header = request.headers.get("authorization")
    if header is None:
        raise Unauthorized(
            f"this needs a token of scope {scope!r}: send 'Authorization: Bearer TOKEN' "
            "(rankcraft token create)",
            field="Authorization",
            headers={"WWW-Authenticate": challenge},
        )
    kind, _, presented = header.strip().partition(" ")
    if kind.lower() != "bearer" or not presented.strip():
        raise Unauthorized(
            f"'Authorization' must be 'Bearer TOKEN', got a {kind[:20]!r} header",
            field="Authorization",
            headers={"WWW-Authenticate": f'{challenge}, error="invalid_request"'},
        )
    token = authenticate(league.store, presented.strip())  # type: ignore[arg-type]
    if token is None:
        raise Unauthorized(
            "the token is not one of this league's (unknown or revoked)",
            field="Authorization",
            headers={"WWW-Authenticate": f'{challenge}, error="invalid_token"'},
        )
    if not token.allows(scope):
        raise Forbidden(
            f"the token {token.name!r} has scope {token.scope!r}; this needs {scope!r}",
            field="Authorization",
            headers={"WWW-Authenticate": f'{challenge}, error="insufficient_scope"'},
        )
    request.state.token_name = token.name


def token_name(request: Request) -> str | None:
    """The name of the token the request came with (None: it needed none)."""
    name = getattr(request.state, "token_name", None)
    return name if isinstance(name, str) else None


def refuse_if_fed(league: League) -> None:
    """Refuse a write to a league a consumer feeds from a log (409, naming the log):
    its matches come in through the log, in the log's order, and nowhere else."""
    fed = league.store.get_meta(FED_BY)
    if fed:
        raise Conflict(
            f"this league is fed by a consumer of the log {fed!r} (rankcraft consume): "
            "publish its matches and edits there; writes over HTTP are refused",
            field=None,
        )


def guard(league: League, settings: Settings) -> Callable[[Handler, str | None], Handler]:
    """``guarded(handler, scope)``: the handler behind the token check of ``scope`` (the
    handler itself when the scope needs no token: none, or ``read`` without
    ``auth_reads``)."""

    def guarded(handler: Handler, scope: str | None) -> Handler:
        if scope is None or (scope == "read" and not settings.auth_reads):
            return handler

        async def endpoint(request: Request) -> JSONResponse:
            bearer(request, league, scope)
            if scope != "read":
                refuse_if_fed(league)
            return await handler(request)

        return endpoint

    return guarded
