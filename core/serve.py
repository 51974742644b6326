"""``rankcraft serve``: a league over HTTP (``pip install 'rankcraft[serve]'``).

A Starlette application over one :class:`~rankcraft.League`, run by uvicorn. JSON in and
out, in the formats of the match and state documents (docs/design.md):

=======  ======================  ===========  ==========================================
method   path                    token scope  answer
=======  ======================  ===========  ==========================================
POST     ``/matches``            record       record one match; 201 ``{"match", "report"}``
POST     ``/matches/batch``      record       record many in one transaction (all or none);
                                              201 ``{"recorded", "reports"}``
GET      ``/matches/{id}``       (read)       a recorded match with its report
GET      ``/players/{id}``       (read)       ``{"player", "standing"}``
GET      ``/leaderboard``        (read)       players best first; a page of them with
                                              ``?top=N&offset=N``, filtered by
                                              ``active_days=D``, ``tier=T``, ``all=true``
GET      ``/predict``            (read)       ``?side=a,b&side=c[&at=ISO]``: the forecast
POST     ``/predict``            (read)       the same for ``{"sides", "at", "home", "season"}``
POST     ``/match/opponents``    (read)       ``{"players", "width", ...}``: a rank filter's players
POST     ``/match/quality``      (read)       ``{"sides", "at", "home"}``: quality in [0, 1]
POST     ``/match/balance``      (read)       ``{"players", "teams", "at"}``: fair teams
GET      ``/ruleset``            (read)       the league's ruleset, as a table and as TOML
POST     ``/reset``              admin        ``{"kind", "at"}``: a season event
GET      ``/health``                          ``{"ok": true, "matches": N}``
GET      ``/openapi.json``                    the OpenAPI 3.1 description of all of the above
GET      ``/docs``                            a page that shows it and can send requests
GET      ``/``                                the league's web page (:mod:`rankcraft.web`)
=======  ======================  ===========  ==========================================

Writes need a token (``Authorization: Bearer rk_...``, :mod:`rankcraft.tokens`) of the
scope shown; reads, the scopes in parentheses, need a ``read`` token only when
:attr:`Settings.auth_reads` is set (``serve --auth-reads``). A request body must be
``application/json`` (else 415), at most :attr:`Settings.max_body` bytes (else 413) and
arrive within :attr:`Settings.body_timeout` seconds (else 408); it is decoded by
:func:`rankcraft.jsontext.loads_strict`.

Errors are ``{"error": {"status", "type", "message", "field"}}``: 400 for bad input or a
limit passed, 401 without a valid token, 403 for a token of too small a scope, 404 for an
unknown player, match or path, 409 for a match id already recorded or a match played
before one of its players' last match. A refused request changes nothing.

Each worker process opens the league itself and uses it for one request at a time, on
one thread beside its event loop (:class:`rankcraft.jobs.LeagueThread`), so that the loop
keeps answering (``/health`` answers from it); the ruleset lab's replays run as jobs in
processes of their own (:mod:`rankcraft.lab`). Several workers over one PostgreSQL database
record in parallel; each read first takes what the others committed, so any worker
answers as one would (docs/deploy.md).

The OpenAPI document is generated (:mod:`rankcraft.openapi`): the routes, their token
checks and the document's paths all come from :data:`OPERATIONS`; the request bodies are
checked by the field specs their schemas are written from (:func:`request_bodies`).

>>> import rankcraft.tokens
>>> from starlette.testclient import TestClient
>>> league = League("elo")
>>> _, token = rankcraft.tokens.create_token(league.store, scope="record")
>>> client = TestClient(create_app(league), headers={"Authorization": f"Bearer {token}"})
>>> client.post("/matches", json={"id": "m1", "played_at": "2024-05-01",
...                               "teams": [["ann"], ["bo"]], "scores": [1, 0]}).status_code
201
>>> client.get("/players/ann").json()["player"]["skill"]
{'rating': 1516.0, 'peak': 1516.0}
>>> again = client.post("/matches", json={"id": "m1", "played_at": "2024-05-01",
...                                       "teams": [["ann"], ["bo"]], "scores": [1, 0]})
>>> again.status_code, again.json()["error"]["type"], again.json()["error"]["field"]
(409, 'DuplicateMatchError', 'id')
>>> anonymous = TestClient(create_app(league))
>>> anonymous.post("/matches", json={}).json()["error"]["status"]
401
"""

from __future__ import annotations

import asyncio
import base64
import functools
import hashlib
import json
import os
import re
import threading
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager
from functools import cache
from importlib import resources
from typing import Any

import attrs

from . import __version__, lab, matchmaking, web
from .engine import League, UnknownPlayerError
from .errors import (
    DuplicateMatchError,
    InputError,
    LateMatchError,
    RankcraftError,
)
from .fields import Body, Field
from .io import (
    MATCH,
    MAX_FUTURE,
    MAX_PLAYERS,
    MAX_SIDES,
    over_limits,
    parse_match,
    past_the_clock,
)
from .jobs import Busy, JobPool, LeagueThread, Shelf, UnknownJob
from .jsontext import loads_strict
from .matchmaking import RankFilter
from .model import Match
from .openapi import Operation, build_document
from .processes import default_processes
from .ruleset import dumps, to_dict
from .suggest import close_to, player_candidates
from .tokens import authenticate

try:
    import h11
    from starlette.applications import Starlette
    from starlette.exceptions import HTTPException
    from starlette.middleware import Middleware
    from starlette.middleware.cors import CORSMiddleware
    from starlette.requests import ClientDisconnect, Request
    from starlette.responses import HTMLResponse, JSONResponse
    from starlette.routing import Route
    from uvicorn.protocols.http.h11_impl import H11Protocol
except ImportError:  # pragma: no cover - checked by cli.cmd_serve before use
    raise InputError(
        "the HTTP service needs Starlette and uvicorn: pip install 'rankcraft[serve]'"
    ) from None

DB_ENV = "RANKCRAFT_SERVE_DB"
RULESET_ENV = "RANKCRAFT_SERVE_RULESET"
SETTINGS_ENV = "RANKCRAFT_SERVE_SETTINGS"
"""How ``rankcraft serve --workers N`` tells each worker process which league to open,
and with which :class:`Settings` (as JSON)."""


@attrs.frozen(kw_only=True)
class Settings:
    """What the service allows: who may read, from where, and how much.

    Attributes:
        auth_reads: reads need a ``read`` token too (writes always need a token).
        cors_origins: web origins allowed to call the service from a browser (none:
            browsers get no CORS headers, so other sites cannot read answers).
        max_body: the most bytes a request body may have (413 beyond).
        max_sides: the most sides a match or prediction may have.
        max_players: the most players a match or prediction may have, all sides together.
        max_batch: the most matches a batch (``POST /matches/batch``) may have.
        max_future: how many seconds past the server's clock a match's ``played_at`` may be.
        header_timeout: seconds a client has to send a request's line and headers, from
            its first byte (or from connecting); the connection is closed after that.
        body_timeout: seconds a client has to send a request's body once its headers are
            in: 408 after that (and the connection is closed a second later).
        lab_workers: the most ruleset lab jobs running at once (each in its own process).
        lab_jobs_per_client: the most lab jobs one client may have queued or running.
        lab_max_replays: the most matches x rulesets one lab job replays.
        lab_keep: seconds a lab job's result stays readable after it ends.
        lab_timeout: seconds a lab job may run before it is ended.
        lab_processes: the most processes one lab job replays its rulesets in at once
            (each ruleset's replay in one); None: one per core (``os.cpu_count()``).
    """

    auth_reads: bool = False
    cors_origins: tuple[str, ...] = attrs.field(default=(), converter=tuple)
    max_body: int = 1 << 20
    max_sides: int = MAX_SIDES
    max_players: int = MAX_PLAYERS
    max_future: float = MAX_FUTURE
    max_batch: int = 10_000
    header_timeout: float = 10.0
    body_timeout: float = 30.0
    lab_workers: int = 1
    lab_jobs_per_client: int = 2
    lab_max_replays: int = 600_000
    lab_keep: float = 600.0
    lab_timeout: float = 3600.0
    lab_processes: int | None = None

    def __attrs_post_init__(self) -> None:
        for name in (
            "max_body",
            "max_sides",
            "max_players",
            "max_batch",
            "lab_workers",
            "lab_jobs_per_client",
            "lab_max_replays",
        ):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise InputError(f"'{name}' must be a whole number >= 1: {value!r}")
        processes = self.lab_processes
        if processes is not None and (
            not isinstance(processes, int) or isinstance(processes, bool) or processes < 1
        ):
            raise InputError(f"'lab_processes' must be a whole number >= 1: {processes!r}")
        for name in ("max_future", "header_timeout", "body_timeout", "lab_keep", "lab_timeout"):
            value = getattr(self, name)
            if not isinstance(value, int | float) or not 0 < value < 1e9:
                raise InputError(f"'{name}' must be a number of seconds > 0: {value!r}")
        if self.max_sides < 2:
            raise InputError(f"'max_sides' must be at least 2: {self.max_sides}")
        for origin in self.cors_origins:
            if not origin.startswith(("http://", "https://")) or origin.endswith("/"):
                raise InputError(
                    f"'cors_origin' must be an origin such as https://example.org "
                    f"(scheme and host, no path): {origin!r}"
                )

    def to_json(self) -> str:
        return json.dumps(attrs.asdict(self))

    @classmethod
    def from_json(cls, text: str) -> Settings:
        return cls(**json.loads(text))

    @classmethod
    def from_env(cls) -> Settings:
        text = os.environ.get(SETTINGS_ENV)
        return cls.from_json(text) if text else cls()


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


class RequestTimeout(ServiceError):
    """A request body that did not arrive in time."""

    status = 408


class PayloadTooLarge(ServiceError):
    """A request body larger than ``Settings.max_body``."""

    status = 413


class UnsupportedMediaType(ServiceError):
    """A request body that is not declared ``application/json``."""

    status = 415


def _status(exc: InputError) -> int:
    if isinstance(exc, ServiceError | Busy | UnknownJob):
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


def _item_error(index: int, exc: InputError) -> dict[str, Any]:
    """One refused item of a batch: its 0-based index, status, type, message, field."""
    return {
        "index": index,
        "status": _status(exc),
        "type": type(exc).__name__,
        "message": _text(str(exc)),
        "field": None if exc.field is None else _text(exc.field),
    }


class _ItemwiseJSON(JSONResponse):
    """JSONResponse's bytes, with the items of the answer's lists (or iterators, read
    as lists) encoded one by one. ``json.dumps`` of a whole answer is one C call that
    holds the GIL: a batch's 9,000 Skyweaver reports (30 MB) held it for 0.8 s, while
    the service's loop, on another thread, answered nothing. Between two items the loop
    gets its turn; and items made by an iterator are dropped once encoded (9,000
    reports as dicts are 1.1 million objects, which the garbage collector walks)."""

    def render(self, content: dict[str, Any]) -> bytes:
        encode = functools.partial(
            json.dumps, ensure_ascii=False, allow_nan=False, separators=(",", ":")
        )
        pieces = []
        for key, value in content.items():
            if isinstance(value, list | Iterator):
                pieces.append(f"{encode(key)}:[{','.join(map(encode, value))}]")
            else:
                pieces.append(f"{encode(key)}:{encode(value)}")
        return ("{" + ",".join(pieces) + "}").encode("utf-8")


def _fail(exc: Exception) -> JSONResponse:
    headers: dict[str, str] = {}
    if isinstance(exc, InputError):
        status = _status(exc)
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


async def _read_body(request: Request, settings: Settings) -> bytes:
    """The request's body: declared JSON, no larger than the limit, arrived in time."""
    declared = request.headers.get("content-type")
    media, _, parameters = (declared or "").partition(";")
    charset = parameters.strip().lower().replace(" ", "")
    if media.strip().lower() != "application/json" or charset not in ("", "charset=utf-8"):
        raise UnsupportedMediaType(
            f"'Content-Type' must be application/json (UTF-8): {declared!r}",
            field="Content-Type",
        )
    limit = settings.max_body
    close = {"Connection": "close"}
    length = request.headers.get("content-length")
    if length is not None and length.isdigit() and int(length) > limit:
        raise PayloadTooLarge(
            f"the request body is {int(length):,} bytes, more than the limit of {limit:,} "
            "(--max-body)",
            headers=close,
        )
    chunks = []
    size = 0
    try:
        async with asyncio.timeout(settings.body_timeout):
            async for chunk in request.stream():
                size += len(chunk)
                if size > limit:
                    raise PayloadTooLarge(
                        f"the request body is more than the limit of {limit:,} bytes (--max-body)",
                        headers=close,
                    )
                chunks.append(chunk)
    except TimeoutError:
        raise RequestTimeout(
            f"the request body did not arrive within {settings.body_timeout:g} s "
            f"({size:,} bytes came; --body-timeout)",
            headers=close,
        ) from None
    return b"".join(chunks)


async def _json_body(request: Request, settings: Settings) -> Any:
    return loads_strict(await _read_body(request, settings), what="the request body")


def _query(request: Request, spec: Field) -> Any:
    """A query parameter read as its spec's JSON type and checked by the spec (the same
    spec the OpenAPI document lists): an ``array`` is the repeated parameter, an
    ``integer`` whole-number text; absent: None (the spec says whether that is allowed)."""
    name = spec.name
    if "array" in spec.type:
        value: Any = request.query_params.getlist(name) or None
    else:
        value = request.query_params.get(name)
        if value is not None:
            value = _query_value(value, spec)
    if value is None:
        if spec.required:
            raise InputError(f"'{name}' must be given: it is required")
        return None
    spec.check(value, name)
    return value


_NUMBER = re.compile(r"[+-]?(\d{1,18}(\.\d{0,18})?|\.\d{1,18})")


def _query_value(text: str, spec: Field) -> Any:
    """A query parameter's text as its spec's JSON type: an ``integer`` from whole-number
    text, a ``number`` from decimal text (no exponent, NaN or infinity), a ``boolean``
    from ``true`` or ``false``; else the text itself."""
    name = spec.name
    if "integer" in spec.type:
        digits = text[1:] if text.startswith("-") else text
        if not (digits.isascii() and digits.isdigit()) or len(digits) > 18:
            raise InputError(f"'{name}' must be {spec.wanted}: {text!r}"[:300])
        return int(text)
    if "number" in spec.type:
        if not (text.isascii() and _NUMBER.fullmatch(text)):
            raise InputError(f"'{name}' must be {spec.wanted}: {text!r}"[:300])
        return float(text)
    if "boolean" in spec.type:
        if text not in ("true", "false"):
            raise InputError(f"'{name}' must be {spec.wanted}: {text!r}"[:300])
        return text == "true"
    return text


def _check_sides(sides: Any, field: str, settings: Settings) -> None:
    """Refuse more sides or players than the limits, before any other work."""
    beyond = over_limits(sides, field, settings.max_sides, settings.max_players)
    if beyond is not None:
        raise LimitError(beyond, field=field)


def _bearer(request: Request, league: League, scope: str) -> None:
    """Let the request through only with a token that allows ``scope``."""
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


Handler = Callable[[Request], Awaitable[JSONResponse]]


def _sides(name: str, settings: Settings) -> Field:
    """The sides of a prediction: lists of player ids, within the service's limits."""
    player = Field("player", "string", min_length=1, must="a player id (a non-empty string)")
    return Field(
        name,
        "array",
        required=True,
        min_items=2,
        max_items=settings.max_sides,
        must="a list of at least two sides",
        items=Field("side", "array", min_items=1, must="a list of player ids", items=player),
        limit=lambda value, path: _check_sides(value, path, settings),
        description=f"one list of player ids per side; at most {settings.max_sides} sides "
        f"(--max-sides) and {settings.max_players} players in all (--max-players)",
    )


def _at(what: str, kinds: tuple[str, ...] = ("string", "null")) -> Field:
    return Field(
        "at",
        kinds,
        must="an ISO-8601 time",
        description=f"{what} (an ISO-8601 date or date-time; no zone means UTC)",
    )


def request_bodies(settings: Settings) -> dict[str, Body]:
    """The request bodies, by their schema's name: each checks a body (``Body.check``)
    and describes it (``Body.schema``). ``Match`` only describes: :func:`parse_match`
    checks matches, after :func:`_check_sides` has applied the limits."""
    teams = MATCH.field("teams")
    played_at = MATCH.field("played_at")
    match_fields = {
        "teams": attrs.evolve(
            teams,
            max_items=settings.max_sides,
            description=f"{teams.description}; at most {settings.max_sides} sides "
            f"(--max-sides) and {settings.max_players} players in all (--max-players)",
        ),
        "played_at": attrs.evolve(
            played_at,
            description=f"{played_at.description}; at most {settings.max_future:g} s past "
            "the server's clock (--max-future)",
        ),
    }
    return {
        "Match": attrs.evolve(MATCH, fields=[match_fields.get(f.name, f) for f in MATCH.fields]),
        "MatchBatch": Body(
            "a batch of matches",
            (
                Field(
                    "matches",
                    "array",
                    required=True,
                    min_items=1,
                    max_items=settings.max_batch,
                    must=f"a list of 1 to {settings.max_batch} matches",
                    items=Field("match", "object", description="a match (schema Match)"),
                    description="the matches, in time order (schema Match each); at most "
                    f"{settings.max_batch} (--max-batch)",
                ),
            ),
            description="matches recorded in one transaction: all of them, or none "
            "(a bare JSON array of matches is taken too)",
            unknown_error=RequestError,
        ),
        "Prediction": Body(
            "a prediction",
            (
                _sides("sides", settings),
                _at("predict for this time (decays idle players); default: now"),
                Field(
                    "home",
                    ("integer", "null"),
                    minimum=0,
                    must="the index of a side",
                    description="the index of the side at home (below the number of sides)",
                ),
                Field(
                    "season",
                    ("string", "integer", "null"),
                    description="the season the match belongs to, for a ruleset whose "
                    "[[resets]] follow a season field: a new season applies its event first",
                ),
            ),
            description="the sides to predict (player ids may hold commas here)",
            unknown_error=RequestError,
        ),
        **matchmaking_bodies(settings),
        "SeasonEvent": Body(
            "a season event",
            (
                Field(
                    "kind",
                    "string",
                    required=True,
                    must="the name of a season event such as 'soft'",
                    description="a season event of the ruleset's reset plugin, e.g. soft or hard",
                ),
                _at("run it as of this time; default: now"),
            ),
            closed=False,
            description="a season event to run now",
        ),
    }


BALANCE_PLAYERS = 64
"""The most players ``POST /match/balance`` splits (its swaps grow with the square of the
players; a service answers in well under a second up to this)."""


def _players(name: str, most: int, fewest: int, description: str) -> Field:
    player = Field("player", "string", min_length=1, must="a player id (a non-empty string)")
    return Field(
        name,
        "array",
        required=True,
        min_items=fewest,
        max_items=most,
        unique=True,
        must=f"a list of {fewest} to {most} distinct player ids",
        items=player,
        description=description,
    )


def _opponents_body(settings: Settings) -> Body:
    """The body of ``POST /match/opponents``: a rank filter and the party it is for."""
    number = ("number", "null")
    step = Field(
        "step",
        "array",
        min_items=2,
        max_items=2,
        items=Field("value", "number", minimum=0),
        must="a pair [seconds waited, width]",
    )
    return Body(
        "an opponents query",
        (
            _players(
                "players",
                settings.max_players,
                1,
                "the player, or every player of the party (known to the league)",
            ),
            Field(
                "width",
                number,
                minimum=0,
                maximum=100,
                default=2.0,
                must="a number of percentiles in [0, 100]",
                description="percentiles either side of the party's span",
            ),
            Field(
                "strict",
                ("boolean", "null"),
                default=False,
                description="true: never widen; false: a loose filter",
            ),
            Field(
                "widen",
                ("array", "null"),
                items=step,
                max_items=32,
                description="a loose filter's steps [seconds waited, width], both "
                "growing; default [[30, 5], [60, 10]]",
            ),
            Field(
                "waited",
                number,
                minimum=0,
                default=0.0,
                must="seconds >= 0",
                description="seconds the party has waited",
            ),
            Field(
                "needed",
                ("integer", "null"),
                minimum=1,
                default=1,
                must="a whole number >= 1",
                description="how many other players make enough",
            ),
            Field(
                "limit",
                ("integer", "null"),
                minimum=0,
                maximum=10_000,
                default=100,
                must="a whole number in [0, 10000]",
                description="the most players in the answer",
            ),
            Field(
                "active_days",
                number,
                minimum=0,
                must="a number of days >= 0",
                description="who is active; default: the ruleset's (else 30 days)",
            ),
        ),
        description="a rank filter: the active players within some percentiles of a "
        "player or party",
        unknown_error=RequestError,
    )


def matchmaking_bodies(settings: Settings) -> dict[str, Body]:
    """The request bodies of the ``/match/...`` endpoints (:mod:`rankcraft.matchmaking`)."""
    return {
        "OpponentsQuery": _opponents_body(settings),
        "QualityQuery": Body(
            "a quality query",
            (
                _sides("sides", settings),
                _at("as of this time (decays idle players); default: now"),
                Field(
                    "home",
                    ("integer", "null"),
                    minimum=0,
                    must="the index of a side",
                    description="the index of the side at home (below the number of sides)",
                ),
            ),
            description="proposed sides, whose match quality is asked",
            unknown_error=RequestError,
        ),
        "BalanceQuery": Body(
            "a balance query",
            (
                _players(
                    "players",
                    min(BALANCE_PLAYERS, settings.max_players),
                    2,
                    f"the players to split; at most {BALANCE_PLAYERS}",
                ),
                Field(
                    "teams",
                    ("integer", "null"),
                    minimum=2,
                    default=2,
                    must="a whole number >= 2",
                    description="how many teams (at most the number of players)",
                ),
                _at("as of this time (decays idle players); default: now"),
            ),
            description="players to split into fair teams",
            unknown_error=RequestError,
        ),
    }


def query_parameters(settings: Settings) -> dict[str, Field]:
    """The query parameters of the GET endpoints, by name: the handlers read and check
    them with these specs (``_query``), and the OpenAPI document lists them."""
    return {
        "top": Field(
            "top",
            "integer",
            minimum=1,
            must="a whole number >= 1",
            description="only the first N players (after offset)",
        ),
        "offset": Field(
            "offset",
            "integer",
            minimum=0,
            must="a whole number >= 0",
            default=0,
            description="skip the first N places: ?offset=100&top=50 lists places 101-150",
        ),
        "active_days": Field(
            "active_days",
            "number",
            minimum=0,
            must="a number of days >= 0",
            description="only players whose last match is at most this many days before "
            "the league's latest match; default: the ruleset's [display] active_days "
            "(no limit without it)",
        ),
        "tier": Field(
            "tier",
            "string",
            min_length=1,
            must="a tier's name",
            description="only players of this tier (the rank state's tier, e.g. Master); "
            "a tier nobody holds lists nobody",
        ),
        "all": Field(
            "all",
            "boolean",
            must="true or false",
            default=False,
            description="true: ignore the ruleset's [display] active_days (an explicit "
            "active_days still applies)",
        ),
        "holding": Field(
            "holding",
            "string",
            max_length=100,
            must="a text of at most 100 characters",
            description="only players whose id holds this text (ASCII letters in either "
            "case); they keep their places on the board",
        ),
        "side": Field(
            "side",
            "array",
            required=True,
            min_items=2,
            max_items=settings.max_sides,
            items=Field("side", "string", description="a side's player ids, comma-separated"),
            description=f"once per side: ?side=a,b&side=c; at most {settings.max_sides} "
            f"sides and {settings.max_players} players in all",
        ),
        "at": _at("predict for this time (decays idle players); default: now", ("string",)),
        "home": Field(
            "home",
            "integer",
            minimum=0,
            must="the index of a side",
            description="the index of the side at home",
        ),
    }


OPERATIONS = (
    Operation(
        method="POST",
        path="/matches",
        handler="post_match",
        scope="record",
        summary="Record one match",
        answer=(201, "the match as stored, with its report", "Recorded"),
        body="Match",
        errors=(409,),
    ),
    Operation(
        method="POST",
        path="/matches/batch",
        handler="post_batch",
        scope="record",
        summary="Record many matches in one transaction (all or none)",
        answer=(201, "how many were recorded, and each match's report", "BatchRecorded"),
        body="MatchBatch",
        errors=(409,),
    ),
    Operation(
        method="GET",
        path="/matches/{match_id}",
        handler="get_match",
        scope="read",
        summary="A recorded match with its report",
        answer=(200, "the match", "Recorded"),
        errors=(404,),
    ),
    Operation(
        method="GET",
        path="/players/{player_id}",
        handler="get_player",
        scope="read",
        summary="A player's state",
        answer=(200, "the player (state export format) and league-wide label", "Standing"),
        errors=(404,),
    ),
    Operation(
        method="GET",
        path="/leaderboard",
        handler="leaderboard",
        scope="read",
        summary="Players best first",
        answer=(200, "place, standing and state per player", "Leaderboard"),
        query=("top", "offset", "active_days", "tier", "all", "holding"),
        errors=(400,),
    ),
    Operation(
        method="GET",
        path="/predict",
        handler="predict",
        scope="read",
        summary="Forecast a match: expected scores, outcome and place probabilities",
        answer=(200, "the forecast (probabilities: what League.predict gives)", "Predicted"),
        query=("side", "at", "home"),
        errors=(400,),
    ),
    Operation(
        method="POST",
        path="/predict",
        handler="post_predict",
        scope="read",
        summary="Forecast a match (player ids may hold commas)",
        answer=(200, "the forecast (probabilities: what League.predict gives)", "Predicted"),
        body="Prediction",
    ),
    Operation(
        method="POST",
        path="/match/opponents",
        handler="match_opponents",
        scope="read",
        summary="The active players a rank filter lets in with a player or party",
        answer=(200, "the band of percentiles and the players in it", "Opponents"),
        body="OpponentsQuery",
        errors=(404,),
    ),
    Operation(
        method="POST",
        path="/match/quality",
        handler="match_quality",
        scope="read",
        summary="How good a match proposed sides would make, in [0, 1]",
        answer=(200, "the quality and the win probabilities", "Quality"),
        body="QualityQuery",
        errors=(404,),
    ),
    Operation(
        method="POST",
        path="/match/balance",
        handler="match_balance",
        scope="read",
        summary="Players split into fair teams",
        answer=(200, "the teams and their quality", "Balanced"),
        body="BalanceQuery",
        errors=(404,),
    ),
    Operation(
        method="GET",
        path="/ruleset",
        handler="ruleset",
        scope="read",
        summary="The league's ruleset",
        answer=(200, "name, description, the ruleset as a table and as TOML", "Ruleset"),
    ),
    Operation(
        method="POST",
        path="/reset",
        handler="reset",
        scope="admin",
        summary="A season event of the ruleset's reset plugin",
        answer=(200, "the event and how many players it changed", "SeasonEventDone"),
        body="SeasonEvent",
    ),
    Operation(
        method="GET",
        path="/health",
        handler="health",
        scope=None,
        summary="Liveness and the count of matches",
        answer=(200, "ok", "Health"),
    ),
)
"""The service's endpoints: they build its routes and token checks (:func:`create_app`)
and its document (:func:`openapi_document`). ``/openapi.json`` and ``/docs`` are served
besides, open to all."""


def openapi_document(league: League, settings: Settings | None = None) -> dict[str, Any]:
    """The OpenAPI 3.1 description of the service (served at ``/openapi.json``), made from
    :data:`OPERATIONS` and the lab's (:mod:`rankcraft.lab`), the request bodies' specs,
    the league's state classes and the settings (:mod:`rankcraft.openapi`)."""
    settings = settings or Settings()
    bodies = request_bodies(settings)
    bodies["LabJobRequest"] = lab.lab_body(_lab_limits(settings))
    return build_document(
        league,
        OPERATIONS + lab.OPERATIONS,
        bodies,
        query_parameters(settings),
        settings.auth_reads,
        answers=lab.lab_schemas(),
    )


def _forecast(
    league: League,
    sides: list[list[str]],
    at: Any,
    home: int | None,
    season: str | int | None = None,
) -> JSONResponse:
    """The answer of ``/predict``: what ``League.predict`` gives (``probabilities``),
    the whole :class:`~rankcraft.Forecast` beside it, and the players the league has
    never seen (predicted as new players), each with the known ids most like it."""
    forecast = league.forecast(sides, at=at, home=home, season=season)
    new = [
        {"id": p, "similar": close_to(p, player_candidates(league, p))}
        for p in dict.fromkeys(p for side in sides for p in side)
        if p not in league
    ]
    return JSONResponse(
        {
            "sides": sides,
            "probabilities": list(forecast.probabilities),
            **forecast.to_dict(),
            "new_players": new,
        }
    )


class _Handlers:
    """The endpoints of one application, over one league."""

    def __init__(
        self, league: League, settings: Settings, thread: LeagueThread | None = None
    ) -> None:
        self.league = league
        self.settings = settings
        self.thread = thread or LeagueThread()
        self.matches = 0  # the count /health last read
        self.codec = league.codec
        self.bodies = request_bodies(settings)
        self.query = query_parameters(settings)

    def predict_sides(self, body: dict[str, Any]) -> JSONResponse:
        sides, home = body["sides"], body.get("home")
        if home is not None and home >= len(sides):
            raise InputError(f"'home' must be the index of a side: {home!r}"[:300])
        self.league.refresh([p for side in sides for p in side])
        return _forecast(self.league, sides, body.get("at"), home, body.get("season"))

    def parse(self, body: Any) -> Match:
        """A match of a request, within the service's limits."""
        if not isinstance(body, dict):
            raise InputError(f"a match must be a JSON object, got {type(body).__name__}")
        _check_sides(body.get("teams"), "teams", self.settings)
        match = parse_match(body)
        late = past_the_clock(match.played_at, self.settings.max_future, "played_at")
        if late is not None:
            raise LimitError(late, field="played_at")
        return match

    async def post_match(self, request: Request) -> JSONResponse:
        match = self.parse(await _json_body(request, self.settings))
        report = self.league.record(match)
        return JSONResponse(
            {"match": match.to_dict(), "report": self.codec.report_to_dict(report)},
            status_code=201,
        )

    async def post_batch(self, request: Request) -> JSONResponse:
        """Every match is checked first (all errors answered, each with its ``index``);
        then all are recorded in one transaction, or none (the first refused match's
        error, with its index)."""
        body = await _json_body(request, self.settings)
        if isinstance(body, list):
            body = {"matches": body}
        items = self.bodies["MatchBatch"].check(body)["matches"]
        errors: list[dict[str, Any]] = []
        matches: list[Match] = []
        for index, item in enumerate(items):
            try:
                matches.append(self.parse(item))
            except InputError as exc:
                errors.append(_item_error(index, exc))
        if not errors:
            reports = []
            try:
                with self.league.batch():
                    for index, match in enumerate(matches):
                        try:
                            reports.append(self.league.record(match))
                        except InputError as exc:
                            errors.append(_item_error(index, exc))
                            raise
            except InputError:
                pass
            else:
                return _ItemwiseJSON(
                    {
                        "recorded": len(reports),
                        "reports": (self.codec.report_to_dict(r) for r in reports),
                    },
                    status_code=201,
                )
        first = errors[0]
        status = first["status"]
        answer = error_body(
            status,
            first["type"],
            f"matches[{first['index']}]: {first['message']}"
            + (f" (and {len(errors) - 1} more errors)" if len(errors) > 1 else "")
            + "; nothing was recorded",
            f"matches[{first['index']}]" + (f".{first['field']}" if first["field"] else ""),
        )
        answer["errors"] = errors
        return _ItemwiseJSON(answer, status_code=status)

    async def get_match(self, request: Request) -> JSONResponse:
        match_id = request.path_params["match_id"]
        row = self.league.store.match(match_id)
        if row is None:
            raise NotFoundError(f"unknown match {match_id!r}")
        return JSONResponse(
            {
                "seq": row.seq,
                "match": row.match.to_dict(),
                "report": self.codec.report_to_dict(row.report),
            }
        )

    async def get_player(self, request: Request) -> JSONResponse:
        player = request.path_params["player_id"]
        self.league.refresh([player])
        record = self.league.player(player)
        standing = None
        if self.league.has_standings:
            self.league.refresh()
            standing = self.league.standings([player]).get(player)
        return JSONResponse(
            {
                "player": self.codec.record_to_dict(record),
                "standing": standing,
                "display": self.league.shown(record).to_dict(),
            }
        )

    async def leaderboard(self, request: Request) -> JSONResponse:
        """A page of the leaderboard, as ``League.leaderboard`` gives it (and the CLI's
        ``leaderboard`` with the same options); places count from ``offset + 1``."""
        query = self.query
        top = _query(request, query["top"])
        offset = _query(request, query["offset"]) or 0
        active_days = _query(request, query["active_days"])
        tier = _query(request, query["tier"])
        everyone = bool(_query(request, query["all"]))
        holding = _query(request, query["holding"])
        self.league.refresh()
        page = self.league.placed(
            top,
            offset=offset,
            active_days=active_days,
            tier=tier,
            everyone=everyone,
            holding=holding,
        )
        standings = self.league.standings(r.id for _, r in page)
        return JSONResponse(
            [
                {
                    "place": place,
                    "standing": standings.get(r.id),
                    "display": self.league.shown(r).to_dict(),
                    **self.codec.record_to_dict(r),
                }
                for place, r in page
            ]
        )

    async def predict(self, request: Request) -> JSONResponse:
        query = self.query
        texts = request.query_params.getlist("side")
        sides = [[p for p in s.split(",") if p] for s in texts]
        _check_sides(sides, "side", self.settings)
        if len(sides) < 2:
            raise InputError(f"'side' must be given once per side, at least twice: {sides!r}")
        _query(request, query["side"])
        at = _query(request, query["at"])
        home = _query(request, query["home"])
        self.league.refresh([p for side in sides for p in side])
        return _forecast(self.league, sides, at, home)

    async def post_predict(self, request: Request) -> JSONResponse:
        body = self.bodies["Prediction"].check(await _json_body(request, self.settings))
        return self.predict_sides(body)

    async def match_opponents(self, request: Request) -> JSONResponse:
        body = self.bodies["OpponentsQuery"].check(await _json_body(request, self.settings))
        options = {k: body[k] for k in ("width", "strict", "widen") if body.get(k) is not None}
        rank_filter = RankFilter(**options)
        self.league.refresh()
        found = self.league.find_opponents(
            body["players"],
            rank_filter,
            needed=body.get("needed") or 1,
            waited=body.get("waited") or 0.0,
            limit=100 if body.get("limit") is None else body["limit"],
            active_days=body.get("active_days"),
        )
        return JSONResponse(found.to_dict())

    async def match_quality(self, request: Request) -> JSONResponse:
        body = self.bodies["QualityQuery"].check(await _json_body(request, self.settings))
        sides, home = body["sides"], body.get("home")
        if home is not None and home >= len(sides):
            raise InputError(f"'home' must be the index of a side: {home!r}"[:300])
        self.league.refresh([p for side in sides for p in side])
        value, judged_by = matchmaking.quality(self.league, sides, at=body.get("at"), home=home)
        probabilities = self.league.predict(sides, at=body.get("at"), home=home)
        return JSONResponse(
            {
                "sides": sides,
                "quality": value,
                "judged_by": judged_by,
                "probabilities": probabilities,
            }
        )

    async def match_balance(self, request: Request) -> JSONResponse:
        body = self.bodies["BalanceQuery"].check(await _json_body(request, self.settings))
        self.league.refresh(body["players"])
        teams = self.league.balance(body["players"], body.get("teams") or 2, at=body.get("at"))
        return JSONResponse(teams.to_dict())

    async def reset(self, request: Request) -> JSONResponse:
        body = self.bodies["SeasonEvent"].check(await _json_body(request, self.settings))
        changed = self.league.reset(body["kind"], at=body.get("at"))
        return JSONResponse({"kind": body["kind"], "changed": changed})

    async def ruleset(self, request: Request) -> JSONResponse:
        rs = self.league.ruleset
        return JSONResponse(
            {
                "name": rs.name,
                "description": rs.description,
                "ruleset": to_dict(rs),
                "toml": dumps(rs),
            }
        )

    async def health(self, request: Request) -> JSONResponse:
        """Answered on the service's loop: the count of matches is asked of the league's
        thread, and the last one read is answered if that thread is busy for 0.5 s."""
        try:
            async with asyncio.timeout(0.5):
                self.matches = await self.thread.call(lambda: self.league.match_count)
        except TimeoutError:
            pass
        return JSONResponse({"ok": True, "rankcraft": __version__, "matches": self.matches})

    async def openapi(self, request: Request) -> JSONResponse:
        return JSONResponse(openapi_document(self.league, self.settings))


@cache
def _docs_page() -> tuple[str, str]:
    """The page at ``/docs`` (core/docs.html, shipped in the package) and the
    Content-Security-Policy that lets only its own script run and fetch only this site."""
    page = resources.files("rankcraft").joinpath("docs.html").read_text("utf-8")
    scripts = re.findall(r"<script>(.*?)</script>", page, flags=re.DOTALL)
    hashes = " ".join(
        f"'sha256-{base64.b64encode(hashlib.sha256(s.encode()).digest()).decode()}'"
        for s in scripts
    )
    policy = (
        f"default-src 'none'; script-src {hashes}; style-src 'unsafe-inline'; "
        "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    )
    return page, policy


async def docs_page(request: Request) -> HTMLResponse:
    """A small page that reads ``/openapi.json`` and can send requests (no CDN)."""
    page, policy = _docs_page()
    return HTMLResponse(page, headers={"Content-Security-Policy": policy})


ON_LOOP = frozenset({"health"})
"""Handlers that run on the service's loop; every other one runs on the league's thread
(:class:`rankcraft.jobs.LeagueThread`), so that the loop always answers."""


def create_app(
    league: League, settings: Settings | None = None, *, db: str | None = None
) -> Starlette:
    """The HTTP application over ``league`` (which it closes at shutdown). ``db``: the
    league's database, which lab jobs open in their own process (default: the file of
    an SQLite league; an in-memory league's matches are handed to its jobs)."""
    settings = settings or Settings()
    thread = LeagueThread()
    h = _Handlers(league, settings, thread)

    def guarded(handler: Handler, scope: str | None) -> Handler:
        if scope is None or (scope == "read" and not settings.auth_reads):
            return handler

        async def endpoint(request: Request) -> JSONResponse:
            _bearer(request, league, scope)
            return await handler(request)

        return endpoint

    def off_loop(handler: Handler, scope: str | None) -> Handler:
        return thread.handler(guarded(handler, scope))

    async def json_body(request: Request, large: bool) -> Any:
        limits = attrs.evolve(settings, max_body=settings.max_body * 16) if large else settings
        return await _json_body(request, limits)

    lab_handlers = _lab_handlers(league, settings, db, lambda r: json_body(r, True))
    pool = lab_handlers.pool
    routes = [
        Route(
            op.route_path,
            (guarded if op.handler in ON_LOOP else off_loop)(
                getattr(handlers, op.handler), op.scope
            ),
            methods=[op.method],
        )
        for ops, handlers in ((OPERATIONS, h), (lab.OPERATIONS, lab_handlers))
        for op in ops
    ] + [
        Route("/openapi.json", h.openapi, methods=["GET"]),
        Route("/docs", docs_page, methods=["GET"]),
    ]
    routes += web.routes(league, json_body, off_loop)

    async def as_json(request: Request, exc: Exception) -> JSONResponse:
        return _fail(exc)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        yield
        pool.close()
        thread.close()
        league.close()

    middleware = []
    if settings.cors_origins:
        middleware.append(
            Middleware(
                CORSMiddleware,
                allow_origins=list(settings.cors_origins),
                allow_methods=["GET", "POST"],
                allow_headers=["Authorization", "Content-Type"],
                max_age=600,
            )
        )
    app = Starlette(
        routes=routes,
        middleware=middleware,
        # rankcraft's errors, Starlette's (404, 405) and anything else (500), all as JSON
        exception_handlers={RankcraftError: as_json, HTTPException: as_json, Exception: as_json},
        lifespan=lifespan,
    )
    weakref.finalize(app, pool.close)  # (an application never shut down, as in tests)
    thread.close_with(app)
    return app


def _lab_handlers(
    league: League, settings: Settings, db: str | None, json_body: Callable[[Request], Any]
) -> lab.LabHandlers:
    """The lab's endpoints over ``league``, with their pool of jobs (shared with the
    other workers through a folder named after the league's database, when it has one:
    ``db``, else an SQLite league's file)."""
    if db is None and isinstance(getattr(league.store, "path", None), os.PathLike):
        db = os.fspath(league.store.path)  # type: ignore[attr-defined]
    pool = JobPool(
        settings.lab_workers,
        per_client=settings.lab_jobs_per_client,
        keep=settings.lab_keep,
        timeout=settings.lab_timeout,
        shelf=None if db is None else Shelf(lab_folder(db), settings.lab_keep),
        preload=("rankcraft.lab",),
    )
    return lab.LabHandlers(
        league,
        pool,
        _lab_limits(settings),
        functools.partial(_check_sides, settings=settings),
        db=db,
        auth_reads=settings.auth_reads,
        json_body=json_body,
        processes=settings.lab_processes or default_processes(),
    )


def lab_folder(db: str) -> str:
    """Where the worker processes of a service over ``db`` share their lab jobs (a
    folder of the system's temporary one, named after the database)."""
    import tempfile

    name = hashlib.sha256(os.path.abspath(db).encode() if "://" not in db else db.encode())
    return os.path.join(tempfile.gettempdir(), f"rankcraft-lab-{name.hexdigest()[:16]}")


def _lab_limits(settings: Settings) -> lab.LabLimits:
    return lab.LabLimits(settings.max_sides, settings.max_players, settings.lab_max_replays)


def app_from_env() -> Starlette:
    """The application over the league ``$RANKCRAFT_SERVE_DB`` names (uvicorn calls this
    in every worker process: ``uvicorn --factory rankcraft.serve:app_from_env``)."""
    db = os.environ.get(DB_ENV)
    if not db:
        raise InputError(f"set ${DB_ENV} to the league's database (a file or postgresql:// URL)")
    league = League.open(db, os.environ.get(RULESET_ENV) or None)
    return create_app(league, Settings.from_env(), db=db)


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
