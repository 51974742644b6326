"""The scores of a replay's forecasts, each lower-is-better: binary log loss (a draw
counting ½), Brier score, accuracy and calibration; over three-way forecasts, log loss and
the ranked probability score. :class:`Evaluation` holds them for the scored part of a
history (:mod:`rankcraft.evaluate` replays and scores; :mod:`rankcraft.comparison`
compares two), and these names are read from :mod:`rankcraft.evaluate` too.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import attrs

from .errors import InputError
from .jsontext import finite
from .model import Match

_CLIP = 1e-12
BINS = 10
SCORES = ("log-loss", "three-way", "rps", "brier")
"""The scores an evaluation reports, each lower-is-better: binary log loss (a draw
counting ½), three-way log loss, ranked probability score, Brier score."""


@attrs.frozen(kw_only=True)
class DrawFit:
    """What a draw fit chose.

    Attributes:
        slot: the ruleset slot whose params were fitted (``update`` or ``expectation``).
        values: the fitted values by dotted name in the slot's params (``draw_kappa``,
            ``draw_gap``, ``context_rules.0.draw_kappa``, ``draw_margin``).
        matches: two-sided warm-up matches fitted on. draws: draws among them.
        rounds: replays of the warm-up made (1 or ``ROUNDS``).
        before: the warm-up is every match played before this time (ISO text).
    """

    slot: str
    values: dict[str, float]
    matches: int
    draws: int
    rounds: int
    before: str

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready (strict: null for a figure without a value)."""
        return dict(finite(attrs.asdict(self)))


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


def outcome_of(match: Match) -> int:
    """A two-sided match's outcome: 0 (side 0 won), 1 (a draw) or 2 (side 1 won)."""
    places = match.places
    return 0 if places[0] < places[1] else 2 if places[0] > places[1] else 1


def item_scores(evaluation: Evaluation, score: str) -> tuple[list[float], tuple[str, ...]]:
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
