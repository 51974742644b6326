"""Pictures: calibration curves of evaluations and a player's history (needs matplotlib).

Install the extra: ``pip install 'rankcraft[plots]'``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ._files import atomic_file
from .engine import League
from .errors import InputError
from .evaluate import Evaluation
from .extras import missing
from .model import field_of_role


def _pyplot() -> Any:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise missing("plots need", "matplotlib", "plots") from None
    return plt


def require_matplotlib() -> None:
    """Raise the error of a missing matplotlib now: a command asked for a plot checks
    before its work (an evaluation's replays), not after it.

    :raises InputError: matplotlib is not installed (naming the command that installs it).
    """
    _pyplot()


def _save(plt: Any, fig: Any, out: Path) -> None:
    """Write the figure atomically (see ``rankcraft._files``): a failed write leaves an
    existing picture as it was. The format follows the suffix (PNG without one)."""
    try:
        with atomic_file(out) as handle:
            fig.savefig(handle, dpi=110, format=out.suffix.lstrip(".").lower() or "png")
    finally:
        plt.close(fig)


def plot_calibration(evaluations: Mapping[str, Evaluation], path: str | Path) -> Path:
    """Calibration curves (predicted vs observed score, 10 bins) and a histogram of
    the predictions, one colour per ruleset, written as a PNG."""
    plt = _pyplot()
    fig, (curve, hist) = plt.subplots(1, 2, figsize=(11, 4.8))
    curve.plot([0, 1], [0, 1], color="grey", linestyle=":", linewidth=1, label="perfect")
    for name, result in evaluations.items():
        bins = [b for b in result.calibration if b.n]
        curve.plot(
            [b.predicted for b in bins],
            [b.observed for b in bins],
            marker="o",
            label=f"{name} (log loss {result.log_loss:.4f})",
        )
        hist.hist([p for p, _ in result.predictions], bins=20, range=(0, 1), alpha=0.5, label=name)
    curve.set(
        xlabel="predicted score of each item's first side",
        ylabel="observed score (draw = ½)",
        xlim=(0, 1),
        ylim=(0, 1),
        title="Calibration on the test part",
    )
    curve.legend(loc="upper left", fontsize="small")
    hist.set(
        xlabel="predicted score of each item's first side", ylabel="test items", title="Predictions"
    )
    hist.legend(fontsize="small")
    fig.tight_layout()
    out = Path(path)
    _save(plt, fig, out)
    return out


def plot_player(league: League, player: str, path: str | Path) -> Path:
    """A player's skill over time with its uncertainty band (± 2 spreads, where the skill
    has a spread) and, with a rank layer, the rank points; reset moments are marked."""
    plt = _pyplot()
    record = league.player(player)
    rows = list(reversed(league.history(player, limit=None)))
    location, spread = league.display.names  # (on the scale players see: Glicko-2's rating)
    shown = league.display.skill
    if location is None:
        raise InputError(
            f"the skill of ruleset {league.ruleset.name!r} has no location field to plot"
        )
    times, values, lows, highs, points = [], [], [], [], []
    resets = []
    previous_rank = None
    rank_field = (
        field_of_role(league.rank_class, "location") if league.rank_class is not None else None
    )
    for row in rows:
        change = row.report.change(player)
        times.append(row.match.played_at)
        skill = shown(change.skill_after)
        value = skill[location]
        values.append(value)
        width = 2 * skill[spread] if spread else 0.0
        lows.append(value - width)
        highs.append(value + width)
        if rank_field is not None and change.rank_after is not None:
            points.append(getattr(change.rank_after, rank_field))
            if previous_rank is not None and change.rank_before != previous_rank:
                resets.append(row.match.played_at)
            previous_rank = change.rank_after
    if not times:
        raise InputError(f"player {player!r} has no recorded match to plot")
    fig, axis = plt.subplots(figsize=(10, 4.8))
    axis.plot(times, values, color="tab:blue", label=f"skill ({location})")
    if spread:
        axis.fill_between(times, lows, highs, color="tab:blue", alpha=0.2, label=f"± 2 {spread}")
    axis.set_ylabel(location)
    if points:
        twin = axis.twinx()
        twin.step(times, points, where="post", color="tab:orange", label="rank points")
        twin.set_ylabel(rank_field or "rank")
        for moment in resets:
            axis.axvline(moment, color="grey", linewidth=0.6, linestyle="--")
        twin.legend(loc="lower right", fontsize="small")
    axis.legend(loc="upper left", fontsize="small")
    axis.set_title(
        f"{player}: {record.matches} matches ({league.ruleset.name})"
        + (f", {len(resets)} resets marked" if resets else "")
    )
    fig.autofmt_xdate()
    fig.tight_layout()
    out = Path(path)
    _save(plt, fig, out)
    if math.isnan(values[-1]):  # pragma: no cover - guarded by the engine
        raise InputError("non-finite skill in history")
    return out
