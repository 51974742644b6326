"""Ratings for a stream of matches: the job a rating library does, with a ruleset.

A :class:`Rater` takes matches in time order and keeps only what the ratings need: each
player's record (skill, rank, matches played, last match) in memory. It keeps no match,
no report and no id, so it is as fast as the hooks allow (docs/performance.md), and a
repeated id is not refused: use a :class:`~rankcraft.League` for a history to keep,
correct, export or serve. Everything else is the league's: the same rating loop
(:mod:`rankcraft.loop`), the same hooks and so the same numbers, the same season events,
periods, decay, teams and free-for-alls, and the same validation of every match.

>>> import rankcraft
>>> rater = rankcraft.Rater("elo")
>>> games = [
...     {"id": "m1", "played_at": "2024-05-01", "teams": [["alice"], ["bob"]], "scores": [1, 0]},
...     {"id": "m2", "played_at": "2024-05-02", "teams": [["bob"], ["carol"]], "scores": [2, 2]},
... ]
>>> forecasts = rater.rate(games, forecasts=True)
>>> [tuple(round(p, 3) for p in f) for f in forecasts]
[(0.5, 0.5), (0.477, 0.523)]
>>> {player: round(skill.rating, 2) for player, skill in rater.ratings().items()}
{'alice': 1516.0, 'bob': 1484.74, 'carol': 1499.26}

A history validated once (:func:`rankcraft.parse_match`) is rated again without parsing,
here by another ruleset (:func:`rate`: a new rater's ratings):

>>> history = [rankcraft.parse_match({"id": f"g{i}", "played_at": f"2024-06-{i + 1:02d}",
...     "teams": [["ann"], ["ben"]], "scores": [i % 3, 1]}) for i in range(20)]
>>> glicko = rankcraft.rate(history, "glicko1")
>>> round(glicko.skills["ann"].rating, 1), round(glicko.skills["ann"].deviation, 1)
(1491.9, 93.2)
>>> league = rankcraft.League("glicko1")
>>> _ = league.record_many(history)
>>> league.player("ann").skill == glicko.skills["ann"]
True
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from .engine import League
from .manager import Plugins
from .model import Match
from .ruleset import Ruleset
from .store import MemoryStore

__all__ = ["Rater", "Ratings", "rate"]

Forecasts = list[tuple[float, ...]]
"""Each match's pre-match probabilities, one per side, in the order of its teams: for
two sides each side's expected score (what a league's report keeps)."""


class Rater:
    """Players' ratings under one ruleset, fed matches in time order; no history kept.

    :param ruleset: a :class:`~rankcraft.Ruleset`, a bundled ruleset name or a file path.
    :param plugins: the plugin facade (default: the installed plugins).

    Attributes:
        league: the :class:`~rankcraft.League` underneath, in memory and keeping no
            history: its reads (leaderboard, forecast, export) answer as any league's.
        ruleset: its ruleset.
    """

    def __init__(self, ruleset: Ruleset | str | Path = "elo", *, plugins: Plugins | None = None):
        self.league = League(ruleset, store=MemoryStore(pack_after=None), plugins=plugins)
        self.ruleset = self.league.ruleset

    def rate(
        self, matches: Iterable[Match | Mapping[str, Any]], *, forecasts: bool = False
    ) -> Forecasts | None:
        """Rate ``matches`` in order (``Match`` objects, or dicts in the match format).

        All of them or none: a refused match (malformed, earlier than a player's last
        match) raises :class:`~rankcraft.MatchError` with its 0-based position as
        ``item``, and the ratings stay as they were. In ``batch`` mode the open period is
        closed at the end of each call.

        :param forecasts: also return each match's pre-match probabilities.
        :returns: the forecasts (a list, one tuple per match), or None.
        """
        said: Forecasts | None = [] if forecasts else None
        self.league.stream(matches, expected=said)
        return said

    def ratings(self) -> dict[str, Any]:
        """Every player's skill state (the skill plugin's public class), by id."""
        return {record.id: record.skill for record in self.league.players()}

    def skill(self, player: str) -> Any:
        """One player's skill state; :class:`~rankcraft.engine.UnknownPlayerError` for a
        player no match named."""
        return self.league.player(player).skill

    def predict(self, sides: Sequence[Sequence[str]]) -> list[float]:
        """Each side's probability (two sides: expected score), as
        :meth:`rankcraft.League.predict` gives it."""
        return self.league.predict(sides)


@attrs.frozen(kw_only=True)
class Ratings:
    """What :func:`rate` gives.

    Attributes:
        skills: each player's skill state by id. forecasts: each match's pre-match
            probabilities (:data:`Forecasts`), or None when not asked for.
    """

    skills: dict[str, Any]
    forecasts: Forecasts | None = None


def rate(
    matches: Iterable[Match | Mapping[str, Any]],
    ruleset: Ruleset | str | Path = "elo",
    *,
    forecasts: bool = False,
) -> Ratings:
    """The ratings after ``matches`` under ``ruleset`` (a new :class:`Rater`'s)."""
    rater = Rater(ruleset)
    said = rater.rate(matches, forecasts=forecasts)
    return Ratings(skills=rater.ratings(), forecasts=said)
