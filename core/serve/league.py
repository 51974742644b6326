"""The routes of the league itself: ``GET /ruleset``, ``POST /reset`` (a season event) and
``GET /health`` (liveness and the count of matches, answered on the service's loop)."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

from ..extras import missing
from ..openapi import Operation
from ..ruleset import dumps, to_dict
from ..store.base import CONSUMED
from ..version import __version__
from .errors import error_body
from .parsing import json_body
from .resource import Resource

try:
    from starlette.requests import Request
    from starlette.responses import JSONResponse
except ImportError:  # pragma: no cover - checked by cli.cmd_serve before use
    raise missing("the HTTP service needs", "Starlette and uvicorn", "serve") from None


STALLED = 30.0
"""Seconds the league's thread may go without answering ``/health`` (busy with one piece
of work) before ``/health`` says the league cannot answer (503)."""

ASKED = 0.5
"""Seconds ``/health`` waits for the league's thread to count the matches."""


class LeagueRoutes(Resource):
    """The endpoints of the league's ruleset, its season events and the service's health."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.matches = 0  # the count /health last read
        self.unanswered: float | None = None  # since when its thread has not answered

    async def reset(self, request: Request) -> JSONResponse:
        body = self.bodies["SeasonEvent"].check(await json_body(request, self.settings))
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

    consumed: dict[str, Any] | None = None
    """What the league's consumer said after its last batch (read with the count)."""

    def consumer_said(self) -> dict[str, Any] | None:
        """The consumer's last word (meta ``consumed``), or None: no consumer feeds it."""
        text = self.league.store.get_meta(CONSUMED)
        said = json.loads(text) if text else None
        return said if isinstance(said, dict) else None

    async def health(self, request: Request) -> JSONResponse:
        """Answered on the service's loop: the count of matches is asked of the league's
        thread, and the last one read is answered while that thread is busy (no answer
        in :data:`ASKED` seconds); 503 when it has stopped, has not answered for
        :data:`STALLED` seconds, or the league fails to count its matches."""
        problem = None
        try:
            async with asyncio.timeout(ASKED):
                self.matches = await self.thread.call(lambda: self.league.match_count)
                self.consumed = await self.thread.call(self.consumer_said)
            self.unanswered = None
        except TimeoutError:
            self.unanswered = self.unanswered or time.monotonic()
            silent = time.monotonic() - self.unanswered
            if silent > STALLED:
                problem = f"the league has not answered for {silent:.0f} s (busy or stuck)"
        except Exception as exc:  # (the thread stopped, the database is gone)
            problem = f"the league cannot answer: {type(exc).__name__}: {exc}"[:300]
        if problem is not None:
            body = error_body(503, "LeagueUnavailable", problem, None)
            return JSONResponse(body, status_code=503, headers={"Retry-After": "5"})
        said: dict[str, Any] = {"ok": True, "rankcraft": __version__, "matches": self.matches}
        consumer = self.consumed
        if consumer is not None:
            said["consumer"] = consumer
        return JSONResponse(said)


OPERATIONS = (
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
"""The league's endpoints (handlers of :class:`LeagueRoutes`)."""
