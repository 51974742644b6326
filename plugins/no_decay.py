"""``no-decay`` plugin: fills the ``decay`` slot with "idle time changes nothing".

A ruleset whose uncertainty grows by other means — Skyweaver grows every player's RD once
per week at its soft reset, from the skill plugin's own decay — names it to turn the
per-match decay off: ``[decay] plugin = "no-decay"``.
"""

from __future__ import annotations

from rankcraft import State, hookimpl

RANKCRAFT_CONTRACT = 2
"""The hook contract: the state (a tuple) is returned as it is handed."""


@hookimpl
def rankcraft_decay(state: State) -> State:
    return state
