"""What a ruleset's model says about a match before it is played (docs/forecasts.md).

:meth:`rankcraft.League.forecast` returns a :class:`Forecast`: each side's expected
score, and, where the model can tell them, the probability of each outcome. The numbers
come only from the plugins' hooks:

- the expectation hook (``rankcraft_expectation``) asked about **every pair** of sides
  gives each side's expected score against each other side (a win 1, a draw ½);
- the optional outcomes hook (``rankcraft_outcomes``) gives, for two sides, P(win),
  P(draw) and P(loss) separately;
- for more than two sides the pairwise expectations are read as a **Plackett-Luce**
  model (below): each side's probability of finishing first, of every place, and the
  most likely finishing order.

The Plackett-Luce reading. Fit one strength λᵢ per side to the pairwise log-odds
Lᵢⱼ = ln(pᵢⱼ / pⱼᵢ) by least squares: with every pair present the solution is the
row mean, λᵢ = (1/n) Σⱼ Lᵢⱼ (Σ λ = 0). For a Bradley-Terry model — the logistic expected
score of Elo, or Glicko-2 between equally certain players — the fit is exact
(λᵢ − λⱼ = Lᵢⱼ). Plackett-Luce gives side i the probability e^λᵢ / Σₖ e^λₖ of finishing
first, and is the same model as independent performances Xᵢ = λᵢ + Gᵢ with Gᵢ standard
Gumbel (Luce, "Individual Choice Behavior", 1959; Yellott, "The relationship between
Luce's choice axiom, Thurstone's theory of comparative judgment, and the double
exponential distribution", 1977): the finishing order is the order of the Xᵢ. Place
probabilities integrate that reading numerically: P(i is k-th) = ∫ fᵢ(x) · P(exactly
k − 1 others beat x) dx, the inner probability a Poisson-binomial over the other sides.

>>> f = finishing([[0.0, 0.75], [0.25, 0.0]])
>>> [round(p, 6) for p in f.win], [[round(p, 6) for p in row] for row in f.places]
([0.75, 0.25], [[0.75, 0.25], [0.25, 0.75]])
>>> f = finishing([[0.0, 0.5, 0.9], [0.5, 0.0, 0.9], [0.1, 0.1, 0.0]])
>>> [round(p, 4) for p in f.win], f.order
([0.4737, 0.4737, 0.0526], (0, 1, 2))
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, Literal

import attrs

from .errors import PluginError
from .model import State

__all__ = ["Finishing", "Forecast", "finishing", "forecast_states"]

_TINY = 1e-300
"""A pairwise probability of 0 counts as this in its log-odds."""
_STEP = 0.2
"""Grid step of the place integral, in units of the Gumbel scale (error far below 1e-9)."""
_BELOW, _ABOVE = 5.0, 32.0
"""The grid spans [min λ - 5, max λ + 32]: beyond it every Gumbel density is below 1e-13."""


@attrs.frozen(kw_only=True)
class Forecast:
    """The model's forecast of one match.

    Attributes:
        expected_score: per side, its expected result, in [0, 1]: a win counts 1, a draw ½,
            a loss 0; with more than two sides, the mean over every other side (a round
            robin, as a free-for-all is rated). Two sides' expected scores sum to 1. This is
            a win probability only where the model says draws cannot happen.
        win: per side, the probability of finishing first (alone), or null when the model
            cannot tell: two sides whose expectation plugin has no draw model
            (``rankcraft_outcomes``, or it answers None for these states). With more than
            two sides, the Plackett-Luce reading of the pairwise expected scores (ties are
            not modelled); these sum to 1.
        draw: two sides only, with a draw model: the probability of a draw; else null.
        places: more than two sides only: ``places[i][k]``, the probability that side i
            finishes in place k + 1 (Plackett-Luce); every row and every column sums to 1.
            Null for two sides (``win`` and ``draw`` say it all).
        order: side indexes in the predicted finishing order, best first: the most likely
            order (by ``win`` for more than two sides, else by ``expected_score``), ties by
            index.
        method: how ``win`` was found: ``"outcomes"`` (two sides, the plugin's draw model),
            ``"expected-score"`` (two sides without one: ``win`` is null),
            ``"plackett-luce"`` (more than two sides).
    """

    expected_score: tuple[float, ...]
    win: tuple[float, ...] | None
    draw: float | None
    places: tuple[tuple[float, ...], ...] | None
    order: tuple[int, ...]
    method: Literal["outcomes", "expected-score", "plackett-luce"]

    @property
    def probabilities(self) -> tuple[float, ...]:
        """What :meth:`rankcraft.League.predict` gives: one number per side, summing to 1:
        the expected scores of two sides, the probabilities of finishing first of more."""
        if len(self.expected_score) == 2 or self.win is None:
            return self.expected_score
        return self.win

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready (every number finite; tuples as lists)."""
        return {
            "expected_score": list(self.expected_score),
            "win": None if self.win is None else list(self.win),
            "draw": self.draw,
            "places": None if self.places is None else [list(row) for row in self.places],
            "order": list(self.order),
            "method": self.method,
        }


@attrs.frozen(kw_only=True)
class Finishing:
    """The Plackett-Luce reading of a matrix of pairwise probabilities.

    Attributes:
        strength: λ per side (natural log-odds units, summing to 0).
        win: P(finishing first) per side, summing to 1.
        places: ``places[i][k]`` = P(side i finishes in place k + 1).
        order: side indexes by strength, best first (the most likely order), ties by index.
    """

    strength: tuple[float, ...]
    win: tuple[float, ...]
    places: tuple[tuple[float, ...], ...]
    order: tuple[int, ...]


def _log_odds(p: float, q: float) -> float:
    """ln(p / q) for p = P(i ahead of j) and q = P(j ahead of i): each read at its own
    small end (so 1e-30 against 1 - 1e-30 stays exact), a 0 counting as 1e-300."""
    return math.log(max(p, _TINY)) - math.log(max(q, _TINY))


def finishing(pairwise: Sequence[Sequence[float]], *, places: bool = True) -> Finishing:
    """Finishing probabilities from ``pairwise[i][j]`` = P(side i finishes ahead of side j)
    (the diagonal is ignored; ``pairwise[j][i]`` should be ``1 - pairwise[i][j]``, and the
    two are averaged). Two sides give back their pairwise probability exactly.

    :param pairwise: an n-by-n matrix of probabilities, n ≥ 2.
    :param places: integrate the place probabilities (O(n²) per grid point); without,
        ``places`` is empty.
    """
    n = len(pairwise)
    if n == 2:  # exact: no fit, no integral
        p = pairwise[0][1]
        half = 0.5 * _log_odds(p, pairwise[1][0])
        order = (0, 1) if p >= 0.5 else (1, 0)
        return Finishing(
            strength=(half, -half),
            win=(p, 1.0 - p),
            places=((p, 1.0 - p), (1.0 - p, p)),
            order=order,
        )
    logits = [[0.0] * n for _ in range(n)]
    for i in range(n):
        for j in range(i + 1, n):
            value = _log_odds(pairwise[i][j], pairwise[j][i])
            logits[i][j], logits[j][i] = value, -value
    strength = tuple(math.fsum(row) / n for row in logits)
    top = max(strength)
    weights = [math.exp(s - top) for s in strength]
    total = math.fsum(weights)
    win = tuple(w / total for w in weights)
    ranked = tuple(sorted(range(n), key=lambda i: (-strength[i], i)))
    return Finishing(
        strength=strength, win=win, places=_places(strength) if places else (), order=ranked
    )


def _places(strength: Sequence[float]) -> tuple[tuple[float, ...], ...]:
    """P(side i in place k) under independent Gumbel performances λᵢ + Gᵢ, by the
    trapezoid rule on a grid of performance levels x (exact to ~1e-12 for these smooth,
    fast-decaying integrands)."""
    n = len(strength)
    sums = [[0.0] * n for _ in range(n)]
    for x, weight in _grid(strength):
        # below[j] = P(X_j < x) = exp(-e^-(x - λj)); density f_j(x) = e^-(x-λj) · below[j]
        tails = [math.exp(-(x - s)) for s in strength]
        below = [math.exp(-t) for t in tails]
        above = [1.0 - b for b in below]
        # the generating polynomial of how many sides finish above x: Π (below + above·z)
        poly = [1.0]
        for b, a in zip(below, above, strict=True):
            nxt = [0.0] * (len(poly) + 1)
            for k, c in enumerate(poly):
                nxt[k] += c * b
                nxt[k + 1] += c * a
            poly = nxt
        for i in range(n):
            density = tails[i] * below[i]
            if density < 1e-300:
                continue
            others = _divide(poly, below[i], above[i])
            scale = weight * density
            row = sums[i]
            for k in range(n):
                row[k] += scale * others[k]
    out = []
    for row in sums:
        total = math.fsum(row)
        out.append(tuple(v / total for v in row) if total > 0 else tuple(row))
    return tuple(out)


def _grid(strength: Sequence[float]) -> list[tuple[float, float]]:
    """Trapezoid nodes and weights covering [λ - 5, λ + 32] of every side (where its
    density is above 1e-13), merged where they overlap: sides far apart (a hopeless
    entrant) cost a few more nodes, not a grid across the whole gap."""
    spans = sorted((s - _BELOW, s + _ABOVE) for s in strength)
    merged: list[list[float]] = []
    for low, high in spans:
        if merged and low <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], high)
        else:
            merged.append([low, high])
    nodes = []
    for low, high in merged:
        steps = math.ceil((high - low) / _STEP)
        for m in range(steps + 1):
            nodes.append((low + m * _STEP, 0.5 * _STEP if m in (0, steps) else _STEP))
    return nodes


def _divide(poly: Sequence[float], b: float, a: float) -> list[float]:
    """``poly / (b + a·z)``, exactly divisible, the stable way round (divide by the
    larger coefficient, from the end it leads)."""
    n = len(poly) - 1
    out = [0.0] * n
    if b >= a:
        carry = 0.0
        for k in range(n):
            out[k] = carry = (poly[k] - a * carry) / b if k else poly[0] / b
    else:
        carry = 0.0
        for k in range(n - 1, -1, -1):
            out[k] = carry = (poly[k + 1] - b * carry) / a if k < n - 1 else poly[n] / a
    return [min(max(v, 0.0), 1.0) for v in out]


def _checked_pair(expected: Sequence[float]) -> tuple[float, float]:
    out = tuple(float(p) for p in expected)
    if len(out) != 2 or not all(0.0 <= p <= 1.0 for p in out) or abs(sum(out) - 1.0) > 1e-9:
        raise PluginError(
            f"expectation plugin returned {out!r} for 2 sides "
            "(one probability per side, summing to 1)"
        )
    return out[0], out[1]


def checked_outcomes(outcomes: Sequence[float] | None) -> tuple[float, float, float] | None:
    """The outcomes hook's answer, refused unless None or three probabilities in [0, 1]
    summing to 1."""
    if outcomes is None:
        return None
    out = tuple(float(p) for p in outcomes)
    if len(out) != 3 or not all(0.0 <= p <= 1.0 for p in out) or abs(sum(out) - 1.0) > 1e-9:
        raise PluginError(
            f"outcomes plugin returned {out!r} (P(side 0 wins), P(draw), P(side 1 wins), "
            "each in [0, 1], summing to 1)"
        )
    return out[0], out[1], out[2]


def _pair_home(home: int | None, i: int, j: int) -> int | None:
    return 0 if home == i else 1 if home == j else None


def forecast_states(
    states: Sequence[State],
    home: int | None,
    expect: Callable[[Sequence[State], int | None], Sequence[float]],
    outcomes: Callable[[Sequence[State], int | None], Sequence[float] | None] | None = None,
    *,
    places: bool = True,
) -> Forecast:
    """The forecast of a match between sides standing as ``states`` (one per side, as
    ``rankcraft_aggregate`` gives them), from the expectation and outcomes hooks.

    :param home: the index of the side at home, or None.
    :param places: integrate the place probabilities of more than two sides (else
        ``places`` is null).
    """
    n = len(states)
    if n == 2:
        score = _checked_pair(expect(states, home))
        three = None if outcomes is None else checked_outcomes(outcomes(states, home))
        order = (0, 1) if score[0] >= score[1] else (1, 0)
        if three is None:
            return Forecast(
                expected_score=score,
                win=None,
                draw=None,
                places=None,
                order=order,
                method="expected-score",
            )
        w, d, l_ = three
        return Forecast(
            expected_score=score,
            win=(w, l_),
            draw=d,
            places=None,
            order=order,
            method="outcomes",
        )
    return plackett_luce(pairwise_of(states, home, expect), places=places)


def pairwise_of(
    states: Sequence[State],
    home: int | None,
    expect: Callable[[Sequence[State], int | None], Sequence[float]],
) -> list[list[float]]:
    """``pairwise[i][j]``: the expected score of side ``i`` against side ``j`` alone
    (``expect``, the expectation hook, asked of both orientations of every pair: each
    probability read at its own small end, since the complement 1 - p of a near-certain
    pair has lost the digits its log-odds need); the diagonal 0."""
    n = len(states)
    pairwise = [[0.0] * n for _ in range(n)]
    for i in range(n):
        for j in range(n):
            if i != j:
                pair = [states[i], states[j]]
                pairwise[i][j] = _checked_pair(expect(pair, _pair_home(home, i, j)))[0]
    return pairwise


def plackett_luce(pairwise: Sequence[Sequence[float]], *, places: bool = True) -> Forecast:
    """The forecast of more than two sides from their pairwise expected scores
    (:func:`pairwise_of`): the round robin's expected scores and the Plackett-Luce
    reading (:func:`finishing`). Plain numbers in, no plugin asked: the service runs it
    in a worker process (its place integral is O(n²) per grid point)."""
    n = len(pairwise)
    reading = finishing(pairwise, places=places)
    round_robin = tuple(
        math.fsum(0.5 * (pairwise[i][j] + 1.0 - pairwise[j][i]) for j in range(n) if j != i)
        / (n - 1)
        for i in range(n)
    )
    return Forecast(
        expected_score=round_robin,
        win=reading.win,
        draw=None,
        places=reading.places if places else None,
        order=reading.order,
        method="plackett-luce",
    )
