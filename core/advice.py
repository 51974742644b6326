"""Warnings about a ruleset that does not fit the matches it is given.

A ruleset with a home advantage rates every match as played at a neutral venue when no
match names its home side (a ``home`` key, or ``--home-from FIELD``): the advantage is
silently unused. :func:`home_advantage_of` finds the home-advantage params a ruleset
sets, and :class:`HomeSeen` counts, as matches stream by, those that name a home side.

>>> import rankcraft
>>> home_advantage_of(rankcraft.load_ruleset("elo-538"))
['update.params.home_advantage = 65']
>>> home_advantage_of(rankcraft.load_ruleset("elo"))
[]
>>> seen = HomeSeen([{"home": None}, {"teams": []}])
>>> _ = list(seen)
>>> text = home_warning(rankcraft.load_ruleset("elo-538"), seen, "nfl.jsonl")
>>> text.startswith("ruleset 'elo-538' has a home advantage (update.params.home_advantage = 65)")
True
>>> "no match of nfl.jsonl names a home side" in text
True
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from .ruleset import Ruleset, to_dict

__all__ = ["HomeSeen", "home_advantage_of", "home_warning"]


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and value != 0


def home_advantage_of(ruleset: Ruleset) -> list[str]:
    """The non-zero home-advantage params of ``ruleset`` (any slot's ``home_advantage``,
    ``home_drift`` or a context rule's ``home_advantage``), as ``path = value`` texts."""
    found: list[str] = []
    table = to_dict(ruleset)
    for slot, spec in table.items():
        if not isinstance(spec, dict) or not isinstance(spec.get("params"), dict):
            continue
        params = spec["params"]
        for key in ("home_advantage", "home_drift"):
            if _number(params.get(key)):
                found.append(f"{slot}.params.{key} = {params[key]:g}")
        for i, rule in enumerate(params.get("context_rules") or ()):
            if isinstance(rule, dict) and _number(rule.get("home_advantage")):
                found.append(
                    f"{slot}.params.context_rules[{i}].home_advantage = {rule['home_advantage']:g}"
                )
    return found


class HomeSeen:
    """Match dicts (or matches) passed through unchanged, counting those with a home side.

    Attributes:
        matches: how many went by. with_home: how many named a home side.
    """

    def __init__(self, items: Iterable[Any]) -> None:
        self.items = items
        self.matches = 0
        self.with_home = 0

    def __iter__(self) -> Iterator[Any]:
        for item in self.items:
            self.matches += 1
            home = item.get("home") if isinstance(item, dict) else getattr(item, "home", None)
            if home is not None:
                self.with_home += 1
            yield item


def home_warning(
    ruleset: Ruleset, seen: HomeSeen, source: str, option: str = "--home-from"
) -> str | None:
    """The warning when ``ruleset`` has a home advantage and none of the matches that
    went through ``seen`` named a home side; None otherwise. ``option``: how the reader
    of ``source`` is told to take the home side from a field (the lab's ``home_from``)."""
    uses = home_advantage_of(ruleset)
    if not uses or seen.with_home or not seen.matches:
        return None
    return (
        f"ruleset {ruleset.name!r} has a home advantage ({'; '.join(uses)}) but no match of "
        f'{source} names a home side, so it was not used: give each match a "home" side '
        f"index, or take it from a field with {option} (e.g. {option} "
        "meta.home_team_index)"
    )
