"""Matchmaking costs (docs/matchmaking.md): a rank filter over a league of many active
players, the quality of one match, and balancing groups of several sizes.

Process time (``time.process_time``), best of ``--repeat``; the league is built by
importing ``--players`` Elo players (ratings spread evenly, all active).

    python benchmarks/matchmaking.py [--players 100000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

import rankcraft
from rankcraft.matchmaking import RankFilter


def best(repeat: int, work: Callable[[], Any]) -> float:
    times = []
    for _ in range(repeat):
        start = time.process_time()
        work()
        times.append(time.process_time() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--players", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    league = rankcraft.League("elo")
    n = args.players
    league.import_state(
        {
            "players": [
                {
                    "id": f"p{i:07d}",
                    "skill": {"rating": 1000.0 + 1000.0 * ((i * 7919) % n) / n, "peak": 0.0},
                    "matches": 1,
                    "last_played": "2024-05-01T20:00:00Z",
                }
                for i in range(n)
            ]
        }
    )
    ids = [f"p{i:07d}" for i in range(0, n, max(1, n // 64))]
    rows = [
        (f"active_players ({n:,} players)", lambda: league.active_players()),
        (
            f"find_opponents, loose, waited 90 s ({n:,} players)",
            lambda: league.find_opponents(ids[0], RankFilter(), needed=11, waited=90, limit=50),
        ),
        ("quality, 6 v 6", lambda: league.quality([ids[:6], ids[6:12]])),
        ("balance 10 players into 2 (exact, 126 splits)", lambda: league.balance(ids[:10], 2)),
        ("balance 12 players into 4 (exact, 15,400 splits)", lambda: league.balance(ids[:12], 4)),
        ("balance 40 players into 2 (swaps)", lambda: league.balance(ids[:40], 2)),
        ("balance 64 players into 8 (swaps)", lambda: league.balance(ids[:64], 8)),
    ]
    print("| operation | process time (s) |\n|---|---|")
    for name, work in rows:
        print(f"| {name} | {best(args.repeat, work):.4f} |")


if __name__ == "__main__":
    main()
