"""``rankcraft serve``: a league over HTTP (``pip install 'rankcraft[serve]'``).

A Starlette application over one :class:`~rankcraft.League`, run by uvicorn. JSON in and
out, in the formats of the match and state contracts (DESIGN §2):

=======  ======================  ====================================================
POST     ``/matches``            record one match; 201 with ``{"match", "report"}``
GET      ``/matches/{id}``       a recorded match with its report
GET      ``/players/{id}``       ``{"player", "standing"}``
GET      ``/leaderboard``        ``?top=N``: players best first
GET      ``/predict``            ``?side=a,b&side=c[&at=ISO]``: win probability per side
GET      ``/ruleset``            the league's ruleset, as a table and as TOML
GET      ``/health``             ``{"ok": true, "matches": N}``
GET      ``/openapi.json``       the OpenAPI 3.1 description of all of the above
=======  ======================  ====================================================

Errors are ``{"error": {"status", "type", "message", "field"}}``: 400 for bad input,
404 for an unknown player, match or path, 409 for a match id already recorded or a
match played before one of its players' last match.

Each worker process opens the league itself and handles one request at a time (the
league is not shared between threads). Several workers over one PostgreSQL database
record in parallel; each read first takes what the others committed, so any worker
answers as one would (docs/deploy.md).

>>> from starlette.testclient import TestClient
>>> client = TestClient(create_app(League("elo")))
>>> client.post("/matches", json={"id": "m1", "played_at": "2024-05-01",
...                               "teams": [["ann"], ["bo"]], "scores": [1, 0]}).status_code
201
>>> client.get("/players/ann").json()["player"]["skill"]
{'rating': 1516.0, 'peak': 1516.0}
>>> again = client.post("/matches", json={"id": "m1", "played_at": "2024-05-01",
...                                       "teams": [["ann"], ["bo"]], "scores": [1, 0]})
>>> again.status_code, again.json()["error"]["type"], again.json()["error"]["field"]
(409, 'DuplicateMatchError', 'id')
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from . import __version__
from .engine import League, UnknownPlayerError
from .errors import (
    DuplicateMatchError,
    InputError,
    LateMatchError,
    RankcraftError,
)
from .io import parse_match
from .jsontext import loads_strict
from .ruleset import dumps, to_dict

try:
    from starlette.applications import Starlette
    from starlette.exceptions import HTTPException
    from starlette.requests import Request
    from starlette.responses import JSONResponse
    from starlette.routing import Route
except ImportError:  # pragma: no cover - checked by cli.cmd_serve before use
    raise InputError(
        "the HTTP service needs Starlette and uvicorn: pip install 'rankcraft[serve]'"
    ) from None

DB_ENV = "RANKCRAFT_SERVE_DB"
RULESET_ENV = "RANKCRAFT_SERVE_RULESET"
"""How ``rankcraft serve --workers N`` tells each worker process which league to open."""


class NotFoundError(InputError):
    """A match id the league does not hold (HTTP 404)."""


def _status(exc: InputError) -> int:
    if isinstance(exc, UnknownPlayerError | NotFoundError):
        return 404
    if isinstance(exc, DuplicateMatchError | LateMatchError):
        return 409
    return 400


def error_body(status: int, kind: str, message: str, field: str | None) -> dict[str, Any]:
    """The JSON of an error answer."""
    return {"error": {"status": status, "type": kind, "message": message, "field": field}}


def _fail(exc: Exception) -> JSONResponse:
    if isinstance(exc, InputError):
        status = _status(exc)
        body = error_body(status, type(exc).__name__, str(exc), exc.field)
    elif isinstance(exc, HTTPException):
        status = exc.status_code
        body = error_body(status, "HTTPException", str(exc.detail), None)
    else:
        status = 500
        body = error_body(status, type(exc).__name__, str(exc), None)
    return JSONResponse(body, status_code=status)


async def _json_body(request: Request) -> Any:
    return loads_strict(await request.body(), what="the request body")


def _int_param(request: Request, name: str) -> int | None:
    text = request.query_params.get(name)
    if text is None:
        return None
    try:
        value = int(text)
    except ValueError:
        raise InputError(f"'{name}' must be a whole number >= 1: {text!r}") from None
    if value < 1:
        raise InputError(f"'{name}' must be a whole number >= 1: {text!r}")
    return value


def create_app(league: League) -> Starlette:
    """The HTTP application over ``league`` (which it closes at shutdown)."""
    codec = league.codec

    async def post_match(request: Request) -> JSONResponse:
        body = await _json_body(request)
        if not isinstance(body, dict):
            raise InputError(f"a match must be a JSON object, got {type(body).__name__}")
        match = parse_match(body)
        report = league.record(match)
        return JSONResponse(
            {"match": match.to_dict(), "report": codec.report_to_dict(report)},
            status_code=201,
        )

    async def get_match(request: Request) -> JSONResponse:
        match_id = request.path_params["match_id"]
        row = league.store.match(match_id)
        if row is None:
            raise NotFoundError(f"unknown match {match_id!r}")
        return JSONResponse(
            {
                "seq": row.seq,
                "match": row.match.to_dict(),
                "report": codec.report_to_dict(row.report),
            }
        )

    async def get_player(request: Request) -> JSONResponse:
        player = request.path_params["player_id"]
        league.refresh([player])
        record = league.player(player)
        standing = None
        if league.has_standings:
            league.refresh()
            standing = league.standings().get(player)
        return JSONResponse({"player": codec.record_to_dict(record), "standing": standing})

    async def leaderboard(request: Request) -> JSONResponse:
        top = _int_param(request, "top")
        league.refresh()
        standings = league.standings()
        return JSONResponse(
            [
                {"place": i, "standing": standings.get(r.id), **codec.record_to_dict(r)}
                for i, r in enumerate(league.leaderboard(top), 1)
            ]
        )

    async def predict(request: Request) -> JSONResponse:
        sides = [[p for p in s.split(",") if p] for s in request.query_params.getlist("side")]
        if len(sides) < 2:
            raise InputError(f"'side' must be given once per side, at least twice: {sides!r}")
        players = [p for side in sides for p in side]
        league.refresh(players)
        home = request.query_params.get("home")
        if home is not None and not home.isdigit():
            raise InputError(f"'home' must be the index of a side: {home!r}")
        probabilities = league.predict(
            sides, at=request.query_params.get("at"), home=None if home is None else int(home)
        )
        return JSONResponse({"sides": sides, "probabilities": probabilities})

    async def ruleset(request: Request) -> JSONResponse:
        rs = league.ruleset
        return JSONResponse(
            {
                "name": rs.name,
                "description": rs.description,
                "ruleset": to_dict(rs),
                "toml": dumps(rs),
            }
        )

    async def health(request: Request) -> JSONResponse:
        return JSONResponse({"ok": True, "rankcraft": __version__, "matches": league.match_count})

    async def openapi(request: Request) -> JSONResponse:
        return JSONResponse(openapi_document(league))

    routes = [
        Route("/matches", post_match, methods=["POST"]),
        Route("/matches/{match_id:path}", get_match, methods=["GET"]),
        Route("/players/{player_id:path}", get_player, methods=["GET"]),
        Route("/leaderboard", leaderboard, methods=["GET"]),
        Route("/predict", predict, methods=["GET"]),
        Route("/ruleset", ruleset, methods=["GET"]),
        Route("/health", health, methods=["GET"]),
        Route("/openapi.json", openapi, methods=["GET"]),
    ]

    async def as_json(request: Request, exc: Exception) -> JSONResponse:
        return _fail(exc)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        yield
        league.close()

    return Starlette(
        routes=routes,
        # rankcraft's errors, Starlette's (404, 405) and anything else (500), all as JSON
        exception_handlers={RankcraftError: as_json, HTTPException: as_json, Exception: as_json},
        lifespan=lifespan,
    )


def app_from_env() -> Starlette:
    """The application over the league ``$RANKCRAFT_SERVE_DB`` names (uvicorn calls this
    in every worker process: ``uvicorn --factory rankcraft.serve:app_from_env``)."""
    db = os.environ.get(DB_ENV)
    if not db:
        raise InputError(f"set ${DB_ENV} to the league's database (a file or postgresql:// URL)")
    return create_app(League.open(db, os.environ.get(RULESET_ENV) or None))


def _schema_ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


def openapi_document(league: League) -> dict[str, Any]:
    """The OpenAPI 3.1 description of the service (served at ``/openapi.json``)."""

    def answer(description: str, schema: dict[str, Any]) -> dict[str, Any]:
        return {"description": description, "content": {"application/json": {"schema": schema}}}

    def errors(*codes: int) -> dict[str, Any]:
        text = {
            400: "bad input; `field` names what was wrong",
            404: "unknown player, match or path",
            409: "the match id is already recorded, or the match is earlier than one of "
            "its players' last match",
        }
        return {str(c): answer(text[c], _schema_ref("Error")) for c in codes}

    string_list = {"type": "array", "items": {"type": "string"}}
    state = {"type": "object", "additionalProperties": {"type": ["number", "integer", "string"]}}
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "rankcraft",
            "version": __version__,
            "description": f"A league rated by the ruleset {league.ruleset.name!r}.",
        },
        "paths": {
            "/matches": {
                "post": {
                    "summary": "Record one match",
                    "requestBody": {
                        "required": True,
                        "content": {"application/json": {"schema": _schema_ref("Match")}},
                    },
                    "responses": {
                        "201": answer(
                            "the match as stored, with its report", _schema_ref("Recorded")
                        ),
                        **errors(400, 409),
                    },
                }
            },
            "/matches/{match_id}": {
                "get": {
                    "summary": "A recorded match with its report",
                    "parameters": [_path_param("match_id")],
                    "responses": {
                        "200": answer("the match", _schema_ref("Recorded")),
                        **errors(404),
                    },
                }
            },
            "/players/{player_id}": {
                "get": {
                    "summary": "A player's state",
                    "parameters": [_path_param("player_id")],
                    "responses": {
                        "200": answer(
                            "the player (state export format) and league-wide label",
                            {
                                "type": "object",
                                "properties": {
                                    "player": _schema_ref("Player"),
                                    "standing": {"type": ["string", "null"]},
                                },
                            },
                        ),
                        **errors(404),
                    },
                }
            },
            "/leaderboard": {
                "get": {
                    "summary": "Players best first",
                    "parameters": [
                        {
                            "name": "top",
                            "in": "query",
                            "schema": {"type": "integer", "minimum": 1},
                            "description": "only the first N players",
                        }
                    ],
                    "responses": {
                        "200": answer(
                            "place, standing and state per player",
                            {"type": "array", "items": _schema_ref("Player")},
                        ),
                        **errors(400),
                    },
                }
            },
            "/predict": {
                "get": {
                    "summary": "Win probability of each side",
                    "parameters": [
                        {
                            "name": "side",
                            "in": "query",
                            "required": True,
                            "schema": string_list,
                            "description": "one per side, comma-separated player ids",
                        },
                        {
                            "name": "at",
                            "in": "query",
                            "schema": {"type": "string", "format": "date-time"},
                            "description": "predict for this time (decays idle players)",
                        },
                        {
                            "name": "home",
                            "in": "query",
                            "schema": {"type": "integer", "minimum": 0},
                            "description": "index of the side at home",
                        },
                    ],
                    "responses": {
                        "200": answer(
                            "one probability per side, summing to 1",
                            {
                                "type": "object",
                                "properties": {
                                    "sides": {"type": "array", "items": string_list},
                                    "probabilities": {
                                        "type": "array",
                                        "items": {"type": "number", "minimum": 0, "maximum": 1},
                                    },
                                },
                            },
                        ),
                        **errors(400),
                    },
                }
            },
            "/ruleset": {
                "get": {
                    "summary": "The league's ruleset",
                    "responses": {
                        "200": answer(
                            "name, description, the ruleset as a table and as TOML",
                            {"type": "object"},
                        )
                    },
                }
            },
            "/health": {
                "get": {
                    "summary": "Liveness and the count of matches",
                    "responses": {"200": answer("ok", {"type": "object"})},
                }
            },
        },
        "components": {
            "schemas": {
                "Match": {
                    "type": "object",
                    "description": "DESIGN §2: one match",
                    "required": ["id", "played_at", "teams"],
                    "properties": {
                        "id": {"type": "string", "minLength": 1},
                        "played_at": {"type": "string", "description": "ISO-8601; no zone = UTC"},
                        "teams": {"type": "array", "minItems": 2, "items": string_list},
                        "scores": {"type": "array", "items": {"type": "number"}},
                        "ranks": {"type": "array", "items": {"type": "integer", "minimum": 1}},
                        "seconds_played": {"type": "array"},
                        "quit": string_list,
                        "home": {"type": ["integer", "null"]},
                        "weight": {"type": "number", "exclusiveMinimum": 0, "maximum": 1},
                        "meta": {"type": "object"},
                    },
                },
                "Player": {
                    "type": "object",
                    "description": "DESIGN §2: a player's state",
                    "required": ["id", "skill", "matches"],
                    "properties": {
                        "id": {"type": "string"},
                        "skill": state,
                        "rank": {"oneOf": [state, {"type": "null"}]},
                        "matches": {"type": "integer"},
                        "last_played": {"type": ["string", "null"]},
                    },
                },
                "Recorded": {
                    "type": "object",
                    "properties": {
                        "seq": {"type": "integer"},
                        "match": _schema_ref("Match"),
                        "report": {"type": "object", "description": "expectation and changes"},
                    },
                },
                "Error": {
                    "type": "object",
                    "properties": {
                        "error": {
                            "type": "object",
                            "required": ["status", "type", "message", "field"],
                            "properties": {
                                "status": {"type": "integer"},
                                "type": {"type": "string"},
                                "message": {"type": "string"},
                                "field": {"type": ["string", "null"]},
                            },
                        }
                    },
                },
            }
        },
    }


def _path_param(name: str) -> dict[str, Any]:
    return {"name": name, "in": "path", "required": True, "schema": {"type": "string"}}
