"""The application factory: :func:`create_app` assembles the routes of every resource
(each behind its token check, and off the service's loop on the league's thread), the
web page's and the lab's, the error answers and the shutdown; :func:`app_from_env` is
what uvicorn calls in each worker process."""

from __future__ import annotations

import os
import weakref
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

import attrs

from .. import lab
from ..engine import League
from ..errors import InputError, RankcraftError
from ..extras import missing
from ..jobs import JobPool, LeagueThread, Worker
from ..openapi import Operation
from . import corrections, livecompare, matches, page, parsing, players, predict
from . import league as league_routes
from .auth import Handler, guard
from .errors import answer_error
from .openapi_document import openapi_route
from .settings import DB_ENV, RULESET_ENV, Settings

try:
    from starlette.applications import Starlette
    from starlette.exceptions import HTTPException
    from starlette.middleware import Middleware
    from starlette.middleware.cors import CORSMiddleware
    from starlette.requests import Request
    from starlette.routing import Route
except ImportError:  # pragma: no cover - checked by cli.cmd_serve before use
    raise missing("the HTTP service needs", "Starlette and uvicorn", "serve") from None

LAB_BODY = 16
"""A lab request's body may be this many times ``--max-body`` (16 MiB by default)."""

WORKER_PROCESSES, WORKER_QUEUED, WORKER_TIMEOUT = 1, 32, 120.0
"""The worker processes of each service worker: where the CPU work an anonymous request
causes runs (:class:`rankcraft.jobs.Worker`), off the league's thread; the most pieces
of work waiting or running (429 beyond) and the seconds one may take (503 beyond)."""

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
    guarded = guard(league, settings)

    def off_loop(handler: Handler, scope: str | None) -> Handler:
        return thread.handler(guarded(handler, scope))

    lab_limits = attrs.evolve(settings, max_body=settings.max_body * LAB_BODY)

    async def lab_body(request: Request) -> bytes:
        return await parsing.read_body(request, lab_limits)

    async def check_body(request: Request) -> bytes:
        return await parsing.read_body(request, settings)

    worker = Worker(
        WORKER_PROCESSES, queued=WORKER_QUEUED, timeout=WORKER_TIMEOUT, preload=("rankcraft.lab",)
    )
    lab_handlers = page.lab_handlers(league, settings, db, lab_body, worker)
    pool = lab_handlers.pool
    resources = _resources(league, settings, thread, worker, lab_handlers)
    routes = [
        Route(
            op.route_path,
            (guarded if op.handler in ON_LOOP else off_loop)(
                getattr(handlers, op.handler), op.scope
            ),
            methods=[op.method],
        )
        for ops, handlers in resources
        for op in ops
    ] + [
        Route("/openapi.json", openapi_route(league, settings), methods=["GET"]),
        Route("/docs", page.docs_page, methods=["GET"]),
    ]
    routes += page.routes(
        league, check_body, worker, off_loop, challenger=settings.challenger is not None
    )
    app = Starlette(
        routes=routes,
        middleware=_middleware(settings),
        # rankcraft's errors, Starlette's (404, 405) and anything else (500), all as JSON
        exception_handlers={
            RankcraftError: answer_error,
            HTTPException: answer_error,
            Exception: answer_error,
        },
        lifespan=_lifespan(league, pool, worker, thread, _closers(resources)),
    )
    app.state.worker = worker  # (request bodies larger than parsing.INLINE_BODY)
    weakref.finalize(app, pool.close)  # (an application never shut down, as in tests)
    weakref.finalize(app, worker.close)
    thread.close_with(app)
    return app


def _resources(
    league: League,
    settings: Settings,
    thread: LeagueThread,
    worker: Worker,
    lab_handlers: lab.LabHandlers,
) -> list[tuple[tuple[Operation, ...], Any]]:
    """Each resource's operations and the object whose methods handle them, in the order
    of the document's paths (:data:`~.openapi_document.OPERATIONS`, then the lab's)."""
    bodies = parsing.request_bodies(settings)
    query = parsing.query_parameters(settings)
    shared = (league, settings, thread, bodies, query, worker, lab_handlers.db)
    return [
        (matches.OPERATIONS, matches.MatchRoutes(*shared)),
        (corrections.OPERATIONS, corrections.CorrectionRoutes(*shared)),
        (players.OPERATIONS, players.PlayerRoutes(*shared)),
        (predict.OPERATIONS, predict.PredictRoutes(*shared)),
        (league_routes.OPERATIONS, league_routes.LeagueRoutes(*shared)),
        (livecompare.OPERATIONS, livecompare.LiveCompareRoutes(*shared)),
        (lab.OPERATIONS, lab_handlers),
    ]


def _closers(resources: list[tuple[tuple[Operation, ...], Any]]) -> list[Callable[[], None]]:
    """What the resources hold open besides the league (the challenger league)."""
    return [h.close for _, h in resources if isinstance(h, livecompare.LiveCompareRoutes)]


def _middleware(settings: Settings) -> list[Middleware]:
    """CORS headers for the origins the settings allow (none: no middleware)."""
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
    return middleware


def _lifespan(
    league: League,
    pool: JobPool,
    worker: Worker,
    thread: LeagueThread,
    closers: list[Callable[[], None]],
) -> Callable[[Starlette], AbstractAsyncContextManager[None]]:
    """The application's shutdown: the lab's pool, the worker processes, the league's
    thread, then the league and what the resources hold open (the challenger league)
    (left open if the thread is still in a piece of work after 10 s: a plugin that does
    not return; the process ends with it)."""

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        yield
        pool.close()
        worker.close()
        if thread.close(timeout=10.0):
            league.close()
            for close in closers:
                close()

    return lifespan


def app_from_env() -> Starlette:
    """The application over the league ``$RANKCRAFT_SERVE_DB`` names (uvicorn calls this
    in every worker process: ``uvicorn --factory rankcraft.serve:app_from_env``)."""
    db = os.environ.get(DB_ENV)
    if not db:
        raise InputError(f"set ${DB_ENV} to the league's database (a file or postgresql:// URL)")
    league = League.open(db, os.environ.get(RULESET_ENV) or None)
    return create_app(league, Settings.from_env(), db=db)
