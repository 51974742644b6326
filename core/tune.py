"""Tuning a ruleset's parameters on the warm-up part of a history.

The search never looks at the test part: every trial replays the warm-up matches only
and is scored (one step ahead) on a validation slice at their end. It is a seeded random
search over the given box, then a second, finer one around the best point; trials run in
parallel processes and the result does not depend on their number. The chosen ruleset is
then scored once on the test part.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import attrs

from .engine import League
from .errors import InputError
from .evaluate import Evaluation, evaluate, field_at, with_home
from .io import read_match_dicts
from .ruleset import Ruleset, dumps, from_dict, to_dict


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
    """A point of the search and its validation log loss."""

    values: tuple[float, ...]
    log_loss: float


@attrs.frozen(kw_only=True)
class TuneResult:
    """What ``tune`` found.

    Attributes:
        params: the searched ranges. best: the chosen values, in the order of ``params``.
        validation_log_loss: the chosen point's score on the validation slice.
        ruleset: the tuned ruleset. test: its scores on the test part.
        trials: every trial, in search order. validation_from: the slice's first date.
    """

    params: tuple[ParamRange, ...]
    best: tuple[float, ...]
    validation_log_loss: float
    ruleset: Ruleset
    test: Evaluation
    trials: tuple[Trial, ...]
    validation_from: str


def parse_param(text: str, ruleset: Ruleset) -> ParamRange:
    """``NAME=LOW:HIGH`` → :class:`ParamRange`. NAME is a dotted path into the ruleset
    (``update.params.k_factor``); ``update.k_factor`` is read as the slot's params."""
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
    if len(path) == 2 and path[0] in table and path[1] != "params":
        path = (path[0], "params", path[1])
    current = field_at(table, path)
    if isinstance(current, bool) or not isinstance(current, int | float):
        raise InputError(
            f"--param {name}: the ruleset has no number at {'.'.join(path)!r} (found {current!r})"
        )
    integer = (
        isinstance(current, int)
        and low_text.strip().lstrip("-").isdigit()
        and high_text.strip().lstrip("-").isdigit()
    )
    return ParamRange(path=path, low=low, high=high, integer=integer)


def apply(
    ruleset: Ruleset, params: Sequence[ParamRange], values: Sequence[float], name: str | None = None
) -> Ruleset:
    """A copy of ``ruleset`` with the values set (validated like any ruleset)."""
    table = to_dict(ruleset)
    for param, value in zip(params, values, strict=True):
        target: Any = table
        for key in param.path[:-1]:
            target = target.setdefault(key, {})
        target[param.path[-1]] = round(value) if param.integer else float(value)
    if name is not None:
        table["name"] = name
    return from_dict(table, source="<tuned ruleset>", plugins=ruleset.plugins)


_CACHE: dict[tuple[str, str | None], list[dict[str, Any]]] = {}


def _matches(path: str, home_from: str | None) -> list[dict[str, Any]]:
    key = (path, home_from)
    if key not in _CACHE:
        dicts = [d for _, d in read_match_dicts(path)]
        _CACHE[key] = list(with_home(dicts, home_from)) if home_from else dicts
    return _CACHE[key]


def _run_trial(
    job: tuple[str, str | None, str, tuple[ParamRange, ...], tuple[float, ...], str, str],
) -> float:
    path, home_from, text, params, values, validation_from, test_from = job
    from .ruleset import loads_ruleset

    ruleset = apply(loads_ruleset(text), params, values)
    result = evaluate(
        League(ruleset),
        _matches(path, home_from),
        test_from=test_from,
        score_from=validation_from,
        stop_at=test_from,
    )
    return result.log_loss


def _sample(
    rng: random.Random, params: Sequence[ParamRange], box: Sequence[tuple[float, float]]
) -> tuple[float, ...]:
    values = []
    for param, (low, high) in zip(params, box, strict=True):
        value = rng.uniform(low, high)
        values.append(float(round(value)) if param.integer else value)
    return tuple(values)


def tune(
    path: str | Path,
    ruleset: Ruleset,
    params: Sequence[ParamRange],
    *,
    test_from: str,
    trials: int = 24,
    seed: int = 0,
    validation: float = 0.2,
    jobs: int = 2,
    home_from: str | None = None,
    progress: Callable[[int, int, float], None] | None = None,
) -> TuneResult:
    """Search ``params`` on the warm-up part and score the chosen ruleset on the test part.

    :param validation: the share of warm-up matches (the latest) the search is scored on.
    :param trials: random points in the first round; the second, finer round has half.
    :param progress: called with (trials done, trials in all, best log loss so far).
    """
    if not params:
        raise InputError("tune needs at least one --param NAME=LOW:HIGH")
    if not 0 < validation < 1:
        raise InputError(f"--validation must be in (0, 1): {validation!r}")
    source = str(path)
    warm = [
        str(d.get("played_at", ""))
        for d in _matches(source, home_from)
        if str(d.get("played_at", "")) < test_from
    ]
    if len(warm) < 10:
        raise InputError(f"too few warm-up matches before {test_from!r} to tune on: {len(warm)}")
    validation_from = warm[min(int(len(warm) * (1 - validation)), len(warm) - 1)]
    text = dumps(ruleset)
    rng = random.Random(seed)
    box = [(p.low, p.high) for p in params]
    current = []
    table = to_dict(ruleset)
    for p in params:
        value = field_at(table, p.path)
        current.append(min(max(float(value), p.low), p.high))
    rounds = [[tuple(current)] + [_sample(rng, params, box) for _ in range(max(trials - 1, 0))]]
    done: list[Trial] = []
    total = len(rounds[0]) + max(trials // 2, 1)
    with ProcessPoolExecutor(max_workers=max(jobs, 1)) as pool:
        for stage in range(2):
            points = rounds[stage]
            jobs_list = [
                (source, home_from, text, tuple(params), values, validation_from, test_from)
                for values in points
            ]
            for values, loss in zip(points, pool.map(_run_trial, jobs_list), strict=True):
                done.append(Trial(values=values, log_loss=loss))
                if progress is not None:
                    progress(len(done), total, min(t.log_loss for t in done))
            if stage == 0:
                best = min(done, key=lambda t: t.log_loss)
                fine = []
                for _param, value, (low, high) in zip(params, best.values, box, strict=True):
                    half = (high - low) / 8
                    fine.append((max(low, value - half), min(high, value + half)))
                rounds.append([_sample(rng, params, fine) for _ in range(max(trials // 2, 1))])
    best = min(done, key=lambda t: (t.log_loss, done.index(t)))
    tuned = apply(ruleset, params, best.values, name=f"{ruleset.name}-tuned")
    tuned = attrs.evolve(
        tuned,
        description=(
            f"{ruleset.name} tuned on matches before {test_from} (validation from "
            f"{validation_from}): "
            + ", ".join(
                f"{p.name} = {_fmt(v, p)}" for p, v in zip(params, best.values, strict=True)
            )
        ),
    )
    test = evaluate(League(tuned), _matches(source, home_from), test_from=test_from)
    return TuneResult(
        params=tuple(params),
        best=best.values,
        validation_log_loss=best.log_loss,
        ruleset=tuned,
        test=test,
        trials=tuple(done),
        validation_from=validation_from,
    )


def _fmt(value: float, param: ParamRange) -> str:
    return str(round(value)) if param.integer else f"{value:.6g}"
