"""Live use: one ``League.record`` on SQLite, and one ``POST /matches`` through the service.

A league of ``--history`` matches among ``--players`` players is replayed into a fresh
SQLite file; then ``--matches`` more are recorded one at a time (each its own
transaction, as a game server records a result), first with ``League.record`` in this
process, then through ``rankcraft serve``'s application with Starlette's TestClient (the
HTTP layer in process, no sockets). Figures: milliseconds per match (wall clock, best of
``--rounds``: a commit waits for the disk) and, for scale, the same process's plain-loop
time for one Elo update in microseconds. Nothing here is asserted by the tests.

    python benchmarks/live.py [--history 20000] [--players 2000] [--matches 300] [--rounds 3]
        [--ruleset elo]
"""

from __future__ import annotations

import argparse
import os
import random
import tempfile
import time
import warnings
from typing import Any

import rankcraft


def games(prefix: str, n: int, players: int, rng: random.Random, day: str) -> list[dict[str, Any]]:
    out = []
    for i in range(n):
        a, b = rng.sample(range(players), 2)
        out.append(
            {
                "id": f"{prefix}{i}",
                "played_at": day,
                "teams": [[f"p{a}"], [f"p{b}"]],
                "scores": [1, 0] if rng.random() < 0.5 else [0, 1],
            }
        )
    return out


def plain_loop_us(n: int = 100_000) -> float:
    """Microseconds per plain-dictionary Elo match in this process (the usual floor)."""
    rng = random.Random(1)
    pairs = [(rng.randrange(1000), rng.randrange(1000)) for _ in range(n)]
    ratings = dict.fromkeys(range(1000), 1500.0)
    start = time.process_time()
    for a, b in pairs:
        ra, rb = ratings[a], ratings[b]
        e = 1.0 / (1.0 + 10.0 ** ((rb - ra) / 400.0))
        ratings[a] = ra + 32.0 * (1.0 - e)
        ratings[b] = rb - 32.0 * (1.0 - e)
    return (time.process_time() - start) / n * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--history", type=int, default=20_000)
    parser.add_argument("--players", type=int, default=2_000)
    parser.add_argument("--matches", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--ruleset", default="elo")
    args = parser.parse_args()
    warnings.simplefilter("ignore", DeprecationWarning)
    from starlette.testclient import TestClient

    from rankcraft.serve import create_app
    from rankcraft.tokens import create_token

    rng = random.Random(7)
    record_ms, post_ms = [], []
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "live.sqlite")
        league = rankcraft.League.open(path, args.ruleset)
        league.record_many(games("h", args.history, args.players, rng, "2024-01-01"))
        for r in range(args.rounds):
            batch = games(f"r{r}-", args.matches, args.players, rng, "2024-02-01")
            start = time.perf_counter()
            for match in batch:
                league.record(match)
            record_ms.append((time.perf_counter() - start) / args.matches * 1e3)
        _, token = create_token(league.store, scope="record")
        with TestClient(create_app(league), headers={"Authorization": f"Bearer {token}"}) as client:
            for r in range(args.rounds):
                batch = games(f"s{r}-", args.matches, args.players, rng, "2024-03-01")
                start = time.perf_counter()
                for match in batch:
                    answer = client.post("/matches", json=match)
                    assert answer.status_code in (200, 201), answer.text
                post_ms.append((time.perf_counter() - start) / args.matches * 1e3)
    print(f"{args.ruleset}, SQLite league of {args.history:,} matches, {args.players:,} players")
    print(f"League.record : {min(record_ms):.3f} ms per match (best of {args.rounds})")
    print(f"POST /matches : {min(post_ms):.3f} ms per match (best of {args.rounds})")
    print(f"plain loop    : {plain_loop_us():.3f} us per match (this process)")


if __name__ == "__main__":
    main()
