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


MARGIN_CAP = 1000.0
"""The largest score margin the margin multiplier counts (a bigger one counts as this)."""
UPSET_LEAD_CAP = 1100.0
"""The largest rating deficit of a winner the margin multiplier counts (half of 2,200)."""
MAX_MARGIN_MULTIPLIER = math.log(MARGIN_CAP + 1.0) * 2.2 / (2.2 - UPSET_LEAD_CAP * 0.001)
"""ln(1001) · 2.2 / 1.1 = 13.816…: no margin and no rating gap gives a larger multiplier."""


def margin_multiplier(margin: float, lead: float) -> float:
    """FiveThirtyEight's margin-of-victory multiplier of K (NFL Elo):
    ``ln(max(|margin|, 1) + 1) · 2.2 / (0.001 · winner's rating lead + 2.2)``, and
    ``ln 2 · 2.2`` for a tie. ``lead`` is this player's rating lead over the opponent in
    rating points (home advantage included); the winner's lead is ``lead`` for a win and
    ``-lead`` for a loss.

    FiveThirtyEight's formula (their ``nfl-elo-game`` repository, ``forecast.py``, MIT
    licence, and the methodology article "How Our NFL Predictions Work"):
    ``ln(|point differential| + 1) * 2.2 / (winner's Elo difference * 0.001 + 2.2)`` is
    unbounded: the log grows without end with the margin (scores 1e300 to 0 would move
    a rating 6,907 points at K 20), and once the winner trails by 2,200 points the
    denominator reaches 0 and then turns negative, so the winner would lose points.
    rankcraft bounds it where no real match reaches: margins count up to
    ``MARGIN_CAP`` (1,000 points) and a winner's deficit up to ``UPSET_LEAD_CAP``
    (1,100 points, where the second factor is 2). The multiplier is therefore always
    in (0, ``MAX_MARGIN_MULTIPLIER``] (13.8): it never flips the sign of a change and
    never explodes. Inside those caps the values are FiveThirtyEight's, unchanged.

    >>> round(margin_multiplier(7, 0.0), 4), round(margin_multiplier(-7, 0.0), 4)
    (2.0794, 2.0794)
    >>> margin_multiplier(7, 200.0) < margin_multiplier(7, -200.0)
    True
    >>> margin_multiplier(1e300, 0.0) == margin_multiplier(1000, 0.0)
    True
    >>> 0 < margin_multiplier(10, -2300.0) == margin_multiplier(10, -1100.0) <= 13.9
    True
    """
    size = math.log(min(max(abs(margin), 1.0), MARGIN_CAP) + 1.0)
    if margin == 0:
        return size * 2.2
    winner_lead = lead if margin > 0 else -lead
    if winner_lead < -UPSET_LEAD_CAP:
        winner_lead = -UPSET_LEAD_CAP
    return size * 2.2 / (winner_lead * 0.001 + 2.2)


def logistic10(x: float) -> float:
    """``1 / (1 + 10 ** x)``, the Elo and Glicko expected score, without overflow: past
    ``x = 308`` the power has no float and the value (below 1e-308) is 0.0.

    >>> logistic10(0.0), logistic10(5000.0), logistic10(-5000.0)
    (0.5, 0.0, 1.0)
    """
    return 1.0 / (1.0 + 10.0**x) if x < 308.0 else 0.0


def logistic(x: float) -> float:
    """``1 / (1 + e ** x)`` (Glicko-2's expected score) without overflow: 0.0 past x = 709.

    >>> logistic(0.0), logistic(1e6), logistic(-1e6)
    (0.5, 0.0, 1.0)
    """
    return 1.0 / (1.0 + math.exp(x)) if x < 709.0 else 0.0


def match_margin(context: PlayerContext, pairings_count: int) -> float | None:
    """The player's side's score margin in a two-sided match with scores, else None."""
    match = context.match
    if match is None or match.scores is None or len(match.scores) != 2 or pairings_count != 1:
        return None
    return match.scores[context.side] - match.scores[1 - context.side]
