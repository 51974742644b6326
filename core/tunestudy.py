"""The Optuna study of a tuning search (:mod:`rankcraft.tune`, ``method = "optuna"``):
the study, in memory or in a database several processes share, its trials asked for a
batch at a time and run in worker processes (:func:`rankcraft.tunetrial.run_checked`),
each stopped at a checkpoint where it is worse than the median of the finished trials.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from .errors import InputError
from .store import mask_url
from .tunetrial import CHECKPOINTS, Base, Progress, Trial, run_checked, trial_job, worker_pool

BATCH = 4
"""Optuna trials drawn at a time (the sampler sees the earlier batches' results); at most
this many run at once, whatever ``jobs`` is, so that ``jobs`` does not change the result."""
STARTUP_TRIALS = 5
"""Finished trials needed before any trial is pruned."""


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


@contextmanager
def optuna_study(
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


SETTINGS_KEY = "rankcraft"
"""The study's user attribute that records what its trials search (:func:`check_study`)."""


def _settings(base: Base) -> dict[str, Any]:
    """What a study's trials must share to be compared: the params and their ranges, the
    ruleset they start from, the score and the slices (not the file's path: two machines
    may keep one history in two places)."""
    _source, home_from, text, params, validation_from, test_from, score = base
    return {
        "params": [
            f"{p.name}={p.low!r}:{p.high!r}{' (whole)' if p.integer else ''}" for p in params
        ],
        "ruleset": text,
        "score": score,
        "validation_from": validation_from,
        "test_from": test_from,
        "home_from": home_from,
    }


def _ruleset_lines(theirs: str, mine: str) -> str:
    """The first lines of two ruleset texts that the other lacks."""
    there = [line for line in theirs.splitlines() if line not in mine.splitlines()]
    here = [line for line in mine.splitlines() if line not in theirs.splitlines()]
    return (
        f"{' / '.join(there[:3]) or '(nothing)'} there, {' / '.join(here[:3]) or '(nothing)'} here"
    )


def check_study(study: Any, base: Base) -> None:
    """Refuse to add trials to a study made for other settings (:func:`_settings`),
    before any trial runs, naming what differs; record the settings in a study that has
    none (new, or made by a rankcraft that did not record them: then its trials' parameter
    names must be this search's).

    :raises InputError: the study searches other params, or from another ruleset, score
        or slice.
    """
    mine = _settings(base)
    theirs = study.user_attrs.get(SETTINGS_KEY)
    differ: list[str] = []
    if theirs is None:
        names = sorted(p.name for p in base[3])
        for trial in study.get_trials(deepcopy=False):
            if trial.params and sorted(trial.params) != names:
                differ.append(
                    f"params: {', '.join(sorted(trial.params))} there, {', '.join(names)} here"
                )
                break
        if not differ:
            study.set_user_attr(SETTINGS_KEY, mine)
            return
    else:
        for key, value in mine.items():
            if key not in theirs or theirs[key] == value:
                continue
            if key == "ruleset":
                differ.append(f"ruleset: {_ruleset_lines(str(theirs[key]), value)}")
            else:
                differ.append(f"{key}: {theirs[key]!r} there, {value!r} here")
    if differ:
        raise InputError(
            f"'--study' {study.study_name!r} was made for another search, and its trials "
            f"cannot be compared with this one's: {'; '.join(differ)} (name another study, "
            "or search as it did)"
        )


def optimize(
    study: Any,
    base: Base,
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

    check_study(study, base)
    params = base[3]
    names = [p.name for p in params]
    if made and not study.get_trials(deepcopy=False):
        # only the process that made the study queues the start: two processes that
        # start one study at once may both find it empty, but only one makes it
        study.enqueue_trial(dict(zip(names, start, strict=True)))
    done: list[Trial] = []
    with worker_pool(min(jobs, BATCH)) as pool:
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
            jobs_list = [(*trial_job(base, values), limits) for _, values in batch]
            for (trial, values), (running, pruned, (scored, of)) in zip(
                batch, pool.map(run_checked, jobs_list), strict=True
            ):
                for step, value in enumerate(running):
                    trial.report(value, step)
                if pruned:
                    study.tell(trial, state=optuna.trial.TrialState.PRUNED)
                else:
                    study.tell(trial, running[-1])
                counts = {"scored": scored, "validation_matches": of}
                done.append(Trial(values=values, value=running[-1], pruned=pruned, **counts))
                if progress is not None:
                    finished = [t.value for t in done if not t.pruned]
                    progress(len(done), trials, min(finished) if finished else math.inf, done[-1])
    best = study.best_trial
    values = tuple(float(best.params[n]) for n in names)
    assert best.value is not None
    return done, Trial(values=values, value=float(best.value))
