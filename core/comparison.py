"""Is one ruleset better than another, really? The paired difference of two evaluations'
scores on the same items, with a 95% interval by a block bootstrap over days
(:func:`compare`), every such difference against a baseline (:func:`differences`), and
the report of them that ``rankcraft evaluate --json`` prints and the ruleset lab shows
(:func:`report`); read from :mod:`rankcraft.evaluate` too.
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Mapping, Sequence
from datetime import date
from typing import Any

import attrs

from .errors import InputError
from .jsontext import finite
from .scores import SCORES, Evaluation, item_scores

SAMPLES = 2000
"""Bootstrap resamples :func:`compare` draws by default."""
MAX_SAMPLES = 100_000
"""The most bootstrap resamples :func:`compare` draws (50 times the default: past it the
interval's own noise is far below its third decimal, and the time grows without end)."""
BLOCK_DAYS = 7
"""Days per bootstrap block by default (a week: a round of most leagues)."""


@attrs.frozen(kw_only=True)
class Difference:
    """The paired difference in one score of two rulesets on the same scored items.

    Attributes:
        ruleset, baseline: the two rulesets' labels.
        score: which score (one of ``SCORES``: ``log-loss``, ``three-way``, ``rps``,
            ``brier``).
        difference: the mean score of ``ruleset`` minus that of ``baseline`` over the
            same items (negative: ``ruleset`` predicts better).
        low, high: the 95% percentile interval of that difference over ``samples`` block
            bootstrap resamples.
        blocks: the blocks of ``block_days`` days resampled (days with scored items).
        samples, seed, block_days: the bootstrap's settings.
    """

    ruleset: str
    baseline: str
    difference: float
    low: float
    high: float
    blocks: int
    samples: int
    seed: int
    block_days: int
    score: str = "log-loss"

    @property
    def log_loss(self) -> float:
        """The difference (named so since paired differences were of log loss only)."""
        return self.difference

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready (strict: null for a figure without a value); a log-loss difference
        also under ``log_loss``, as before other scores had intervals."""
        out = attrs.asdict(self)
        if self.score == "log-loss":
            out["log_loss"] = self.difference
        return dict(finite(out))


def _quantile(ordered: Sequence[float], q: float) -> float:
    """The q-quantile of sorted values, linear between order statistics."""
    position = q * (len(ordered) - 1)
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def compare(
    baseline: Evaluation,
    other: Evaluation,
    *,
    names: tuple[str, str] = ("ruleset", "baseline"),
    samples: int = SAMPLES,
    seed: int = 0,
    block_days: int = BLOCK_DAYS,
    score: str = "log-loss",
) -> Difference:
    """The paired difference in ``score`` (one of ``SCORES``; log loss by default) of
    ``other`` minus ``baseline``, with a 95% interval by a block bootstrap over days.

    Both evaluations must have scored the same items (the same history and test part;
    for a three-way score, three-way forecasts of the same matches).
    The items are grouped into blocks of ``block_days`` consecutive days counted from the
    first test day; each of ``samples`` resamples draws as many blocks as there are, with
    replacement (``random.Random(seed)``), and takes the difference of the mean scores
    of the items drawn. Whole blocks are drawn because matches close in time are
    not independent (the same ratings forecast them); the interval is the 2.5th and
    97.5th percentiles of the resampled differences.

    :param names: the labels of ``other`` and ``baseline``, for the result.
    :raises InputError: the evaluations scored different items, or a setting is out of
        range.
    """
    _check_settings(samples, block_days, score)
    three = score in ("three-way", "rps")
    _check_same_items(baseline, other, names, three)
    mine, days = item_scores(other, score)
    theirs, _ = item_scores(baseline, score)
    if not days:
        raise InputError(
            f"no scored item carries its day ({score}): nothing to resample"
            + (" (a three-way score needs both to forecast draws)" if three else "")
        )
    diffs = [a - b for a, b in zip(mine, theirs, strict=True)]
    low, high, blocks = _interval(days, diffs, samples=samples, seed=seed, block_days=block_days)
    return Difference(
        ruleset=names[0],
        baseline=names[1],
        score=score,
        difference=math.fsum(diffs) / len(diffs),
        low=low,
        high=high,
        blocks=blocks,
        samples=samples,
        seed=seed,
        block_days=block_days,
    )


def _check_settings(samples: int, block_days: int, score: str) -> None:
    """Refuse a bootstrap setting out of range, or an unknown score."""
    if not 1 <= samples <= MAX_SAMPLES:
        raise InputError(f"'samples' must be a whole number in [1, {MAX_SAMPLES}]: {samples!r}")
    if block_days < 1:
        raise InputError(f"'block_days' must be at least 1: {block_days!r}")
    if score not in SCORES:
        raise InputError(f"unknown score {score!r} (one of {', '.join(SCORES)})")


def _check_same_items(
    baseline: Evaluation, other: Evaluation, names: tuple[str, str], three: bool
) -> None:
    """Refuse two evaluations that did not score the same items (for a three-way score,
    the same matches' three-way forecasts)."""
    same = (
        (baseline.outcome_days, [o for *_, o in baseline.outcomes])
        == (other.outcome_days, [o for *_, o in other.outcomes])
        if three
        else (baseline.n, baseline.days, [s for _, s in baseline.predictions])
        == (other.n, other.days, [s for _, s in other.predictions])
    )
    if not same:
        raise InputError(
            f"{names[0]!r} and {names[1]!r} scored different items ({other.n} and "
            f"{baseline.n}): compare evaluations of one history with one test part"
        )


def _interval(
    days: Sequence[str], diffs: Sequence[float], *, samples: int, seed: int, block_days: int
) -> tuple[float, float, int]:
    """(2.5th percentile, 97.5th percentile, blocks) of the block-bootstrap mean of
    ``diffs``, blocks of ``block_days`` days counted from the first day."""
    origin = date.fromisoformat(days[0]).toordinal()
    sums: dict[int, list[float]] = {}
    for day, d in zip(days, diffs, strict=True):
        block = (date.fromisoformat(day).toordinal() - origin) // block_days
        entry = sums.setdefault(block, [0.0, 0.0])
        entry[0] += d
        entry[1] += 1.0
    totals = [v[0] for v in sums.values()]
    counts = [v[1] for v in sums.values()]
    k = len(totals)
    draw, floor, fsum = random.Random(seed).random, math.floor, math.fsum
    total_of, count_of = totals.__getitem__, counts.__getitem__
    width = float(k)
    resampled = []
    for _ in range(samples):
        # (``rng.choices(range(k), k=k)`` written out: the same draws, a third the time)
        chosen = [floor(draw() * width) for _ in itertools.repeat(None, k)]
        resampled.append(fsum(map(total_of, chosen)) / fsum(map(count_of, chosen)))
    resampled.sort()
    return _quantile(resampled, 0.025), _quantile(resampled, 0.975), k


def differences(
    results: Mapping[str, Evaluation],
    baseline: str,
    *,
    samples: int = SAMPLES,
    seed: int = 0,
    block_days: int = BLOCK_DAYS,
) -> list[Difference]:
    """The paired differences of every other result against ``baseline`` on every score
    both have: binary log loss and Brier always, three-way log loss and RPS where both
    forecast the same matches three ways."""
    out = []
    base = results[baseline]
    for label, result in results.items():
        if label == baseline:
            continue
        for score in SCORES:
            if score in ("three-way", "rps") and not (
                base.outcomes and result.outcomes and base.outcome_days == result.outcome_days
            ):
                continue
            out.append(
                compare(
                    base,
                    result,
                    names=(label, baseline),
                    samples=samples,
                    seed=seed,
                    block_days=block_days,
                    score=score,
                )
            )
    return out


def report(
    results: Mapping[str, Evaluation],
    baseline: str,
    paired: Sequence[Difference],
    *,
    test_from: str,
) -> dict[str, Any]:
    """The report of an evaluation (JSON-ready): ``test_from``, each result's figures by
    its label (:meth:`Evaluation.to_dict`: log loss, Brier, accuracy, calibration, the
    three-way log loss and RPS where the ruleset forecasts draws), and, when there are
    differences (``paired``, from :func:`differences`), the ``baseline`` and each
    difference with its interval. ``rankcraft evaluate --json`` prints it; the ruleset
    lab shows it (:func:`rankcraft.web.compare`)."""
    document: dict[str, Any] = {
        "test_from": test_from,
        "results": {label: result.to_dict() for label, result in results.items()},
    }
    if paired:
        document["baseline"] = baseline
        document["differences"] = [d.to_dict() for d in paired]
    return document
