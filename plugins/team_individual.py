"""``individual`` team plugin: every player plays every opposing player.

Each player's update receives one pairing per opposing player, scored by the two sides'
places. With ``opponent_weight = "split"`` (default) a match's weight is shared among a
player's opponents, so a 5-v-5 moves a rating about as far as a 1-v-1; ``"full"`` counts
each opposing player as a whole game (Glickman's reading of a rating period).
Predictions use the mean of each side (``deviation`` chooses how spreads combine).
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from rankcraft import Needs, Pairing, State, hookimpl, pair_score

from ._team import SPREAD_MODES, mean_state, one_on_one


@attrs.frozen(kw_only=True)
class IndividualParams:
    """Attributes:
    opponent_weight: ``"split"`` (default: a match's weight shared among the opposing
        players) or ``"full"`` (each opposing player is a whole game).
    deviation: how a side's spread is formed for predictions: ``"mean"``, ``"rms"``
        (default) or ``"max"``.
    """

    opponent_weight: str = attrs.field(
        default="split", validator=attrs.validators.in_(("full", "split"))
    )
    deviation: str = attrs.field(default="rms", validator=attrs.validators.in_(SPREAD_MODES))


@hookimpl
def rankcraft_params(slot: str) -> type | None:
    return IndividualParams if slot == "team" else None


@hookimpl
def rankcraft_needs(slot: str) -> Needs | None:
    return Needs(roles=("location",)) if slot == "team" else None


@hookimpl
def rankcraft_aggregate(params: IndividualParams, members: Sequence[State]) -> State:
    return mean_state(members, params.deviation)


@hookimpl
def rankcraft_team(
    params: IndividualParams,
    sides: Sequence[Sequence[State]],
    places: Sequence[int],
    weight: float,
) -> list[list[list[Pairing]]]:
    solo = one_on_one(sides, places, weight)
    if solo is not None:
        return solo
    n = len(sides)
    total = sum(len(side) for side in sides)
    out = []
    for i, side in enumerate(sides):
        opponents = total - len(side)
        w = weight / opponents if params.opponent_weight == "split" else weight
        pairs = [
            Pairing(opp, pair_score(places, i, j), w)
            for j in range(n)
            if j != i
            for opp in sides[j]
        ]
        out.append([pairs for _ in side])
    return out
