"""The players' routes: ``GET /players/{player_id}`` (a player's state) and
``GET /leaderboard`` (players best first, a page of them)."""

from __future__ import annotations

from ..extras import missing
from ..openapi import Operation
from .parsing import read_query
from .resource import Resource

try:
    from starlette.requests import Request
    from starlette.responses import JSONResponse
except ImportError:  # pragma: no cover - checked by cli.cmd_serve before use
    raise missing("the HTTP service needs", "Starlette and uvicorn", "serve") from None


class PlayerRoutes(Resource):
    """The endpoints of the league's players and its leaderboard."""

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
        top = read_query(request, query["top"])
        offset = read_query(request, query["offset"]) or 0
        active_days = read_query(request, query["active_days"])
        tier = read_query(request, query["tier"])
        everyone = bool(read_query(request, query["all"]))
        holding = read_query(request, query["holding"])
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


OPERATIONS = (
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
)
"""The players' endpoints (handlers of :class:`PlayerRoutes`)."""
