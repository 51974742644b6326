"""What the Elo and Glicko plugins share about a match: home advantage, side probabilities,
margin of victory."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from rankcraft import PlayerContext, State

MARGIN_RULES = ("none", "fivethirtyeight")


def home_edge(advantage: float, home: int | None, side: int) -> float:
    """Rating points ``side`` gains from the venue: +advantage at home, -advantage away
    (against a home side), 0 at a neutral venue (``home`` None)."""
    if home is None or advantage == 0.0:
        return 0.0
    return advantage if home == side else -advantage


def side_probabilities(
    states: Sequence[State], beats: Callable[[State, State, float], float], edge: float
) -> list[float]:
    """Win probability per side from a pairwise ``beats(a, b, edge)`` (P(a beats b) with
    ``edge`` added to a): for two sides, the home edge of side 0; for more, each side's
    share of the round robin of every pair, which sums to 1."""
    n = len(states)
    if n == 2:
        p = beats(states[0], states[1], edge)
        return [p, 1.0 - p]
    games = n * (n - 1) / 2
    return [
        math.fsum(beats(a, b, 0.0) for j, b in enumerate(states) if j != i) / games
        for i, a in enumerate(states)
    ]


def margin_multiplier(margin: float, lead: float) -> float:
    """FiveThirtyEight's margin-of-victory multiplier of K (NFL Elo):
    ``ln(max(|margin|, 1) + 1) · 2.2 / (0.001 · winner's rating lead + 2.2)``, and
    ``ln 2 · 2.2`` for a tie. ``lead`` is this player's rating lead over the opponent in
    rating points (home advantage included); the winner's lead is ``lead`` for a win and
    ``-lead`` for a loss.

    >>> round(margin_multiplier(7, 0.0), 4), round(margin_multiplier(-7, 0.0), 4)
    (2.0794, 2.0794)
    >>> margin_multiplier(7, 200.0) < margin_multiplier(7, -200.0)
    True
    """
    size = math.log(max(abs(margin), 1.0) + 1.0)
    if margin == 0:
        return size * 2.2
    winner_lead = lead if margin > 0 else -lead
    return size * 2.2 / (winner_lead * 0.001 + 2.2)


def match_margin(context: PlayerContext, pairings_count: int) -> float | None:
    """The player's side's score margin in a two-sided match with scores, else None."""
    match = context.match
    if match is None or match.scores is None or len(match.scores) != 2 or pairings_count != 1:
        return None
    return match.scores[context.side] - match.scores[1 - context.side]
