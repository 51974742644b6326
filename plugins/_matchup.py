"""What the Elo and Glicko plugins share about a match: home advantage, side probabilities,
margin of victory; and what every plugin that explains its changes while it rates shares
(:class:`LastFactors`)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, Protocol, TypeVar

import attrs

from rankcraft import Match, State

MARGIN_RULES = ("none", "fivethirtyeight", "fivethirtyeight-nba", "world-football", "power")
"""The margin-of-victory rules: none, FiveThirtyEight's NFL and NBA multipliers, the World
Football Elo goal-difference multiplier, and the general power form (:class:`MarginForm`)."""
DRAW_MODELS = ("none", "davidson", "ordered-logit")
"""The draw models of two-sided matches (:func:`davidson`, :func:`ordered_logit`)."""
DRAW_FITS = ("none", "overall", "context")
"""Draw fits by maximum likelihood on the warm-up (``_drawfit``): none, one set of draw
parameters, or one per context rule."""


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


def match_margin(match: Match | None, side: int, pairings_count: int) -> float | None:
    """The score margin of ``side`` (its score minus the other side's) in a two-sided
    match with scores whose player's update has one pairing, else None (no match: a
    closed ``batch`` period; no scores; more than two sides, or several pairings).
    """
    if match is None or match.scores is None or len(match.scores) != 2 or pairings_count != 1:
        return None
    return match.scores[side] - match.scores[1 - side]


def davidson(
    gap: float, scale: float, kappa: float, gap_rate: float = 0.0
) -> tuple[float, float, float]:
    """(P(win), P(draw), P(loss)) of a side ``gap`` rating points ahead (home edge
    included), by Davidson's extension of the Bradley-Terry model ("On extending the
    Bradley-Terry model to accommodate ties in paired comparison experiments", 1970) in
    Elo's units: with strengths π = 10^(rating / scale),
    ``P(win) = π_a / (π_a + π_b + κ' √(π_a π_b))`` and ``P(draw) = κ' √(π_a π_b) / (…)``.
    ``κ' = κ · 10^(−gap_rate · |gap| / scale)``: κ ≥ 0 sets the draw rate between equals
    (``κ / (2 + κ)``); Davidson's draw rate already falls as the gap grows, and
    ``gap_rate`` ≥ 0 makes it fall faster. κ = 0 is Elo's logistic curve exactly.

    >>> [round(p, 4) for p in davidson(0.0, 400.0, 0.5)]
    [0.4, 0.2, 0.4]
    >>> round(sum(davidson(350.0, 400.0, 0.7)), 12), davidson(100.0, 400.0, 0.0)[1]
    (1.0, 0.0)
    """
    kappa_eff = kappa * 10.0 ** (-gap_rate * abs(gap) / scale) if gap_rate else kappa
    # a = 10^(-|gap| / 2 scale) <= 1: no overflow for any gap
    exponent = -abs(gap) / (2.0 * scale)
    a = 10.0**exponent if exponent > -300.0 else 0.0
    strong = 1.0 / (1.0 + a * a + kappa_eff * a)
    weak = a * a * strong
    draw = kappa_eff * a * strong
    return (strong, draw, weak) if gap >= 0 else (weak, draw, strong)


def ordered_logit(gap: float, scale: float, margin: float) -> tuple[float, float, float]:
    """(P(win), P(draw), P(loss)) of a side ``gap`` rating points ahead by an ordered logit
    on the gap: a win when the performance difference passes ``+margin``, a loss below
    ``-margin``, a draw between (``margin`` ≥ 0 in rating points; 0 is Elo's curve with no
    draws). ``P(win) = 1 / (1 + 10^((margin − gap) / scale))``.

    >>> [round(p, 4) for p in ordered_logit(0.0, 400.0, 70.0)]
    [0.4006, 0.1988, 0.4006]
    >>> ordered_logit(100.0, 400.0, 0.0)[1]
    0.0
    """
    win = logistic10((margin - gap) / scale)
    loss = logistic10((margin + gap) / scale)
    return win, max(1.0 - win - loss, 0.0), loss


def _positive(instance: Any, attribute: attrs.Attribute[float], value: float) -> None:
    if not (math.isfinite(value) and 1e-9 <= value <= 1e6):
        raise ValueError(f"{attribute.name!r} must be a number in [1e-9, 1e6]: {value!r}")


def _bounded(low: float, high: float) -> Callable[[Any, Any, float], None]:
    def check(instance: Any, attribute: attrs.Attribute[float], value: float) -> None:
        if not (math.isfinite(value) and low <= value <= high):
            raise ValueError(f"{attribute.name!r} must be a number in [{low}, {high}]: {value!r}")

    return check


@attrs.frozen(kw_only=True)
class MarginForm:
    """The general margin-of-victory multiplier of K (``margin = "power"``):
    ``(|margin| + offset) ** power / (base + lead · winner's rating lead)``.

    FiveThirtyEight's NBA Elo is offset 3, power 0.8, base 7.5, lead 0.006 (the
    defaults; "How Our NBA Predictions Work"). Margins count up to ``MARGIN_CAP``, and a
    winner's deficit counts only down to the point where the denominator is half of
    ``base``, so the multiplier is always positive and bounded: no margin flips the sign
    of a change.

    Attributes:
        offset: points added to the margin, [0, 1e3]. power: exponent, [0, 3].
        base: the denominator at an even match, [1e-9, 1e6]. lead: denominator points per
        rating point of the winner's lead, [0, 1].
    """

    offset: float = attrs.field(default=3.0, validator=_bounded(0.0, 1e3))
    power: float = attrs.field(default=0.8, validator=_bounded(0.0, 3.0))
    base: float = attrs.field(default=7.5, validator=_positive)
    lead: float = attrs.field(default=0.006, validator=_bounded(0.0, 1.0))

    def multiplier(self, margin: float, lead: float) -> float:
        """The multiplier for a score ``margin`` (this side's) and this side's rating
        ``lead`` (home edge included).

        >>> nba = MarginForm()
        >>> round(nba.multiplier(10, 0.0), 4), round(nba.multiplier(-10, 0.0), 4)
        (1.0378, 1.0378)
        >>> 0 < nba.multiplier(1e300, 1e6) and nba.multiplier(5, -1e6) <= nba.multiplier(5, -625.0)
        True
        """
        size = (min(abs(margin), MARGIN_CAP) + self.offset) ** self.power
        winner_lead = lead if margin >= 0 else -lead
        if self.lead > 0.0:
            floor = -self.base / (2.0 * self.lead)
            if winner_lead < floor:
                winner_lead = floor
        return float(size / (self.base + self.lead * winner_lead))


NBA_FORM = MarginForm()


def world_football_multiplier(margin: float) -> float:
    """The World Football Elo Ratings' goal-difference index G of K: 1 for a draw or a
    one-goal win, 1.5 for two goals, (11 + N) / 8 for N ≥ 3 goals (N counted up to
    ``MARGIN_CAP``).

    >>> [world_football_multiplier(n) for n in (0, 1, -2, 3, 5)]
    [1.0, 1.0, 1.5, 1.75, 2.0]
    """
    goals = min(abs(margin), MARGIN_CAP)
    if goals <= 1.0:
        return 1.0
    if goals <= 2.0:
        return 1.5
    return (11.0 + goals) / 8.0


def margin_rule_multiplier(rule: str, form: MarginForm, margin: float, lead: float) -> float:
    """K's multiplier under margin ``rule`` (one of ``MARGIN_RULES`` but ``"none"``) for
    this side's score ``margin`` and rating ``lead``; always in (0, ∞) and bounded."""
    if rule == "fivethirtyeight":
        return margin_multiplier(margin, lead)
    if rule == "world-football":
        return world_football_multiplier(margin)
    if rule == "fivethirtyeight-nba":
        return NBA_FORM.multiplier(margin, lead)
    return form.multiplier(margin, lead)


def _optional(low: float, high: float) -> Callable[[Any, Any, float | None], None]:
    check = _bounded(low, high)

    def optional(instance: Any, attribute: attrs.Attribute[float], value: float | None) -> None:
        if value is not None:
            check(instance, attribute, value)

    return optional


def _contains(instance: Any, attribute: attrs.Attribute[str], value: str) -> None:
    if not isinstance(value, str) or not value:
        raise ValueError(f"'contains' must be a non-empty string: {value!r}")


@attrs.frozen(kw_only=True)
class ContextRule:
    """A rule for the matches whose context field (``context_field`` of ``meta``)
    contains ``contains``: the first matching rule of the list applies.

    Attributes:
        contains: text looked for in the field's value (case-sensitive), non-empty.
        k_scale: K is multiplied by this, [1e-9, 1e6] (World Football Elo: 60 for the
            World Cup against 20 for friendlies is k_scale 3 against 1).
        home_advantage: the home advantage in these matches, rating points, |x| ≤ 1e6
            (default: the plugin's ``home_advantage``).
        gap_scale: the rating gap counts this many times in these matches, [1e-9, 1e6]
            (FiveThirtyEight's NFL playoffs: 1.2; a best-of-five tennis match is more
            decisive than a best-of-three).
        draw_kappa, draw_margin: the draw model's κ ([0, 1e3]) or draw band (rating
            points, [0, 1e6]) in these matches (default: the plugin's); a draw fit
            ``draw_fit = "context"`` sets them.
    """

    contains: str = attrs.field(validator=_contains)
    k_scale: float = attrs.field(default=1.0, validator=_positive)
    gap_scale: float = attrs.field(default=1.0, validator=_positive)
    home_advantage: float | None = attrs.field(default=None)
    draw_kappa: float | None = attrs.field(default=None, validator=_optional(0.0, 1e3))
    draw_margin: float | None = attrs.field(default=None, validator=_optional(0.0, 1e6))

    @home_advantage.validator
    def _check_home(self, attribute: attrs.Attribute[float | None], value: float | None) -> None:
        if value is not None and not (math.isfinite(value) and abs(value) <= 1e6):
            raise ValueError(f"'home_advantage' must be a number in [-1e6, 1e6]: {value!r}")


class _Rule(Protocol):
    @property
    def contains(self) -> str: ...


_R = TypeVar("_R", bound=_Rule)


def side_rank(match: Match | None, field: str | None, side: int) -> float | None:
    """``side``'s number in ``match.meta[field]`` (a list, one per side: a ranking), or
    None where there is none: no field, no match, no list, null, not a positive finite
    number.

    >>> from rankcraft.io import parse_match
    >>> m = parse_match(
    ...     {"id": "m", "played_at": "2024-01-01", "teams": [["a"], ["b"]], "ranks": [1, 2],
    ...      "meta": {"rk": [3, None]}}
    ... )
    >>> side_rank(m, "rk", 0), side_rank(m, "rk", 1), side_rank(m, "other", 0)
    (3, None, None)
    """
    if field is None or match is None:
        return None
    values = match.meta.get(field)
    if not isinstance(values, list | tuple) or side >= len(values):
        return None
    rank = values[side]
    if isinstance(rank, bool) or not isinstance(rank, int | float):
        return None
    return rank if rank > 0 and math.isfinite(rank) else None


def value_index(match: Match | None, field: str | None, values: Sequence[str]) -> int | None:
    """The index in ``values`` of the text of ``match.meta[field]`` (a tennis surface
    among the surfaces rated), or None: no field, no match, no value, not listed."""
    text = None if match is None else context_text(match, field)
    if text is None:
        return None
    try:
        return values.index(text)
    except ValueError:
        return None


def context_text(match: Match, field: str | None) -> str | None:
    """The text of the match's ``meta[field]`` (its context: the competition, the
    surface), as every context rule reads it; None without the field or the value."""
    value = None if field is None else match.meta.get(field)
    return None if value is None else str(value)


def first_rule(match: Match | None, field: str | None, rules: Sequence[_R]) -> _R | None:
    """The first of ``rules`` whose ``contains`` text the match's ``meta[field]`` holds
    (its context: the competition, the surface), or None (no match, no field, no rule)."""
    if match is None or field is None or not rules:
        return None
    text = context_text(match, field) or ""
    for rule in rules:
        if rule.contains in text:
            return rule
    return None


_S = TypeVar("_S")


class LastFactors:
    """The state an update returned last, and the factors it was rated with.

    A plugin that computes its report factors while it rates (Elo's margin, a wager's
    stake) keeps them here; its ``rankcraft_explain``, called right after the update
    with that very state (``after``), reads them back with :meth:`of` instead of rating
    again. Called with any other state, :meth:`of` answers None and the plugin rates
    again: the hook stays a function of its arguments (and a league on another thread
    that updated in between is not misread)."""

    __slots__ = ("_factors", "_state")

    def __init__(self) -> None:
        self._state: Any = None
        self._factors: dict[str, float] | None = None

    def keep(self, state: _S, factors: dict[str, float]) -> _S:
        """Remember ``state`` (returned) and its ``factors`` (never None)."""
        self._state, self._factors = state, factors
        return state

    def of(self, after: Any) -> dict[str, float] | None:
        """The factors of ``after`` if it is the state kept last, else None."""
        return self._factors if self._state is after else None
