"""The ``elo`` plugin's draw models: the three outcomes and the expected score of a gap
(``draw``), and the fit of the draw parameters on a warm-up (``draw_fit``, by
``_drawfit``'s maximum likelihood)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import attrs

from rankcraft import Match

from ._drawfit import fit_davidson, fit_ordered_logit
from ._elo_context import context_rule
from ._matchup import davidson, logistic10, ordered_logit

if TYPE_CHECKING:
    from .elo import EloParams

FIT_MIN_MATCHES = 200
"""Warm-up matches a context rule needs for its own draw parameters (``draw_fit``)."""


def gap_of(draw: str, win: float, loss: float) -> float | None:
    """The gap (in units of the scale) a two-sided forecast was read from, or None where
    the probabilities have lost it (a near-certain result)."""
    if not (1e-12 < win < 1.0 - 1e-12 and 1e-12 < loss < 1.0 - 1e-12):
        return None
    if draw == "davidson":
        return math.log10(win / loss)
    return 0.5 * (math.log10(win / (1.0 - win)) - math.log10(loss / (1.0 - loss)))


def outcome_probabilities(
    params: EloParams, gap: float, match: Match | None = None
) -> tuple[float, float, float]:
    """(P(win), P(draw), P(loss)) of a side ``gap`` rating points ahead (home edge
    included) under the params' draw model (``"none"``: no draws, Elo's curve), with
    the draw parameters of the match's context rule where it sets them."""
    rule = context_rule(params, match) if params.draw != "none" else None
    if params.draw == "davidson":
        kappa = params.draw_kappa if rule is None or rule.draw_kappa is None else rule.draw_kappa
        return davidson(gap, params.scale, kappa, params.draw_gap)
    if params.draw == "ordered-logit":
        band = params.draw_margin if rule is None or rule.draw_margin is None else rule.draw_margin
        return ordered_logit(gap, params.scale, band)
    p = logistic10(-gap / params.scale)
    return p, 0.0, 1.0 - p


def expected_of_gap(params: EloParams, gap: float, match: Match | None = None) -> float:
    """The expected score (P(win) + P(draw) / 2) of a side ``gap`` rating points ahead."""
    if params.draw == "none":
        return logistic10(-gap / params.scale)
    win, draw, _ = outcome_probabilities(params, gap, match)
    return win + 0.5 * draw


def fit_draws(
    params: EloParams, observations: Sequence[tuple[float, float, float, int, Match | None]]
) -> tuple[EloParams, dict[str, float]]:
    """:meth:`EloParams.fit_draws <rankcraft.plugins.elo.EloParams.fit_draws>`: the params
    with the draw model's parameters fitted to ``observations``, and the fitted values."""
    if params.draw == "none" or params.draw_fit == "none":
        return params, {}
    items, fitted = _grouped(params, observations)
    if not items:
        return params, {}
    top: dict[str, Any]
    if params.draw == "davidson":
        kappas, rate = fit_davidson(
            items,
            groups=len(fitted),
            kappas=[params.draw_kappa] * len(fitted),
            rate=params.draw_gap,
        )
        top, own = {"draw_kappa": kappas[0], "draw_gap": rate}, ("draw_kappa", kappas)
    else:
        bands = [m * params.scale for m in fit_ordered_logit(items, groups=len(fitted))]
        top, own = {"draw_margin": bands[0]}, ("draw_margin", tuple(bands))
    values = dict(top)
    new_rules = []
    for number, rule in enumerate(params.context_rules):
        changes: dict[str, Any] = {"draw_kappa": None, "draw_margin": None}
        if number + 1 in fitted:
            found = own[1][fitted.index(number + 1)]
            changes[own[0]] = values[f"context_rules.{number}.{own[0]}"] = found
        new_rules.append(attrs.evolve(rule, **changes))
    top["context_rules"] = tuple(new_rules)
    return attrs.evolve(params, **top), values


def _grouped(
    params: EloParams, observations: Sequence[tuple[float, float, float, int, Match | None]]
) -> tuple[list[tuple[float, int, int]], list[int]]:
    """The fit's items ``(gap / scale, outcome, group)`` and the groups fitted on their
    own (0, the params' own, then 1 + the index of each context rule with enough warm-up
    matches, some of them draws, under ``draw_fit = "context"``); an item of a rule not
    fitted on its own counts in group 0."""
    rules = params.context_rules if params.draw_fit == "context" else ()
    items = []
    for win, _, loss, outcome, match in observations:
        u = gap_of(params.draw, win, loss)
        if u is not None:
            rule = context_rule(params, match) if rules else None
            items.append((u, outcome, 0 if rule is None else 1 + rules.index(rule)))
    fitted = [0]  # groups fitted on their own: enough matches, some of them draws
    for group in range(1, len(rules) + 1):
        mine = [o for _, o, g in items if g == group]
        if len(mine) >= FIT_MIN_MATCHES and 1 in mine:
            fitted.append(group)
    index = {
        group: fitted.index(group) if group in fitted else 0 for group in range(len(rules) + 1)
    }
    return [(u, o, index[g]) for u, o, g in items], fitted
