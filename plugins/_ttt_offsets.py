"""A player's skill offset per value of a match field (a tennis surface) in ``ttt``.

With ``offset_field`` and ``offset_values`` set, a player's performance in a match whose
``meta[offset_field]`` is one of the values is their skill plus their offset for that
value: the fit plays each player as a team of two, the player and the player-on-that-
value (a second player of the fit whose prior is N(0, offset_sigma²) and whose drift is
``offset_gamma``), as the ``trueskillthroughtime`` authors model surfaces. A state keeps
the offsets' beliefs beside the skill's (:class:`rankcraft.plugins.ttt.TTTOffsetSkill`),
so that forecasts and the within-day step see them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from rankcraft import Match

from ._matchup import value_index
from ._trueskill_graph import TrueSkillMessage, rate_messages, two_team_messages
from .wenglin import play_weights

if TYPE_CHECKING:
    from .ttt import TTTParams

State = tuple[Any, ...]
OFFSET_MU, OFFSET_SIGMA = 2, 3
"""Positions of the offsets' means and deviations in a state's tuple form."""
SIDE_MU, SIDE_SIGMA = 3, 4
"""Their positions in an aggregated side's tuple (after the side's number of players)."""
SEPARATOR = "\x00"
"""Between a player's id and a value in the fit's id of their offset (a NUL: no player id
holds one, so no offset's id is a player's)."""


class OffsetMessage(NamedTuple):
    """What a match tells a player with offsets: the message to their skill, the index
    (``at``) of the offset the match played on, and the message to that offset."""

    base: TrueSkillMessage
    at: int
    offset: TrueSkillMessage


def offset_index(params: TTTParams, match: Match | None) -> int | None:
    """The index in ``offset_values`` of the match's ``meta[offset_field]``, or None."""
    return value_index(match, params.offset_field, params.offset_values)


def offset_id(player: str, value: str) -> str:
    """The fit's id of ``player``'s offset on ``value``."""
    return f"{player}{SEPARATOR}{value}"


def is_offset(player: Any) -> bool:
    return isinstance(player, str) and SEPARATOR in player


def offsets(params: TTTParams, state: State) -> tuple[list[float], list[float]]:
    """A state's offsets (means, deviations), the prior's for a state without them (one
    imported from a document that left them out)."""
    n = len(params.offset_values)
    if len(state) > OFFSET_SIGMA and len(state[OFFSET_MU]) == n == len(state[OFFSET_SIGMA]):
        return list(state[OFFSET_MU]), list(state[OFFSET_SIGMA])
    return [0.0] * n, [params.offset_sigma] * n


def with_offset(params: TTTParams, side: State, index: int | None) -> State:
    """An aggregated side (Σμ, σ, players, offsets' Σμ, offsets' σ) as the TrueSkill side
    of a match on the offset ``index``: its skill plus that offset, and twice the players
    (a player and their offset each perform with noise β², as the fit and the within-day
    step play them); plain without an offset."""
    if index is None or len(side) <= SIDE_SIGMA or not side[SIDE_MU]:
        return side[:3]
    mu, sigma = side[SIDE_MU][index], side[SIDE_SIGMA][index]
    return (side[0] + mu, (side[1] ** 2 + sigma**2) ** 0.5, 2 * side[2])


def aggregate(params: TTTParams, members: Sequence[State], side: State) -> State:
    """``side`` (TrueSkill's aggregate of ``members``) with the sums of their offsets."""
    found = [offsets(params, m) for m in members]
    count = len(params.offset_values)
    mus = tuple(sum(mu[k] for mu, _ in found) for k in range(count))
    sds = tuple(sum(sd[k] ** 2 for _, sd in found) ** 0.5 for k in range(count))
    return (*side[:3], mus, sds)


def messages(
    params: TTTParams,
    bases: Sequence[Sequence[tuple[float, float]]],
    sides: Sequence[Sequence[State]],
    places: Sequence[int],
    match: Match | None,
    index: int,
) -> list[list[OffsetMessage]]:
    """Each player's :class:`OffsetMessage` of a match on the offset ``index``: the match
    rated as TrueSkill rates teams of each player's skill (``bases``: their beliefs, μ and
    σ) and offset, each pair with the player's partial-play weight."""
    teams, weights = [], []
    for base, side, shares in zip(bases, sides, play_weights(match, sides, 1.0), strict=True):
        team, weight = [], []
        for belief, state, share in zip(base, side, shares, strict=True):
            mu, sd = offsets(params, state)
            team += [belief, (mu[index], sd[index])]
            weight += [share, share]
        teams.append(team)
        weights.append(weight)
    rate = two_team_messages if len(teams) == 2 else rate_messages
    found = rate(params, teams, places, weights)
    return [
        [OffsetMessage(side[2 * j], index, side[2 * j + 1]) for j in range(len(side) // 2)]
        for side in found
    ]
