"""The time-weighted Dixon-Coles fit (``rankcraft.plugins._goals_fit``) one step ahead on
international football, against the shipped online ``football-goals`` ruleset.

Protocol of ``shared/data/splits.json`` (test part: ``played_at >= 2018-01-01``): for
every match day of the test part, the fit of all earlier matches (refitted from the
previous day's solution, at that day) forecasts the day's matches (P(win), P(draw),
P(loss) from the ``goals`` plugin's score model); then they are added. The home side is
``meta.home_team_index`` (neutral when null), the home-advantage context the
``football-goals`` ruleset's (friendlies have their own), the starting values and prior
centres its params. ``football-goals`` is replayed by ``rankcraft.evaluate.evaluate_ruleset``
on the same matches; the paired differences in three-way log loss and RPS have 95%
block-bootstrap intervals (``rankcraft.evaluate.compare``: weeks, 2,000 resamples, seed 0).

ξ (per day), the prior's σ and the goal cap are chosen on the warm-up part only: the
same one-step-ahead run scored on 2016-2017 (history from 1872), best three-way log loss
on a small grid (``--tune``; two processes). The test part is used once, to score the
chosen settings.

    python benchmarks/goals_fit.py [--tune] [--xi 0.0005] [--prior-sd 2.0] [--goal-cap 6]
        [--parts 4] [--tol 0.005]

``--parts N`` runs the test part as N consecutive pieces side by side, each from a cold
fit at its first day (the fit a warm start reaches, to the tolerance).

Measured 2026-11-28 (cutoff 0.05, tol 0.005, over-relaxation 1.3; a machine loaded ~5
times over its 2 cores, so wall times are long). Warm-up, 3-way log loss / RPS on
2016-2017: ξ 0.006: 0.955-0.960; ξ 0.003: 0.919-0.932; ξ 0.0015: σ 0.5 0.9107, σ 1
0.8971 (cap 6) / 0.8995 (no cap); ξ 0.0005 (cap 6): σ 1 0.8871, σ 2 **0.8868** / 0.1723
(chosen; ξ 0.00075 was not run). Test part (8,220 matches):

| forecast | 3-way log loss | RPS |
|---|---|---|
| goals fit, ξ 0.0005, σ 2, cap 6 | 0.8566 | 0.1662 |
| goals fit, ξ 0.0015, σ 1, cap 6 (the first grid's choice) | 0.8703 | 0.1703 |
| football-goals | 0.8618 | 0.1678 |

Paired, goals fit (ξ 0.0005) − football-goals: three-way −0.0052 [−0.0093, −0.0013], RPS
−0.0015 [−0.0026, −0.0005] (binary log loss −0.0034 [−0.0065, −0.0004]); with ξ 0.0015:
+0.0085 [+0.0045, +0.0126], RPS +0.0025 [+0.0015, +0.0036]. The ξ 0.0005 run: window
about 15,600 matches, 3.7 sweeps a refit, 0.53 s of CPU per match day (1,096 days: 573 s
of CPU in 4 pieces, 905 s wall on the loaded machine); ``football-goals`` replays the
whole file in 5-40 s.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import time
from concurrent.futures import ProcessPoolExecutor
from datetime import date
from pathlib import Path
from typing import Any

import rankcraft
from rankcraft.evaluate import Evaluation, compare, evaluate_field, evaluate_ruleset, with_home
from rankcraft.io import read_match_dicts
from rankcraft.plugins._goals_fit import GoalsFit, context_of
from rankcraft.plugins.goals import GoalsParams
from rankcraft.scores import score_three_way

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
NAME = "intl_football_1872_2026.jsonl.gz"
HOME = "meta.home_team_index"
RULESET = "football-goals"
FITTED = "football-goals-fit"
TUNE_FROM, TUNE_TO = "2016-01-01", "2018-01-01"
GRID = {"xi": (0.0015, 0.003, 0.006), "prior_sd": (0.5, 1.0), "goal_cap": (6.0, math.inf)}
CUTOFF = 0.05
"""Matches weighing less than this (φ) leave the window: ln(20) / ξ days (2.7 years at ξ
0.003 a day)."""
TOL = 5e-3
"""A refit stops when no parameter moved more than this in a sweep (log-rate units)."""


def params() -> GoalsParams:
    """The ``football-goals`` params: the fit's starting values and prior centres."""
    out = rankcraft.load_ruleset(RULESET).update.params
    assert isinstance(out, GoalsParams)
    return out


def outcome(d: dict[str, Any]) -> int:
    a, b = d["scores"]
    return 0 if a > b else 1 if a == b else 2


def one_step(
    dicts: list[dict[str, Any]], start: str, stop: str, settings: dict[str, float], tol: float
) -> tuple[list[tuple[float, float, float]], dict[str, float]]:
    """The forecasts of the matches played in [start, stop), each from the fit of every
    earlier match refitted at its day, and the run's figures (seconds, sweeps, window)."""
    p = params()
    fit = GoalsFit(
        p,
        xi=settings["xi"],
        prior_sd=settings["prior_sd"],
        goal_cap=settings["goal_cap"],
        cutoff=CUTOFF,
        tol=tol,
        relax=1.3,
        max_sweeps=200,
    )
    out: list[tuple[float, float, float]] = []
    started, cpu = time.perf_counter(), time.process_time()
    sweeps = days = windows = 0
    first = 0.0
    by_day = itertools.groupby(dicts, key=lambda d: str(d["played_at"])[:10])
    for day, group in by_day:
        if day >= stop:
            break
        matches = list(group)
        if day >= start:
            began = time.perf_counter()
            report = fit.fit(date.fromisoformat(day).toordinal())
            first = first or time.perf_counter() - began
            sweeps, days, windows = sweeps + report.sweeps, days + 1, windows + report.matches
            for d in matches:
                context = context_of(p, d["meta"].get("tournament"))
                home = d.get("home")
                out.append(fit.outcomes(d["teams"][0][0], d["teams"][1][0], home, context))
        for d in matches:
            fit.add(
                date.fromisoformat(day).toordinal(),
                d["teams"][0][0],
                d["teams"][1][0],
                d["scores"][0],
                d["scores"][1],
                d.get("home"),
                context_of(p, d["meta"].get("tournament")),
            )
    seconds = time.perf_counter() - started
    figures = {
        "seconds": seconds,
        "cpu_seconds": time.process_time() - cpu,
        "first_fit_seconds": first,
        "days": days,
        "sweeps_per_day": sweeps / max(days, 1),
        "window": windows / max(days, 1),
        "base": fit.base,
        "rho": fit.rho,
        "home": fit.home[0],
        "home_friendly": fit.home[1],
    }
    return out, figures


def scored(
    dicts: list[dict[str, Any]], start: str, stop: str, forecasts: list[tuple[float, float, float]]
) -> tuple[float, float]:
    """(three-way log loss, RPS) of the forecasts of the matches in [start, stop)."""
    played = [d for d in dicts if start <= str(d["played_at"])[:10] < stop]
    return score_three_way(
        (pw, pd, pl, outcome(d)) for (pw, pd, pl), d in zip(forecasts, played, strict=True)
    )


def _trial(job: tuple[str, dict[str, float]]) -> tuple[dict[str, float], float, float, float]:
    path, settings = job
    dicts = load(Path(path))
    forecasts, figures = one_step(dicts, TUNE_FROM, TUNE_TO, settings, tol=TOL)
    ll3, rps = scored(dicts, TUNE_FROM, TUNE_TO, forecasts)
    return settings, ll3, rps, figures["seconds"]


def _piece(
    job: tuple[str, str, str, dict[str, float], float],
) -> tuple[list[tuple[float, float, float]], dict[str, float]]:
    path, start, stop, settings, tol = job
    return one_step(load(Path(path)), start, stop, settings, tol)


def test_run(
    path: Path, dicts: list[dict[str, Any]], test_from: str, settings: dict[str, float], args: Any
) -> list[tuple[float, float, float]]:
    """The test part's forecasts, in ``args.parts`` consecutive pieces of as many match
    days run side by side (each from a cold fit at its first day: the same fit a warm
    start reaches, to the tolerance)."""
    days = sorted({str(d["played_at"])[:10] for d in dicts if str(d["played_at"]) >= test_from})
    cuts = [days[len(days) * k // args.parts] for k in range(args.parts)] + ["9999"]
    jobs = [(str(path), a, b, settings, args.tol) for a, b in itertools.pairwise(cuts)]
    started = time.perf_counter()
    with ProcessPoolExecutor(args.parts) as pool:
        pieces = list(pool.map(_piece, jobs))
    seconds = time.perf_counter() - started
    print(f"test run: {seconds:.0f} s wall, {args.parts} pieces from {cuts[:-1]}")
    for (_, a, b, *_), (_, figures) in zip(jobs, pieces, strict=True):
        print(f"  piece {a}..{b}: " + ", ".join(f"{k} {v:.4g}" for k, v in figures.items()))
    return [f for forecasts, _ in pieces for f in forecasts]


def load(path: Path) -> list[dict[str, Any]]:
    return list(with_home((d for _, d in read_match_dicts(path)), HOME))


def tune(path: Path, axes: dict[str, tuple[float, ...]]) -> dict[str, float]:
    """The grid's best settings by three-way log loss on 2016-2017 (warm-up only)."""
    grid = [dict(zip(axes, values, strict=True)) for values in itertools.product(*axes.values())]
    print(f"| ξ per day | prior σ | goal cap | 3-way log loss {TUNE_FROM[:4]}-2017 | RPS | s |")
    print("|---|---|---|---|---|---|")
    best: tuple[float, dict[str, float]] | None = None
    with ProcessPoolExecutor(2) as pool:
        for settings, ll3, rps, seconds in pool.map(_trial, [(str(path), g) for g in grid]):
            print(
                f"| {settings['xi']} | {settings['prior_sd']} | {settings['goal_cap']} "
                f"| {ll3:.4f} | {rps:.4f} | {seconds:.0f} |",
                flush=True,
            )
            if best is None or ll3 < best[0]:
                best = (ll3, settings)
    assert best is not None
    return best[1]


def league_run(dicts: list[dict[str, Any]], test_from: str) -> None:
    """``rankcraft evaluate`` of the bundled ``football-goals-fit`` (each match day's
    forecasts from the league's refit of every earlier match) against ``football-goals``
    on the same test matches."""
    evaluations: dict[str, Evaluation] = {}
    for name in (FITTED, RULESET):
        started, cpu = time.perf_counter(), time.process_time()
        ruleset = rankcraft.load_ruleset(name)
        evaluations[name] = evaluate_ruleset(ruleset, dicts, test_from=test_from)
        print(
            f"{name}: {time.perf_counter() - started:.1f} s, "
            f"{time.process_time() - cpu:.1f} CPU s for {len(dicts):,} matches",
            flush=True,
        )
    table(evaluations)
    fitted, shipped = evaluations[FITTED], evaluations[RULESET]
    for score in ("three-way", "rps", "log-loss", "brier"):
        d = compare(shipped, fitted, names=(FITTED, RULESET), score=score)
        print(f"{FITTED} − {RULESET}, {score}: {d.difference:+.4f} [{d.low:+.4f}, {d.high:+.4f}]")


def table(evaluations: dict[str, Evaluation]) -> None:
    print("| forecast | scored | 3-way log loss | RPS | log loss | Brier |")
    print("|---|---|---|---|---|---|")
    for label, e in evaluations.items():
        assert e.three_way is not None
        print(
            f"| {label} | {e.three_way.n:,} | {e.three_way.log_loss:.4f} | {e.three_way.rps:.4f} "
            f"| {e.log_loss:.4f} | {e.brier:.4f} |"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--tune", action="store_true", help="choose the settings on 2016-2017")
    parser.add_argument("--xi", type=float, default=0.0005, help="time decay per day")
    parser.add_argument("--prior-sd", type=float, default=2.0)
    parser.add_argument("--goal-cap", type=float, default=6.0)
    parser.add_argument("--tol", type=float, default=TOL, help="largest change per sweep")
    parser.add_argument("--parts", type=int, default=1, help="test part in pieces, in parallel")
    parser.add_argument("--grid-xi", type=float, nargs="+", default=GRID["xi"])
    parser.add_argument("--grid-sd", type=float, nargs="+", default=GRID["prior_sd"])
    parser.add_argument("--grid-cap", type=float, nargs="+", default=GRID["goal_cap"])
    parser.add_argument(
        "--league", action="store_true", help=f"evaluate the bundled {FITTED} ruleset instead"
    )
    args = parser.parse_args()
    path = args.data / NAME
    test_from = json.loads((args.data / "splits.json").read_text())["files"][NAME]["test_from"]
    if args.league:
        league_run(load(path), test_from)
        return
    settings = {"xi": args.xi, "prior_sd": args.prior_sd, "goal_cap": args.goal_cap}
    if args.tune:
        axes = {"xi": args.grid_xi, "prior_sd": args.grid_sd, "goal_cap": args.grid_cap}
        settings = tune(path, {k: tuple(v) for k, v in axes.items()})
    print(f"settings: {settings}, tol {args.tol}")
    dicts = load(path)
    forecasts = test_run(path, dicts, test_from, settings, args)
    tested = iter(forecasts)
    marked = [
        dict(d, forecast={"fit": list(next(tested))}) if str(d["played_at"]) >= test_from else d
        for d in dicts
    ]
    fitted = evaluate_field(marked, "forecast.fit", test_from=test_from)
    started = time.perf_counter()
    shipped = evaluate_ruleset(rankcraft.load_ruleset(RULESET), dicts, test_from=test_from)
    seconds = time.perf_counter() - started
    print(f"{RULESET} replay: {seconds:.1f} s")
    table({"goals fit": fitted, RULESET: shipped})
    for score in ("three-way", "rps", "log-loss", "brier"):
        d = compare(shipped, fitted, names=("goals fit", RULESET), score=score)
        print(f"goals fit − {RULESET}, {score}: {d.difference:+.4f} [{d.low:+.4f}, {d.high:+.4f}]")


if __name__ == "__main__":
    main()
