"""Plugins written for the first hook contract (states as attrs instances), adapted.

Until version 0.3 every per-match hook was handed, and returned, a plugin's attrs state
instances. The contract changed once (docs/decisions.md, "The next hook contract"): a
state is now a plain tuple of its fields in every per-match hook. A plugin that does not
set ``RANKCRAFT_CONTRACT = 2`` in its module is taken to be written for the first contract
and still works: each of its per-match hooks is wrapped here, turning the tuples it is
handed into instances of the ruleset's state classes and what it returns back into
tuples. That costs an object per state per call (the speed of the first contract, not
the second's), and a :class:`FirstContractWarning` says so once per plugin (a
``FutureWarning``: shown by default, to whoever runs the plugin, not only to its
author's tests; the command line says it as ``rankcraft COMMAND: warning: ...``). Every bundled
plugin is written for the second contract; docs/plugins.md has the migration guide.

An instance of another class than the form's (a side state of a class of the plugin's
own) is passed through unchanged both ways, so two hooks of first-contract plugins hand
each other what they made.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import Any

from .forms import Form

__all__ = ["FirstContractWarning", "adapt"]


class FirstContractWarning(FutureWarning):
    """A ruleset names a plugin written for the first hook contract: it runs adapted,
    at that contract's speed, until it is migrated (docs/plugins.md)."""


_warned: set[str] = set()


def _tuple(form: Form) -> Callable[[Any], Any]:
    cls, get = form.cls, form.to_tuple

    def out(state: Any) -> Any:
        return get(state) if type(state) is cls else state

    return out


def _pairings_in(obj: Callable[[Any], Any], pairings: Sequence[Any]) -> list[Any]:
    from .model import Pairing

    return [Pairing(obj(p[0]), p[1], p[2]) for p in pairings]


def _context_in(rest: tuple[Any, ...], obj: Callable[[Any], Any]) -> None:
    """The context (the last argument, when the implementation takes it) with its
    pairings' opponents as instances."""
    context = rest[-1] if rest else None
    if context is not None and hasattr(context, "pairings"):
        context.pairings = _pairings_in(obj, context.pairings)


def adapt(hook: str, function: Any, forms: tuple[Form, Form | None], plugin: str) -> Any:
    """``function`` (a contract-1 implementation of ``hook``, bound) taking and returning
    tuple states."""
    if plugin not in _warned:
        _warned.add(plugin)
        warnings.warn(
            f"plugin {plugin!r} is written for rankcraft's first hook contract (states as "
            "attrs instances): it is adapted, at the first contract's speed; set "
            "RANKCRAFT_CONTRACT = 2 after migrating (docs/plugins.md)",
            FirstContractWarning,
            stacklevel=2,
        )
    skill, rank = forms
    obj, tup = skill.to_object_unchecked, _tuple(skill)
    if hook == "rankcraft_decay":

        def decay(state: Any, periods: float) -> Any:
            given = obj(state)
            out = function(given, periods)
            return state if out is given else tup(out)  # (unchanged: the same state)

        return decay
    if hook == "rankcraft_aggregate":
        return lambda members: tup(function([obj(m) for m in members]))
    if hook == "rankcraft_team":

        def team(sides: Any, places: Any, weight: float, match: Any) -> Any:
            out = function([[obj(m) for m in side] for side in sides], places, weight, match)
            return [[[(tup(o), s, w) for o, s, w in pairs] for pairs in side] for side in out]

        return team
    if hook in ("rankcraft_expectation", "rankcraft_outcomes"):
        return lambda states, home, match: function([obj(s) for s in states], home, match)
    if hook == "rankcraft_quality":
        return lambda sides, states, home: function(
            [[obj(m) for m in side] for side in sides], [obj(s) for s in states], home
        )
    if hook == "rankcraft_update":

        def update(state: Any, pairings: Any, *rest: Any) -> Any:
            objects = _pairings_in(obj, pairings)
            _context_in(rest, obj)
            return tup(function(obj(state), objects, *rest))

        return update
    if hook == "rankcraft_rank":
        assert rank is not None
        robj, rtup = rank.to_object_unchecked, _tuple(rank)

        def ranked(rank_state: Any, before: Any, after: Any, pairings: Any, *rest: Any) -> Any:
            _context_in(rest, obj)
            return rtup(
                function(
                    robj(rank_state), obj(before), obj(after), _pairings_in(obj, pairings), *rest
                )
            )

        return ranked
    return function
