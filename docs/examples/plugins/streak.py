"""``streak``: skill moves a fixed step towards each result, and more while a player keeps
winning (the example of docs/plugins.md)."""

import attrs

import rankcraft


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
    gap = side_states[0].level - side_states[1].level
    p = 1 / (1 + 2 ** (-gap / 50))
    return [p, 1 - p]


@rankcraft.hookimpl
def rankcraft_update(params, state, pairings, context):
    score = sum(p.score * p.weight for p in pairings) / sum(p.weight for p in pairings)
    streak = state.streak + 1 if score == 1 else 0
    change = params.step * (2 * score - 1) + params.bonus * state.streak * (score == 1)
    context.explain("streak", streak)
    return StreakSkill(state.level + change, streak)
