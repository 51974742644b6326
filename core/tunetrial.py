"""One trial of a tuning search (:mod:`rankcraft.tune`): the parameters searched and
their values set into a ruleset, the history each worker process reads once, and a
trial's replay of the warm-up, scored on the validation slice: whole for the random
search (:func:`run_trial`), in checkpoints that the Optuna study may stop early for
(:func:`run_checked`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import Any

import attrs

from .drawfit import fit_draws, fitted_names
from .errors import InputError
from .evaluate import Evaluation, evaluate, evaluate_ruleset, field_at, scratch_league, with_home
from .io import parse_match, read_match_dicts
from .model import Match
from .ruleset import Ruleset, from_dict, loads_ruleset, to_dict
from .suggest import close_to


@attrs.frozen(kw_only=True)
class ParamRange:
    """One parameter to search.

    Attributes:
        path: keys into the ruleset's TOML table, e.g. ``("update", "params", "k_factor")``.
        low, high: the range searched (inclusive). integer: round to whole numbers.
    """

    path: tuple[str, ...]
    low: float
    high: float
    integer: bool = False

    @property
    def name(self) -> str:
        """The dotted path, e.g. ``update.params.k_factor``."""
        return ".".join(self.path)


@attrs.frozen(kw_only=True)
class Trial:
    """A point of the search and its validation score (the tuned score, lower is
    better; pruned: the running score where the trial was stopped, and ``pruned`` true).

    Attributes:
        scored, validation_matches: the score is over the first ``scored`` of the
            validation slice's ``validation_matches`` matches (all of them unless the
            trial was pruned; both 0 where not counted: the random search, a ruleset of
            ``batch`` periods replayed in one piece).
    """

    values: tuple[float, ...]
    value: float
    pruned: bool = False
    scored: int = 0
    validation_matches: int = 0

    @property
    def log_loss(self) -> float:
        """The score (named so when tuning scored log loss only)."""
        return self.value


def value_at(table: Any, keys: Sequence[str]) -> Any:
    """The value at a path into nested tables and lists (a list takes an index, e.g.
    ``update.params.context_rules.0.k_scale``), or None where it stops."""
    value = table
    for key in keys:
        if isinstance(value, list) and key.isdigit() and int(key) < len(value):
            value = value[int(key)]
        elif isinstance(value, dict) and key in value:
            value = value[key]
        else:
            return field_at(value, [key]) if isinstance(value, dict) else None
    return value


def parse_param(text: str, ruleset: Ruleset) -> ParamRange:
    """``NAME=LOW:HIGH`` → :class:`ParamRange`. NAME is a dotted path into the ruleset
    (``update.params.k_factor``); ``update.k_factor`` is read as the slot's params, and
    a number in the path indexes a list (``update.context_rules.0.k_scale``)."""
    name, sep, span = text.partition("=")
    low_text, sep2, high_text = span.partition(":")
    if not sep or not sep2:
        raise InputError(f"--param must be NAME=LOW:HIGH: {text!r}")
    try:
        low, high = float(low_text), float(high_text)
    except ValueError:
        raise InputError(f"--param {name}: LOW and HIGH must be numbers: {span!r}") from None
    if not (math.isfinite(low) and math.isfinite(high)) or low > high:
        raise InputError(f"--param {name}: need finite LOW <= HIGH: {span!r}")
    path = tuple(name.split("."))
    table = to_dict(ruleset)
    if len(path) >= 2 and path[0] in table and path[1] != "params":
        path = (path[0], "params", *path[1:])
    current = value_at(table, path)
    if isinstance(current, bool) or not isinstance(current, int | float):
        raise InputError(
            f"'--param' must name a number of the ruleset {ruleset.name!r}: {name!r}"
            f"{_closest_numbers(name, table)}"
        )
    if path[-1] in fitted_names(ruleset):
        raise InputError(
            f"--param {name}: the ruleset fits {path[-1]!r} on the warm-up (draw_fit), so a "
            'search of it would be undone; extend the ruleset with draw_fit = "none" to '
            "search it"
        )
    integer = (
        isinstance(current, int)
        and low_text.strip().lstrip("-").isdigit()
        and high_text.strip().lstrip("-").isdigit()
    )
    return ParamRange(path=path, low=low, high=high, integer=integer)


def _numbers(value: Any, path: tuple[str, ...] = ()) -> Iterator[str]:
    """The short names (``update.k_factor``: a slot's ``params`` left out) of every number
    in a ruleset's table, as ``--param`` takes them."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _numbers(item, path if key == "params" and len(path) == 1 else (*path, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _numbers(item, (*path, str(i)))
    elif isinstance(value, int | float) and not isinstance(value, bool) and len(path) > 1:
        yield ".".join(path)


def _closest_numbers(name: str, table: dict[str, Any]) -> str:
    """`` (did you mean 'update.k_factor'?)`` for a ``--param`` the ruleset has no number
    at: the numbers whose last key is the name's, else the closest names, else the list."""
    numbers = list(_numbers(table))
    last = name.rsplit(".", 1)[-1]
    same = [n for n in numbers if n.rsplit(".", 1)[-1] == last]
    lasts = {n.rsplit(".", 1)[-1]: n for n in reversed(numbers)}
    found = same[:3] or close_to(name, numbers) or [lasts[k] for k in close_to(last, lasts)]
    if found:
        return f" (did you mean {' or '.join(map(repr, found))}?)"
    return f" (its numbers: {', '.join(numbers) or 'none'})"


def apply(
    ruleset: Ruleset, params: Sequence[ParamRange], values: Sequence[float], name: str | None = None
) -> Ruleset:
    """A copy of ``ruleset`` with the values set (validated like any ruleset)."""
    table = to_dict(ruleset)
    for param, value in zip(params, values, strict=True):
        target: Any = table
        for key in param.path[:-1]:
            target = target[int(key)] if isinstance(target, list) else target.setdefault(key, {})
        last = param.path[-1]
        number = round(value) if param.integer else float(value)
        if isinstance(target, list):
            target[int(last)] = number
        else:
            target[last] = number
    if name is not None:
        table["name"] = name
    return from_dict(table, source="<tuned ruleset>", plugins=ruleset.plugins)


_CACHE: dict[tuple[str, str | None], list[dict[str, Any]]] = {}


def matches_of(path: str, home_from: str | None) -> list[dict[str, Any]]:
    """The match dicts of the history at ``path`` (``home`` taken from the field path
    ``home_from``), read once per process."""
    key = (path, home_from)
    if key not in _CACHE:
        dicts = [d for _, d in read_match_dicts(path)]
        _CACHE[key] = list(with_home(dicts, home_from)) if home_from else dicts
    return _CACHE[key]


_PARSED: dict[tuple[str, str | None], list[Match]] = {}


def parsed_of(path: str, home_from: str | None) -> list[Match]:
    """The matches of :func:`matches_of`, validated once per process: every trial rates
    them again without parsing (a history of 49,520 matches takes about 0.3 s to parse)."""
    key = (path, home_from)
    if key not in _PARSED:
        _PARSED[key] = [parse_match(d) for d in matches_of(path, home_from)]
    return _PARSED[key]


Job = tuple[str, str | None, str, tuple[ParamRange, ...], tuple[float, ...], str, str, str]
"""A random-search trial's job: (source, home_from, ruleset text, params, values,
validation_from, test_from, score)."""
CheckedJob = tuple[
    str,
    str | None,
    str,
    tuple[ParamRange, ...],
    tuple[float, ...],
    str,
    str,
    str,
    tuple[float | None, ...],
]
"""An Optuna trial's job: a :data:`Job` with the limits it is stopped at, per checkpoint."""


def run_trial(job: Job) -> float:
    """One trial of the random search: the warm-up replayed with the trial's values, its
    ``score`` on the validation slice."""
    path, home_from, text, params, values, validation_from, test_from, score = job
    ruleset = apply(loads_ruleset(text), params, values)
    result = evaluate_ruleset(
        ruleset,
        parsed_of(path, home_from),
        test_from=test_from,
        score_from=validation_from,
        stop_at=test_from,
    )
    return figure(result, score)


def figure(result: Evaluation, score: str) -> float:
    """The evaluation's ``score``, refused when it has none (a three-way score of a
    ruleset without a draw model)."""
    value = result.figure(score)
    if value is None:
        raise InputError(
            f"--score {score} needs three-way forecasts: the ruleset has no draw model "
            '(rankcraft_outcomes; elo: draw = "davidson")'
        )
    return value


def _weight(result: Evaluation, score: str) -> int:
    """The items a score of ``result`` is the mean of."""
    return len(result.outcomes) if score in ("three-way", "rps") else result.n


CHECKPOINTS = 4
"""Optuna trials report their running log loss this many times on the validation slice."""


def run_checked(job: CheckedJob) -> tuple[list[float], bool, tuple[int, int]]:
    """One Optuna trial: replay the warm-up in chunks (the draw parameters first fitted
    before the validation slice, when the ruleset asks), report the running validation
    score at each checkpoint, stop when it is worse than ``limits`` there.

    :returns: (running score at each checkpoint reached, pruned, (validation matches
        scored, validation matches in all); (0, 0) for a ruleset replayed whole).
    """
    path, home_from, text, params, values, validation_from, test_from, score, limits = job
    ruleset = apply(loads_ruleset(text), params, values)
    matches = parsed_of(path, home_from)
    if ruleset.period.mode == "batch":  # (a chunk's end would close a period): one piece
        result = evaluate_ruleset(
            ruleset,
            matches,
            test_from=test_from,
            score_from=validation_from,
            stop_at=test_from,
        )
        return [figure(result, score)], False, (0, 0)
    ruleset, _ = fit_draws(ruleset, matches, before=validation_from)
    bounds, first, end = _bounds(matches_of(path, home_from), validation_from, test_from)
    league = scratch_league(ruleset)
    start, total, count, running = 0, 0.0, 0, []
    for step, stop in enumerate(bounds):
        if stop <= start:
            continue
        part = evaluate(
            league,
            matches[start:stop],
            test_from=test_from,
            score_from=validation_from,
            stop_at=test_from,
        )
        weight = _weight(part, score)
        if weight:
            total += figure(part, score) * weight
            count += weight
        start = stop
        if not count:
            continue
        running.append(total / count)
        limit_here = limits[step] if step < len(limits) else None
        if limit_here is not None and running[-1] > limit_here and stop < end:
            return running, True, (stop - first, end - first)
    if not running:
        figure(part, score)  # (refused: no three-way forecast in the validation slice)
    return running, False, (end - first, end - first)


def _bounds(
    matches: Sequence[dict[str, Any]], validation_from: str, test_from: str
) -> tuple[list[int], int, int]:
    """Where the validation slice's ``CHECKPOINTS`` chunks end (indexes into ``matches``),
    where the slice starts and where it ends."""
    first = next(i for i, d in enumerate(matches) if str(d.get("played_at", "")) >= validation_from)
    end = next(
        (i for i, d in enumerate(matches) if str(d.get("played_at", "")) >= test_from),
        len(matches),
    )
    bounds = [first + (end - first) * (k + 1) // CHECKPOINTS for k in range(CHECKPOINTS)]
    return bounds, first, end


class Inline:
    """A one-worker "pool" that runs jobs in this process (``jobs`` = 1)."""

    def __enter__(self) -> Inline:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def map(self, function: Callable[[Any], Any], items: Sequence[Any]) -> Any:
        return map(function, items)


def worker_pool(jobs: int) -> Any:
    """A pool of ``jobs`` worker processes (:class:`Inline` for one)."""
    return Inline() if jobs <= 1 else ProcessPoolExecutor(max_workers=jobs)


Progress = Callable[[int, int, float, Trial], None]
"""Called after each trial with (trials done, trials in all, best score so far, the
trial)."""

Base = tuple[str, str | None, str, tuple[ParamRange, ...], str, str, str]
"""What every trial of a search shares: (source, home_from, ruleset text, params,
validation_from, test_from, score)."""


def trial_job(base: Base, values: tuple[float, ...]) -> tuple[Any, ...]:
    """A trial's job for the worker pool: the shared part with the trial's values."""
    source, home_from, text, params, validation_from, test_from, score = base
    return (source, home_from, text, params, values, validation_from, test_from, score)
