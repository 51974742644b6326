"""Replay throughput of the `elo` ruleset against a plain-Python Elo loop.

Replays the ATP singles history (74,515 matches) in one process, in turn:

* a plain-Python Elo loop (K 32, start 1500, draws ½): the floor;
* rankcraft's League with the bundled `elo` ruleset, in memory and into SQLite.

Each is timed two ways: *from the file* (gunzip, JSON, validation and rating: what
`rankcraft replay` does, and what a hand-written replay script does) and *from parsed
dicts* (the JSON already decoded in memory; the engine still validates every match,
builds its report and, for SQLite, writes it). Figures are the median of --rounds runs of
CPU time (time.process_time), printed as matches per second and as a ratio to the plain
loop of the same kind. Nothing here is asserted by the tests.

    python benchmarks/replay.py [--file PATH] [--rounds 3]
"""

from __future__ import annotations

import argparse
import gc
import gzip
import json
import os
import platform
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import rankcraft
from rankcraft.io import read_match_dicts

DEFAULT = Path(__file__).resolve().parents[2] / "shared" / "data" / "atp_singles_2000_2024.jsonl.gz"


def from_file(path: Path) -> Any:
    """The file's match dicts, streamed, as ``rankcraft replay`` reads them (each is
    validated once, by the league)."""
    return (data for _, data in read_match_dicts(path))


def plain_elo(matches: list[dict[str, Any]]) -> dict[str, float]:
    ratings: dict[str, float] = {}
    get = ratings.get
    for m in matches:
        (a,), (b,) = m["teams"]
        sa, sb = m["scores"]
        s = 1.0 if sa > sb else 0.0 if sa < sb else 0.5
        ra, rb = get(a, 1500.0), get(b, 1500.0)
        d = 32.0 * (s - 1.0 / (1.0 + 10.0 ** ((rb - ra) / 400.0)))
        ratings[a] = ra + d
        ratings[b] = rb - d
    return ratings


def plain_from_file(path: Path) -> dict[str, float]:
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        return plain_elo([json.loads(line) for line in handle])


def league_memory(source: Any) -> rankcraft.League:
    league = rankcraft.League("elo")
    league.record_many(source)
    return league


def league_sqlite(source: Any) -> rankcraft.League:
    with tempfile.TemporaryDirectory() as folder:
        league = rankcraft.League.open(os.path.join(folder, "bench.sqlite"), "elo")
        league.record_many(source)
        league.close()
    return league


def timed(fn: Callable[[], Any], rounds: int) -> float:
    samples = []
    for _ in range(rounds):
        gc.collect()  # the run before left cyclic garbage: not on this run's clock
        start = time.process_time()
        fn()
        samples.append(time.process_time() - start)
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--file", type=Path, default=DEFAULT)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with gzip.open(args.file, "rt", encoding="utf-8") as handle:
        dicts = [json.loads(line) for line in handle]
    n = len(dicts)

    # The engine must agree with the floor before its speed means anything.
    reference = plain_elo(dicts)
    league = league_memory(dicts)
    worst = max(abs(league.player(p).skill.rating - r) for p, r in reference.items())
    assert worst < 1e-6, worst

    rows = []
    plain_file = timed(lambda: plain_from_file(args.file), args.rounds)
    plain_dicts = timed(lambda: plain_elo(dicts), args.rounds)
    rows.append(("plain Python Elo loop", "file", plain_file, plain_file))
    rows.append(
        (
            "rankcraft elo, in memory",
            "file",
            timed(lambda: league_memory(from_file(args.file)), args.rounds),
            plain_file,
        )
    )
    rows.append(
        (
            "rankcraft elo, into SQLite",
            "file",
            timed(lambda: league_sqlite(from_file(args.file)), args.rounds),
            plain_file,
        )
    )
    rows.append(("plain Python Elo loop", "dicts", plain_dicts, plain_dicts))
    rows.append(
        (
            "rankcraft elo, in memory",
            "dicts",
            timed(lambda: league_memory(dicts), args.rounds),
            plain_dicts,
        )
    )
    rows.append(
        (
            "rankcraft elo, into SQLite",
            "dicts",
            timed(lambda: league_sqlite(dicts), args.rounds),
            plain_dicts,
        )
    )

    print(
        f"{args.file.name}: {n:,} matches; median of {args.rounds} rounds of CPU time; "
        f"Python {platform.python_version()} on {platform.machine()} "
        f"({os.cpu_count()} cores); rankcraft {rankcraft.__version__}"
    )
    print(f"max |rating - plain loop rating| over {len(reference):,} players: {worst:.1e}")
    print()
    print(f"{'what':<28} {'input':<6} {'seconds':>8} {'matches/s':>11} {'x plain':>8}")
    for what, kind, seconds, floor in rows:
        print(f"{what:<28} {kind:<6} {seconds:>8.3f} {n / seconds:>11,.0f} {floor / seconds:>8.2f}")


if __name__ == "__main__":
    main()
