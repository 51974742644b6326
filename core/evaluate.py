"""One-step-ahead scoring of a ruleset on a match history (docs/evaluate.md).

Every match is replayed in order; for a *test* match (``played_at`` at or after
``test_from``, compared as times) the league's pre-match probability is scored before the
match updates the ratings. Warm-up matches only train. A two-sided match is one scored
item (p = side 0's expected score, s = 1, ½ or 0); a free-for-all is scored on every pair
of sides (p = the league's prediction for that pair at the match's time), each pair in an
orientation fixed by its players' ids and blind to the outcome. When the history has
draws and the ruleset a draw model (``rankcraft_outcomes``), two-sided matches are also
scored three ways (log loss and ranked probability score). :func:`compare` gives the
paired difference of two rulesets' log losses with a block-bootstrap interval.

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
import random
import zlib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from datetime import date, datetime
from typing import TYPE_CHECKING, Any

import attrs

from .engine import League
from .errors import InputError
from .io import parse_match, parse_time
from .jsontext import finite
from .model import Match, pair_score
from .store import MemoryStore

if TYPE_CHECKING:
    from .drawfit import DrawFit
    from .ruleset import Ruleset

_CLIP = 1e-12
BINS = 10
SCORES = ("log-loss", "three-way", "rps", "brier")
"""The scores an evaluation reports, each lower-is-better: binary log loss (a draw
counting ½), three-way log loss, ranked probability score, Brier score."""


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
    predicted: float | None
    observed: float | None


@attrs.frozen(kw_only=True)
class ThreeWay:
    """Scores of the three-way probabilities (P(side 0 wins), P(draw), P(side 1 wins)) of
    the two-sided test matches the draw model answered for.

    Attributes:
        n: matches scored.
        log_loss: mean of -ln P(what happened), natural log, clipped at 1e-12.
        rps: ranked probability score (Epstein, 1969), mean over matches of
            ½ Σₖ₌₁² (Σⱼ≤ₖ (pⱼ - oⱼ))², outcomes ordered win, draw, loss; in [0, 1], lower
            is better.
    """

    n: int
    log_loss: float
    rps: float


@attrs.frozen(kw_only=True)
class Evaluation:
    """Scores of the test part.

    Attributes:
        n: scored items (test matches with two sides, plus every pair of sides of each
            free-for-all test match). matches: test matches. warmup: earlier matches.
        log_loss: mean of -(s ln p + (1-s) ln(1-p)), natural log, p clipped to
            [1e-12, 1 - 1e-12]; a draw counts as s = 0.5.
        brier: mean of (p - s)².
        accuracy: over decisive items: 1 when the favourite won, 0.5 when p = 0.5 (NaN
            when no item was decisive; null in :meth:`to_dict`).
        decisive: decisive items (the accuracy's denominator).
        draws: drawn items (s = ½).
        calibration: 10 bins of predicted vs observed score (a draw counts ½).
        three_way: three-way scores of the two-sided matches, when some were draws and
            the ruleset has a draw model; else None.
        draw_fit: the draw parameters fitted on the warm-up before the replay, when the
            ruleset asks for it (:func:`rankcraft.drawfit.fit_draws`); else None.
        predictions: every scored (p, s), in order (for plots and :func:`compare`).
        days: the UTC date of each scored item's match (ISO text), for :func:`compare`.
        outcomes: every three-way forecast scored, (P(win), P(draw), P(loss), outcome),
            whether or not the part had draws (:func:`compare`, tuning's score).
        outcome_days: the UTC date of each of ``outcomes``' matches.
    """

    n: int
    matches: int
    warmup: int
    log_loss: float
    brier: float
    accuracy: float
    decisive: int
    draws: int = 0
    calibration: tuple[CalibrationBin, ...]
    three_way: ThreeWay | None = None
    draw_fit: DrawFit | None = None
    predictions: tuple[tuple[float, float], ...] = attrs.field(repr=False, default=())
    days: tuple[str, ...] = attrs.field(repr=False, default=())
    outcomes: tuple[tuple[float, float, float, int], ...] = attrs.field(repr=False, default=())
    outcome_days: tuple[str, ...] = attrs.field(repr=False, default=())

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready figures (without the individual predictions): strict JSON, with
        null where a figure has no value (an empty calibration bin)."""
        out = attrs.asdict(self, recurse=True)
        for key in ("predictions", "days", "outcomes", "outcome_days"):
            out.pop(key)
        if self.draw_fit is None:
            out.pop("draw_fit")
        return dict(finite(out))

    def figure(self, name: str) -> float | None:
        """The score called ``name`` (one of ``SCORES``): ``log-loss``, ``brier``,
        ``three-way`` (log loss over win/draw/loss) or ``rps``; None for a three-way
        score without three-way forecasts."""
        if name not in SCORES:
            raise InputError(f"unknown score {name!r} (one of {', '.join(SCORES)})")
        if name == "log-loss":
            return self.log_loss
        if name == "brier":
            return self.brier
        if not self.outcomes:
            return None
        log_loss, rps = score_three_way(self.outcomes)
        return log_loss if name == "three-way" else rps


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
    """Predicted vs observed score in ``bins`` equal bins of the predicted probability
    (an empty bin has None for both)."""
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
            predicted=total_p / n if n else None,
            observed=total_s / n if n else None,
        )
        for k, (n, total_p, total_s) in enumerate(sums)
    )


def _moment(value: str | datetime, field: str) -> datetime:
    """A time given as ISO text (parsed as ``played_at`` is) or a datetime."""
    return value if isinstance(value, datetime) else parse_time(value, field=field)


def _orientation(teams: Sequence[Sequence[str]], i: int, j: int) -> tuple[int, int]:
    """The pair of sides (i, j) in a fixed order that ignores the outcome: by a CRC-32 of
    each side's sorted player ids (then the ids themselves). File order would put the
    better-placed side first in every pair of a results table."""

    def key(side: int) -> tuple[int, str]:
        text = "\x1f".join(sorted(teams[side]))
        return zlib.crc32(text.encode("utf-8", "surrogatepass")), text

    return (i, j) if key(i) <= key(j) else (j, i)


def scratch_league(ruleset: Any) -> League:
    """A league in memory for a replay that is scored and never read back (``evaluate``
    and ``tune`` trials): it keeps its matches as objects, never packed, which is the
    fastest (see :class:`rankcraft.store.MemoryStore`). ``ruleset``: as ``League`` takes it."""
    return League(ruleset, store=MemoryStore(pack_after=None))


def evaluate(
    league: League,
    matches: Iterable[Match | Mapping[str, Any]],
    *,
    test_from: str | datetime,
    score_from: str | datetime | None = None,
    stop_at: str | datetime | None = None,
) -> Evaluation:
    """Replay ``matches`` into ``league`` and score the test part one step ahead.

    :param test_from: matches played at or after this time (an ISO-8601 date or
        date-time, no zone meaning UTC, or a datetime) are scored.
    :param score_from: used by tuning: score from here instead (a validation slice).
    :param stop_at: used by tuning: stop before the first match at or after this.
    :raises InputError: a time that is not ISO-8601 (naming the argument), or no match
        to score.
    """
    first = _moment(test_from, "test_from")
    start = first if score_from is None else _moment(score_from, "score_from")
    stop = None if stop_at is None else _moment(stop_at, "stop_at")
    draw_model = league.has_draw_model
    warmup = tests = 0
    items: list[tuple[float, float]] = []
    days: list[str] = []
    three: list[tuple[float, float, float, int]] = []
    three_days: list[str] = []
    with league.batch():
        for item in matches:
            match = item if isinstance(item, Match) else parse_match(item)
            at = match.played_at
            if stop is not None and at >= stop:
                break
            scored = at >= start
            day = at.date().isoformat() if scored else ""
            if scored and len(match.teams) > 2:
                pairs = _pairs(league, match)
                items.extend(pairs)
                days.extend([day] * len(pairs))
            elif scored and draw_model:
                forecast = league.forecast(match.teams, match=match)
                if forecast.win is not None and forecast.draw is not None:
                    outcome = outcome_of(match)
                    three.append((forecast.win[0], forecast.draw, forecast.win[1], outcome))
                    three_days.append(day)
            report = league.record(match)
            if not scored:
                warmup += 1
                continue
            tests += 1
            if len(match.teams) == 2:
                items.append((report.expected[0], 1.0 - 0.5 * outcome_of(match)))
                days.append(day)
        if league.ruleset.period.mode == "batch":
            league.close_period()
    return _summary(items, days, three, three_days, tests=tests, warmup=warmup, start=start)


def outcome_of(match: Match) -> int:
    """A two-sided match's outcome: 0 (side 0 won), 1 (a draw) or 2 (side 1 won)."""
    places = match.places
    return 0 if places[0] < places[1] else 2 if places[0] > places[1] else 1


def _summary(
    items: list[tuple[float, float]],
    days: list[str],
    three: list[tuple[float, float, float, int]],
    three_days: list[str],
    *,
    tests: int,
    warmup: int,
    start: datetime,
) -> Evaluation:
    """The scores of the scored items (an :class:`Evaluation`)."""
    if not items:
        raise InputError(f"no match to score: none is played at or after {start.isoformat()!r}")
    log_loss, brier, accuracy, decisive, n = score(items)
    draws = sum(1 for _, s in items if s == 0.5)
    three_way = None
    if three and any(o == 1 for *_, o in three):
        ll3, rps = score_three_way(three)
        three_way = ThreeWay(n=len(three), log_loss=ll3, rps=rps)
    return Evaluation(
        n=n,
        matches=tests,
        warmup=warmup,
        log_loss=log_loss,
        brier=brier,
        accuracy=accuracy,
        decisive=decisive,
        draws=draws,
        calibration=calibration(items),
        three_way=three_way,
        predictions=tuple(items),
        days=tuple(days),
        outcomes=tuple(three),
        outcome_days=tuple(three_days),
    )


def evaluate_ruleset(
    ruleset: Ruleset,
    matches: Iterable[Match | Mapping[str, Any]],
    *,
    test_from: str | datetime,
    score_from: str | datetime | None = None,
    stop_at: str | datetime | None = None,
    warmup: Iterable[Match | Mapping[str, Any]] | None = None,
) -> Evaluation:
    """:func:`evaluate` of ``ruleset`` in a :func:`scratch_league`, its draw parameters
    first fitted on the matches before the scored part (``score_from``, else
    ``test_from``) when the ruleset asks for it (:mod:`rankcraft.drawfit`); the fit is
    then in the result's ``draw_fit``.

    :param warmup: the matches to fit on, when ``matches`` can be read only once (a
        second reading of the same file); default: ``matches`` (then read into a list).
    """
    from .drawfit import fit_draws, wants_fit

    fit = None
    if wants_fit(ruleset):
        if warmup is None:
            matches = matches if isinstance(matches, Sequence) else list(matches)
            warmup = matches
        before = test_from if score_from is None else score_from
        ruleset, fit = fit_draws(ruleset, warmup, before=before)
    result = evaluate(
        scratch_league(ruleset),
        matches,
        test_from=test_from,
        score_from=score_from,
        stop_at=stop_at,
    )
    return result if fit is None else attrs.evolve(result, draw_fit=fit)


def evaluate_field(
    matches: Iterable[Mapping[str, Any]], path: str, *, test_from: str | datetime
) -> Evaluation:
    """The scores of a published forecast read from each test match (a baseline):
    ``path`` is a dotted field path from the top of a match (``forecast.p_team0_wins``),
    or three paths joined by commas (P(side 0 wins), P(draw), P(side 1 wins)).

    The field holds P(side 0 wins) (a number in [0, 1]: scored as the binary forecast),
    or three probabilities (a list, or the three paths): divided by their sum (a
    bookmaker's implied probabilities 1/odds can be given as they are), scored three
    ways, and as the binary P(win) + ½ P(draw).

    :raises InputError: a two-sided test match without the field or with a value that
        is not a probability (naming the match and the field), or a test match with more
        than two sides.
    """
    first = _moment(test_from, "test_from")
    paths = [p.strip().split(".") for p in path.split(",")]
    if len(paths) not in (1, 3) or not all(all(paths_part) for paths_part in paths):
        raise InputError(f"--baseline-field must be one path or three joined by commas: {path!r}")
    items: list[tuple[float, float]] = []
    days: list[str] = []
    three: list[tuple[float, float, float, int]] = []
    three_days: list[str] = []
    warmup = tests = 0
    for data in matches:
        match = parse_match(data)
        if match.played_at < first:
            warmup += 1
            continue
        tests += 1
        if len(match.teams) != 2:
            raise InputError(
                f"match {match.id!r}: --baseline-field scores two-sided matches only "
                f"({len(match.teams)} sides)"
            )
        values = [field_at(data, keys) for keys in paths]
        if len(values) == 1 and isinstance(values[0], list | tuple):
            values = list(values[0])
        day = match.played_at.date().isoformat()
        outcome = outcome_of(match)
        numbers = _probabilities(values, match.id, path)
        if len(numbers) == 3:
            three.append((numbers[0], numbers[1], numbers[2], outcome))
            three_days.append(day)
            p = numbers[0] + 0.5 * numbers[1]
        else:
            p = numbers[0]
        items.append((p, 1.0 - 0.5 * outcome))
        days.append(day)
    return _summary(items, days, three, three_days, tests=tests, warmup=warmup, start=first)


def _probabilities(values: list[Any], match_id: str, path: str) -> list[float]:
    """The field's probabilities, checked: one in [0, 1], or three, >= 0, divided by
    their sum."""
    good = len(values) in (1, 3) and all(
        not isinstance(v, bool) and isinstance(v, int | float) and math.isfinite(v) and v >= 0
        for v in values
    )
    if good and len(values) == 1 and values[0] <= 1.0:
        return [float(values[0])]
    total = math.fsum(values) if good and len(values) == 3 else 0.0
    if total <= 0.0:
        shown = values[0] if len(values) == 1 else values
        raise InputError(
            f"match {match_id!r}: --baseline-field {path!r} must hold P(side 0 wins) in "
            f"[0, 1] or three probabilities (win, draw, loss): {shown!r}"
        )
    return [v / total for v in values]


def score_three_way(items: Iterable[tuple[float, float, float, int]]) -> tuple[float, float]:
    """(three-way log loss, ranked probability score) of ``(p_win, p_draw, p_loss,
    outcome)`` items, outcome 0 (side 0 won), 1 (draw) or 2 (side 1 won).

    The RPS of one match is ½ [(p_win - o_win)² + (p_win + p_draw - o_win - o_draw)²]:
    Constantinou and Fenton's worked example, a home win forecast (0.8, 0.1, 0.1), scores
    ½ (0.2² + 0.1²):

    >>> round(score_three_way([(0.8, 0.1, 0.1, 0)])[1], 6)
    0.025
    """
    n = 0
    log_loss = rps = 0.0
    for p_win, p_draw, p_loss, outcome in items:
        n += 1
        p = (p_win, p_draw, p_loss)[outcome]
        log_loss -= math.log(min(max(p, _CLIP), 1.0))
        o_win = 1.0 if outcome == 0 else 0.0
        o_not_loss = 1.0 if outcome < 2 else 0.0
        rps += 0.5 * ((p_win - o_win) ** 2 + (p_win + p_draw - o_not_loss) ** 2)
    return (log_loss / n, rps / n) if n else (math.nan, math.nan)


def _pairs(league: League, match: Match) -> list[tuple[float, float]]:
    """Every pair of sides of a free-for-all, predicted before the match, each pair in
    its outcome-blind orientation (:func:`_orientation`)."""
    out = []
    teams = match.teams
    for i in range(len(teams)):
        for j in range(i + 1, len(teams)):
            a, b = _orientation(teams, i, j)
            p = league.predict([teams[a], teams[b]], at=match.played_at)[0]
            out.append((p, pair_score(match.places, a, b)))
    return out


# -- is it better, really? --------------------------------------------------------------

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


def _item_scores(evaluation: Evaluation, score: str) -> tuple[list[float], tuple[str, ...]]:
    """Each scored item's ``score`` and the days of the items."""
    if score in ("log-loss", "brier"):
        out = []
        for p, s in evaluation.predictions:
            if score == "brier":
                out.append((p - s) ** 2)
                continue
            q = min(max(p, _CLIP), 1.0 - _CLIP)
            out.append(-(s * math.log(q) + (1.0 - s) * math.log(1.0 - q)))
        return out, evaluation.days
    return [
        score_three_way([item])[0 if score == "three-way" else 1] for item in evaluation.outcomes
    ], evaluation.outcome_days


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
    if not 1 <= samples <= MAX_SAMPLES:
        raise InputError(f"'samples' must be a whole number in [1, {MAX_SAMPLES}]: {samples!r}")
    if block_days < 1:
        raise InputError(f"'block_days' must be at least 1: {block_days!r}")
    if score not in SCORES:
        raise InputError(f"unknown score {score!r} (one of {', '.join(SCORES)})")
    three = score in ("three-way", "rps")
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
    mine, days = _item_scores(other, score)
    theirs, _ = _item_scores(baseline, score)
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
    rng = random.Random(seed)
    picks = range(k)
    resampled = []
    for _ in range(samples):
        chosen = rng.choices(picks, k=k)
        resampled.append(
            math.fsum(totals[c] for c in chosen) / math.fsum(counts[c] for c in chosen)
        )
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
