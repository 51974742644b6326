"""``wager`` plugin: the team time-weighted rank wager.

From "Ranking in Team-Based Competitive Games"; the readings taken where it is wrong or
open are in docs/decisions.md ("Readings of the published sources").

A player's rank R (≥ 1.00, two decimals) is what they wager: a twentieth of it per match,
scaled by the teams' average ranks (YA yours, OA theirs, rounded to 2 decimals) and the
total seconds each team spent in the game (YT, OT):

- win:  R1 = R0 + R0/20 · (OA/YA) · (OT/YT)
- loss: R1 = max(1.00, R0 − R0/20 · (YA/OA) · (YT/OT))
- draw: the team with the lower average gains as on a win; a higher or equal one stays.
- a player who quit: R1 = max(1.00, min(R0 − R0/20, the standard loss)), whatever the
  result (quitting takes precedence); if every opponent quit: R1 = R0 + R0/20.

R1 is rounded half-up to 2 decimals. Without ``seconds_played`` the time factor
is 1. Two-sided matches only.

The cent arithmetic is decimal, not binary floating point: every number is read as the
decimal it prints as (2.3 is 2.30, not 2.29999…), the formula is evaluated with
:mod:`decimal` (one division, so an exact result stays exact) and only the rounded R1
becomes a float again. A loss of 2.30 against 2.30 is exactly 2.185, which rounds to 2.19.

The paper's worked example (21.84 on a 6-v-6 team averaging 20.81 against 21.20; 769 s
against 801 s per player): 23.00 (the paper prints 23.10, having used 1.10 for OA/YA).

>>> wager_win(21.84, 20.81, 21.20, 4614, 4806)
23.0
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from datetime import datetime
from decimal import ROUND_HALF_UP, Context, Decimal, localcontext

import attrs

from rankcraft import (
    Census,
    InputError,
    Match,
    Needs,
    Pairing,
    PlayerRecord,
    PlayerScope,
    State,
    hookimpl,
    pair_score,
)
from rankcraft import state_field as _state_field
from rankcraft.model import window_start
from rankcraft.validators import state_within, within

from ._matchup import LastFactors

RANKCRAFT_CONTRACT = 2

RANK = 0
"""Position of :class:`WagerRank`'s one field, ``rank``, in its tuple form."""

RANK_LIMIT = 1e6
"""The largest rank (a win that would pass it stops there)."""
_rank = within(0.01, RANK_LIMIT)

_DECIMAL = Context(prec=40)
"""Working precision of the wager's decimal arithmetic: 40 significant digits, so a
product of a few two-decimal ranks and whole seconds is exact and the one division is
rounded far below a cent."""


def _dec(value: float) -> Decimal:
    """``value`` as the decimal it prints as (its shortest repr): 2.3 → Decimal('2.3')."""
    return Decimal(repr(float(value)))


def _round_dec(value: Decimal, decimals: int = 2) -> float:
    """A decimal rounded half-up at ``decimals`` places, as a float."""
    with localcontext(_DECIMAL):
        return float(value.quantize(Decimal(1).scaleb(-decimals), rounding=ROUND_HALF_UP))


def round_half_up(value: float, decimals: int = 2) -> float:
    """``value`` rounded half-up at ``decimals`` places, as a person would (22.8475 → 22.85)."""
    return _round_dec(_dec(value), decimals)


def _stake(
    r0: float, num: float, den: float, num_t: float, den_t: float, divisor: float
) -> Decimal:
    """R0/divisor · (num/den) · (num_t/den_t) in decimal, with a single (last) division."""
    with localcontext(_DECIMAL):
        return (_dec(r0) * _dec(num) * _dec(num_t)) / (_dec(divisor) * _dec(den) * _dec(den_t))


def wager_win(
    r0: float, ya: float, oa: float, yt: float, ot: float, divisor: float = 20.0
) -> float:
    """R1 after a win (rounded): R0 + R0/20 · (OA/YA) · (OT/YT)."""
    with localcontext(_DECIMAL):
        return _round_dec(_dec(r0) + _stake(r0, oa, ya, ot, yt, divisor))


def wager_loss(
    r0: float, ya: float, oa: float, yt: float, ot: float, divisor: float = 20.0, floor: float = 1.0
) -> float:
    """R1 after a loss (rounded, floored): R0 − R0/20 · (YA/OA) · (YT/OT)."""
    with localcontext(_DECIMAL):
        return max(floor, _round_dec(_dec(r0) - _stake(r0, ya, oa, yt, ot, divisor)))


def _plain_stake(r0: float, divisor: float) -> Decimal:
    """R0/divisor in decimal."""
    with localcontext(_DECIMAL):
        return _dec(r0) / _dec(divisor)


@attrs.frozen(kw_only=True)
class WagerParams:
    """Params of ``wager`` (slots initial, team, update).

    Attributes:
        initial_rank: a new player's rank, ≥ ``floor`` and ≤ 1e6 (default 1.00).
        divisor: the stake is R0 / divisor, in [1, 1e6] (default 20): never more than
            the rank itself.
        floor: the lowest rank, in [0.01, 1e6] (default 1.00): a cent at least, so that
            no team average rounds to 0.
        team_time: ``"total"`` (default: OT and YT are the teams' total seconds, the
            paper's definition) or ``"mean"`` (seconds per player, as the paper's
            example computes).
        placement_matches: matches before a percentile is shown, ≥ 0 (default 10).
        active_days: players who played within this many days of the league's latest
            match count for percentiles, in [1e-6, 1e6] (default 30).

    Ranks stay within [``floor``, 1e6] (``RANK_LIMIT``).
    """

    initial_rank: float = attrs.field(default=1.0, validator=_rank)
    divisor: float = attrs.field(default=20.0, validator=within(1.0, 1e6))
    floor: float = attrs.field(default=1.0, validator=_rank)
    team_time: str = attrs.field(default="total", validator=attrs.validators.in_(("total", "mean")))
    placement_matches: int = attrs.field(default=10, validator=attrs.validators.ge(0))
    active_days: float = attrs.field(default=30.0, validator=within(1e-6, 1e6))

    def __attrs_post_init__(self) -> None:
        if self.initial_rank < self.floor:
            raise ValueError(
                f"'initial_rank' must be >= 'floor' ({self.floor}): {self.initial_rank}"
            )


@attrs.frozen(slots=True)
class WagerRank:
    """A player's rank in the wager system.

    Attributes:
        rank: the rank, ≥ 1.00 (the ``floor``; at least 0.01) and ≤ 1e6, two decimals
            (role ``location``).
    """

    rank: float = _state_field(role="location", validator=state_within(0.01, RANK_LIMIT))


@attrs.frozen(slots=True)
class Matchup:
    """What a wager pairing carries instead of an opponent's state.

    Attributes:
        side, other: indices of the player's side and the opposing side.
        own_average, other_average: the sides' mean ranks, rounded to 2 decimals (YA, OA).
    """

    side: int
    other: int
    own_average: float
    other_average: float


@hookimpl
def rankcraft_params(slot: str) -> type | None:
    # the team and expectation hooks read no parameter: a [team.params] table would be
    # printed by `check --show` and ignored, so those slots take none (a table is refused)
    return WagerParams if slot in ("initial", "update") else None


@hookimpl
def rankcraft_needs(slot: str) -> Needs | None:
    # the wager is staked and settled match by match: its team pairings carry one match's
    # sides, which no batch or live period can keep
    return Needs(modes=("match",)) if slot in ("update", "team") else None


@hookimpl
def rankcraft_initial(slot: str, params: WagerParams) -> WagerRank:
    return WagerRank(params.initial_rank)


def _average(members: Sequence[State]) -> float:
    """A side's mean rank, rounded half-up to 2 decimals (summed in decimal: the mean of
    2.26 and 1.85 is exactly 2.055, which rounds to 2.06); ``members`` in tuple form."""
    with localcontext(_DECIMAL):
        return _round_dec(sum((_dec(m[RANK]) for m in members), Decimal(0)) / len(members))


@hookimpl
def rankcraft_aggregate(members: Sequence[State]) -> State:
    return (_average(members),)


@hookimpl
def rankcraft_expectation(side_states: Sequence[State]) -> list[float]:
    total = math.fsum(s[RANK] for s in side_states)
    return [s[RANK] / total for s in side_states]


@hookimpl
def rankcraft_team(
    sides: Sequence[Sequence[State]], places: Sequence[int], weight: float
) -> list[list[list[tuple[Matchup, float, float]]]]:
    if len(sides) != 2:
        raise InputError(f"the wager system rates two-sided matches, not {len(sides)} sides")
    averages = [_average(side) for side in sides]
    out = []
    for i, side in enumerate(sides):
        j = 1 - i
        pairing = (Matchup(i, j, averages[i], averages[j]), pair_score(places, i, j), weight)
        out.append([[pairing] for _ in side])
    return out


def _times(params: WagerParams, match: Match | None, side: int, other: int) -> tuple[float, float]:
    if match is None or match.seconds_played is None:
        return 1.0, 1.0
    own = math.fsum(match.seconds_played[side])
    theirs = math.fsum(match.seconds_played[other])
    if params.team_time == "mean":
        own /= len(match.seconds_played[side])
        theirs /= len(match.seconds_played[other])
    if own <= 0 or theirs <= 0:
        return 1.0, 1.0
    return own, theirs


_explained = LastFactors()
"""The last update's new state and its factors, for :func:`rankcraft_explain`."""


@hookimpl
def rankcraft_update(
    params: WagerParams,
    state: State,
    pairings: Sequence[Pairing],
    match: Match | None,
    player: str,
) -> State:
    ((matchup, score, _),) = pairings
    r0 = state[RANK]
    ya, oa = matchup.own_average, matchup.other_average
    yt, ot = _times(params, match, matchup.side, matchup.other)
    d = params.divisor
    quit = set(match.quit) if match is not None else set()
    factors = {"stake": _round_dec(_plain_stake(r0, d), 4)}
    if player in quit:
        loss = wager_loss(r0, ya, oa, yt, ot, d, params.floor)
        with localcontext(_DECIMAL):
            automatic = _round_dec(_dec(r0) - _plain_stake(r0, d))
        r1 = max(params.floor, min(automatic, loss))
        factors["quit"] = 1.0
    elif match is not None and quit and all(p in quit for p in match.teams[matchup.other]):
        with localcontext(_DECIMAL):
            r1 = _round_dec(_dec(r0) + _plain_stake(r0, d))
        factors["opponents_quit"] = 1.0
    elif score == 1.0 or (score == 0.5 and ya < oa):
        r1 = wager_win(r0, ya, oa, yt, ot, d)
        factors["average_factor"] = oa / ya
        factors["time_factor"] = ot / yt
    elif score == 0.0:
        r1 = wager_loss(r0, ya, oa, yt, ot, d, params.floor)
        factors["average_factor"] = ya / oa
        factors["time_factor"] = yt / ot
    else:
        r1 = r0
    return _explained.keep((min(max(params.floor, r1), RANK_LIMIT),), factors)


@hookimpl
def rankcraft_explain(
    params: WagerParams,
    state: State,
    pairings: Sequence[Pairing],
    match: Match | None,
    player: str,
    after: State,
) -> dict[str, float]:
    """``stake`` (R0 / divisor, to 4 decimals), with ``quit`` or ``opponents_quit``, or the
    ``average_factor`` and ``time_factor`` the stake was scaled by."""
    kept = _explained.of(after)
    if kept is None:
        kept = _explained.of(rankcraft_update(params, state, pairings, match, player))
        assert kept is not None
    return kept


@hookimpl
def rankcraft_standings_scope(params: WagerParams, latest: datetime | None) -> PlayerScope:
    """Nobody but the players asked about: a percentile counts the active players with
    the league's census (:func:`rankcraft_standings`) instead of reading them."""
    return PlayerScope()


@hookimpl
def rankcraft_standings(
    params: WagerParams, players: Sequence[PlayerRecord], census: Census
) -> Mapping[str, str]:
    """Percentile buckets: 1 + ⌊100 · (players strictly lower) / N⌋ among the N active
    players (a match within ``active_days`` of the league's latest) who finished their
    placement matches, compared by their leaderboard value (the rank R), as the census
    counts them; ties share the lowest bucket."""
    latest, placed = census.latest, params.placement_matches
    since = None if latest is None else window_start(latest, params.active_days)
    active = [
        p
        for p in players
        if p.matches >= placed
        and since is not None
        and p.last_played is not None
        and p.last_played >= since
    ]
    counted = census.count(active, played_since=since, matches_from=placed) if active else None
    out = {}
    for p in players:
        if p.matches < placed:
            out[p.id] = f"placement {p.matches}/{placed}"
        elif counted is None or p.id not in counted.below:
            out[p.id] = "inactive"
        else:
            out[p.id] = f"percentile {1 + (100 * counted.below[p.id]) // counted.total}"
    return out
