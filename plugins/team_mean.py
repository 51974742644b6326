"""``mean`` team plugin: a side plays as the mean of its members.

A side's rating is the mean of its members' locations (its spread the mean,
root-mean-square or max of theirs, by the ``deviation`` param). Each member is updated
against the opposing side's virtual player placed at ``own + (opposing mean - own-side
mean)``, so the expected score each member faces is the side's, and with a constant K
every member receives exactly the side's change. Free-for-all matches are every pair of
sides (a round robin); ``opponent_weight = "split"`` divides each pairing's weight by the
number of opposing sides, and ``"power"`` by that number to the power ``opponent_power``.
With ``partial_play`` (default) a match that carries ``seconds_played`` scales each
player's pairings by their share of play.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import attrs

from rankcraft import Match, Needs, Pairing, State, hookimpl, pair_score
from rankcraft.validators import within

from ._team import (
    SPREAD_MODES,
    mean_state,
    one_on_one,
    opponent_share,
    play_shares,
    shifted,
    weigh_play,
)

RANKCRAFT_CONTRACT = 2

OPPONENT_WEIGHTS = ("full", "split", "power")


@attrs.frozen(kw_only=True)
class MeanParams:
    """Attributes:
    deviation: how a side's spread is formed from its members': ``"mean"``, ``"rms"``
        (root-mean-square, default) or ``"max"``. Unused by systems without a spread.
    opponent_weight: ``"full"`` (default: each opposing side counts as one game),
        ``"split"`` (a match's weight is shared among the opposing sides) or ``"power"``
        (each of n opposing sides weighs n ** -``opponent_power``).
    opponent_power: the exponent of ``"power"``, in [0, 1] (default 0.5: a 20-car race
        moves a rating √19 ≈ 4.4 times as far as one duel); unused otherwise.
    partial_play: scale each player's pairings by their share of play when the match
        carries ``seconds_played`` (default true; see ``play_shares``).
    """

    deviation: str = attrs.field(default="rms", validator=attrs.validators.in_(SPREAD_MODES))
    opponent_weight: str = attrs.field(
        default="full", validator=attrs.validators.in_(OPPONENT_WEIGHTS)
    )
    opponent_power: float = attrs.field(default=0.5, validator=within(0.0, 1.0))
    partial_play: bool = True

    @property
    def power(self) -> float:
        """The exponent of the opposing sides' count in each pairing's weight."""
        w = self.opponent_weight
        return 0.0 if w == "full" else 1.0 if w == "split" else self.opponent_power


@hookimpl
def rankcraft_params(slot: str) -> type | None:
    return MeanParams if slot == "team" else None


@hookimpl
def rankcraft_needs(slot: str) -> Needs | None:
    return Needs(roles=("location",), plain_singles=True) if slot == "team" else None


@hookimpl
def rankcraft_aggregate(
    params: MeanParams, members: Sequence[State], layout: Mapping[str, int]
) -> State:
    return mean_state(members, params.deviation, layout)


@hookimpl
def rankcraft_team(
    params: MeanParams,
    sides: Sequence[Sequence[State]],
    places: Sequence[int],
    weight: float,
    match: Match | None,
    layout: Mapping[str, int],
) -> list[list[list[Pairing]]]:
    played = match.seconds_played if match is not None and params.partial_play else None
    shares = play_shares(played)
    solo = one_on_one(sides, places, weight, shares)
    if solo is not None:
        return solo
    virtual = [mean_state(side, params.deviation, layout) for side in sides]
    n = len(sides)
    weight = weight * opponent_share(n - 1, params.power)
    location = layout["location"]
    out = []
    for i, side in enumerate(sides):
        results = [(virtual[j], pair_score(places, i, j)) for j in range(n) if j != i]
        if len(side) == 1:
            out.append([[Pairing(opp, score, weight) for opp, score in results]])
            continue
        own = virtual[i][location]
        side_out = []
        for member in side:
            mine = member[location]
            side_out.append(
                [
                    Pairing(shifted(opp, location, mine + (opp[location] - own)), score, weight)
                    for opp, score in results
                ]
            )
        out.append(side_out)
    return weigh_play(out, shares)
