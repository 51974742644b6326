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
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import attrs
import tomli_w

from .drawfit import fit_draws, fitted_names
from .errors import InputError
from .evaluate import (
    SCORES,
    Evaluation,
    evaluate,
    evaluate_ruleset,
    field_at,
    scratch_league,
    with_home,
)
from .io import read_match_dicts
from .processes import run_each
from .ruleset import Ruleset, dumps, from_dict, to_dict
from .store import mask_url
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
    """

    values: tuple[float, ...]
    value: float
    pruned: bool = False

    @property
    def log_loss(self) -> float:
        """The score (named so when tuning scored log loss only)."""
        return self.value


@attrs.frozen(kw_only=True)
class TuneResult:
    """What ``tune`` found.

    Attributes:
        params: the searched ranges. best: the chosen values, in the order of ``params``.
        score: the score the search minimised (one of ``SCORES``).
        validation_log_loss: the chosen point's ``score`` on the validation slice.
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
        """JSON-ready (``tune --json``): the method and score, the chosen values, every
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
            "validation_log_loss": self.validation_log_loss,
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
    def worse_on_test(self) -> bool:
        """Whether the tuned ruleset scores worse than the start on the test part (by
        the tuned score): the search chose on noise, or the test part differs."""
        if self.start_test is None:
            return False
        tuned, start = self.test.figure(self.score), self.start_test.figure(self.score)
        return tuned is not None and start is not None and tuned > start


def _at(table: Any, keys: Sequence[str]) -> Any:
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
    current = _at(table, path)
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


def _matches(path: str, home_from: str | None) -> list[dict[str, Any]]:
    key = (path, home_from)
    if key not in _CACHE:
        dicts = [d for _, d in read_match_dicts(path)]
        _CACHE[key] = list(with_home(dicts, home_from)) if home_from else dicts
    return _CACHE[key]


def _run_trial(
    job: tuple[str, str | None, str, tuple[ParamRange, ...], tuple[float, ...], str, str, str],
) -> float:
    path, home_from, text, params, values, validation_from, test_from, score = job
    from .ruleset import loads_ruleset

    ruleset = apply(loads_ruleset(text), params, values)
    result = evaluate_ruleset(
        ruleset,
        _matches(path, home_from),
        test_from=test_from,
        score_from=validation_from,
        stop_at=test_from,
    )
    return _figure(result, score)


def _figure(result: Evaluation, score: str) -> float:
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
BATCH = 4
"""Optuna trials drawn at a time (the sampler sees the earlier batches' results); at most
this many run at once, whatever ``jobs`` is, so that ``jobs`` does not change the result."""
STARTUP_TRIALS = 5
"""Finished trials needed before any trial is pruned."""


def _run_checked(
    job: tuple[
        str,
        str | None,
        str,
        tuple[ParamRange, ...],
        tuple[float, ...],
        str,
        str,
        str,
        tuple[float | None, ...],
    ],
) -> tuple[list[float], bool]:
    """One Optuna trial: replay the warm-up in chunks (the draw parameters first fitted
    before the validation slice, when the ruleset asks), report the running validation
    score at each checkpoint, stop when it is worse than ``limits`` there.

    :returns: (running score at each checkpoint reached, pruned).
    """
    path, home_from, text, params, values, validation_from, test_from, score, limits = job
    from .ruleset import loads_ruleset

    ruleset = apply(loads_ruleset(text), params, values)
    matches = _matches(path, home_from)
    if ruleset.period.mode == "batch":  # (a chunk's end would close a period): one piece
        result = evaluate_ruleset(
            ruleset,
            matches,
            test_from=test_from,
            score_from=validation_from,
            stop_at=test_from,
        )
        return [_figure(result, score)], False
    ruleset, _ = fit_draws(ruleset, matches, before=validation_from)
    first = next(i for i, d in enumerate(matches) if str(d.get("played_at", "")) >= validation_from)
    end = next(
        (i for i, d in enumerate(matches) if str(d.get("played_at", "")) >= test_from),
        len(matches),
    )
    bounds = [first + (end - first) * (k + 1) // CHECKPOINTS for k in range(CHECKPOINTS)]
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
            total += _figure(part, score) * weight
            count += weight
        start = stop
        if not count:
            continue
        running.append(total / count)
        limit_here = limits[step] if step < len(limits) else None
        if limit_here is not None and running[-1] > limit_here and stop < end:
            return running, True
    if not running:
        _figure(part, score)  # (refused: no three-way forecast in the validation slice)
    return running, False


def _medians(study: Any) -> tuple[float | None, ...]:
    """Per checkpoint, the median running log loss of the study's finished trials (None
    before ``STARTUP_TRIALS`` have finished): Optuna's median-pruning rule."""
    import optuna

    done = study.get_trials(deepcopy=False, states=(optuna.trial.TrialState.COMPLETE,))
    if len(done) < STARTUP_TRIALS:
        return ()
    out: list[float | None] = []
    for step in range(CHECKPOINTS):
        seen = sorted(t.intermediate_values[step] for t in done if step in t.intermediate_values)
        out.append(seen[len(seen) // 2] if seen else None)
    return tuple(out)


class _Inline:
    """A one-worker "pool" that runs jobs in this process (``jobs`` = 1)."""

    def __enter__(self) -> _Inline:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def map(self, function: Callable[[Any], Any], items: Sequence[Any]) -> Any:
        return map(function, items)


def _pool(jobs: int) -> Any:
    return _Inline() if jobs <= 1 else ProcessPoolExecutor(max_workers=jobs)


def optuna_storage(url: str | None) -> str | None:
    """The storage URL as SQLAlchemy reads it: ``postgresql://`` goes through psycopg 3
    (the driver rankcraft's PostgreSQL store uses) when psycopg2 is absent."""
    if url is None or not url.startswith(("postgresql://", "postgres://")):
        return url
    try:
        import psycopg2  # type: ignore[import-not-found,import-untyped,unused-ignore]  # noqa: F401
    except ImportError:
        return "postgresql+psycopg://" + url.split("://", 1)[1]
    return url


def has_optuna() -> bool:
    """Whether Optuna is installed (``pip install 'rankcraft[tune]'``)."""
    try:
        import optuna  # noqa: F401
    except ImportError:
        return False
    return True


Progress = Callable[[int, int, float, Trial], None]
"""Called after each trial with (trials done, trials in all, best score so far, the
trial)."""

_Base = tuple[str, str | None, str, tuple[ParamRange, ...], str, str, str]
"""What every trial of a search shares: (source, home_from, ruleset text, params,
validation_from, test_from, score)."""


def _job(base: _Base, values: tuple[float, ...]) -> tuple[Any, ...]:
    """A trial's job for the worker pool: the shared part with the trial's values."""
    source, home_from, text, params, validation_from, test_from, score = base
    return (source, home_from, text, params, values, validation_from, test_from, score)


@contextmanager
def _optuna_study(
    seed: int, storage: str | None, study_name: str | None
) -> Iterator[tuple[Any, bool]]:
    """A minimizing TPE study (seeded), in ``storage`` when given (joined if it exists),
    and whether this call made it; the storage's pooled connections are closed when the
    search ends."""
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    url = optuna_storage(storage)
    rdb = None
    try:
        rdb = None if url is None else _rdb_storage(url)
        sampler = optuna.samplers.TPESampler(seed=seed)
        try:
            study = optuna.create_study(
                direction="minimize", sampler=sampler, storage=rdb, study_name=study_name
            )
            made = True
        except optuna.exceptions.DuplicatedStudyError:  # joined: another made it
            assert rdb is not None  # (a study in memory is always new)
            study = optuna.load_study(study_name=study_name, storage=rdb, sampler=sampler)
            made = False
    except Exception as exc:  # SQLAlchemy's: no such dialect, no URL, cannot connect
        if rdb is not None:
            rdb.engine.dispose()
        if storage is None:
            raise
        reason = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise InputError(
            f"'--storage' {mask_url(storage)!r} cannot hold the study: {reason[:300]}"
        ) from None
    try:
        yield study, made
    finally:
        if rdb is not None:
            rdb.engine.dispose()


RACED = ("already exists", "duplicate key", "UniqueViolation")
"""What a database says when another process made Optuna's tables at the same moment."""


def _rdb_storage(url: str, attempts: int = 5) -> Any:
    """Optuna's storage at ``url``. Two processes that open a new database at once race
    to make its tables; the one that loses tries again (the tables are there then)."""
    import optuna

    for attempt in range(attempts):
        try:
            return optuna.storages.RDBStorage(url)
        except Exception as exc:
            if attempt == attempts - 1 or not any(word in str(exc) for word in RACED):
                raise
            time.sleep(0.2 * (attempt + 1))
    raise AssertionError("unreachable")  # pragma: no cover


def _optimize(
    study: Any,
    base: _Base,
    start: tuple[float, ...],
    *,
    trials: int,
    jobs: int,
    progress: Progress | None,
    made: bool = True,
) -> tuple[list[Trial], Trial]:
    """The Optuna search: (this process's trials, the best finished trial of the study).
    ``made``: this process made the study (it queues the start's values first)."""
    import optuna

    params = base[3]
    names = [p.name for p in params]
    if made and not study.get_trials(deepcopy=False):
        # only the process that made the study queues the start: two processes that
        # start one study at once may both find it empty, but only one makes it
        study.enqueue_trial(dict(zip(names, start, strict=True)))
    done: list[Trial] = []
    with _pool(min(jobs, BATCH)) as pool:
        while len(done) < trials:
            batch = []
            for _ in range(min(BATCH, trials - len(done))):
                trial = study.ask()
                values = tuple(
                    float(trial.suggest_int(p.name, round(p.low), round(p.high)))
                    if p.integer
                    else trial.suggest_float(p.name, p.low, p.high)
                    for p in params
                )
                batch.append((trial, values))
            limits = _medians(study)
            jobs_list = [(*_job(base, values), limits) for _, values in batch]
            for (trial, values), (running, pruned) in zip(
                batch, pool.map(_run_checked, jobs_list), strict=True
            ):
                for step, value in enumerate(running):
                    trial.report(value, step)
                if pruned:
                    study.tell(trial, state=optuna.trial.TrialState.PRUNED)
                else:
                    study.tell(trial, running[-1])
                done.append(Trial(values=values, value=running[-1], pruned=pruned))
                if progress is not None:
                    finished = [t.value for t in done if not t.pruned]
                    progress(len(done), trials, min(finished) if finished else math.inf, done[-1])
    best = study.best_trial
    values = tuple(float(best.params[n]) for n in names)
    assert best.value is not None
    return done, Trial(values=values, value=float(best.value))


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
    if score not in SCORES:
        raise InputError(f"--score must be one of {', '.join(SCORES)}: {score!r}")
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
    current = []
    table = to_dict(ruleset)
    for p in params:
        value = _at(table, p.path)
        current.append(min(max(float(value), p.low), p.high))
    base: _Base = (source, home_from, text, tuple(params), validation_from, test_from, score)
    start = _scores(ruleset, source, home_from, test_from, validation_from, jobs)
    _figure(start[0], score)  # (a three-way score without a draw model: refused now)
    if method == "optuna":
        with _optuna_study(seed, storage, study_name or ruleset.name) as (study, made):
            found, chosen = _optimize(
                study,
                base,
                tuple(current),
                trials=max(trials, 1),
                jobs=jobs,
                progress=progress,
                made=made,
            )
    else:
        found = _search_random(base, params, tuple(current), trials, seed, jobs, progress)
        chosen = min(found, key=lambda t: (t.value, found.index(t)))
    return _finish(ruleset, params, chosen, found, base, start, method, jobs)


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
    matches = _matches(source, home_from)

    def part(index: int, tick: Callable[[int], None]) -> Evaluation:
        if index == 0:
            return evaluate_ruleset(
                ruleset, matches, test_from=test_from, score_from=validation_from, stop_at=test_from
            )
        return evaluate_ruleset(ruleset, matches, test_from=test_from)

    validation, test = run_each(part, 2, processes=min(jobs, 2))
    return validation, test


def _search_random(
    base: _Base,
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
    with _pool(jobs) as pool:
        for stage in range(2):
            points = rounds[stage]
            jobs_list = [_job(base, values) for values in points]
            for values, loss in zip(points, pool.map(_run_trial, jobs_list), strict=True):
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
        raise InputError("--method optuna needs Optuna: pip install 'rankcraft[tune]'")
    if storage is not None and method != "optuna":
        raise InputError("--storage needs the optuna method (pip install 'rankcraft[tune]')")
    return method


def _finish(
    ruleset: Ruleset,
    params: Sequence[ParamRange],
    best: Trial,
    done: Sequence[Trial],
    base: _Base,
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
    kept = _figure(chosen[0], score) > _figure(start[0], score)
    values = best.values
    if kept:
        table = to_dict(ruleset)
        values = tuple(float(_at(table, p.path)) for p in params)
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
    tuned, _ = fit_draws(tuned, _matches(source, home_from), before=test_from)
    return TuneResult(
        params=tuple(params),
        best=values,
        validation_log_loss=_figure(chosen[0], score),
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
