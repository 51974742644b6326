"""The ruleset's ``[history]`` table: what a league does with late matches, and how a
whole-history model (the ``[fit]`` slot) refits (docs/rulesets.md, docs/history-models.md)."""

from __future__ import annotations

import attrs

from .validators import whole, within


@attrs.frozen(kw_only=True)
class FitLimits:
    """How far a whole-history model's refit goes (:func:`rankcraft.hookspecs.rankcraft_fit`).

    Attributes:
        tolerance: stop when no skill moves by more than this in a sweep (the skill's
            own units), > 0.
        iterations: the most sweeps of one refit, ≥ 1.
        window_days: leave out matches older than this many days before the refit's
            time; 0: keep every match.
    """

    tolerance: float = 1e-6
    iterations: int = 30
    window_days: float = 0.0


@attrs.frozen(kw_only=True)
class HistorySpec:
    """``[history]``: ``late`` is ``"refuse"`` (default: a match earlier than one of its
    players' latest is refused) or ``"rerate"`` (it takes its place in time and every
    later match is rated again; docs/corrections.md). ``tolerance``, ``iterations`` and
    ``window_days`` bound the refits of a ``[fit]`` slot (:class:`FitLimits`; they are
    refused in a ruleset without one)."""

    late: str = attrs.field(default="refuse", validator=attrs.validators.in_(("refuse", "rerate")))
    tolerance: float = attrs.field(default=1e-6, validator=within(1e-15, 1.0))
    iterations: int = attrs.field(default=30, validator=whole(1, 100_000))
    window_days: float = attrs.field(default=0.0, validator=within(0.0, 1e6))

    def limits(self) -> FitLimits:
        """The refit limits this table sets."""
        return FitLimits(
            tolerance=self.tolerance, iterations=self.iterations, window_days=self.window_days
        )
