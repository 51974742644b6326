"""Glicko-2 rating periods in arrays: player-games per second, NumPy against the
pure-Python reference (``rate`` per player), in the same process.

One period: ``--players`` players (default 100,000), each with ``--games`` results
(default 10) against random opponents; median of ``--rounds`` runs of CPU time. Then the
same through a league: ``League.close_period`` of a ``batch``-mode ruleset, with and
without the array kernel. Nothing here is asserted by the tests.

    python benchmarks/batch.py [--players 100000] [--games 10] [--rounds 3]
"""

from __future__ import annotations

import argparse
import random
import time

import numpy as np
from replay import timed  # the same median-of-rounds CPU clock (benchmarks/ is on the path)

import rankcraft
from rankcraft.plugins._glicko2_batch import rate_period, rate_period_reference


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--players", type=int, default=100_000)
    parser.add_argument("--games", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    rng = random.Random(11)
    n, k = args.players, args.games
    states = [(rng.gauss(0, 1), rng.uniform(0.3, 2.0), 0.06) for _ in range(n)]
    results = [
        [(rng.gauss(0, 1), rng.uniform(0.3, 2.0), float(rng.random() < 0.5), 1.0) for _ in range(k)]
        for _ in range(n)
    ]
    mu, phi, sigma = (np.array(c) for c in zip(*states, strict=True))
    flat = np.array([r for rs in results for r in rs])
    owner = np.repeat(np.arange(n), k)

    def arrays() -> object:
        return rate_period(
            mu,
            phi,
            sigma,
            owner=owner,
            opponent_mu=flat[:, 0],
            opponent_phi=flat[:, 1],
            score=flat[:, 2],
            weight=flat[:, 3],
            tau=0.5,
        )

    games = n * k
    t_ref = timed(lambda: rate_period_reference(states, results, 0.5), args.rounds)
    t_np = timed(arrays, args.rounds)
    print(f"one Glicko-2 period: {n:,} players x {k} results = {games:,} player-games")
    print("| path | player-games/s | x pure Python |\n|---|---|---|")
    print(f"| pure Python (rate per player) | {games / t_ref:,.0f} | 1.00 |")
    print(f"| NumPy arrays (rate_period) | {games / t_np:,.0f} | {t_ref / t_np:.1f} |")

    ruleset = rankcraft.loads_ruleset(
        'name = "g2"\n[period]\nmode = "batch"\nlength_days = 7.0\n'
        '[update]\nplugin = "glicko2"\n[team]\nplugin = "mean"\n'
    )
    m = min(n, 20_000)
    matches = [
        {
            "id": f"m{i}",
            "played_at": "2024-01-01",
            "teams": [[f"p{a}"], [f"p{b}"]],
            "scores": [1, 0],
        }
        for i in range(m * k // 2)
        for a, b in [rng.sample(range(m), 2)]
    ]
    for label, kernel in (("hooks", False), ("arrays", True)):
        league = rankcraft.League(ruleset)
        if not kernel:
            league._period_kernel = None
        league.record_many(matches, close=False)
        start = time.process_time()
        league.close_period()
        seconds = time.process_time() - start
        print(
            f"League.close_period ({label}): {2 * len(matches):,} player-games in "
            f"{seconds:.3f} s = {2 * len(matches) / seconds:,.0f} player-games/s"
        )


if __name__ == "__main__":
    main()
