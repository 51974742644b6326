"""How far ``ttt``'s warm refits end from a converged fit on a history of weakly linked
groups (docs/ttt.md): six groups of five players, 95% of the games within a group, one
game a day, refitted every day at ``--tolerance``; then the same games fitted at once to
1e-9, and at once to ``--tolerance``. Prints the largest difference in μ of the daily
refits and of the fit at once at that tolerance from the fit to 1e-9.

    python benchmarks/ttt_drift.py [--tolerance 1e-3] [--days 600]
"""

from __future__ import annotations

import argparse
import random

from rankcraft.plugins._ttt import Game, ThroughTime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tolerance", type=float, default=1e-3)
    parser.add_argument("--days", type=int, default=600)
    args = parser.parse_args()
    rng = random.Random(4)
    groups = [[f"G{g}T{k}" for k in range(5)] for g in range(6)]
    warm = ThroughTime(0.0, 6.0, 1.0, 0.03, 0.0)
    days: list[tuple[float, list[Game]]] = []
    for day in range(args.days):
        group = rng.choice(groups)
        a, b = rng.sample(group, 2) if rng.random() < 0.95 else (group[0], rng.choice(groups)[1])
        if a == b:
            continue
        game = Game(((a,), (b,)), [1.0, 0.0] if rng.random() < 0.5 else [0.0, 1.0])
        days.append((float(day), [game]))
        warm.add(float(day), [game])
        warm.converge(args.tolerance, 30)
    exact, once = (ThroughTime(0.0, 6.0, 1.0, 0.03, 0.0) for _ in range(2))
    for day, games in days:
        exact.add(day, games)
        once.add(day, games)
    exact.converge(1e-9, 2000)
    once.converge(args.tolerance, 2000)
    for name, fit in (("refitted daily", warm), ("fitted at once", once)):
        worst = max(abs(fit.posterior(p)[0] - exact.posterior(p)[0]) for p in exact.ids)
        print(f"tolerance {args.tolerance:g}, {name}: largest |μ − μ converged| = {worst:.4f}")


if __name__ == "__main__":
    main()
