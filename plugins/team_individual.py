"""``individual`` team plugin: every player plays every opposing player.

Each player's update receives one pairing per opposing player, scored by the two sides'
places. With ``opponent_weight = "split"`` (default) a match's weight is shared among a
player's opponents, so a 5-v-5 moves a rating about as far as a 1-v-1; ``"full"`` counts
each opposing player as a whole game (Glickman's reading of a rating period), and
``"power"`` weighs each of n opponents n ** -``opponent_power``. With ``partial_play``
(default) a match that carries ``seconds_played`` scales each player's pairings by their
share of play. Predictions use the mean of each side (``deviation`` chooses how spreads
combine).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import attrs

from rankcraft import Match, Needs, Pairing, State, hookimpl, pair_score
from rankcraft.validators import within

from ._team import SPREAD_MODES, mean_state, one_on_one, opponent_share, play_shares, weigh_play

RANKCRAFT_CONTRACT = 2


@attrs.frozen(kw_only=True)
class IndividualParams:
    """Attributes:
    opponent_weight: ``"split"`` (default: a match's weight shared among the opposing
        players), ``"full"`` (each opposing player is a whole game) or ``"power"`` (each
        of n opposing players weighs n ** -``opponent_power``).
    opponent_power: the exponent of ``"power"``, in [0, 1] (default 0.5); unused
        otherwise.
    deviation: how a side's spread is formed for predictions: ``"mean"``, ``"rms"``
        (default) or ``"max"``.
    partial_play: scale each player's pairings by their share of play when the match
        carries ``seconds_played`` (default true).
    """

    opponent_weight: str = attrs.field(
        default="split", validator=attrs.validators.in_(("full", "split", "power"))
    )
    opponent_power: float = attrs.field(default=0.5, validator=within(0.0, 1.0))
    deviation: str = attrs.field(default="rms", validator=attrs.validators.in_(SPREAD_MODES))
    partial_play: bool = True

    @property
    def power(self) -> float:
        """The exponent of the opposing players' count in each pairing's weight."""
        w = self.opponent_weight
        return 0.0 if w == "full" else 1.0 if w == "split" else self.opponent_power


@hookimpl
def rankcraft_params(slot: str) -> type | None:
    return IndividualParams if slot == "team" else None


@hookimpl
def rankcraft_needs(slot: str) -> Needs | None:
    return Needs(roles=("location",), plain_singles=True) if slot == "team" else None


@hookimpl
def rankcraft_aggregate(
    params: IndividualParams, members: Sequence[State], layout: Mapping[str, int]
) -> State:
    return mean_state(members, params.deviation, layout)


@hookimpl
def rankcraft_team(
    params: IndividualParams,
    sides: Sequence[Sequence[State]],
    places: Sequence[int],
    weight: float,
    match: Match | None,
) -> list[list[list[Pairing]]]:
    played = match.seconds_played if match is not None and params.partial_play else None
    shares = play_shares(played)
    solo = one_on_one(sides, places, weight, shares)
    if solo is not None:
        return solo
    n = len(sides)
    total = sum(len(side) for side in sides)
    power = params.power
    out = []
    for i, side in enumerate(sides):
        opponents = total - len(side)
        w = weight * opponent_share(opponents, power)
        pairs = [
            Pairing(opp, pair_score(places, i, j), w)
            for j in range(n)
            if j != i
            for opp in sides[j]
        ]
        out.append([pairs for _ in side])
    return weigh_play(out, shares)
