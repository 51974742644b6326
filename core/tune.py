"""Tuning a ruleset's parameters on the warm-up part of a history.

The search never looks at the test part: every trial replays the warm-up matches only
and is scored (one step ahead) on a validation slice at their end. The chosen ruleset is
then scored once on the test part.

Two searches (``method``):

- ``"optuna"`` (the default when Optuna is installed, ``pip install 'rankcraft[tune]'``):
  Optuna's TPE sampler, seeded; the ruleset's own values are the first trial. Each trial
  reports its running log loss at checkpoints of the validation slice, and a trial
  worse than the median of the finished trials at the same checkpoint is stopped there
  (pruned). With a storage URL (``sqlite:///study.db``,
  ``postgresql://user@host/db``) trials are kept in that database under a study name,
  so several processes or machines can search one study at once, and each picks the
  best trial of the whole study. Trials are drawn ``BATCH`` at a time and run in up to
  ``jobs`` processes: with one process per study, the result does not depend on ``jobs``.
- ``"random"`` (the fallback without Optuna): a seeded random search over the given box,
  then a second, finer one around the best point; trials run in parallel processes and
  the result does not depend on their number.

Here: :func:`tune`, the random search, and the result (:class:`TuneResult`, ``tune
--json``). The parameters searched and one trial's replay are :mod:`rankcraft.tunetrial`'s,
the Optuna study :mod:`rankcraft.tunestudy`'s; their public names are read from here too.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import attrs
import tomli_w

from .drawfit import fit_draws
from .errors import InputError
from .evaluate import SCORES, Evaluation, evaluate_ruleset
from .extras import install_hint, missing
from .processes import run_each
from .ruleset import Ruleset, dumps, to_dict
from .tunestudy import (
    BATCH,
    RACED,
    STARTUP_TRIALS,
    has_optuna,
    optimize,
    optuna_storage,
    optuna_study,
)
from .tunetrial import (
    CHECKPOINTS,
    Base,
    ParamRange,
    Progress,
    Trial,
    apply,
    figure,
    matches_of,
    parse_param,
    parsed_of,
    run_trial,
    trial_job,
    value_at,
    worker_pool,
)

__all__ = [
    "BATCH",
    "CHECKPOINTS",
    "RACED",
    "STARTUP_TRIALS",
    "ParamRange",
    "Progress",
    "Trial",
    "TuneResult",
    "apply",
    "has_optuna",
    "optimize",
    "optuna_storage",
    "parse_param",
    "tune",
    "tuned_toml",
]


@attrs.frozen(kw_only=True)
class TuneResult:
    """What ``tune`` found.

    Attributes:
        params: the searched ranges. best: the chosen values, in the order of ``params``.
        score: the score the search minimised (one of ``SCORES``).
        validation_log_loss: the chosen point's ``score`` on the validation slice (the
            log loss only when ``score`` is ``log-loss``; ``tune --json`` names it by the
            score, :attr:`validation_key`).
        ruleset: the tuned ruleset. test: its scores on the test part.
        validation: its scores on the validation slice.
        start_validation, start_test: the starting ruleset's scores on the validation
            slice and the test part.
        kept_start: no trial beat the start on the validation slice: ``best`` are the
            start's values and ``ruleset`` is the start under the tuned name.
        method: ``"optuna"`` or ``"random"``.
        trials: every trial, in search order. validation_from: the slice's first date.
    """

    params: tuple[ParamRange, ...]
    best: tuple[float, ...]
    validation_log_loss: float
    ruleset: Ruleset
    test: Evaluation
    trials: tuple[Trial, ...]
    validation_from: str
    score: str = "log-loss"
    validation: Evaluation | None = None
    start_validation: Evaluation | None = None
    start_test: Evaluation | None = None
    kept_start: bool = False
    method: str = "random"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready (``tune --json``): the method and score, the chosen values, the
        chosen point's score on the validation slice (under :attr:`validation_key`), every
        score of the start and the tuned ruleset on the validation slice and the test
        part (null: a three-way score without three-way forecasts), and every trial."""
        names = [p.name for p in self.params]
        parts = (
            ("start_validation", self.start_validation),
            ("tuned_validation", self.validation),
            ("start_test", self.start_test),
            ("tuned_test", self.test),
        )
        return {
            "method": self.method,
            "score": self.score,
            "chosen": {
                p.name: (round(v) if p.integer else v)
                for p, v in zip(self.params, self.best, strict=True)
            },
            "kept_start": self.kept_start,
            "validation_from": self.validation_from,
            self.validation_key: self.validation_log_loss,
            "scores": {
                part: None if e is None else {score: e.figure(score) for score in SCORES}
                for part, e in parts
            },
            "worse_on_test": self.worse_on_test,
            "test": self.test.to_dict(),
            "trials": [
                {
                    "number": number,
                    "params": dict(zip(names, t.values, strict=True)),
                    "value": t.value,
                    "pruned": t.pruned,
                }
                for number, t in enumerate(self.trials, 1)
            ],
        }

    @property
    def validation_key(self) -> str:
        """The key of the chosen point's validation score in :meth:`to_dict`, named by the
        score: ``validation_log_loss``, ``validation_three_way``, ``validation_rps`` or
        ``validation_brier`` (docs/decisions.md, issue 42)."""
        return "validation_" + self.score.replace("-", "_")

    @property
    def worse_on_test(self) -> bool:
        """Whether the tuned ruleset scores worse than the start on the test part (by
        the tuned score): the search chose on noise, or the test part differs."""
        if self.start_test is None:
            return False
        tuned, start = self.test.figure(self.score), self.start_test.figure(self.score)
        return tuned is not None and start is not None and tuned > start


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
    progress: Progress | None = None,
    method: str | None = None,
    storage: str | None = None,
    study_name: str | None = None,
    score: str = "log-loss",
) -> TuneResult:
    """Search ``params`` on the warm-up part and score the chosen ruleset on the test part.

    :param validation: the share of warm-up matches (the latest) the search is scored on.
    :param trials: Optuna: trials this call runs; random: points in the first round
        (the second, finer round has half).
    :param progress: called after each trial (:data:`Progress`).
    :param score: the score a trial is chosen by on the validation slice (one of
        ``SCORES``: ``log-loss``, ``three-way``, ``rps``, ``brier``). The starting
        ruleset is a candidate too: when no trial beats it on the validation slice, it
        is returned (``kept_start``).
    :param method: ``"optuna"`` or ``"random"`` (default: optuna when installed).
    :param storage: Optuna storage URL shared by several processes or machines (default:
        in memory); ``study_name`` names the study in it (default: the ruleset's name).
    :raises InputError: an unknown method or score, optuna asked for but not installed,
        a storage URL with the random search, or a three-way score without a draw model.
    """
    method = _method(method, storage)
    _check_settings(score, params, validation)
    source = str(path)
    validation_from = _validation_from(source, home_from, test_from, validation)
    text = dumps(ruleset)
    table = to_dict(ruleset)
    current = tuple(min(max(float(value_at(table, p.path)), p.low), p.high) for p in params)
    base: Base = (source, home_from, text, tuple(params), validation_from, test_from, score)
    start = _scores(ruleset, source, home_from, test_from, validation_from, jobs)
    figure(start[0], score)  # (a three-way score without a draw model: refused now)
    if method == "optuna":
        with optuna_study(seed, storage, study_name or ruleset.name) as (study, made):
            found, chosen = optimize(
                study, base, current, trials=max(trials, 1), jobs=jobs, progress=progress, made=made
            )
    else:
        found = _search_random(base, params, current, trials, seed, jobs, progress)
        chosen = min(found, key=lambda t: (t.value, found.index(t)))
    return _finish(ruleset, params, chosen, found, base, start, method, jobs)


def _check_settings(score: str, params: Sequence[ParamRange], validation: float) -> None:
    """Refuse an unknown score, no parameter to search, or a validation share out of
    (0, 1)."""
    if score not in SCORES:
        raise InputError(f"--score must be one of {', '.join(SCORES)}: {score!r}")
    if not params:
        raise InputError("tune needs at least one --param NAME=LOW:HIGH")
    if not 0 < validation < 1:
        raise InputError(f"--validation must be in (0, 1): {validation!r}")


def _validation_from(source: str, home_from: str | None, test_from: str, validation: float) -> str:
    """The first date of the validation slice: the latest ``validation`` share of the
    warm-up matches (at least 10 of them)."""
    warm = [
        str(d.get("played_at", ""))
        for d in matches_of(source, home_from)
        if str(d.get("played_at", "")) < test_from
    ]
    if len(warm) < 10:
        raise InputError(f"too few warm-up matches before {test_from!r} to tune on: {len(warm)}")
    return warm[min(int(len(warm) * (1 - validation)), len(warm) - 1)]


def _scores(
    ruleset: Ruleset,
    source: str,
    home_from: str | None,
    test_from: str,
    validation_from: str,
    jobs: int = 1,
) -> tuple[Evaluation, Evaluation]:
    """The scores of ``ruleset`` on the validation slice and on the test part: two
    replays, in two forked processes at once when ``jobs`` > 1 (they are half the time
    of a short search: :func:`rankcraft.processes.run_each`)."""
    matches = parsed_of(source, home_from)

    def part(index: int, tick: Callable[[int], None]) -> Evaluation:
        if index == 0:
            return evaluate_ruleset(
                ruleset, matches, test_from=test_from, score_from=validation_from, stop_at=test_from
            )
        return evaluate_ruleset(ruleset, matches, test_from=test_from)

    validation, test = run_each(part, 2, processes=min(jobs, 2))
    return validation, test


def _search_random(
    base: Base,
    params: Sequence[ParamRange],
    current: tuple[float, ...],
    trials: int,
    seed: int,
    jobs: int,
    progress: Progress | None,
) -> list[Trial]:
    """The seeded random search over the box, then a finer one around its best point."""
    rng = random.Random(seed)
    box = [(p.low, p.high) for p in params]
    rounds = [[current] + [_sample(rng, params, box) for _ in range(max(trials - 1, 0))]]
    done: list[Trial] = []
    total = len(rounds[0]) + max(trials // 2, 1)
    with worker_pool(jobs) as pool:
        for stage in range(2):
            points = rounds[stage]
            jobs_list = [trial_job(base, values) for values in points]
            for values, loss in zip(points, pool.map(run_trial, jobs_list), strict=True):
                done.append(Trial(values=values, value=loss))
                if progress is not None:
                    progress(len(done), total, min(t.value for t in done), done[-1])
            if stage == 0:
                best = min(done, key=lambda t: t.value)
                fine = []
                for _param, value, (low, high) in zip(params, best.values, box, strict=True):
                    half = (high - low) / 8
                    fine.append((max(low, value - half), min(high, value + half)))
                rounds.append([_sample(rng, params, fine) for _ in range(max(trials // 2, 1))])
    return done


def _method(method: str | None, storage: str | None) -> str:
    """The search method to use, checked: optuna when installed unless asked otherwise."""
    if method is None:
        method = "optuna" if has_optuna() else "random"
    if method not in ("optuna", "random"):
        raise InputError(f"--method must be 'optuna' or 'random': {method!r}")
    if method == "optuna" and not has_optuna():
        raise missing("--method optuna needs", "Optuna", "tune")
    if storage is not None and method != "optuna":
        raise InputError(f"--storage needs the optuna method ({install_hint('tune')})")
    return method


def _finish(
    ruleset: Ruleset,
    params: Sequence[ParamRange],
    best: Trial,
    done: Sequence[Trial],
    base: Base,
    start: tuple[Evaluation, Evaluation],
    method: str,
    jobs: int = 1,
) -> TuneResult:
    """The tuned ruleset of the best trial, scored on the validation slice and once on
    the test part; the start instead when the best trial does not beat it on the
    validation slice (a pruned or clamped start, or noise between replays)."""
    source, home_from, _, _, validation_from, test_from, score = base
    tuned = apply(ruleset, params, best.values, name=f"{ruleset.name}-tuned")
    chosen = _scores(tuned, source, home_from, test_from, validation_from, jobs)
    kept = figure(chosen[0], score) > figure(start[0], score)
    values = best.values
    if kept:
        table = to_dict(ruleset)
        values = tuple(float(value_at(table, p.path)) for p in params)
        tuned, chosen = attrs.evolve(ruleset, name=f"{ruleset.name}-tuned"), start
    tuned = attrs.evolve(
        tuned,
        description=(
            f"{ruleset.name} tuned by {score} on matches before {test_from} (validation from "
            f"{validation_from}): "
            + ", ".join(f"{p.name} = {_fmt(v, p)}" for p, v in zip(params, values, strict=True))
            + (" (the start: no trial beat it)" if kept else "")
        ),
    )
    # the ruleset written out carries the draw values its test score was made with
    # (fitted on the matches before the test part), so it replays the same
    tuned, _ = fit_draws(tuned, parsed_of(source, home_from), before=test_from)
    return TuneResult(
        params=tuple(params),
        best=values,
        validation_log_loss=figure(chosen[0], score),
        ruleset=tuned,
        test=chosen[1],
        trials=tuple(done),
        validation_from=validation_from,
        score=score,
        validation=chosen[0],
        start_validation=start[0],
        start_test=start[1],
        kept_start=kept,
        method=method,
    )


def tuned_toml(result: TuneResult, start: Ruleset, start_spec: str, out: str | Path) -> str:
    """The tuned ruleset as TOML: ``extends`` the start plus the values that differ, when
    the start can be extended from ``out`` (a bundled name, or a file in ``out``'s
    folder); else every value spelled out."""
    extends: str | None = None
    if "/" not in start_spec and not start_spec.endswith(".toml"):
        extends = start_spec
    elif Path(start_spec).resolve().parent == Path(out).resolve().parent:
        extends = Path(start_spec).name
    if extends is None:
        return dumps(result.ruleset)
    changed = _changes(to_dict(start), to_dict(result.ruleset))
    changed.pop("name", None)
    changed.pop("description", None)
    table = {
        "extends": extends,
        "name": result.ruleset.name,
        "description": result.ruleset.description,
        **changed,
    }
    return tomli_w.dumps(table)


def _changes(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """The entries of ``new`` that differ from ``old``, nested tables compared key by
    key, anything else (a list) whole."""
    out: dict[str, Any] = {}
    for key, value in new.items():
        before = old.get(key)
        if isinstance(value, dict) and isinstance(before, dict):
            inner = _changes(before, value)
            if inner:
                out[key] = inner
        elif value != before:
            out[key] = value
    return out


def _fmt(value: float, param: ParamRange) -> str:
    return str(round(value)) if param.integer else f"{value:.6g}"
