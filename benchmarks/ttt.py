"""TrueSkill Through Time on the whole ATP singles history: our engine (plugins/_ttt.py)
against the reference package ``trueskillthroughtime``, the warm start, and a one-step-
ahead forecast check.

Time is days since 2000-01-01, one batch per ``played_at``. Parts (``--parts``):

* ``full``: the full fit of the package and of ours, same parameters, same process,
  ``--epsilon``/``--iterations`` on both (the package's defaults 1e-6 and 30); prints both
  times, their ratio, each side's last step, and the largest difference of any belief (μ
  or σ, every player, every batch).
* ``refit``: ours converged (to ``--epsilon``, up to 1000 iterations) on every date but
  the last, then the last date's matches added and refitted: the refit's time as a % of
  that full fit (games run too, a measure free of timer noise).
* ``forecast``: warm-up before 2022-01-01 (splits.json), then for each later date: the
  probability that side 0 wins each match from the fit through the previous date, then
  the date added and refitted (``--refit-tolerance``); prints the mean log loss (p
  clipped to [1e-12, 1 - 1e-12]) and the wall time.
* ``tune``: the same check on the warm-up part alone (its last 20% of matches scored),
  for each candidate (sigma, gamma) with beta = 1 (only the ratios to beta matter).

    python benchmarks/ttt.py [--data DIR] [--parts full refit forecast tune]
        [--sigma 1.6] [--gamma 0.036] [--epsilon 1e-6] [--iterations 30]
        [--refit-tolerances 1e-3 1e-4] [--refit-tolerance 1e-3] [--candidates 0 1 ...]

Last run (2026-11-28, 2 cores shared with other jobs, so seconds are inflated; ratios are
from one process):

* full, 10 iterations (``--iterations 10``; the package's 30 would take an hour here):
  package 1193.5 s, ours 59.7 s, ratio 20.0x; neither converged (the package's last step
  0.025), the largest difference of a belief 0.00106.
* refit of the last date (15 matches, 2024-12-18): at tolerance 1e-3 the full fit takes
  77 passes (162 s), the refit 0.48 s = 0.30% (games run 0.31%); at 1e-4, 146 passes
  (761 s) and 5.9 s = 0.78% (games run 1.40%). Again once each belief kept what its
  neighbours were told (``--parts refit --refit-tolerances 1e-3 --sigma 1.0 --gamma
  0.018``, an idle machine): 74 passes (18.8 s), the refit 0.05 s = 0.27% (games 0.22%).
* tune (last 20% of the warm-up, 2016-09-26 to 2021-12-05, 13,105 matches; refit
  tolerance 1e-3), log loss: sigma 1.6 with gamma 0.036 / 0.018 / 0.009 / 0.005: 0.6388 /
  0.6333 / 0.6366 / 0.6411; gamma 0.018 with sigma 2.5 / 1.0 / 0.7 / 0.5 / 0.35: 0.6367 /
  0.6305 / 0.6292 / 0.6285 / 0.6283; sigma 1.0 with gamma 0.013: 0.6311. Flat below
  sigma 0.5: sigma 0.5, gamma 0.018 (beta 1) is the choice.
* forecast (2022-01-01 on, 8,922 matches), log loss: sigma 1.6 gamma 0.036 (the package's
  ATP example): 0.6428; 1.6/0.018: 0.6357; 1.0/0.018: 0.6316; 0.7/0.018: 0.6294;
  0.5/0.018: 0.6284 (160 s with its refits, on a quieter machine). The bundled ``tennis``
  ruleset: 0.6202, Elo K = 32: 0.6266 (benchmarks/accuracy.py): plain TTT, without the
  surface, best-of and ranking information ``tennis`` uses, does not beat them.
"""

from __future__ import annotations

import argparse
import datetime
import gzip
import json
import math
import time
from pathlib import Path
from typing import Any

from rankcraft.plugins._ttt import Game, ThroughTime

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
FILE = "atp_singles_2000_2024.jsonl.gz"
EPOCH = datetime.date(2000, 1, 1).toordinal()
CANDIDATES = [
    *((1.6, gamma) for gamma in (0.036, 0.018, 0.009, 0.005)),
    *((sigma, 0.018) for sigma in (1.0, 2.5, 0.7)),
    (1.0, 0.013),
    (0.5, 0.018),
    (0.35, 0.018),
]
"""(sigma, gamma) tried on the warm-up; (1.6, 0.036) is the package's ATP example."""

Day = tuple[float, str, list[Any]]


def load(folder: Path) -> list[Day]:
    """The history by date: (days since 2000-01-01, the ISO date, its matches)."""
    days: list[Day] = []
    with gzip.open(folder / FILE, "rt", encoding="utf-8") as handle:
        for line in handle:
            match = json.loads(line)
            date = match["played_at"][:10]
            if not days or days[-1][1] != date:
                ordinal = datetime.date.fromisoformat(date).toordinal() - EPOCH
                days.append((float(ordinal), date, []))
            days[-1][2].append(match)
    return days


def ours(days: list[Day], sigma: float, gamma: float) -> ThroughTime:
    fit = ThroughTime(sigma=sigma, gamma=gamma)
    for t, _, matches in days:
        fit.add(t, [Game(m["teams"], m["scores"]) for m in matches])
    return fit


def full(days: list[Day], args: argparse.Namespace) -> None:
    import trueskillthroughtime as ttt  # type: ignore[import-untyped]

    matches = [(t, m) for t, _, ms in days for m in ms]
    start = time.perf_counter()
    history = ttt.History(
        [m["teams"] for _, m in matches],
        [m["scores"] for _, m in matches],
        [t for t, _ in matches],
        sigma=args.sigma,
        gamma=args.gamma,
    )
    step, iterations = history.convergence(
        epsilon=args.epsilon, iterations=args.iterations, verbose=False
    )
    package_s = time.perf_counter() - start
    start = time.perf_counter()
    fit = ours(days, args.sigma, args.gamma)
    result = fit.converge(tolerance=args.epsilon, iterations=args.iterations)
    ours_s = time.perf_counter() - start
    worst = 0.0
    for player, points in history.learning_curves().items():
        for (_, g), (_, mu, sd) in zip(points, fit.curve(player), strict=True):
            worst = max(worst, abs(g.mu - mu), abs(g.sigma - sd))
    print(f"full fit, {len(matches)} matches, {len(days)} batches, epsilon {args.epsilon}:")
    print(f"  package {package_s:8.1f} s  ({iterations} iterations, last step {step})")
    print(f"  ours    {ours_s:8.1f} s  ({result})")
    print(f"  ratio   {package_s / ours_s:8.1f}x   max |difference| of a belief {worst:.3g}")


def refit(days: list[Day], args: argparse.Namespace) -> None:
    for tolerance in args.refit_tolerances:
        start = time.perf_counter()
        fit = ours(days[:-1], args.sigma, args.gamma)
        whole = fit.converge(tolerance=tolerance, iterations=1000)
        full_s = time.perf_counter() - start
        t, _, matches = days[-1]
        start = time.perf_counter()
        fit.add(t, [Game(m["teams"], m["scores"]) for m in matches])
        again = fit.converge(tolerance=tolerance, iterations=1000)
        refit_s = time.perf_counter() - start
        print(f"tolerance {tolerance}: full fit {full_s:.1f} s ({whole})")
        print(
            f"  refit after {len(matches)} matches on {days[-1][1]}: {refit_s:.2f} s "
            f"= {100 * refit_s / full_s:.2f}% of the full fit; games run "
            f"{100 * again.games / whole.games:.2f}% ({again})"
        )


def one_step(
    days: list[Day], first_test: int, sigma: float, gamma: float, tolerance: float
) -> tuple[float, int, float]:
    """Mean log loss of P(side 0 wins) over days[first_test:], forecast from the fit
    through the previous date, then refitted; with the count and the seconds taken."""
    start = time.perf_counter()
    fit = ours(days[:first_test], sigma, gamma)
    fit.converge(tolerance=tolerance, iterations=1000)
    loss, count = 0.0, 0
    for t, _, matches in days[first_test:]:
        for m in matches:
            p = min(max(fit.forecast(m["teams"], t)[0], 1e-12), 1 - 1e-12)
            s0, s1 = m["scores"]
            outcome = 1.0 if s0 > s1 else 0.0 if s0 < s1 else 0.5
            loss -= outcome * math.log(p) + (1.0 - outcome) * math.log(1.0 - p)
            count += 1
        fit.add(t, [Game(m["teams"], m["scores"]) for m in matches])
        fit.converge(tolerance=tolerance, iterations=1000)
    return loss / count, count, time.perf_counter() - start


def forecast(days: list[Day], args: argparse.Namespace) -> None:
    test_from = json.loads((args.data / "splits.json").read_text())["files"][FILE]["test_from"]
    first = next(i for i, d in enumerate(days) if d[1] >= test_from)
    loss, count, seconds = one_step(days, first, args.sigma, args.gamma, args.refit_tolerance)
    print(
        f"one step ahead from {test_from}, sigma {args.sigma}, gamma {args.gamma}, "
        f"refit tolerance {args.refit_tolerance}: log loss {loss:.4f} over {count} "
        f"matches, {seconds:.0f} s"
    )


def tune(days: list[Day], args: argparse.Namespace) -> None:
    test_from = json.loads((args.data / "splits.json").read_text())["files"][FILE]["test_from"]
    warmup = [d for d in days if d[1] < test_from]
    total = sum(len(d[2]) for d in warmup)
    seen, first = 0, 0
    while seen < 0.8 * total:
        seen += len(warmup[first][2])
        first += 1
    print(f"tuning on the warm-up: scored from {warmup[first][1]} to {warmup[-1][1]}")
    chosen = args.candidates if args.candidates is not None else range(len(CANDIDATES))
    for sigma, gamma in (CANDIDATES[i] for i in chosen):
        loss, count, seconds = one_step(warmup, first, sigma, gamma, args.refit_tolerance)
        print(f"  sigma {sigma} gamma {gamma}: log loss {loss:.4f} ({count}, {seconds:.0f} s)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--parts", nargs="+", default=["full", "refit", "forecast", "tune"])
    parser.add_argument("--sigma", type=float, default=1.6)
    parser.add_argument("--gamma", type=float, default=0.036)
    parser.add_argument("--epsilon", type=float, default=1e-6)
    parser.add_argument("--iterations", type=int, default=30)
    parser.add_argument("--refit-tolerances", type=float, nargs="+", default=[1e-3, 1e-4])
    parser.add_argument("--refit-tolerance", type=float, default=1e-3)
    parser.add_argument(
        "--candidates", type=int, nargs="+", help="which CANDIDATES to tune (0-based)"
    )
    args = parser.parse_args()
    days = load(args.data)
    parts = {"full": full, "refit": refit, "forecast": forecast, "tune": tune}
    for name in args.parts:
        parts[name](days, args)


if __name__ == "__main__":
    main()
