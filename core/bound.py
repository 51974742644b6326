"""What the rating loop and the general steps call: one ruleset's hooks, bound once.

:class:`rankcraft.steps.Steps` binds them (from the plugin manager, the ruleset and the
state forms, all above the loop); :mod:`rankcraft.loop` and
:mod:`rankcraft.generalsteps` see them through this protocol only, so that the bottom of
the core imports nothing above it, not even for a type (tests/test_layout.py checks it).
Hooks are typed loosely here: their exact signatures are the plugin manager's
(:mod:`rankcraft.manager`) and docs/hooks.md's.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any, Protocol

from .rows import Row

__all__ = ["Bound"]

Hook = Callable[..., Any]


class Bound(Protocol):
    """The hooks a ruleset names, bound once, and the facts the loop needs about them.

    Attributes:
        ruleset: the ruleset (its period and quit rules). mode: its period mode.
        forms: the skill and rank state forms. update, explain, expect, team, aggregate,
            rank, decay, onset: the slots' hooks (None where a slot has none).
        update_context, rank_context: whether the update and rank hooks take a context.
        plain_singles: the core pairs a 1-v-1 itself. duel_ok: the written-out 1-v-1
        serves the ruleset. fields: a skill tuple's length. skill_names: its fields.
        rank_names: a rank tuple's fields. plugin_of: each slot's plugin's name.
        new_row, decayed: a new player's row; a row's skill decayed to a time.
        rate_general: the general steps' rating of a match.
    """

    ruleset: Any
    mode: str
    forms: Any
    update: Hook
    explain: Hook | None
    expect: Hook
    team: Hook
    aggregate: Hook
    rank: Hook | None
    decay: Hook | None
    onset: Hook | None
    update_context: bool
    rank_context: bool
    plain_singles: bool
    duel_ok: bool
    fields: int
    skill_names: tuple[str, ...]
    rank_names: tuple[str, ...]
    plugin_of: dict[str, str]
    new_row: Callable[[], Row]
    rate_general: Hook

    def decayed(self, row: Row, when: datetime) -> Any:
        """The row's skill decayed to ``when`` (idle time)."""
        ...

    def joint_duel(self, a: Any, b: Any, match: Any) -> tuple[tuple[float, ...], Any, Any]:
        """A 1-v-1's expectation and pairings by a joint team model."""
        ...

    def answered(
        self, state: Any, slot: str = "update", hook: str | None = None
    ) -> tuple[Any, ...]:
        """A state answered by ``slot``'s plugin, checked (a tuple of the right length,
        finite): :func:`rankcraft.answers.state`, a :class:`PluginError` naming plugin and
        hook otherwise."""
        ...

    def probabilities(self, answer: Any, sides: int) -> tuple[float, ...]:
        """The expectation's answer checked: one probability per side, summing to 1."""
        ...

    def explained(self, factors: Any) -> Mapping[str, float] | None:
        """``rankcraft_explain``'s answer, checked."""
        ...

    def shared(self, factors: Mapping[str, float] | None) -> dict[str, float] | None:
        """The report factors as kept."""
        ...
