"""The web page's and the ruleset lab's routes: the page (``GET /``, its files at
``/static/NAME`` and its reads at ``/web/...``, :mod:`rankcraft.web`), the lab's jobs
(``/web/lab/...``, :mod:`rankcraft.lab`, their pool shared with the other workers), and
the API's own page at ``/docs``."""

from __future__ import annotations

import base64
import functools
import hashlib
import os
import re
from collections.abc import Awaitable, Callable
from functools import cache
from importlib import resources
from typing import Any

from .. import lab
from ..engine import League
from ..extras import missing
from ..io import parse_time
from ..jobs import JobPool, Shelf, Worker
from ..processes import default_processes
from ..web import meta, played_at_check, player_history, season_archive
from .parsing import check_sides
from .settings import Settings

try:
    from starlette.requests import Request
    from starlette.responses import HTMLResponse, JSONResponse, Response
    from starlette.routing import Route
except ImportError:  # pragma: no cover - checked by cli.cmd_serve before use
    raise missing("the HTTP service needs", "Starlette and uvicorn", "serve") from None


ASSETS = {"app.js": "text/javascript", "app.css": "text/css"}
"""The page's files besides index.html (core/page/), served at ``/static/NAME``."""

POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
"""The page's Content-Security-Policy: its own script and style, requests to this site."""


def _asset(name: str) -> str:
    return resources.files("rankcraft").joinpath("page", name).read_text("utf-8")


async def page(request: Request) -> Response:
    """The page (index.html), with its Content-Security-Policy."""
    return HTMLResponse(_asset("index.html"), headers={"Content-Security-Policy": POLICY})


async def asset(request: Request) -> Response:
    """One of the page's files (``ASSETS``)."""
    name = request.path_params["name"]
    if name not in ASSETS:
        return JSONResponse(
            {"error": {"status": 404, "type": "NotFound", "message": name, "field": None}},
            status_code=404,
        )
    return Response(_asset(name), media_type=ASSETS[name])


def routes(
    league: League,
    read_body: Callable[[Request], Awaitable[bytes]],
    worker: Worker,
    guard: Callable[[Any, str | None], Any],
    *,
    challenger: bool = False,
) -> list[Route]:
    """The page's routes; ``read_body(request)`` reads a request's body as the service
    does, ``worker`` checks a lab's ruleset off the league's thread, ``guard`` wraps a
    handler in the service's token check of a scope; ``challenger``: the service has a
    challenger league (``/web/meta`` says so: the page then shows the comparison)."""

    async def get_meta(request: Request) -> JSONResponse:
        league.refresh()
        return JSONResponse(meta(league) | {"challenger": challenger})

    async def get_search(request: Request) -> JSONResponse:
        league.refresh()
        return JSONResponse(league.search(request.query_params.get("q", "")[:100]))

    async def get_player(request: Request) -> JSONResponse:
        player = request.path_params["player_id"]
        league.refresh([player])
        if league.has_standings:
            league.refresh()
        history = player_history(league, player)
        history["corrections"] = [e.to_dict() for e in league.edits(player=player)]
        return JSONResponse(history)

    async def get_seasons(request: Request) -> JSONResponse:
        league.refresh()
        return JSONResponse(season_archive(league))

    async def get_played_at(request: Request) -> JSONResponse:
        at = parse_time(request.query_params.get("at"), field="at")
        league.refresh()
        return JSONResponse(played_at_check(league, at))

    async def post_check(request: Request) -> JSONResponse:
        """Decoded and loaded in a worker process (a 1 MiB ruleset takes seconds)."""
        return JSONResponse(await worker.run(lab.check_toml, await read_body(request)))

    return [
        Route("/", page, methods=["GET"]),
        Route("/static/{name}", asset, methods=["GET"]),
        Route("/web/meta", guard(get_meta, "read"), methods=["GET"]),
        Route("/web/search", guard(get_search, "read"), methods=["GET"]),
        Route("/web/players/{player_id:path}", guard(get_player, "read"), methods=["GET"]),
        Route("/web/seasons", guard(get_seasons, "read"), methods=["GET"]),
        Route("/web/played-at", guard(get_played_at, "read"), methods=["GET"]),
        Route("/web/lab/check", guard(post_check, "read"), methods=["POST"]),
    ]


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


def lab_handlers(
    league: League,
    settings: Settings,
    db: str | None,
    read_body: Callable[[Request], Awaitable[bytes]],
    worker: Worker,
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
        lab_limits(settings),
        functools.partial(check_sides, settings=settings),
        db=db,
        auth_reads=settings.auth_reads,
        read_body=read_body,
        worker=worker,
        processes=settings.lab_processes or default_processes(),
    )


def lab_folder(db: str) -> str:
    """Where the worker processes of a service over ``db`` share their lab jobs (a
    folder of the system's temporary one, named after the database)."""
    import tempfile

    name = hashlib.sha256(os.path.abspath(db).encode() if "://" not in db else db.encode())
    return os.path.join(tempfile.gettempdir(), f"rankcraft-lab-{name.hexdigest()[:16]}")


def lab_limits(settings: Settings) -> lab.LabLimits:
    """The limits a lab history must fit, from the service's settings."""
    return lab.LabLimits(settings.max_sides, settings.max_players, settings.lab_max_replays)
