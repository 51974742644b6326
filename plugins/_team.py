"""Shared arithmetic for the team plugins: averaging states by field role, partial play."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from rankcraft import Pairing, State, pair_score

SPREAD_MODES: tuple[str, ...] = ("mean", "rms", "max")

MIN_SHARE = 1e-4
"""The smallest share of play a pairing weight is scaled by: a player listed with 0
seconds (a substitute who came on in stoppage time) moves by a ten-thousandth of a
full player's change, and pairing weights stay in (0, 1] as updates expect."""

Shares = list[list[float]]


def combine_spread(values: Sequence[float], mode: str) -> float:
    """A side's spread from its members': arithmetic mean, root-mean-square, or max."""
    if mode == "mean":
        return math.fsum(values) / len(values)
    if mode == "rms":
        return math.sqrt(math.fsum(v * v for v in values) / len(values))
    return max(values)


def mean_state(members: Sequence[State], spread_mode: str, layout: Mapping[str, int]) -> State:
    """One state (a tuple) for a side: mean location, combined spread, mean of the other
    float fields (``layout``: the skill state's field positions, roles included); any
    other field the first member's, a tuple field the first member's that is not empty
    (a member new to the league may not carry yet what the others do: ``goals_fit``'s
    fitted values), so the members' order does not decide it.

    A one-member side is that member, unchanged.

    >>> mean_state([(1500.0, 200.0), (1700.0, 100.0)], "max", {"location": 0, "spread": 1})
    (1600.0, 200.0)
    """
    if len(members) == 1:
        return members[0]
    location = layout["location"]
    spread = layout.get("spread")
    n = len(members)
    out = list(members[0])
    out[location] = math.fsum(m[location] for m in members) / n
    if spread is not None:
        out[spread] = combine_spread([m[spread] for m in members], spread_mode)
    for i, value in enumerate(members[0]):
        if i != location and i != spread and type(value) is float:
            out[i] = math.fsum(m[i] for m in members) / n
        elif type(value) is tuple and not value:
            out[i] = next((m[i] for m in members if len(m) > i and m[i]), value)
    return tuple(out)


def shifted(state: State, at: int, value: float) -> State:
    """``state`` with its field at position ``at`` set to ``value`` (a virtual opponent
    placed by the gap between a member and their side's mean; it may lie past the range
    a stored rating may hold: it is only ever handed to an update)."""
    return (*state[:at], value, *state[at + 1 :])


def play_shares(seconds: Sequence[Sequence[int]] | None) -> Shares | None:
    """Each player's share of play: their ``seconds_played`` divided by the longest any
    player of the match played, in [``MIN_SHARE``, 1]; None when the match carries no
    times, when nobody played a second, or when everyone played the whole match (every
    share 1: nothing to scale).

    The longest time stands for the match's length (a 90-minute match: a starter who
    played it all has share 1, a substitute on for 18 minutes 0.2), as the partial-play
    weights of TrueSkill ("TrueSkill: A Bayesian Skill Rating System", Herbrich, Minka
    and Graepel) and openskill's ``weights`` scale a player's update.

    >>> play_shares([[5400, 1080], [5400]])
    [[1.0, 0.2], [1.0]]
    >>> play_shares([[600], [600]]) is None
    True
    """
    if seconds is None:
        return None
    longest = 0
    full = True
    first = -1
    for side in seconds:
        for value in side:
            if first < 0:
                first = value
            elif value != first:
                full = False
            if value > longest:
                longest = value
    if full or longest <= 0:
        return None
    return [[max(value / longest, MIN_SHARE) for value in side] for side in seconds]


def scaled(pairs: Sequence[Pairing], share: float) -> list[Pairing]:
    """``pairs`` with every weight multiplied by ``share`` (a player's share of play)."""
    if share == 1.0:
        return list(pairs)
    return [Pairing(p[0], p[1], p[2] * share) for p in pairs]


def weigh_play(
    pairings: list[list[list[Pairing]]], shares: Shares | None
) -> list[list[list[Pairing]]]:
    """Scale each player's pairings by their share of play (:func:`play_shares`); the
    pairings unchanged when ``shares`` is None."""
    if shares is None:
        return pairings
    return [
        [scaled(pairs, share) for pairs, share in zip(side, side_shares, strict=True)]
        for side, side_shares in zip(pairings, shares, strict=True)
    ]


def one_on_one(
    sides: Sequence[Sequence[State]],
    places: Sequence[int],
    weight: float,
    shares: Shares | None = None,
) -> list[list[list[Pairing]]] | None:
    """The pairings of two one-player sides (each player against the other, at the
    match's weight times the player's share of play), which every team plugin gives a
    1-v-1 alike; None for any other shape. The team plugins answer a 1-v-1 with it
    before their general case."""
    if len(sides) != 2:
        return None
    side_a, side_b = sides
    if len(side_a) != 1 or len(side_b) != 1:
        return None
    score = pair_score(places, 0, 1)
    if shares is None:
        return [
            [[Pairing(side_b[0], score, weight)]],
            [[Pairing(side_a[0], 1.0 - score, weight)]],
        ]
    return [
        [[Pairing(side_b[0], score, weight * shares[0][0])]],
        [[Pairing(side_a[0], 1.0 - score, weight * shares[1][0])]],
    ]


def opponent_share(opposing: int, power: float) -> float:
    """The weight of one opposing side (or player) among ``opposing`` of them:
    ``opposing ** -power``. ``power`` 0 counts each as a whole game (a 20-car race moves
    a rating as far as 19 duels), 1 shares one game among them (as far as one duel), and
    values in between scale one event's total change as ``opposing ** (1 - power)``."""
    if power == 0.0 or opposing <= 1:
        return 1.0
    if power == 1.0:
        return 1.0 / opposing
    return float(opposing**-power)
