"""Which installed plugins fit which: what a plugin reads from skill states
(:class:`rankcraft.Needs`) against the skill states that the installed skill plugins keep.

A ruleset whose plugin does not fit its skill plugin is refused when it loads
(:func:`rankcraft.loads_ruleset`); the message then says what would fit
(:func:`what_fits`): the skill plugins that keep what the plugin reads, and the plugins
of the same slot that run over the skill plugin the ruleset names.

>>> import rankcraft
>>> plugins = rankcraft.Plugins()
>>> print(what_fits(plugins, "rank", "skyweaver-rp", "elo"))
'skyweaver-rp' fits the skill plugins glicko1; the rank plugins that fit 'elo': ladder
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs

from .errors import PluginError, RulesetError
from .historyspec import FitLimits
from .manager import SLOTS
from .model import Needs, field_of_role

if TYPE_CHECKING:
    from .manager import Plugins
    from .rulesetschema import Ruleset


def missing(needs: Needs, state_class: type) -> list[str]:
    """What ``needs`` asks of a skill state that ``state_class`` does not keep: field
    names, and ``"a <role> field"`` for each missing role (empty: it fits)."""
    names = {f.name for f in attrs.fields(state_class)}
    out = [f for f in needs.fields if f not in names]
    out += [f"a {r} field" for r in needs.roles if field_of_role(state_class, r) is None]
    return out


def skill_class(plugins: Plugins, plugin: str) -> type | None:
    """The class of the skill state ``plugin`` starts a player with (its default
    params), or None when it is no skill plugin or cannot start one with those."""
    if not {"update", "initial"} <= set(plugins.slots(plugin)):
        return None
    try:
        params_class = plugins.params_class(plugin, "initial")
        params = params_class() if params_class is not None else None
        state = plugins.initial(plugin, "initial", params)()
    except Exception:  # a plugin whose params have no defaults: not offered
        return None
    return type(state) if attrs.has(type(state)) else None


def _fits(plugins: Plugins, plugin: str, slot: str, state_class: type) -> bool:
    needs = plugins.needs(plugin, slot)
    return needs is None or not missing(needs, state_class)


def what_fits(plugins: Plugins, slot: str, plugin: str, skill_plugin: str) -> str:
    """The sentence for a ``plugin`` in ``slot`` that does not fit ``skill_plugin``: the
    installed skill plugins it fits, and the other plugins of ``slot`` that fit
    ``skill_plugin`` (those that need nothing it lacks)."""
    classes = {name: skill_class(plugins, name) for name in plugins.names()}
    skills = [n for n, c in classes.items() if c is not None and _fits(plugins, plugin, slot, c)]
    mine = classes.get(skill_plugin)
    others = [
        n
        for n in plugins.names()
        if n != plugin
        and slot in plugins.slots(n)
        and mine is not None
        and _fits(plugins, n, slot, mine)
    ]
    fits = (
        f"{plugin!r} fits the skill plugins {', '.join(skills)}"
        if skills
        else f"no installed skill plugin fits {plugin!r}"
    )
    instead = (
        f"the {slot} plugins that fit {skill_plugin!r}: {', '.join(others)}"
        if others
        else f"no other installed {slot} plugin fits {skill_plugin!r}"
    )
    return f"{fits}; {instead}"


__all__ = ["missing", "skill_class", "what_fits"]


def check_fit(ruleset: Ruleset, source: str) -> None:
    """Refuse a loaded ruleset whose plugins read skill fields the skill plugin does not
    keep (or rate in another period mode); ``source`` names the ruleset in the error."""
    plugins = ruleset.plugins
    initial = ruleset.slot("initial")
    assert initial is not None
    try:
        state = plugins.initial(initial.plugin, "initial", initial.params)()
    except PluginError as exc:
        raise RulesetError(f"{source}: {exc}") from None
    if not attrs.has(type(state)):
        raise RulesetError(
            f"{source}: plugin {initial.plugin!r} returned a non-attrs initial state: {state!r}"
        )
    state_class = type(state)
    names = {f.name for f in attrs.fields(state_class)}
    conservative = ruleset.display.conservative
    if conservative and field_of_role(state_class, "spread") is None:
        raise RulesetError(
            f"{source}: 'conservative' needs a skill with an uncertainty (a field of role "
            f"'spread'), but {initial.plugin!r} keeps {', '.join(sorted(names))}: "
            f"{conservative!r} @ ruleset.display.conservative"
        )
    for slot in SLOTS:
        spec = ruleset.slot(slot)
        if spec is None:
            continue
        needs = plugins.needs(spec.plugin, slot)
        if needs is None:
            continue
        if ruleset.period.mode not in needs.modes:
            raise RulesetError(
                f"{source}: plugin {spec.plugin!r} in slot {slot!r} rates only in [period] "
                f"mode {' or '.join(map(repr, needs.modes))}, not in mode "
                f"{ruleset.period.mode!r} @ ruleset.period.mode"
            )
        if needs.whole_match and (ruleset.period.mode, ruleset.quits.quitter) != (
            "match",
            "result",
        ):
            raise RulesetError(
                f"{source}: plugin {spec.plugin!r} in slot {slot!r} rates each match as a "
                f"whole: it needs [period] mode 'match' and [quits] quitter 'result', not "
                f"{ruleset.period.mode!r} and {ruleset.quits.quitter!r} @ ruleset.period.mode"
            )
        lacking = missing(needs, state_class)
        if lacking:
            raise RulesetError(
                f"{source}: plugin {spec.plugin!r} in slot {slot!r} does not fit skill plugin "
                f"{initial.plugin!r}: it needs {', '.join(lacking)}, but {initial.plugin!r} "
                f"keeps {', '.join(sorted(names))}. "
                f"{what_fits(plugins, slot, spec.plugin, initial.plugin)}"
            )


def check_history(ruleset: Ruleset, source: str) -> None:
    """A ``[fit]`` slot rates in ``match`` mode; the refit limits need one."""
    if ruleset.fit is not None and ruleset.period.mode != "match":
        raise RulesetError(
            f"{source}: a [fit] slot needs [period] mode 'match' (it refits before each "
            f"day's first match), not {ruleset.period.mode!r} @ ruleset.period.mode"
        )
    if ruleset.fit is None and ruleset.history.limits() != FitLimits():
        raise RulesetError(
            f"{source}: [history] tolerance, iterations and window_days bound the refits "
            "of a [fit] slot, and this ruleset has none @ ruleset.history"
        )
