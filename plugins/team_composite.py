"""``composite-opponent`` team plugin: INVERSUS Deluxe's virtual opponent, as its code.

Each player is rated against one virtual opponent per opposing side, relative to the
player's own team, as the code listed in "The Online Skill Ranking of INVERSUS Deluxe"
does (its prose describes averaging a team instead; the code is what shipped): the
opponent's location is the player's own plus (the opposing side's mean minus the
player's side's mean), its spread the *mean* of the opposing side's spreads. The player's
own state (including their own spread) is what gets updated; the own team's spreads are
not used. rankcraft computes in doubles (the listing uses 32-bit floats). Predictions use
each side's mean (spreads averaged). A match that carries ``seconds_played`` scales each
player's pairings by their share of play (an extension: INVERSUS records no times).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from rankcraft import Match, Needs, Pairing, State, hookimpl, pair_score

from ._team import mean_state, one_on_one, play_shares, shifted, weigh_play

RANKCRAFT_CONTRACT = 2

_SPREAD = "mean"


@hookimpl
def rankcraft_needs(slot: str) -> Needs | None:
    return Needs(roles=("location", "spread"), plain_singles=True) if slot == "team" else None


@hookimpl
def rankcraft_aggregate(members: Sequence[State], layout: Mapping[str, int]) -> State:
    return mean_state(members, _SPREAD, layout)


@hookimpl
def rankcraft_team(
    sides: Sequence[Sequence[State]],
    places: Sequence[int],
    weight: float,
    match: Match | None,
    layout: Mapping[str, int],
) -> list[list[list[Pairing]]]:
    shares = play_shares(None if match is None else match.seconds_played)
    solo = one_on_one(sides, places, weight, shares)
    if solo is not None:
        return solo
    virtual = [mean_state(side, _SPREAD, layout) for side in sides]
    location = layout["location"]
    out = []
    for i, side in enumerate(sides):
        own = virtual[i][location]
        results = [(virtual[j], pair_score(places, i, j)) for j in range(len(sides)) if j != i]
        side_out = []
        for member in side:
            mine = member[location]
            side_out.append(
                [
                    Pairing(
                        opp
                        if len(side) == 1
                        else shifted(opp, location, mine + (opp[location] - own)),
                        score,
                        weight,
                    )
                    for opp, score in results
                ]
            )
        out.append(side_out)
    return weigh_play(out, shares)
