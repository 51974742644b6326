"""Season events' cost: Skyweaver's resets on long histories, and a far-future catch-up.

    python benchmarks/resets.py nfl|worldcup|future|idle [--data DIR] [--db FILE]

``nfl``: the NFL history (16,810 matches, 1920-2021) replayed with the ``skyweaver``
ruleset into a new SQLite file; prints CPU seconds, the file's size and the longest season
archive. ``worldcup``: the World Cup line-ups (1970-2022) in memory, with the bundled
resets and without them (``resets = []``). ``future``: 200 players who played in 2024,
then one match dated ``--year``-12-31 (default 2100; 9999 leaves the schedule no room):
prints the CPU seconds and the player records the reset hook was handed. ``idle``: a
SQLite league of ``--players`` idle players (imported, then through a hard reset) where
100 players play once a week for four weeks: prints the CPU time per week (matches and
the weekly soft reset) and the records the hook was handed, which a reset plugin's scope
(``rankcraft_reset_scope``) keeps to the players an event can change.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import time
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import rankcraft

DATA = Path(os.environ.get("RANKCRAFT_SHARED_DATA", "/work/shared/data"))


def read(name: str) -> list[dict[str, Any]]:
    with gzip.open(DATA / name, "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def counting(league: rankcraft.League) -> list[int]:
    """Count the reset hook's calls and the records it is handed (wraps the league's
    bound hook)."""
    counts = [0, 0]
    steps = league._steps
    original = steps.reset
    assert original is not None

    def wrapped(players: Any, kind: str, context: Any) -> Any:
        counts[0] += 1
        counts[1] += len(players)
        return original(players, kind, context)

    steps.reset = wrapped
    return counts


def nfl(db: Path) -> None:
    matches = read("nfl_538_elo_1920_2021.jsonl.gz")
    db.unlink(missing_ok=True)
    start = time.process_time()
    with rankcraft.League.open(db, "skyweaver") as league:
        league.record_many(matches)
        longest = max(len(p.rank.seasons) for p in league.players())
    seconds = time.process_time() - start
    size = db.stat().st_size + sum(
        p.stat().st_size for p in db.parent.glob(db.name + "-*") if p.exists()
    )
    print(
        f"nfl: {len(matches)} matches, {seconds:.1f} s CPU, {size / 1e6:.1f} MB, "
        f"longest archive {longest} seasons"
    )


def worldcup() -> None:
    matches = read("worldcup_lineups_1970_2022.jsonl.gz")
    plain = rankcraft.loads_ruleset('extends = "skyweaver"\nname = "sw-no-resets"\nresets = []\n')
    for label, ruleset in (("without resets", plain), ("bundled resets", "skyweaver")):
        league = rankcraft.League(ruleset)
        counts = counting(league)
        start = time.process_time()
        league.record_many(matches)
        seconds = time.process_time() - start
        print(
            f"worldcup {label}: {len(matches)} matches, {len(league)} players, "
            f"{seconds:.1f} s CPU, hook calls {counts[0]}, records handed {counts[1]}"
        )


def future(year: int) -> None:
    league = rankcraft.League("skyweaver")
    counts = counting(league)
    league.record_many(
        {
            "id": f"m{i}",
            "played_at": (date(2024, 1, 1) + timedelta(days=i // 10)).isoformat(),
            "teams": [[f"p{i % 200}"], [f"p{(i * 7 + 1) % 200}"]],
            "scores": [1, 0],
        }
        for i in range(1000)
        if i % 200 != (i * 7 + 1) % 200
    )
    calls, handed = counts
    start = time.process_time()
    league.record(
        {"id": "far", "played_at": f"{year}-12-31", "teams": [["p1"], ["p2"]], "scores": [1, 0]}
    )
    seconds = time.process_time() - start
    print(
        f"future {year}: {seconds:.2f} s CPU, hook calls {counts[0] - calls}, "
        f"records handed {counts[1] - handed}"
    )


def idle(players: int, db: Path) -> None:
    db.unlink(missing_ok=True)
    with rankcraft.League.open(db, "skyweaver") as league:
        league.import_state(
            {
                "players": [
                    {
                        "id": f"i{k}",
                        "skill": {"rating": 1500.0 + k % 400, "deviation": 350.0},
                        "rank": {"points": 200 + k % 800},
                        "last_played": "2023-12-01",
                    }
                    for k in range(players)
                ]
            }
        )
        league.reset("hard", at="2024-01-01")
        counts = counting(league)
        weeks = 4
        start = time.process_time()
        for week in range(weeks):  # soft resets on 01-09, 01-16 and 01-23
            day = (date(2024, 1, 2) + timedelta(days=7 * week)).isoformat()
            league.record_many(
                {
                    "id": f"w{week}-{k}",
                    "played_at": day,
                    "teams": [[f"a{k}"], [f"a{(k + week + 1) % 100}"]],
                    "scores": [1, 0],
                }
                for k in range(100)
            )
        seconds = time.process_time() - start
    print(
        f"idle {players:,} players: {seconds / weeks * 1000:.0f} ms CPU per week "
        f"(100 matches and a soft reset), hook calls {counts[0]}, records handed {counts[1]:,}"
    )


def main() -> None:
    global DATA
    parser = argparse.ArgumentParser()
    parser.add_argument("what", choices=("nfl", "worldcup", "future", "idle"))
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--db", type=Path, default=Path("/tmp/nfl-skyweaver.sqlite"))
    parser.add_argument("--year", type=int, default=2100)
    parser.add_argument("--players", type=int, default=100_000)
    args = parser.parse_args()
    DATA = args.data
    if args.what == "nfl":
        nfl(args.db)
    elif args.what == "worldcup":
        worldcup()
    elif args.what == "idle":
        idle(args.players, args.db)
    else:
        future(args.year)


if __name__ == "__main__":
    main()
