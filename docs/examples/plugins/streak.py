"""``streak``: skill moves a fixed step towards each result, and more while a player keeps
winning (the example of docs/plugins.md)."""

import attrs

import rankcraft

RANKCRAFT_CONTRACT = 2  # states in the per-match hooks are tuples: (level, streak)


@attrs.frozen
class StreakSkill:
    """Attributes: level: skill points (location). streak: wins in a row."""

    level: float = rankcraft.state_field(role="location")
    streak: int = 0


@attrs.frozen(kw_only=True)
class StreakParams:
    """Attributes: step: points per result, > 0 (default 8). bonus: extra points per win
    in the current streak, >= 0 (default 2)."""

    step: float = attrs.field(default=8.0, validator=attrs.validators.gt(0))
    bonus: float = attrs.field(default=2.0, validator=attrs.validators.ge(0))


@rankcraft.hookimpl
def rankcraft_params(slot):
    return StreakParams if slot in ("initial", "expectation", "update") else None


@rankcraft.hookimpl
def rankcraft_initial(slot, params):
    return StreakSkill(0.0)


@rankcraft.hookimpl
def rankcraft_expectation(side_states):
    gap = side_states[0][0] - side_states[1][0]
    p = 1 / (1 + 2 ** (-gap / 50))
    return [p, 1 - p]


@rankcraft.hookimpl
def rankcraft_update(params, state, score):
    level, streak = state
    change = params.step * (2 * score - 1) + params.bonus * streak * (score == 1)
    return (level + change, streak + 1 if score == 1 else 0)


@rankcraft.hookimpl
def rankcraft_explain(after):
    return {"streak": after[1]}
