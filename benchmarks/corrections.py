"""How long an edit of a league's history takes (issue 40; docs/performance.md).

A league recorded with ``elo`` (the bundled demo history of 49,520 international football
matches, or ``--matches N`` random 1-v-1 matches among ``--players``), then a match
voided at a fraction ``--at`` of the history from its start, three ways:

* as the league does it: the matches from the voided one on are read back, and only those
  that its players, or players they met since, play are rated again, from the records
  their reports say those players had then; the others keep their reports;
* every later match rated again, from the records the players had at the voided match;
* the whole history before the voided match replayed too (what a ruleset with season
  events or rating periods needs).

Figures: wall seconds of each void (the transaction included; three neighbouring matches
voided, one each way), and the first as a fraction of the others and of recording the
whole history. Nothing here is asserted by
the tests.

    python benchmarks/corrections.py [--db sqlite|memory|postgresql://...] [--at 0.5]
        [--matches N] [--players P]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import tempfile
import time
from datetime import UTC, datetime, timedelta
from importlib import resources
from typing import Any

import rankcraft


def demo_matches() -> list[dict[str, Any]]:
    path = resources.files("rankcraft.data") / "intl_football_1872_2026.jsonl.gz"
    with gzip.open(str(path), "rt", encoding="utf-8") as lines:
        return [json.loads(line) for line in lines if line.strip()]


START = datetime(2000, 1, 1, tzinfo=UTC)


def random_matches(count: int, players: int) -> list[dict[str, Any]]:
    rng = random.Random(40)
    out = []
    for i in range(count):
        a, b = rng.sample(range(players), 2)
        out.append(
            {
                "id": f"m{i}",
                "played_at": (START + timedelta(minutes=10 * i)).strftime("%Y-%m-%dT%H:%M:%SZ"),
                "teams": [[f"p{a}"], [f"p{b}"]],
                "scores": [1, 0] if rng.random() < 0.5 else [0, 1],
            }
        )
    return out


def opened(where: str, folder: str) -> rankcraft.League:
    if where == "memory":
        return rankcraft.League("elo")
    if where == "sqlite":
        return rankcraft.League.open(os.path.join(folder, "edited.sqlite"), "elo")
    joiner = "&" if "?" in where else "?"
    return rankcraft.League.open(f"{where}{joiner}schema=bench_edit_{os.getpid()}", "elo")


def timed_void(league: rankcraft.League, match_id: str, how: str) -> tuple[float, Any]:
    fixes = league._corrections  # (the benchmark's switches, not options)
    fixes.narrow = how != "replayed"
    fixes.touched_only = how == "touched"
    start = time.perf_counter()
    edit = league.void(match_id, "benchmark")
    return time.perf_counter() - start, edit


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", default="sqlite")
    parser.add_argument("--at", type=float, default=0.5)
    parser.add_argument("--matches", type=int, default=0)
    parser.add_argument("--players", type=int, default=10_000)
    args = parser.parse_args()
    matches = random_matches(args.matches, args.players) if args.matches else demo_matches()
    at = int(args.at * (len(matches) - 1))
    with tempfile.TemporaryDirectory() as folder:
        league = opened(args.db, folder)
        start = time.perf_counter()
        league.record_many(matches, commit_every=100_000 if len(matches) > 100_000 else 0)
        recorded = time.perf_counter() - start
        quick, edit = timed_void(league, matches[at]["id"], "touched")
        later, every = timed_void(league, matches[at + 1]["id"], "later")
        whole, _ = timed_void(league, matches[at + 2]["id"], "replayed")
        print(
            f"{len(matches):,} matches, elo, {args.db}: recorded in {recorded:.1f} s; void of "
            f"the match at {args.at:.1%}:\n"
            f"  the touched players' matches rated again ({edit.rerated:,}; "
            f"{len(edit.changes):,} players moved): {quick:.2f} s\n"
            f"  every later match rated again ({every.rerated:,}): {later:.2f} s\n"
            f"  the history before it replayed too: {whole:.2f} s\n"
            f"  the first: {quick / later:.2f} of the second, {quick / whole:.3f} of the third, "
            f"{quick / recorded:.3f} of the recording"
        )
        league.close()
        if args.db.startswith("postgresql://"):
            import psycopg

            with psycopg.connect(args.db.split("?")[0], autocommit=True) as db:
                db.execute(f"DROP SCHEMA bench_edit_{os.getpid()} CASCADE")


if __name__ == "__main__":
    main()
