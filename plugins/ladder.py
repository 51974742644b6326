"""``ladder`` rank and reset plugin: a tiered ladder configured entirely in ``[rank.params]``.

The ladder is a list of tiers, each cut into divisions (Bronze IV … Bronze I, …, Master);
a player climbs it with points: ``points_per_division`` points to the next division. Read
from the bottom, the divisions are the ladder's *steps*; a player's rank is a step and the
points in it.

After a match (the side's result s: 1 win, ½ draw, 0 loss; in a match of more sides the
mean result against every other side, a win when above ½):

    change = 2(s − E) · (win_points if s > E else loss_points)   scale = "expectation"
    change = (2s − 1) · (win_points if s > ½ else loss_points)   scale = "none"
             + draw_points on a draw
    times provisional_multiplier while provisional, times the match's weight,
    plus pull x (the step the skill rating points to - the player's step),
    then bounded: a win gains [min_gain, max_gain], a loss loses [min_loss, max_loss];
    rounded half away from zero to whole points

E is the skill model's pre-match probability that the side wins (two-sided matches only;
with more sides the change is not scaled). Reaching ``points_per_division`` promotes to the
next step with the extra points carried, unless that step opens with a promotion series
(best of N: points stay at the top of the division, wins and losses count towards the
series, draws do not). Falling below 0 demotes, carrying the deficit (or to
``demotion_points``), unless the player is on the ladder's bottom step, still has grace
games after a promotion, or stands on the first step of a tier with a floor. The top step
has no ceiling.

The first ``placement_matches`` matches show no rank; the last of them places the player
from the skill model's rating (its ``location`` field) by the ``placement`` table.
``provisional`` is shown until ``provisional_matches`` matches.

Season events (``League.reset(kind)`` or ``[[resets]]``), all read from ``[rank.params]``:
``"decay"`` (players at or above ``decay_from`` who did not play since the previous event
lose ``decay_points``, after ``decay_grace`` idle events, never below the tier's first
step), ``"soft"`` (each ranked player drops ``soft_drop`` steps, or goes to the step
``soft_map`` gives their tier; never up) and ``"hard"`` (everyone back to the initial rank:
placement again). A title (``title``) goes to the best ``title_top`` players from
``title_from`` up in ``League.standings()``.

>>> params = LadderParams()
>>> params.label(0), params.label(5), params.label(params.top)
('Bronze IV', 'Silver III', 'Master')
>>> rank_at(params, 5, 40).score, rank_at(params, 5, 40).tier
(545, 'Silver')
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import attrs

from rankcraft import (
    InputError,
    Match,
    Needs,
    PlayerContext,
    PlayerRecord,
    PlayerScope,
    ResetContext,
    State,
    hookimpl,
)
from rankcraft import state_field as _state_field
from rankcraft.validators import state_within

from ._ladder_params import (
    DEFAULT_TIERS,
    POINTS_LIMIT,
    SCORE_LIMIT,
    LadderParams,
    Placement,
    SoftMap,
    Tier,
    roman,
)

__all__ = [  # (re-exported: the params are defined in _ladder_params)
    "DEFAULT_TIERS",
    "POINTS_LIMIT",
    "SCORE_LIMIT",
    "LadderParams",
    "Placement",
    "SoftMap",
    "Tier",
    "roman",
]

RANKCRAFT_CONTRACT = 2

(
    TIER,
    DIVISION,
    POINTS,
    STEP,
    SCORE,
    GAMES,
    PROVISIONAL,
    SERIES_WINS,
    SERIES_LOSSES,
    GRACE,
    IDLE,
) = range(11)
"""Positions of :class:`LadderRank`'s fields in its tuple form (the per-match hooks')."""


@attrs.frozen(slots=True)
class LadderRank:
    """A player's place on the ladder.

    ``step`` and ``points`` are the rank; ``tier``, ``division`` and ``score`` are written
    from them for display and sorting (a state document's are taken as given and written
    again at the player's next match).

    Attributes:
        tier: the tier's name, or the ``unranked`` label during placement.
        division: the division shown (4 … 1 for IV … I), 0 in a tier of one division and
            during placement.
        points: points in the division, whole, ≥ 0: below ``points_per_division``, equal
            to it while a promotion series is played; up to 1e6 on the top step.
        step: the division counted from the ladder's bottom (0), or -1 during placement.
        score: the ladder position, step * (points_per_division + 1) + points, or -1
            during placement (role ``location``: leaderboards sort by it).
        games: matches rated since the player's start or last hard reset, ≥ 0.
        provisional: shown until ``provisional_matches`` games.
        series_wins, series_losses: the promotion series so far (both 0 outside one).
        grace: matches left in which a loss cannot demote, ≥ 0.
        idle: ``"decay"`` events in a row without play, counted up to ``decay_grace``.
    """

    tier: str
    division: int = attrs.field(validator=state_within(0, 20))
    points: int = attrs.field(validator=state_within(0, POINTS_LIMIT))
    step: int = attrs.field(validator=state_within(-1, 20 * 1000))
    score: int = _state_field(role="location", validator=state_within(-1, SCORE_LIMIT))
    games: int = attrs.field(default=0, validator=state_within(0, 2**53))
    provisional: bool = False
    series_wins: int = attrs.field(default=0, validator=state_within(0, 99))
    series_losses: int = attrs.field(default=0, validator=state_within(0, 99))
    grace: int = attrs.field(default=0, validator=state_within(0, 1000))
    idle: int = attrs.field(default=0, validator=state_within(0, 1000))


def _at(
    params: LadderParams,
    step: int,
    points: int,
    games: int = 0,
    series: tuple[int, int] = (0, 0),
    grace: int = 0,
    idle: int = 0,
) -> State:
    """:func:`rank_at` in the tuple form of the rank state (what the rank hook returns)."""
    provisional = games < params.provisional_matches
    if step < 0:
        return (params.unranked, 0, 0, -1, -1, games, provisional, 0, 0, 0, idle)
    t, division = params.steps[step]
    return (
        params.tiers[t].name,
        division,
        points,
        step,
        step * (params.points_per_division + 1) + points,
        games,
        provisional,
        series[0],
        series[1],
        grace,
        idle,
    )


def rank_at(
    params: LadderParams,
    step: int,
    points: int,
    games: int = 0,
    *,
    series: tuple[int, int] = (0, 0),
    grace: int = 0,
    idle: int = 0,
) -> LadderRank:
    """The rank state at ``step`` (-1: placement) with ``points``, its display fields
    written from them; ``provisional`` from ``games``."""
    return LadderRank(*_at(params, step, points, games, series, grace, idle))


def _round(value: float) -> int:
    """Whole points, halves away from zero (a 2.5 gain and a 2.5 loss both count 3)."""
    return int(math.copysign(math.floor(abs(value) + 0.5), value))


def points_change(
    params: LadderParams,
    score: float,
    expected: float | None,
    multiplier: float = 1.0,
    gap: float = 0.0,
) -> int:
    """The points a result moves (before promotion and demotion): ``score`` the side's
    result in [0, 1], ``expected`` its pre-match win probability (None: unscaled), the
    ``multiplier`` (provisional, the match's weight), plus ``pull`` times ``gap`` (steps
    from the player's step up to their skill's); bounded by the caps and rounded."""
    if params.scale == "expectation" and expected is not None:
        d = 2.0 * (score - expected)
        raw = d * (params.win_points if d > 0 else params.loss_points)
    else:
        d = 2.0 * score - 1.0
        raw = d * (params.win_points if d > 0 else params.loss_points)
    if score == 0.5:
        raw += params.draw_points
    raw = raw * multiplier + params.pull * gap
    if score > 0.5:
        raw = min(max(raw, params.min_gain), params.max_gain)
    elif score < 0.5:
        raw = -min(max(-raw, params.min_loss), params.max_loss)
    else:
        raw = min(max(raw, -params.max_loss), params.max_gain)
    return _round(raw)


def place(params: LadderParams, rating: float) -> int:
    """The step a player with skill ``rating`` is placed on (the highest rule reached)."""
    for at_least, step in params.placement_steps:
        if rating >= at_least:
            return step
    return 0


def skill_step(params: LadderParams, rating: float) -> float:
    """The (real) step a skill ``rating`` points to: ``pull_range`` mapped linearly onto
    the ladder's steps, clamped to it."""
    low, high = params.pull_range
    return min(max((rating - low) / (high - low), 0.0), 1.0) * params.top


def _normal(
    params: LadderParams, step: int, points: int, wins: int, losses: int
) -> tuple[int, int, int, int]:
    """(step, points, series wins, series losses) of a rank (its ``step``, ``points``,
    ``series_wins`` and ``series_losses``), brought inside the ladder (an imported state
    may name a step or points the ladder does not have)."""
    step = min(max(step, -1), params.top)
    ppd = params.points_per_division
    if step < params.top and points >= ppd:
        points = ppd if params.series_at[step + 1] > 0 else ppd - 1
    if step >= 0 and params.in_series(step, points):
        best_of = params.series_at[step + 1]
        need = best_of // 2 + 1
        return (step, points, min(wins, need - 1), min(losses, best_of - need))
    return step, points, 0, 0


def _climb(
    params: LadderParams,
    rank: State,
    score: float,
    change: int,
    factors: dict[str, float],
) -> State:
    """:func:`climb` on the tuple form of the rank state (what the rank hook reads)."""
    step, points, wins, losses = _normal(
        params, rank[STEP], rank[POINTS], rank[SERIES_WINS], rank[SERIES_LOSSES]
    )
    games = rank[GAMES] + 1
    grace = rank[GRACE]
    ppd = params.points_per_division
    if params.in_series(step, points):
        return _series_game(params, step, points, (wins, losses), games, grace, score, factors)
    factors["change"] = float(change)
    points += change
    promoted = False
    while points >= ppd and step < params.top:
        if params.series_at[step + 1] > 0:
            points = ppd  # the series starts at 0-0
            factors["series"] = float(params.series_at[step + 1])
            break
        points -= ppd
        step += 1
        promoted = True
    if step == params.top:
        points = min(points, POINTS_LIMIT)
    while points < 0:
        if step == 0:
            points = 0
        elif grace > 0:
            factors["grace"] = float(grace)
            points = 0
        elif params.floor_at[step]:
            factors["floor"] = 1.0
            points = 0
        else:
            step -= 1
            factors["demoted"] = factors.get("demoted", 0.0) + 1.0
            if params.demotion_points is not None:
                points = params.demotion_points
            else:
                points += ppd
    if promoted:
        factors["promoted"] = 1.0
        grace = params.grace_games
    else:
        grace = max(grace - 1, 0)
    return _at(params, step, points, games, grace=grace)


def _series_game(
    params: LadderParams,
    step: int,
    points: int,
    series: tuple[int, int],
    games: int,
    grace: int,
    score: float,
    factors: dict[str, float],
) -> State:
    """:func:`_climb` for a player in a promotion series: the match counts as a series
    game (a draw counts for neither side); the series won promotes, lost drops to
    ``series_fail_points``."""
    wins, losses = series
    best_of = params.series_at[step + 1]
    need = best_of // 2 + 1
    wins += score > 0.5
    losses += score < 0.5
    factors["series_wins"], factors["series_losses"] = float(wins), float(losses)
    if wins >= need:
        factors["promoted"] = 1.0
        return _at(params, step + 1, 0, games, grace=params.grace_games)
    if losses > best_of - need:
        factors["series_lost"] = 1.0
        return _at(params, step, params.series_fail_points, games, grace=max(grace - 1, 0))
    return _at(params, step, points, games, (wins, losses), max(grace - 1, 0))


def climb(
    params: LadderParams,
    rank: LadderRank,
    score: float,
    change: int,
    factors: dict[str, float] | None = None,
) -> LadderRank:
    """The rank after one rated match of a ranked player: a series game, or ``change``
    points with promotions, demotions, floors and grace (``factors`` gets the report's
    explanations). ``games`` counts the match."""
    state = (
        rank.tier,
        rank.division,
        rank.points,
        rank.step,
        rank.score,
        rank.games,
        rank.provisional,
        rank.series_wins,
        rank.series_losses,
        rank.grace,
        rank.idle,
    )
    return LadderRank(*_climb(params, state, score, change, {} if factors is None else factors))


@hookimpl
def rankcraft_params(slot: str) -> type | None:
    return LadderParams if slot == "rank" else None


@hookimpl
def rankcraft_needs(slot: str) -> Needs | None:
    return Needs(roles=("location",)) if slot == "rank" else None


@hookimpl
def rankcraft_initial(slot: str, params: LadderParams) -> LadderRank:
    return rank_at(params, -1 if params.placement_matches > 0 else 0, 0)


@hookimpl
def rankcraft_rank(
    params: LadderParams,
    rank_state: State,
    after: State,
    match: Match | None,
    expected: float,
    score: float,
    context: PlayerContext,
    layout: Mapping[str, int],
) -> State:
    if rank_state[STEP] < 0:  # placement
        games = rank_state[GAMES] + 1
        if games < params.placement_matches:
            context.explain("placement", float(games))
            return _at(params, -1, 0, games)
        step = place(params, _rating(after, layout))
        context.explain("placed", float(step))
        return _at(params, step, 0, games)
    multiplier = 1.0
    if rank_state[PROVISIONAL]:
        multiplier = params.provisional_multiplier
    if match is not None:
        multiplier *= match.weight
    two_sided = match is not None and len(match.teams) == 2
    gap = 0.0
    if params.pull:
        gap = skill_step(params, _rating(after, layout)) - rank_state[STEP]
        context.explain("gap", gap)
    change = points_change(params, score, expected if two_sided else None, multiplier, gap)
    return _climb(params, rank_state, score, change, context.factors)


def _rating(state: State, layout: Mapping[str, int]) -> float:
    """The skill state's ``location`` field (the rating placement and ``pull`` read)."""
    at = layout.get("location")
    return float(state[at]) if at is not None else 0.0


def _rank_of(record: PlayerRecord) -> LadderRank:
    rank = record.rank
    if not isinstance(rank, LadderRank):
        raise InputError(f"player {record.id!r} has no ladder rank state")
    return rank


def label(params: LadderParams, rank: LadderRank) -> str:
    """The rank as shown: "Gold II", "Master", or the ``unranked`` label."""
    return params.label(min(rank.step, params.top))


@hookimpl
def rankcraft_standings(params: LadderParams, players: Sequence[PlayerRecord]) -> Mapping[str, str]:
    ranked = [(p.id, _rank_of(p)) for p in players if p.rank is not None]
    out = {pid: label(params, rank) for pid, rank in ranked}
    if params.title:
        eligible = sorted(
            ((rank.score, pid) for pid, rank in ranked if rank.score >= title_score(params)),
            key=lambda item: (-item[0], item[1]),
        )
        for _, pid in eligible[: params.title_top]:
            out[pid] = params.title
    return out


def title_score(params: LadderParams) -> int:
    """The lowest ladder score (``LadderRank.score``, the leaderboard's sort key) from
    which a player may hold the title: the bottom of ``title_from``'s first division,
    ``title_step * (points_per_division + 1)``. Below the top step a division holds at
    most ``points_per_division`` points, so the ranks from that step up are exactly the
    scores from it up; eligibility reads the score, so that a state document whose step
    and score disagree is judged as the leaderboard (and the index) places it."""
    return params.title_step * (params.points_per_division + 1)


@hookimpl
def rankcraft_standings_scope(params: LadderParams) -> PlayerScope:
    """A label is the player's own rank, except the title, which needs the players whose
    score is at least :func:`title_score`: read along the leaderboard's index."""
    if not params.title:
        return PlayerScope()
    return PlayerScope(sort_key_from=float(title_score(params)))


def _params(context: ResetContext) -> LadderParams:
    params = context.rank_params
    if not isinstance(params, LadderParams):
        raise InputError(
            "the ladder's season events read the [rank] slot's params: the ruleset's [rank] "
            "slot must name the 'ladder' plugin"
        )
    return params


@hookimpl
def rankcraft_reset_kinds() -> tuple[str, ...]:
    return ("soft", "hard", "decay")


@hookimpl
def rankcraft_reset(
    players: Sequence[PlayerRecord], kind: str, context: ResetContext
) -> list[PlayerRecord]:
    params = _params(context)
    if kind == "soft":
        return soft_reset(params, players)
    if kind == "hard":
        return hard_reset(params, players)
    if kind == "decay":
        return decay(params, players, context)
    raise InputError(f"ladder has no {kind!r} event (it has 'soft', 'hard' and 'decay')")


def soft_reset(params: LadderParams, players: Sequence[PlayerRecord]) -> list[PlayerRecord]:
    """Each ranked player drops ``soft_drop`` steps, or goes where ``soft_map`` sends their
    tier (never up); a player who moves keeps ``soft_points`` points and no series.
    Returns the changed records only.

    :raises InputError: the ladder configures no soft reset.
    """
    if not params.soft_drop and not params.soft_map:
        raise InputError("ladder: a 'soft' reset needs 'soft_drop' or 'soft_map' in [rank.params]")
    out = []
    for p in players:
        rank = _rank_of(p)
        step = min(rank.step, params.top)
        if step < 0:
            continue
        target = params.soft_steps.get(step, max(step - params.soft_drop, 0))
        if target >= step:
            continue
        new = rank_at(params, target, params.soft_points, rank.games, idle=rank.idle)
        out.append(attrs.evolve(p, rank=new))
    return out


def hard_reset(params: LadderParams, players: Sequence[PlayerRecord]) -> list[PlayerRecord]:
    """Everyone back to a new player's rank (placement again, when the ladder has it).
    Returns the changed records only."""
    initial = rankcraft_initial("rank", params)
    return [attrs.evolve(p, rank=initial) for p in players if _rank_of(p) != initial]


def decay(
    params: LadderParams, players: Sequence[PlayerRecord], context: ResetContext
) -> list[PlayerRecord]:
    """Players at or above ``decay_from`` who did not play since the previous event lose
    ``decay_points`` (after ``decay_grace`` such events in a row), carried down through
    the divisions, never below ``decay_from``'s first step; a series in progress ends.
    An event run by hand (no previous event) counts every player as active. Returns the
    changed records only."""
    bottom = params.decay_step
    if bottom < 0 or params.decay_points == 0:
        return []
    ppd = params.points_per_division
    out = []
    for p in players:  # (every player, every week: the cheap tests first)
        rank = p.rank
        if rank is None or rank.step < bottom or context.played(p):
            continue
        if rank.idle < params.decay_grace:
            out.append(attrs.evolve(p, rank=attrs.evolve(rank, idle=rank.idle + 1)))
            continue
        step, points, wins, losses = _normal(
            params, rank.step, rank.points, rank.series_wins, rank.series_losses
        )
        if step == bottom and points == 0:
            continue
        points -= params.decay_points
        while points < 0 and step > bottom:
            step -= 1
            points += ppd
        points = max(points, 0)
        series = (wins, losses) if params.in_series(step, points) else (0, 0)
        new = rank_at(
            params, step, points, rank.games, series=series, grace=rank.grace, idle=rank.idle
        )
        out.append(attrs.evolve(p, rank=new))
    return out
