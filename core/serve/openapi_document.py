"""The service's OpenAPI document (served at ``/openapi.json``): its table of operations
(:data:`OPERATIONS`, which also builds its routes and token checks) and the document made
from it, the request parsing's specs and the league (:mod:`rankcraft.openapi`)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from .. import lab
from ..engine import League
from ..extras import missing
from ..openapi import build_document
from . import corrections, league, livecompare, matches, parsing, players, predict
from .page import lab_limits
from .settings import Settings

try:
    from starlette.requests import Request
    from starlette.responses import JSONResponse
except ImportError:  # pragma: no cover - checked by cli.cmd_serve before use
    raise missing("the HTTP service needs", "Starlette and uvicorn", "serve") from None


OPERATIONS = (
    matches.OPERATIONS
    + corrections.OPERATIONS
    + players.OPERATIONS
    + predict.OPERATIONS
    + league.OPERATIONS
    + livecompare.OPERATIONS
)
"""The service's endpoints: they build its routes and token checks (:func:`create_app`)
and its document (:func:`openapi_document`). ``/openapi.json`` and ``/docs`` are served
besides, open to all."""


def openapi_document(league: League, settings: Settings | None = None) -> dict[str, Any]:
    """The OpenAPI 3.1 description of the service (served at ``/openapi.json``), made from
    :data:`OPERATIONS` and the lab's (:mod:`rankcraft.lab`), the request bodies' specs,
    the league's state classes and the settings (:mod:`rankcraft.openapi`)."""
    settings = settings or Settings()
    bodies = parsing.request_bodies(settings)
    bodies["LabJobRequest"] = lab.lab_body(lab_limits(settings))
    return build_document(
        league,
        OPERATIONS + lab.OPERATIONS,
        bodies,
        parsing.query_parameters(settings),
        settings.auth_reads,
        answers=lab.lab_schemas() | corrections.correction_schemas() | livecompare.live_schemas(),
    )


def openapi_route(
    league: League, settings: Settings
) -> Callable[[Request], Awaitable[JSONResponse]]:
    """The handler of ``GET /openapi.json`` (on the service's loop, open to all)."""

    async def openapi(request: Request) -> JSONResponse:
        return JSONResponse(openapi_document(league, settings))

    return openapi
