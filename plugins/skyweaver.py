"""``skyweaver-rp`` rank and reset plugin: Skyweaver's Rank Points, tiers and seasons.

From Robert Petit's "Ranking Changes White Paper" (2022); the readings taken where it is
wrong or open are in docs/decisions.md ("Readings of the published sources").

After a match (the paper's eq. 4, with the bias term B its printed form leaves out):

    RP' = round(RP + Δr·F + B + A), then at least the player's hard floor
    F = (1000 / (3000 − 1250)) · min(1, f_min + (1 − f_min)·(RP − 200)/1000)
    B = max(b_min, b_max − (RP − 200)/1000 · (b_max − b_min))        wins only
    A = a on a win that follows two wins                            wins only

Δr is the Glicko-1 MMR change of the match; rounding is half-up to whole RP; draws move
RP by Δr·F only. Tiers follow Table 1 (Wanderer 200 … Master 1200; Grandweaver = the top
100 Masters by RP, ties by player id). A hard floor is the highest hard floor (200, 300,
600, 900, 1200) the player has reached this season.

Season events (``League.reset(kind)``):

- ``"soft"`` (weekly): end-of-week RP is recorded for the players of the season (those who
  have played since the last hard reset); Grandweavers are capped at 1400 RP and
  other Masters at 1300, by rank at the week's end; every player's RD grows by one rating
  period (RD grows once a week).
- ``"hard"`` (monthly): the season of each player who played in it is archived
  (end-of-season rank; Masters and above are scored by the mean of their end-of-week RP;
  a player idle all season gets no entry); RP is set from the end-of-season rank by
  Table 1 (Wanderers stay at 200); MMR is rescaled by eq. 5, r' = 1500 + (r − r_low) /
  (r_high − r_low) · span (span 750 by default, as the equation), RD back to 350; floors are
  recomputed from the new RP.

>>> tier_of(1250), tier_of(1199), hard_floor(1150)
('Master', 'Expert III', 900)
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from datetime import timedelta
from decimal import ROUND_HALF_UP, Decimal
from typing import Any, cast

import attrs

from rankcraft import (
    InputError,
    Needs,
    PlayerContext,
    PlayerRecord,
    PlayerScope,
    ResetContext,
    State,
    hookimpl,
)
from rankcraft import state_field as _state_field
from rankcraft.validators import RATING_LIMIT, state_within, unit, within

from .glicko1 import DEVIATION_RANGE

RANKCRAFT_CONTRACT = 2

POINTS, TIER, FLOOR, STREAK, WEEKLY, SEASONS = range(6)
"""Positions of :class:`SkyweaverRp`'s fields in its tuple form (the per-match hooks')."""

POINTS_LIMIT = 1_000_000
"""The largest RP a rank state holds (and any RP param may set)."""
_points = within(0, POINTS_LIMIT)
_rp = within(-1e4, 1e4)
_span = within(1e-3, 1e6)

GRANDWEAVER = "Grandweaver"
MASTER = "Master"

# (tier, RP minimum, hard floor, hard-reset RP)  -- Table 1 of the white paper
TIERS: tuple[tuple[str, int, bool, int], ...] = (
    ("Wanderer", 200, True, 200),
    ("Trainee I", 300, True, 300),
    ("Trainee II", 400, False, 350),
    ("Trainee III", 500, False, 400),
    ("Apprentice I", 600, True, 450),
    ("Apprentice II", 700, False, 500),
    ("Apprentice III", 800, False, 550),
    ("Expert I", 900, True, 600),
    ("Expert II", 1000, False, 700),
    ("Expert III", 1100, False, 800),
    (MASTER, 1200, True, 900),
)
GRANDWEAVER_RESET = 1000
HARD_RESET = {name: value for name, _, _, value in TIERS} | {GRANDWEAVER: GRANDWEAVER_RESET}

# Table 2: the old Elo ladder's rankings -> RP at migration (the tier is Table 1's by RP)
MIGRATION = {
    "Grandmaster": 1200,
    "Master": 1100,
    "Prophet": 1000,
    "Scholar": 700,
    "Apprentice": 400,
    "Below Apprentice": 200,
}


def tier_of(points: float) -> str:
    """Table 1's tier for an RP value (Grandweaver needs the league: see ``standings``)."""
    name = TIERS[0][0]
    for tier, minimum, _, _ in TIERS:
        if points >= minimum:
            name = tier
    return name


def hard_floor(points: float) -> int:
    """The highest hard floor at or below ``points`` (200 at least)."""
    floor = TIERS[0][1]
    for _, minimum, hard, _ in TIERS:
        if hard and points >= minimum:
            floor = minimum
    return floor


def round_half_up(value: float) -> int:
    """Whole RP, halves rounded up (after summing the terms, before the floor)."""
    return int(Decimal(repr(value)).quantize(Decimal(1), rounding=ROUND_HALF_UP))


@attrs.frozen(kw_only=True)
class SkyweaverParams:
    """Params of ``skyweaver-rp`` (rank and reset slots). RP are whole numbers.

    Attributes:
        initial_points: a new player's RP, in [0, 1e6] (default 200, Wanderer).
        f_min: the share of the MMR change counted at the bottom of the ladder, [0, 1]
            (default 0.25; the paper gives no value).
        b_min, b_max: the win bias at the top and bottom of the ladder, RP in [-1e4, 1e4]
            (default 5, 20).
        a: the win-streak bonus, RP in [-1e4, 1e4] (default 0, as in the white paper's
            first draft).
        rp_span, mmr_span: the range transform 1000 / (3000 − 1250) (defaults 1000,
            1750), each in [0.001, 1e6].
        ladder_start, ladder_width: the ladder's bottom (200, |x| ≤ 1e6) and width (1000,
            in [1, 1e6]) in RP.
        top_n: Grandweavers are the top this-many Masters by RP, ≥ 1 (default 100).
        grandweaver_cap, master_cap: weekly soft-reset caps, in [0, 1e6] (defaults 1400,
            1300).
        span: hard reset, eq. 5: MMR is rescaled to [1500, 1500 + span] (default 750, the
            equation; 500 gives the prose's 1500–2000), in [0.001, 1e6].
        reset_rating: the bottom of the rescaled MMR (default 1500); ``reset_rating`` and
            ``reset_rating + span`` must be ratings (|x| ≤ 1e6).
        reset_deviation: RD after a hard reset, in [0.001, 1e4] (default 350).
        soft_reset_periods: rating periods of RD growth at a weekly soft reset, in
            [0, 1e6] (default 1: RD grows once a week).

    RP stay within [0, 1e6] (``POINTS_LIMIT``).
        equal_mmr: what a hard reset does when every player has the same MMR, where eq. 5
            is 0/0: ``"error"`` (default: refuse with a clear message) or
            ``"bottom"`` (everyone gets ``reset_rating``: the numerator is 0 for all).
    """

    initial_points: int = attrs.field(default=200, validator=_points)
    f_min: float = attrs.field(default=0.25, validator=unit)
    b_min: float = attrs.field(default=5.0, validator=_rp)
    b_max: float = attrs.field(default=20.0, validator=_rp)
    a: float = attrs.field(default=0.0, validator=_rp)
    rp_span: float = attrs.field(default=1000.0, validator=_span)
    mmr_span: float = attrs.field(default=1750.0, validator=_span)
    ladder_start: float = attrs.field(default=200.0, validator=within(-1e6, 1e6))
    ladder_width: float = attrs.field(default=1000.0, validator=within(1.0, 1e6))
    top_n: int = attrs.field(default=100, validator=attrs.validators.ge(1))
    grandweaver_cap: int = attrs.field(default=1400, validator=_points)
    master_cap: int = attrs.field(default=1300, validator=_points)
    span: float = attrs.field(default=750.0, validator=_span)
    reset_rating: float = attrs.field(default=1500.0, validator=within(-RATING_LIMIT, RATING_LIMIT))
    reset_deviation: float = attrs.field(default=350.0, validator=within(*DEVIATION_RANGE))
    soft_reset_periods: float = attrs.field(default=1.0, validator=within(0.0, 1e6))
    equal_mmr: str = attrs.field(
        default="error", validator=attrs.validators.in_(("error", "bottom"))
    )

    def __attrs_post_init__(self) -> None:
        if self.b_min > self.b_max:
            raise ValueError(f"'b_min' must be <= 'b_max' ({self.b_max}): {self.b_min}")
        if self.reset_rating + self.span > RATING_LIMIT:
            raise ValueError(
                f"'span' must keep 'reset_rating' + 'span' <= {RATING_LIMIT!r} "
                f"('reset_rating' is {self.reset_rating!r}): {self.span!r}"
            )


@attrs.frozen(slots=True)
class SkyweaverRp:
    """A player's Skyweaver rank.

    Attributes:
        points: RP, a whole number ≥ 0 (role ``location``).
        tier: Table 1's tier by RP (Grandweaver is decided across the league); when left
            out (an import giving only ``points``) it is the tier of ``points``.
        floor: the hard floor reached this season (RP never drops below it in the season);
            when left out, the hard floor of ``points`` (a player at 905 RP has reached
            Expert I's 900 this season).
        streak: wins in a row up to now (kept across resets).
        weekly: this season's end-of-week RP, one per soft reset.
        seasons: archive of past seasons: [end-of-season rank, season score] each.
    """

    points: int = _state_field(role="location", validator=state_within(0, POINTS_LIMIT))
    tier: str = attrs.field(
        default=attrs.Factory(lambda self: tier_of(self.points), takes_self=True)
    )
    floor: int = attrs.field(
        default=attrs.Factory(lambda self: hard_floor(self.points), takes_self=True),
        validator=state_within(0, POINTS_LIMIT),
    )
    streak: int = attrs.field(default=0, validator=state_within(0, 2**53))
    weekly: tuple[int, ...] = ()
    seasons: tuple[tuple[str, float], ...] = ()


@hookimpl
def rankcraft_params(slot: str) -> type | None:
    return SkyweaverParams if slot in ("rank", "reset") else None


@hookimpl
def rankcraft_needs(slot: str) -> Needs | None:
    return Needs(fields=("rating", "deviation")) if slot in ("rank", "reset") else None


HARD_FLOORS = tuple(minimum for _, minimum, hard, _ in TIERS if hard)
"""The hard floors a season can reach (200, 300, 600, 900, 1200)."""


@hookimpl
def rankcraft_verify(slot: str, state: Any) -> str | None:
    # a rank's tier and floor derive from its points (Table 1): a tier is its points'
    # tier, a floor one of the hard floors, and points never below the floor reached
    # (but a new player's, who starts under the first floor)
    if slot != "rank":
        return None
    tier = tier_of(state.points)
    if state.tier != tier:
        return f"'tier' must be the tier of {state.points} RP, {tier!r}: {state.tier!r}"
    if state.floor not in HARD_FLOORS:
        return f"'floor' must be a hard floor ({', '.join(map(str, HARD_FLOORS))}): {state.floor!r}"
    if state.points < state.floor and state.floor != HARD_FLOORS[0]:
        return f"'points' must be at least the 'floor' reached, {state.floor}: {state.points!r}"
    return None


@hookimpl
def rankcraft_initial(slot: str, params: SkyweaverParams) -> SkyweaverRp:
    points = params.initial_points
    return SkyweaverRp(points, tier_of(points), hard_floor(points))


def _rp_after(
    params: SkyweaverParams,
    rank: State,
    delta_r: float,
    score: float,
    context: PlayerContext | None,
) -> State:
    """:func:`rp_after` on the tuple form of the rank state (what the rank hook reads)."""
    rp = rank[POINTS]
    floor = rank[FLOOR]
    progress = (rp - params.ladder_start) / params.ladder_width
    f = params.rp_span / params.mmr_span * min(1.0, params.f_min + (1 - params.f_min) * progress)
    change = delta_r * f
    bias = bonus = 0.0
    won = score == 1.0
    if won:
        bias = max(params.b_min, params.b_max - progress * (params.b_max - params.b_min))
        if rank[STREAK] >= 2:
            bonus = params.a
    points = round_half_up(rp + change + bias + bonus)
    floored = min(max(points, floor, 0), POINTS_LIMIT)
    if context is not None:
        context.explain("mmr_change", delta_r)
        context.explain("F", f)
        if won:
            context.explain("bias", bias)
            if bonus:
                context.explain("streak_bonus", bonus)
        if floored != points:
            context.explain("floor", float(floor))
    return (
        floored,
        tier_of(floored),
        max(floor, hard_floor(floored)),
        rank[STREAK] + 1 if won else 0,
        rank[WEEKLY],
        rank[SEASONS],
    )


def rp_after(
    params: SkyweaverParams,
    rank: SkyweaverRp,
    delta_r: float,
    score: float,
    context: PlayerContext | None = None,
) -> SkyweaverRp:
    """Eq. 4 with the bias term, wins-only B and A, half-up rounding and the floor
    (on the public form of the rank state; ``context``, when given, gets the factors)."""
    state = (rank.points, rank.tier, rank.floor, rank.streak, rank.weekly, rank.seasons)
    return SkyweaverRp(*_rp_after(params, state, delta_r, score, context))


@hookimpl
def rankcraft_rank(
    params: SkyweaverParams,
    rank_state: State,
    before: State,
    after: State,
    score: float,
    context: PlayerContext,
    layout: Mapping[str, int],
) -> State:
    rating = layout["rating"]
    return _rp_after(params, rank_state, after[rating] - before[rating], score, context)


def _rank_of(record: PlayerRecord) -> SkyweaverRp:
    """The record's Skyweaver rank (a league with this plugin gives every player one)."""
    if record.rank is None:
        raise InputError(f"player {record.id!r} has no Skyweaver rank state")
    return cast(SkyweaverRp, record.rank)


MASTER_RP = 1200
"""The RP from which a player is a Master (a Grandweaver candidate)."""


def grandweavers(params: SkyweaverParams, players: Sequence[PlayerRecord]) -> set[str]:
    """Ids of the top ``top_n`` Masters by RP (ties broken by player id)."""
    masters = sorted(
        (p for p in players if p.rank is not None and _rank_of(p).points >= MASTER_RP),
        key=lambda p: (-_rank_of(p).points, p.id),
    )
    return {p.id for p in masters[: params.top_n]}


def _season_rank(record: PlayerRecord, top: set[str]) -> str:
    return GRANDWEAVER if record.id in top else tier_of(_rank_of(record).points)


@hookimpl
def rankcraft_standings(
    params: SkyweaverParams, players: Sequence[PlayerRecord]
) -> Mapping[str, str]:
    top = grandweavers(params, players)
    return {p.id: _season_rank(p, top) for p in players if p.rank is not None}


@hookimpl
def rankcraft_standings_scope() -> PlayerScope:
    """A label needs the player and the Masters (the Grandweavers are the top of them);
    a Skyweaver league sorts by RP, so the Masters are read along the index."""
    return PlayerScope(sort_key_from=float(MASTER_RP))


@hookimpl
def rankcraft_reset_kinds() -> tuple[str, ...]:
    return ("soft", "hard")


@hookimpl
def rankcraft_reset(
    params: SkyweaverParams, players: Sequence[PlayerRecord], kind: str, context: ResetContext
) -> list[PlayerRecord]:
    if kind == "soft":
        return _soft_reset(params, players, context)
    if kind == "hard":
        return _hard_reset(params, players, context)
    raise InputError(f"skyweaver-rp has no {kind!r} reset (it has 'soft' and 'hard')")


@hookimpl
def rankcraft_reset_scope(
    params: SkyweaverParams, kind: str, context: ResetContext
) -> PlayerScope | None:
    """A scheduled soft reset changes only the players of the season (played since the
    latest hard reset, or this week) and the Masters (capped); a hard reset rescales
    every MMR by the league's lowest and highest (eq. 5): every player.

    Exact when every other player is as the latest hard reset left them: no week
    recorded, RP below 1200 (a hard reset gives at most 1000), and RD at the level a
    week's growth keeps (``reset_deviation`` equal to the skill's RD ceiling, or no RD
    growth). Otherwise, before the league's first hard reset, for a soft reset triggered
    by the data and for an event run by hand: every player."""
    hard = context.ran.get("hard")
    if kind != "soft" or hard is None or context.every_days is None or context.since is None:
        return None
    if context.decay is not None and params.soft_reset_periods > 0:
        ceiling = getattr(context.skill_params, "ceiling", None)
        if ceiling != params.reset_deviation:
            return None
    # a week that closed before the hard reset may have recorded a week for a player
    # idle since: the first soft reset after it looks back one interval from its moment
    # (a dated soft reset: the same interval every time; one triggered by the data looks
    # back to its previous run, which may be long before, so it reads everyone)
    week = timedelta(days=context.every_days)
    return PlayerScope(played_since=min(context.since, hard - week), sort_key_from=1200.0)


def _soft_reset(
    params: SkyweaverParams, players: Sequence[PlayerRecord], context: ResetContext
) -> list[PlayerRecord]:
    """Caps, end-of-week RP and a week of RD growth; returns the changed records only.

    End-of-week RP is recorded for the players of the season: those with a week recorded
    already, and those who played this week (``context.played``). A player who has not
    played since the last hard reset has no week of the season to record."""
    top = grandweavers(params, players)
    decay = context.decay if params.soft_reset_periods > 0 else None
    periods = params.soft_reset_periods
    out = []
    for p in players:
        rank = _rank_of(p)
        points = rank.points
        capped = points
        if points >= 1200:
            capped = min(points, params.grandweaver_cap if p.id in top else params.master_cap)
        skill = p.skill
        if decay is not None:
            grown = decay(skill, periods)
            if grown != skill:
                skill = grown
        if rank.weekly or context.played(p):
            rank = attrs.evolve(
                rank, points=capped, tier=tier_of(capped), weekly=(*rank.weekly, points)
            )
        elif capped != points:
            rank = attrs.evolve(rank, points=capped, tier=tier_of(capped))
        elif skill is p.skill:
            continue  # idle all season, nothing to cap, RD at its limit: unchanged
        out.append(attrs.evolve(p, rank=rank, skill=skill))
    return out


def _hard_reset(
    params: SkyweaverParams, players: Sequence[PlayerRecord], context: ResetContext
) -> list[PlayerRecord]:
    """The season's end; only a player who played in the season (``context.played``)
    gets a season in the archive. Returns the changed records only."""
    if not players:
        return []
    top = grandweavers(params, players)
    ratings = [p.skill.rating for p in players]
    low, high = min(ratings), max(ratings)
    if high == low and params.equal_mmr == "error":
        raise InputError(
            f"hard reset: every player has the same MMR ({low}), eq. 5 (r - r_low) / (r_high - "
            "r_low) is undefined"
        )
    out = []
    for p in players:
        rank = _rank_of(p)
        season_rank = _season_rank(p, top)
        seasons = rank.seasons
        if context.played(p):
            if season_rank in (MASTER, GRANDWEAVER) and rank.weekly:
                score = math.fsum(rank.weekly) / len(rank.weekly)
            else:
                score = float(rank.points)
            seasons = (*seasons, (season_rank, score))
        points = HARD_RESET[season_rank]
        tier, floor = tier_of(points), hard_floor(points)
        share = (p.skill.rating - low) / (high - low) if high > low else 0.0
        rating = params.reset_rating + share * params.span
        skill = p.skill
        if rating != skill.rating or params.reset_deviation != skill.deviation:
            skill = attrs.evolve(skill, rating=rating, deviation=params.reset_deviation)
        elif (
            seasons is rank.seasons
            and not rank.weekly
            and (points, tier, floor) == (rank.points, rank.tier, rank.floor)
        ):
            continue  # idle, and at the fixed point of the resets: unchanged
        rank = SkyweaverRp(points, tier, floor, rank.streak, (), seasons)
        out.append(attrs.evolve(p, rank=rank, skill=skill))
    return out


def migrate_from_elo(
    document: Mapping[str, Any],
    old_ranks: Mapping[str, str],
    *,
    deviation: float = 350.0,
    ruleset: str = "skyweaver",
) -> dict[str, Any]:
    """A Skyweaver state document from an Elo export (section 5 of the white paper).

    MMR copies the Elo rating one to one, RD is ``deviation`` for everyone, and RP comes from
    each player's ranking on the old ladder by Table 2 (players not in ``old_ranks`` are
    "Below Apprentice"). Table 2 names "Master → 1100 → Master" and "Grandmaster → 1200 →
    Grandweaver", but by Table 1 1100 is Expert III and Grandweaver needs the leaderboard:
    the RP values are kept and the tier is Table 1's.

    :raises InputError: an unknown old ranking.
    """
    players = []
    for row in document.get("players", []):
        old = old_ranks.get(row["id"], "Below Apprentice")
        if old not in MIGRATION:
            raise InputError(
                f"unknown old ranking {old!r} for player {row['id']!r} "
                f"(known: {', '.join(MIGRATION)})"
            )
        points = MIGRATION[old]
        players.append(
            {
                "id": row["id"],
                "skill": {"rating": float(row["skill"]["rating"]), "deviation": deviation},
                "rank": {
                    "points": points,
                    "tier": tier_of(points),
                    "floor": hard_floor(points),
                    "streak": 0,
                    "weekly": [],
                    "seasons": [],
                },
                "matches": row.get("matches", 0),
                "last_played": row.get("last_played"),
            }
        )
    return {"ruleset": ruleset, "players": players}
