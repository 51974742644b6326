"""One-step-ahead scoring of a ruleset on a match history (docs/evaluate.md).

Every match is replayed in order; for a *test* match (``played_at`` ≥ ``test_from``,
compared as ISO text) the league's pre-match probability is scored before the match
updates the ratings. Warm-up matches only train. A two-sided match is one scored item
(p = P(side 0 wins), s = 1, ½ or 0); a free-for-all is scored on every pair of sides
(p = the league's prediction for that pair at the match's time).

>>> import rankcraft
>>> from rankcraft.evaluate import evaluate
>>> history = [{"id": f"m{i}", "played_at": f"2024-01-{i + 1:02d}", "teams": [["a"], ["b"]],
...             "scores": [1, 0]} for i in range(6)]
>>> result = evaluate(rankcraft.League("elo"), history, test_from="2024-01-04")
>>> result.n, round(result.log_loss, 4), result.accuracy
(3, 0.4253, 1.0)
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

import attrs

from .engine import League
from .errors import InputError
from .io import parse_match
from .model import Match, pair_score

_CLIP = 1e-12
BINS = 10


@attrs.frozen(kw_only=True)
class CalibrationBin:
    """One tenth of the probability range.

    Attributes:
        low, high: the bin's range of predicted probabilities.
        n: items whose prediction fell in it. predicted: their mean prediction.
        observed: their mean outcome (a draw counts ½).
    """

    low: float
    high: float
    n: int
    predicted: float
    observed: float


@attrs.frozen(kw_only=True)
class Evaluation:
    """Scores of the test part.

    Attributes:
        n: scored items (test matches with two sides, plus every pair of sides of each
            free-for-all test match). matches: test matches. warmup: earlier matches.
        log_loss: mean of -(s ln p + (1-s) ln(1-p)), natural log, p clipped to
            [1e-12, 1 - 1e-12]; a draw counts as s = 0.5.
        brier: mean of (p - s)².
        accuracy: over decisive items: 1 when the favourite won, 0.5 when p = 0.5.
        decisive: decisive items (the accuracy's denominator).
        calibration: 10 bins of predicted vs observed win rate.
        predictions: every scored (p, s), in order (for plots).
    """

    n: int
    matches: int
    warmup: int
    log_loss: float
    brier: float
    accuracy: float
    decisive: int
    calibration: tuple[CalibrationBin, ...]
    predictions: tuple[tuple[float, float], ...] = attrs.field(repr=False, default=())

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready figures (without the individual predictions)."""
        out = attrs.asdict(self, recurse=True)
        out.pop("predictions")
        return out


def field_at(table: Mapping[str, Any], keys: Sequence[str]) -> Any:
    """The value at a path of keys into nested mappings, or None where it stops."""
    value: Any = table
    for key in keys:
        if not isinstance(value, Mapping) or key not in value:
            return None
        value = value[key]
    return value


def with_home(matches: Iterable[Mapping[str, Any]], path: str) -> Iterator[dict[str, Any]]:
    """Matches with ``home`` taken from a field path such as ``meta.home_team_index``.

    A missing or null field leaves the match without a home side (a neutral venue).
    """
    keys = path.split(".")
    for data in matches:
        value = field_at(data, keys)
        out = dict(data)
        if value is not None:
            out["home"] = value
        yield out


def score(items: Iterable[tuple[float, float]]) -> tuple[float, float, float, int, int]:
    """(log loss, Brier, accuracy, decisive, n) of (p, s) pairs."""
    n = decisive = 0
    log_loss = brier = hits = 0.0
    for p, s in items:
        q = min(max(p, _CLIP), 1.0 - _CLIP)
        n += 1
        log_loss -= s * math.log(q) + (1.0 - s) * math.log(1.0 - q)
        brier += (p - s) ** 2
        if s != 0.5:
            decisive += 1
            if p == 0.5:
                hits += 0.5
            elif (p > 0.5) == (s == 1.0):
                hits += 1.0
    return (
        log_loss / n if n else math.nan,
        brier / n if n else math.nan,
        hits / decisive if decisive else math.nan,
        decisive,
        n,
    )


def calibration(
    items: Iterable[tuple[float, float]], bins: int = BINS
) -> tuple[CalibrationBin, ...]:
    """Predicted vs observed win rate in ``bins`` equal bins of the predicted probability."""
    sums = [[0, 0.0, 0.0] for _ in range(bins)]
    for p, s in items:
        k = min(int(p * bins), bins - 1)
        sums[k][0] += 1
        sums[k][1] += p
        sums[k][2] += s
    return tuple(
        CalibrationBin(
            low=k / bins,
            high=(k + 1) / bins,
            n=int(n),
            predicted=total_p / n if n else math.nan,
            observed=total_s / n if n else math.nan,
        )
        for k, (n, total_p, total_s) in enumerate(sums)
    )


def evaluate(
    league: League,
    matches: Iterable[Match | Mapping[str, Any]],
    *,
    test_from: str,
    score_from: str | None = None,
    stop_at: str | None = None,
) -> Evaluation:
    """Replay ``matches`` into ``league`` and score the test part one step ahead.

    :param test_from: matches with ``played_at`` ≥ this (ISO text) are scored.
    :param score_from: used by tuning: score from here instead (a validation slice).
    :param stop_at: used by tuning: stop before the first match at or after this.
    """
    start = score_from if score_from is not None else test_from
    warmup = tests = 0
    items: list[tuple[float, float]] = []
    with league.batch():
        for item in matches:
            if isinstance(item, Match):
                match, text = item, item.played_at.isoformat()
            else:
                match, text = parse_match(item), str(item.get("played_at", ""))
            if stop_at is not None and text >= stop_at:
                break
            scored = text >= start
            if scored and len(match.teams) > 2:
                items.extend(_pairs(league, match))
            report = league.record(match)
            if not scored:
                warmup += 1
                continue
            tests += 1
            if len(match.teams) == 2:
                places = match.places
                s = 1.0 if places[0] < places[1] else 0.0 if places[0] > places[1] else 0.5
                items.append((report.expected[0], s))
        if league.ruleset.period.mode == "batch":
            league.close_period()
    if not items:
        raise InputError(f"no match to score: none is played at or after {start!r}")
    log_loss, brier, accuracy, decisive, n = score(items)
    return Evaluation(
        n=n,
        matches=tests,
        warmup=warmup,
        log_loss=log_loss,
        brier=brier,
        accuracy=accuracy,
        decisive=decisive,
        calibration=calibration(items),
        predictions=tuple(items),
    )


def _pairs(league: League, match: Match) -> list[tuple[float, float]]:
    """Every pair of sides of a free-for-all, predicted before the match."""
    out = []
    teams = match.teams
    for i in range(len(teams)):
        for j in range(i + 1, len(teams)):
            p = league.predict([teams[i], teams[j]], at=match.played_at)[0]
            out.append((p, pair_score(match.places, i, j)))
    return out
