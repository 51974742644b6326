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
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

import attrs

from .comparison import BLOCK_DAYS, MAX_SAMPLES, SAMPLES, Difference, compare, differences
from .drawfit import fit_draws, wants_fit
from .engine import League
from .errors import DuplicateMatchError, InputError
from .io import parse_match, parse_time
from .model import Match, pair_score
from .predictions import Predictions
from .scores import (
    BINS,
    SCORES,
    CalibrationBin,
    Evaluation,
    ThreeWay,
    calibration,
    outcome_of,
    score,
    score_three_way,
)
from .scratch import scratch_league

if TYPE_CHECKING:
    from .ruleset import Ruleset

__all__ = [
    "BINS",
    "BLOCK_DAYS",
    "DRAWS_WARNED",
    "MAX_SAMPLES",
    "SAMPLES",
    "SCORES",
    "CalibrationBin",
    "Difference",
    "Evaluation",
    "ThreeWay",
    "calibration",
    "compare",
    "differences",
    "evaluate",
    "evaluate_field",
    "evaluate_ruleset",
    "field_at",
    "field_warning",
    "outcome_of",
    "score",
    "score_three_way",
    "scratch_league",
    "with_home",
]


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
    scored = _Scored(league, start)
    expected: list[tuple[float, ...]] = []
    league.stream(_until(matches, stop), expected=expected, observe=scored.observe)
    return scored.summary(expected)


def _until(matches: Iterable[Match | Mapping[str, Any]], stop: datetime | None) -> Iterator[Match]:
    """The matches, validated, up to the first one at or after ``stop``."""
    for item in matches:
        match = item if isinstance(item, Match) else parse_match(item)
        if stop is not None and match.played_at >= stop:
            return
        yield match


class _Scored:
    """What :func:`evaluate` scores, gathered by the rating loop's observer (before each
    match is rated, its season events run): the pairs of a free-for-all and the
    three-way forecast of a two-sided match, from the rows the match meets; a two-sided
    match's expected score is the one the loop gives (its report's)."""

    def __init__(self, league: League, start: datetime) -> None:
        self.model = league.skill_model
        self.draw_model = league.has_draw_model
        self.start = start
        self.warmup = self.tests = 0
        self.items: list[tuple[float, float]] = []
        self.days: list[str] = []
        self.three: list[tuple[float, float, float, int]] = []
        self.three_days: list[str] = []
        self.slots: list[tuple[int, int]] = []  # (an item to fill, its match's position)
        self.ids: set[str] = set()

    def observe(self, match: Match, rows: Callable[[str], Any]) -> None:
        """The rating loop's observer (:data:`rankcraft.loop.Observe`)."""
        if match.id in self.ids:  # (the loop keeps no id: a scored replay refuses them)
            raise DuplicateMatchError(
                f"match id {match.id!r} is already recorded", match_id=match.id
            )
        self.ids.add(match.id)
        position = self.warmup + self.tests
        at = match.played_at
        if at < self.start:
            self.warmup += 1
            return
        self.tests += 1
        day = at.date().isoformat()
        if len(match.teams) > 2:
            pairs = _pairs(self.model, match, rows)
            self.items.extend(pairs)
            self.days.extend([day] * len(pairs))
            return
        if self.draw_model:
            forecast = self.model.meeting(match, rows)
            if forecast.win is not None and forecast.draw is not None:
                outcome = outcome_of(match)
                self.three.append((forecast.win[0], forecast.draw, forecast.win[1], outcome))
                self.three_days.append(day)
        self.slots.append((len(self.items), position))
        self.items.append((math.nan, 1.0 - 0.5 * outcome_of(match)))
        self.days.append(day)

    def summary(self, expected: list[tuple[float, ...]]) -> Evaluation:
        """The scores, each two-sided match's item given the loop's expected score."""
        items = self.items
        for item, position in self.slots:
            items[item] = (expected[position][0], items[item][1])
        return _summary(
            items,
            self.days,
            self.three,
            self.three_days,
            tests=self.tests,
            warmup=self.warmup,
            start=self.start,
        )


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


DRAWS_WARNED = 0.01
"""The share of drawn test matches from which a one-number ``--baseline-field`` is warned
of (:func:`field_warning`): below it (the NFL's 9 ties in 2,939 games) a P(win) read
as an expected score moves the scores little."""


def field_warning(result: Evaluation, path: str) -> str | None:
    """The warning for a published forecast given as one number per match on a test part
    with draws (at least :data:`DRAWS_WARNED` of the scored items), or None.

    One number is scored as side 0's expected score, P(win) + ½ P(draw): a bookmaker's or
    a model's P(side 0 wins) alone, read so, counts every draw it forecast as a loss and
    scores the forecast much worse than it is. Three probabilities are scored three ways
    and need no warning.

    :param result: :func:`evaluate_field`'s evaluation of ``path``.
    """
    if result.outcomes or not result.n or result.draws < DRAWS_WARNED * result.n:
        return None
    return (
        f"--baseline-field {path!r} is one number per match, scored as side 0's expected "
        f"score (P(win) + ½ P(draw)), and {result.draws:,} of the {result.n:,} test matches "
        f"are draws ({result.draws / result.n:.1%}): if it holds P(side 0 wins) alone, the "
        "published forecast is scored wrongly (much worse than it is); give its three "
        "probabilities, win, draw and loss, as three paths joined by commas "
        "(--baseline-field 'meta.p_win,meta.p_draw,meta.p_loss') or a path to a list of three"
    )


def _probabilities(values: list[Any], match_id: str, path: str) -> list[float]:
    """The field's probabilities, checked: one in [0, 1], or three, >= 0, divided by
    their sum."""
    good = len(values) in (1, 3) and all(
        not isinstance(v, bool) and isinstance(v, int | float) and math.isfinite(v) and v >= 0
        for v in values
    )
    if good and len(values) == 1 and values[0] <= 1.0:
        return [float(values[0])]
    try:
        total = math.fsum(values) if good and len(values) == 3 else 0.0
    except OverflowError:  # (three finite numbers whose sum is not, 1e308 each)
        total = math.inf
    if not 0.0 < total < math.inf:
        shown = values[0] if len(values) == 1 else values
        raise InputError(
            f"match {match_id!r}: --baseline-field {path!r} must hold P(side 0 wins) in "
            f"[0, 1] or three probabilities (win, draw, loss): {shown!r}"
        )
    return [v / total for v in values]


def _pairs(
    model: Predictions, match: Match, rows: Callable[[str], Any]
) -> list[tuple[float, float]]:
    """Every pair of sides of a free-for-all, predicted before the match from the rows it
    meets (each player's skill decayed to its time), each pair in its outcome-blind
    orientation (:func:`_orientation`)."""
    out = []
    teams, at = match.teams, match.played_at
    for i in range(len(teams)):
        for j in range(i + 1, len(teams)):
            a, b = _orientation(teams, i, j)
            states = model.states_in([teams[a], teams[b]], rows, at)
            p = float(model.expectation(states, None)[0])
            out.append((p, pair_score(match.places, a, b)))
    return out
