"""``hooks_elo``: Elo with a constant K, written with the documented hooks alone, as a
third party would write it. The benchmarks replay it beside the bundled ``elo`` plugin,
and the tests check that both give the same ratings: one path serves every plugin."""

import attrs

import rankcraft

RANKCRAFT_CONTRACT = 2  # states in the per-match hooks are tuples: (rating,)


@attrs.frozen
class Rating:
    """Attributes: rating: Elo rating points (location)."""

    rating: float = rankcraft.state_field(role="location")


@attrs.frozen(kw_only=True)
class Params:
    """Attributes: k: rating points per unit of surprise, > 0 (default 32). start: a new
    player's rating (default 1500). scale: points for 10-to-1 odds, > 0 (default 400).
    explained: the factors of every change (``k``)."""

    k: float = attrs.field(default=32.0, validator=attrs.validators.gt(0))
    start: float = 1500.0
    scale: float = attrs.field(default=400.0, validator=attrs.validators.gt(0))
    explained: dict = attrs.field(
        init=False, default=attrs.Factory(lambda self: {"k": self.k}, takes_self=True)
    )


@rankcraft.hookimpl
def rankcraft_params(slot):
    return Params if slot in ("initial", "expectation", "update") else None


@rankcraft.hookimpl
def rankcraft_initial(params):
    return Rating(params.start)


@rankcraft.hookimpl
def rankcraft_expectation(params, side_states):
    a, b = side_states[0][0], side_states[1][0]
    p = 1.0 / (1.0 + 10.0 ** ((b - a) / params.scale))
    return [p, 1.0 - p]


@rankcraft.hookimpl
def rankcraft_update(params, state, pairings):
    rating = state[0]
    surprise = 0.0
    for opponent, score, weight in pairings:
        gap = opponent[0] - rating
        surprise += weight * (score - 1.0 / (1.0 + 10.0 ** (gap / params.scale)))
    return (rating + params.k * surprise,)


@rankcraft.hookimpl
def rankcraft_explain(params):
    return params.explained
