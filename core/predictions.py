"""What the league's model expects of matches not played: the probabilities of
:meth:`rankcraft.League.predict`, the forecasts of :meth:`rankcraft.League.forecast`
(:mod:`rankcraft.forecast` has the :class:`~rankcraft.forecast.Forecast` they make), the
draw model, and each side's state at a time (new players at the initial state, idle
players decayed, the season events a match then would meet applied to copies).

:class:`Predictions` is also the skill model matchmaking judges sides with
(:class:`rankcraft.matchmaking.SkillModel`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from .errors import InputError
from .forecast import Forecast, forecast_states, pairwise_of
from .io import parse_match, parse_time
from .model import Match, State, format_time
from .ruleset import Ruleset
from .steps import SKILL, Steps
from .unit import UnitOfWork

Projection = Callable[[datetime, str | int | None], Mapping[str, Any]]
"""``project(when, season) -> rows``: the players' rows as a match at ``when`` would meet
them (:meth:`rankcraft.resets.Resets.projected`)."""


class Predictions:
    """Predictions and forecasts over one league's players.

    :param ruleset: the league's ruleset (its season fields). :param steps: its steps
        (the expectation, draw model, decay and team hooks). :param unit: its unit of work
        (the players' rows). :param project: the rows after the season events due by a
        time (:data:`Projection`).

    Attributes:
        forms, aggregate, expectation: the steps' state forms, team aggregate, and
        expectation without a match (``(side states, home) -> probabilities``): what
        matchmaking judges sides with.
    """

    def __init__(
        self, ruleset: Ruleset, steps: Steps, unit: UnitOfWork, project: Projection
    ) -> None:
        self.ruleset = ruleset
        self.steps = steps
        self.unit = unit
        self.project = project
        self.forms = steps.forms
        self.aggregate = steps.aggregate
        self.expectation = steps.predict

    @property
    def has_draw_model(self) -> bool:
        """Whether the ruleset has a draw model: the expectation plugin implements
        ``rankcraft_outcomes`` (P(win), P(draw), P(loss) for two sides: :meth:`forecast`)
        and answers it for two new players (elo without ``draw`` answers None)."""
        return self.steps.outcomes is not None

    def predict(
        self,
        sides: Sequence[Sequence[str]],
        at: datetime | str | None = None,
        home: int | None = None,
        season: str | int | None = None,
    ) -> list[float]:
        """One probability per side, summing to 1, if they met now (or at time ``at``).

        For two sides, each side's **expected score** (P(win) + ½ P(draw)): the win
        probability where draws cannot happen (the expectation the match report keeps).
        For more than two sides, each side's probability of **finishing first**, the
        Plackett-Luce reading of the pairwise expectations (:meth:`forecast` has the
        places and, for two sides with a draw model, P(win), P(draw) and P(loss)).

        Unknown players count as new players. With ``at``, each player's skill is
        decayed for the time since their last match, and the season events a match at
        ``at`` would meet are applied first (to copies): the dated ones due by then, a
        ``gap_days`` one after a long gap, and, when ``season`` (the match's value of a
        ``season_field``) is given, a ``season_field`` one whose season it changes;
        ``home`` is the index of the side at home (for rulesets with a home advantage).

        :param sides: player ids per side, at least two sides, none empty, no player twice.
        :returns: one probability per side, summing to 1.
        """
        states = self.side_states(sides, at, home, season)
        steps = self.steps
        if len(states) == 2:
            return [float(p) for p in steps.predict(states, home)]
        return list(forecast_states(states, home, steps.predict, places=False).probabilities)

    def forecast(
        self,
        sides: Sequence[Sequence[str]],
        at: datetime | str | None = None,
        home: int | None = None,
        season: str | int | None = None,
        match: Match | None = None,
    ) -> Forecast:
        """The model's forecast of a match between ``sides`` (docs/forecasts.md): each
        side's expected score; for two sides with a draw model (the expectation plugin's
        ``rankcraft_outcomes``), P(win), P(draw) and P(loss); for more than two sides, the
        probability of finishing first and of every place, and the most likely order.

        Arguments as for :meth:`predict`, or ``match``: the forecast of that match before
        it is recorded. Its sides (``sides`` must be its ``teams``), time, home side and
        season (the value of the ruleset's ``season_field``, if any) are used, and for
        two sides the match itself is handed to the expectation and outcomes hooks, whose
        plugins may read its context (competition, surface, pools: elo's ``meta``
        options), as when it is rated: the expected score is then the one the match's
        report will keep.

        :raises InputError: ``match`` with other ``sides``, or with ``at``, ``home`` or
            ``season`` as well.
        """
        if match is not None:
            if [list(side) for side in sides] != [list(side) for side in match.teams]:
                raise InputError(
                    f"'sides' must be the match's teams with 'match' {match.id!r}: {sides!r}"[:300]
                )
            if at is not None or home is not None or season is not None:
                raise InputError(
                    f"'at', 'home' and 'season' come from 'match' {match.id!r}: leave them out"
                )
            at, home, season = match.played_at, match.home, self.season_of(match)
        states = self.side_states(sides, at, home, season)
        return self._forecast(states, home, match if len(states) == 2 else None)

    def _forecast(self, states: list[Any], home: int | None, given: Match | None) -> Forecast:
        """The forecast of sides standing as ``states`` (the two-sided ``given`` match
        handed to the hooks)."""
        steps = self.steps
        outcomes = steps.outcomes
        return forecast_states(
            states,
            home,
            lambda s, h: steps.probabilities(steps.expect(s, h, given), len(s)),
            None if outcomes is None else (lambda s, h: outcomes(s, h, given)),
        )

    def pairwise(
        self,
        sides: Sequence[Sequence[str]],
        at: datetime | str | None = None,
        home: int | None = None,
        season: str | int | None = None,
    ) -> list[list[float]]:
        """The expected score of each side against each other alone (arguments as for
        :meth:`predict`): what :meth:`forecast` reads more than two sides from, without
        its integral (:func:`rankcraft.forecast.plackett_luce` does that, given these)."""
        states = self.side_states(sides, at, home, season)
        expect = self.steps.expect
        return pairwise_of(states, home, lambda s, h: expect(s, h, None))

    def season_of(self, match: Match) -> str | int | None:
        """The match's season for the ruleset's first ``season_field`` entry, or None."""
        for event in self.ruleset.resets:
            if event.season_field is not None:
                try:
                    return event.season_of(match.meta)
                except ValueError as exc:
                    raise InputError(f"match {match.id!r}: {exc}") from None
        return None

    def side_states(
        self,
        sides: Sequence[Sequence[str]],
        at: datetime | str | None,
        home: int | None,
        season: str | int | None = None,
    ) -> list[Any]:
        """The state standing for each side at ``at`` (checked sides; new players at the
        initial state, idle players decayed)."""
        when = _checked(sides, at, home, season)
        self.unit.fetch([p for side in sides for p in side])
        rows = self.project(when, season) if when is not None else self.unit.rows
        return self.states_in(sides, rows.get, when)

    def states_in(
        self, sides: Sequence[Sequence[str]], rows: Callable[[str], Any], when: datetime | None
    ) -> list[Any]:
        """The state standing for each side in ``rows`` (a player's row by id, None for
        a new player), decayed to ``when`` when given."""
        steps = self.steps
        new_row, decayed, aggregate = steps.new_row, steps.decayed, steps.aggregate
        states = []
        for side in sides:
            members = []
            for pid in side:
                row = rows(pid) or new_row()
                members.append(row[SKILL] if when is None else decayed(row, when))
            states.append(aggregate(members))
        return states

    def meeting(self, match: Match, rows: Callable[[str], Any]) -> Forecast:
        """The forecast of ``match`` from the rows it meets (its season events run: what
        the rating loop's observer sees, :data:`rankcraft.loop.Observe`): what
        :meth:`forecast` with ``match`` gives before the match is recorded."""
        states = self.states_in(match.teams, rows, match.played_at)
        return self._forecast(states, match.home, match if len(states) == 2 else None)

    def skill(self, player: str, at: datetime | None) -> State:
        """A known player's skill state (tuple form), decayed to ``at`` when given: what
        matchmaking judges a player by (the caller has refused unknown players)."""
        row = self.unit.row(player)  # (cached by League.player: a database's too)
        assert row is not None
        return row[SKILL] if at is None else self.steps.decayed(row, at)


def _checked(
    sides: Sequence[Sequence[str]],
    at: datetime | str | None,
    home: int | None,
    season: str | int | None,
) -> datetime | None:
    """The sides, ``home`` and ``season`` checked; ``at`` as a time (or None)."""
    if isinstance(sides, str) or len(sides) < 2:
        raise InputError(f"predict needs at least 2 sides: {sides!r}")
    flat = [p for side in sides for p in side]
    if any(not side or isinstance(side, str) for side in sides):
        raise InputError(f"every side must be a non-empty list of player ids: {sides!r}")
    if len(set(flat)) != len(flat):
        raise InputError(f"a player appears twice in {sides!r}")
    if home is not None and not 0 <= home < len(sides):
        raise InputError(f"'home' must be a side index (0 to {len(sides) - 1}): {home!r}")
    when = parse_time(at, field="at") if isinstance(at, str) else at
    if season is not None and (
        when is None or isinstance(season, bool) or not isinstance(season, str | int)
    ):
        raise InputError(
            "'season' must be a string or an integer, with 'at' (the season of a match "
            f"at that time): {season!r}"[:300]
        )
    return when


def meta_match(
    sides: Sequence[Sequence[str]],
    meta: Mapping[str, Any],
    at: datetime | str | None,
    home: int | None,
    latest: datetime | None,
    *,
    prefix: str = "",
    season: str | None = None,
) -> Match:
    """The match whose forecast a forecast "with ``meta``" is (``League.forecast(sides,
    match=...)``; ``rankcraft predict --meta``, ``POST /predict`` with ``meta``): ``sides``
    at ``at``, else at ``latest`` (the league's latest match), else now; ``home``; and
    ``meta``, for a ruleset that reads it (a surface, rankings; the hooks read the match of
    two sides only). Its result is a placeholder the forecast never reads.

    :param prefix: before the names of the fields in errors (``"--"`` for the command line).
    :param season: a season asked for beside ``meta``: refused (the season is a field of
        ``meta`` then, as in a recorded match).
    :raises InputError: ``at`` not a time, a ``season`` given, or what the match format
        refuses (a ``meta`` too deep, say); naming the field.
    """
    if season is not None:
        raise InputError(
            f"'{prefix}season' with '{prefix}meta': give the season in '{prefix}meta' (its field)"
        )
    if at is None:
        when = latest or datetime.now(UTC)
    else:
        when = at if isinstance(at, datetime) else parse_time(at, field=f"{prefix}at")
    document: dict[str, Any] = {
        "id": "forecast",
        "played_at": format_time(when),
        "teams": [list(side) for side in sides],
        "ranks": list(range(1, len(sides) + 1)),
        "meta": dict(meta),
    }
    if home is not None:
        document["home"] = home
    return parse_match(document)
