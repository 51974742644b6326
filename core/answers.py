"""The checks of plugin answers: what the core refuses in what a plugin's hook returns or
raises, with a :class:`~rankcraft.errors.PluginError` naming the plugin and the hook.

The rating loops call these where they take a plugin's answer (the match is named by
:meth:`rankcraft.writing.Writer.rate_all`, which rates it); the facade of
:mod:`rankcraft.manager` binds every hook so that whatever it raises, ``BaseException``
subclasses included, becomes such an error (:func:`raised`). docs/plugins.md lists what
is checked in each answer. The checks cost a comparison or an ``isfinite`` per number and
nothing more: they run once per answer, never in a loop of their own over the league.

>>> state((1500.0, 1510.0), 2, "elo", "rankcraft_update")
(1500.0, 1510.0)
>>> state((float("nan"), 1510.0), 2, "elo", "rankcraft_update")  # doctest: +ELLIPSIS
Traceback (most recent call last):
rankcraft.errors.PluginError: plugin 'elo': rankcraft_update returned (nan, 1510.0), whose ...
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from .errors import PluginError, RankcraftError

__all__ = [
    "duel_pair",
    "factors",
    "finite",
    "guarded",
    "labels",
    "optional_probabilities",
    "pairings",
    "probabilities",
    "raised",
    "state",
]

_isfinite = math.isfinite
_NUMBERS = (float, int)


def _refuse(plugin: str, hook: str, answer: Any, why: str) -> PluginError:
    shown = repr(answer)
    if len(shown) > 200:
        shown = shown[:200] + "..."
    return PluginError(f"plugin {plugin!r}: {hook} returned {shown}, {why}")


def raised(exc: BaseException, plugin: str, hook: str) -> PluginError:
    """The error for ``exc``, raised by ``plugin``'s ``hook`` and not one of rankcraft's
    own (a plugin refusing a match with a ``MatchError`` does so on purpose: callers let
    those through): a :class:`PluginError` naming both, for anything, ``BaseException``
    subclasses included (``SystemExit``, ``KeyboardInterrupt``, ``GeneratorExit``).

    >>> print(raised(SystemExit(0), "streak", "rankcraft_update"))
    plugin 'streak': rankcraft_update raised SystemExit: 0
    """
    text = str(exc)
    reason = f"{type(exc).__name__}: {text[:300]}" if text else type(exc).__name__
    return PluginError(f"plugin {plugin!r}: {hook} raised {reason}")


def guarded(function: Callable[..., Any], plugin: str, hook: str) -> Callable[..., Any]:
    """``function`` (a hook implementation of ``plugin``) called so that what it raises
    leaves it as :func:`raised` says. (The facade of :mod:`rankcraft.manager` compiles
    the same ``try`` into the functions it binds, at no extra call; this is for a
    function bound otherwise.)"""

    def call(*args: Any) -> Any:
        try:
            return function(*args)
        except RankcraftError:
            raise
        except BaseException as exc:
            raise raised(exc, plugin, hook) from exc

    return call


def finite(values: Sequence[Any]) -> bool:
    """Whether every float of ``values`` is finite (other values are not numbers the
    core reads: a rank state's tier name).

    The per-match loops call it on every update's answer, so it is written for speed: a
    plain loop (a generator in ``all`` costs twice as much), and for a float the
    difference with itself, 0.0 unless the float is infinite or NaN (no call)."""
    for value in values:
        if type(value) is float:
            if value - value != 0.0:
                return False
        elif isinstance(value, float) and not _isfinite(value):  # (a float's subclass)
            return False
    return True


def state(answer: Any, size: int | None, plugin: str, hook: str) -> tuple[Any, ...]:
    """A state tuple answered by a per-match hook (update, decay, rank, aggregate),
    refused unless it is a tuple of ``size`` fields (any number for None: a side's
    aggregate may carry more) whose floats are finite."""
    if type(answer) is not tuple or (size is not None and len(answer) != size):
        raise _refuse(
            plugin,
            hook,
            answer,
            f"not a tuple of {size or 'its'} fields: in the per-match hooks a state is the "
            "tuple of its class's fields, in order (hook contract 2, "
            "docs/plugins.md#migrating-to-hook-contract-2)",
        )
    for i, value in enumerate(answer):
        if isinstance(value, float) and not _isfinite(value):
            raise _refuse(plugin, hook, answer, f"whose field {i} is not a finite number")
    return answer


def probabilities(answer: Any, sides: int, plugin: str, hook: str) -> tuple[float, ...]:
    """An expectation's answer (or the outcomes hook's, ``sides`` 3), refused unless it
    is one probability per side, each a number in [0, 1], summing to 1 (a NaN is in no
    interval)."""
    try:
        out = answer if type(answer) is tuple else tuple(answer)
    except TypeError:
        raise _refuse(plugin, hook, answer, "not a sequence of probabilities") from None
    total = 0.0
    for p in out:
        if (type(p) is not float and not isinstance(p, _NUMBERS)) or not 0.0 <= p <= 1.0:
            raise _refuse(plugin, hook, out, "with a probability outside [0, 1]")
        total += p
    if len(out) != sides or abs(total - 1.0) > 1e-9:  # (outcomes: win, draw, loss)
        raise _refuse(plugin, hook, out, f"not {sides} probabilities (one per side) summing to 1")
    return out


def optional_probabilities(
    answer: Any, size: int, plugin: str, hook: str
) -> tuple[float, ...] | None:
    """:func:`probabilities`, or None when the plugin answers None (an optional model
    turned off: ``rankcraft_outcomes`` without a draw model)."""
    return None if answer is None else probabilities(answer, size, plugin, hook)


def pairings(
    answer: Any, teams: Sequence[Sequence[str]], plugin: str, hook: str
) -> Sequence[Sequence[Sequence[Any]]]:
    """A team plugin's pairings, refused unless shaped as the match's teams (per side,
    per player, a sequence of ``(opponent, score, weight)``), each opponent's numbers
    finite, each score in [0, 1] and each weight a finite number >= 0."""
    try:
        if len(answer) != len(teams):
            raise _refuse(plugin, hook, answer, f"not one entry per side ({len(teams)} sides)")
        for side, players in zip(answer, teams, strict=True):
            if len(side) != len(players):
                why = f"not one entry per player of the side ({len(players)})"
                raise _refuse(plugin, hook, side, why)
            for pairs in side:
                for opponent, score, weight in pairs:
                    _pairing(opponent, score, weight, plugin, hook)
    except (TypeError, ValueError) as exc:  # (not sequences, or not of three)
        raise _refuse(plugin, hook, answer, f"not pairings per side per player ({exc})") from None
    return answer  # type: ignore[no-any-return]


def _pairing(opponent: Any, score: Any, weight: Any, plugin: str, hook: str) -> None:
    pairing = (opponent, score, weight)
    # (a joint model's opponent is its own step, not a state: only its numbers are read)
    if isinstance(opponent, tuple) and not finite(opponent):
        raise _refuse(plugin, hook, pairing, "whose opponent has a number that is not finite")
    if not isinstance(score, _NUMBERS) or not 0.0 <= score <= 1.0:
        raise _refuse(plugin, hook, pairing, "whose score is outside [0, 1]")
    if not isinstance(weight, _NUMBERS) or not 0.0 <= weight < math.inf:
        raise _refuse(plugin, hook, pairing, "whose weight is not a finite number >= 0")


def factors(answer: Any, plugin: str, hook: str) -> Mapping[str, float] | None:
    """An explanation's factors, refused unless None or a mapping of names to finite
    numbers."""
    if answer is None:
        return None
    if type(answer) is not dict and not isinstance(answer, Mapping):
        raise _refuse(plugin, hook, answer, "not a mapping of factor names to numbers (or None)")
    for name, value in answer.items():
        if type(value) is float:
            good = value - value == 0.0  # (finite, without a call: see finite)
        else:
            good = isinstance(value, _NUMBERS) and _isfinite(value)
        if not good or type(name) is not str:
            raise _refuse(plugin, hook, answer, f"whose factor {name!r} is not a finite number")
    return answer


def labels(answer: Any, plugin: str, hook: str) -> Mapping[str, str]:
    """A standings answer, refused unless a mapping of player ids to label strings."""
    if not isinstance(answer, Mapping):
        raise _refuse(plugin, hook, answer, "not a mapping of player ids to labels")
    for pid, label in answer.items():
        if type(pid) is not str or type(label) is not str:
            raise _refuse(
                plugin, hook, answer, f"whose entry {pid!r}: {label!r} is no id and label"
            )
    return answer


def duel_pair(answer: Any) -> tuple[float, float] | None:
    """A duel's expectation as kept, when it is two probabilities each in [0, 1] summing
    to 1 (a NaN is in no interval), else None (then
    :func:`probabilities` refuses it, naming what is wrong)."""
    try:
        first, second = answer
        if 0.0 <= first <= 1.0 and 0.0 <= second <= 1.0 and abs(first + second - 1.0) <= 1e-9:
            return (first, second)
    except (TypeError, ValueError):  # (not two numbers)
        pass
    return None
