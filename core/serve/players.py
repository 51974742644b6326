"""The players' routes: ``GET /players/{player_id}`` (a player's state) and
``GET /leaderboard`` (players best first, a page of them)."""

from __future__ import annotations

from ..extras import missing
from ..openapi import Operation
from .corrections import league_at
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
        """The player now, or (``?at=TIME``) as the league stood then."""
        player = request.path_params["player_id"]
        at = read_query(request, self.query["as_of"])
        league = self.league if at is None else league_at(self.league, at, request)
        if at is None:
            league.refresh([player])
        record = league.player(player)
        standing = None
        if league.has_standings:
            league.refresh()
            standing = league.standings([player]).get(player)
        return JSONResponse(
            {
                "player": self.codec.record_to_dict(record),
                "standing": standing,
                "display": league.shown(record).to_dict(),
            }
        )

    async def leaderboard(self, request: Request) -> JSONResponse:
        """A page of the leaderboard, as ``League.leaderboard`` gives it (and the CLI's
        ``leaderboard`` with the same options); places count from ``offset + 1``;
        ``?at=TIME``: as the league stood then (:func:`.corrections.league_at`)."""
        query = self.query
        top = read_query(request, query["top"])
        offset = read_query(request, query["offset"]) or 0
        active_days = read_query(request, query["active_days"])
        tier = read_query(request, query["tier"])
        everyone = bool(read_query(request, query["all"]))
        holding = read_query(request, query["holding"])
        league = league_at(self.league, read_query(request, query["as_of"]), request)
        page = league.placed(
            top,
            offset=offset,
            active_days=active_days,
            tier=tier,
            everyone=everyone,
            holding=holding,
        )
        standings = league.standings(r.id for _, r in page)
        return JSONResponse(
            [
                {
                    "place": place,
                    "standing": standings.get(r.id),
                    "display": league.shown(r).to_dict(),
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
        query=("as_of",),
        errors=(400, 404),
    ),
    Operation(
        method="GET",
        path="/leaderboard",
        handler="leaderboard",
        scope="read",
        summary="Players best first",
        answer=(200, "place, standing and state per player", "Leaderboard"),
        query=("top", "offset", "active_days", "tier", "all", "holding", "as_of"),
        errors=(400,),
    ),
)
"""The players' endpoints (handlers of :class:`PlayerRoutes`)."""
