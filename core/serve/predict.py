"""The forecasts' and matchmaking's routes: ``GET`` and ``POST /predict`` (a match's
forecast), ``POST /match/opponents`` (a rank filter's players), ``/match/quality`` and
``/match/balance`` (:mod:`rankcraft.matchmaking`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .. import matchmaking
from ..engine import League
from ..errors import InputError
from ..extras import missing
from ..forecast import plackett_luce
from ..jobs import Refused, Worker, error_of
from ..matchmaking import RankFilter
from ..model import Match
from ..openapi import Operation
from ..predictions import meta_match
from ..suggest import close_to, player_candidates
from .errors import status_of
from .parsing import check_sides, json_body, read_query
from .resource import Resource

try:
    from starlette.requests import Request
    from starlette.responses import JSONResponse
except ImportError:  # pragma: no cover - checked by cli.cmd_serve before use
    raise missing("the HTTP service needs", "Starlette and uvicorn", "serve") from None


async def forecast_answer(
    league: League,
    worker: Worker | None,
    sides: list[list[str]],
    at: Any,
    home: int | None,
    season: str | int | None = None,
    match: Match | None = None,
) -> JSONResponse:
    """The answer of ``/predict``: what ``League.predict`` gives (``probabilities``),
    the whole :class:`~rankcraft.Forecast` beside it, and the players the league has
    never seen (predicted as new players), each with the known ids most like it. Of
    more than two sides, the league's model gives the pairwise expected scores and the
    ``worker`` (a process of its own) integrates the places (0.75 s for 64 sides). With
    ``match`` (``meta`` given: ``at`` and ``season`` are then the match's), two sides get
    that match's forecast; more sides its time, home side and season, as
    ``League.forecast(match=...)`` gives them (the hooks read a match of two sides only)."""
    if len(sides) > 2 and worker is not None:
        pairwise = league.skill_model.pairwise(sides, at, home, season)
        forecast = await worker.run(plackett_luce, pairwise)
    elif match is not None:
        forecast = league.forecast(sides, match=match)
    else:
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


class PredictRoutes(Resource):
    """The endpoints that forecast matches and make them."""

    async def predict_sides(self, body: dict[str, Any]) -> JSONResponse:
        sides, home = body["sides"], body.get("home")
        if home is not None and home >= len(sides):
            raise InputError(f"'home' must be the index of a side: {home!r}"[:300])
        self.league.refresh([p for side in sides for p in side])
        at, season, match = body.get("at"), body.get("season"), None
        if body.get("meta") is not None:
            latest = self.league.latest_played()
            match = meta_match(sides, body["meta"], at, home, latest, season=season)
            at, season = match.played_at, self.league.skill_model.season_of(match)
        return await forecast_answer(self.league, self.worker, sides, at, home, season, match)

    async def predict(self, request: Request) -> JSONResponse:
        query = self.query
        texts = request.query_params.getlist("side")
        sides = [[p for p in s.split(",") if p] for s in texts]
        check_sides(sides, "side", self.settings)
        if len(sides) < 2:
            raise InputError(f"'side' must be given once per side, at least twice: {sides!r}")
        read_query(request, query["side"])
        at = read_query(request, query["at"])
        home = read_query(request, query["home"])
        self.league.refresh([p for side in sides for p in side])
        return await forecast_answer(self.league, self.worker, sides, at, home)

    async def post_predict(self, request: Request) -> JSONResponse:
        body = self.bodies["Prediction"].check(await json_body(request, self.settings))
        return await self.predict_sides(body)

    async def match_opponents(self, request: Request) -> JSONResponse:
        body = self.bodies["OpponentsQuery"].check(await json_body(request, self.settings))
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
        body = self.bodies["QualityQuery"].check(await json_body(request, self.settings))
        sides, home = body["sides"], body.get("home")
        if home is not None and home >= len(sides):
            raise InputError(f"'home' must be the index of a side: {home!r}"[:300])
        players = [p for side in sides for p in side]
        return await self._answer(players, quality_answer, sides, body.get("at"), home)

    async def match_balance(self, request: Request) -> JSONResponse:
        body = self.bodies["BalanceQuery"].check(await json_body(request, self.settings))
        players, teams, at = body["players"], body.get("teams") or 2, body.get("at")
        return await self._answer(players, balance_answer, players, teams, at)

    async def _answer(
        self, players: list[str], answer: Callable[..., Any], *arguments: Any
    ) -> JSONResponse:
        """``answer(league, *arguments)`` in the worker process, over the league it opens
        itself (:func:`over_league`: a balance asks the plugins about thousands of
        splits, 41 s for 64 TrueSkill players in three teams); an in-memory league's
        here, on the league's thread."""
        if self.worker is not None and self.db is not None:
            return JSONResponse(
                await self.worker.run(over_league, self.db, players, answer, *arguments)
            )
        self.league.refresh(players)
        return JSONResponse(answer(self.league, *arguments))


def quality_answer(league: League, sides: list[list[str]], at: Any, home: Any) -> Any:
    """``POST /match/quality``'s answer: the quality and the win probabilities."""
    value, judged_by = matchmaking.quality(league, sides, at=at, home=home)
    probabilities = league.predict(sides, at=at, home=home)
    return {
        "sides": sides,
        "quality": value,
        "judged_by": judged_by,
        "probabilities": probabilities,
    }


def balance_answer(league: League, players: list[str], teams: int, at: Any) -> Any:
    """``POST /match/balance``'s answer: the teams and their quality."""
    return league.balance(players, teams, at=at).to_dict()


_OPENED: dict[str, League] = {}
"""The leagues a worker process has opened (:func:`over_league`), by database."""


def over_league(db: str, players: list[str], answer: Callable[..., Any], *arguments: Any) -> Any:
    """``answer(league, *arguments)`` in a worker process, over the league at ``db``:
    opened once, and brought up to date with the players' last commits before each
    answer (as a second service worker reads it)."""
    league = _OPENED.get(db)
    if league is None:
        league = _OPENED[db] = League.open(db, create=False)
    league.refresh(players)
    try:
        return answer(league, *arguments)
    except InputError as exc:  # (its status here: an unknown player is 404)
        raise Refused(error_of(exc, status_of(exc))) from None


OPERATIONS = (
    Operation(
        method="GET",
        path="/predict",
        handler="predict",
        scope="read",
        summary="Forecast a match: expected scores, outcome and place probabilities",
        answer=(200, "the forecast (probabilities: what League.predict gives)", "Predicted"),
        query=("side", "at", "home"),
        errors=(400, 429),
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
        errors=(404, 429),
    ),
    Operation(
        method="POST",
        path="/match/balance",
        handler="match_balance",
        scope="read",
        summary="Players split into fair teams",
        answer=(200, "the teams and their quality", "Balanced"),
        body="BalanceQuery",
        errors=(404, 429),
    ),
)
"""The forecasts' and matchmaking's endpoints (handlers of :class:`PredictRoutes`)."""
