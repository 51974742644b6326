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
POST     ``/matches/{id}/void``  record       ``{"reason"}``: void it, re-rate what follows;
                                              the edit (docs/corrections.md)
POST     ``.../{id}/correct``    record       ``{"fields", "reason"}``: correct it, the same
GET      ``/edits``              (read)       the audit of edits (``?match=ID&player=ID``)
GET      ``/players/{id}``       (read)       ``{"player", "standing"}``; ``?at=TIME``: then
GET      ``/leaderboard``        (read)       players best first; a page of them with
                                              ``?top=N&offset=N``, filtered by
                                              ``active_days=D``, ``tier=T``, ``all=true``;
                                              ``at=TIME``: as the league stood then
GET      ``/predict``            (read)       ``?side=a,b&side=c[&at=ISO]``: the forecast
POST     ``/predict``            (read)       the same for ``{"sides", "at", "home", "season"}``
POST     ``/match/opponents``    (read)       ``{"players", "width", ...}``: a rank filter's players
POST     ``/match/quality``      (read)       ``{"sides", "at", "home"}``: quality in [0, 1]
POST     ``/match/balance``      (read)       ``{"players", "teams", "at"}``: fair teams
GET      ``/ruleset``            (read)       the league's ruleset, as a table and as TOML
POST     ``/reset``              admin        ``{"kind", "at"}``: a season event
GET      ``/health``                          ``{"ok": true, "matches": N}``; 503 when the
                                              league cannot answer
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
keeps answering (``/health`` answers from it); whatever a plugin raises there, the
thread lives on and the request is answered as a ``PluginError`` naming it. The CPU work
an anonymous request causes (a large body's decoding, the lab's checks, a forecast's
place integral) runs in a worker process (:class:`rankcraft.jobs.Worker`), the ruleset
lab's replays as jobs in processes of their own (:mod:`rankcraft.lab`). Several workers
over one PostgreSQL database record in parallel; each read first takes what the others
committed, so any worker answers as one would (docs/deploy.md).

The OpenAPI document is generated (:mod:`rankcraft.openapi`): the routes, their token
checks and the document's paths all come from :data:`OPERATIONS`; the request bodies are
checked by the field specs their schemas are written from (:func:`request_bodies`).

The package, one module a part: :mod:`~rankcraft.serve.app` (the application factory),
:mod:`~rankcraft.serve.settings`, :mod:`~rankcraft.serve.parsing` (request bodies and
query parameters), :mod:`~rankcraft.serve.auth` (tokens), :mod:`~rankcraft.serve.errors`,
the routes of each resource (:mod:`~rankcraft.serve.matches`,
:mod:`~rankcraft.serve.corrections`,
:mod:`~rankcraft.serve.players` with the leaderboard, :mod:`~rankcraft.serve.predict`
with matchmaking, :mod:`~rankcraft.serve.league` with the ruleset, season events and
health, :mod:`~rankcraft.serve.page` with the web page and the lab's jobs),
:mod:`~rankcraft.serve.openapi_document` and :mod:`~rankcraft.serve.server` (uvicorn).

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

from ..engine import League  # noqa: F401 (the examples)
from .app import ON_LOOP, app_from_env, create_app
from .auth import Handler
from .errors import (
    Forbidden,
    LimitError,
    NotFoundError,
    PayloadTooLarge,
    RequestError,
    RequestTimeout,
    ServiceError,
    Unauthorized,
    UnsupportedMediaType,
    error_body,
)
from .openapi_document import OPERATIONS, openapi_document
from .page import docs_page, lab_folder
from .parsing import BALANCE_PLAYERS, matchmaking_bodies, query_parameters, request_bodies
from .server import GuardedH11Protocol, announce_when_ready, log_config
from .settings import DB_ENV, RULESET_ENV, SETTINGS_ENV, Settings

__all__ = [
    "BALANCE_PLAYERS",
    "DB_ENV",
    "ON_LOOP",
    "OPERATIONS",
    "RULESET_ENV",
    "SETTINGS_ENV",
    "Forbidden",
    "GuardedH11Protocol",
    "Handler",
    "LimitError",
    "NotFoundError",
    "PayloadTooLarge",
    "RequestError",
    "RequestTimeout",
    "ServiceError",
    "Settings",
    "Unauthorized",
    "UnsupportedMediaType",
    "announce_when_ready",
    "app_from_env",
    "create_app",
    "docs_page",
    "error_body",
    "lab_folder",
    "log_config",
    "matchmaking_bodies",
    "openapi_document",
    "query_parameters",
    "request_bodies",
]
