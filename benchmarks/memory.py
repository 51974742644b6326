"""Peak memory of a replay: the speed issue's 200,000 matches, streamed from a file.

Writes the workload of ``benchmarks/compare.py`` (10,000 players, 200,000 1-v-1 matches,
seeded) to a JSON Lines file, then replays it in a fresh process per case, streamed (the
file is never loaded whole), into the in-memory store and into SQLite, and prints the
peak resident set size of that process (``VmHWM`` on Linux, else ``ru_maxrss``) next to
its size after the imports. Nothing here is asserted by the tests
(tests/test_limits.py bounds the memory of larger replays).

    python benchmarks/memory.py [--matches 200000] [--players 10000] [--rulesets elo,...]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

from compare import workload

CHILD = """
import resource, sys, time
import rankcraft
from rankcraft.io import read_match_dicts
def rss():
    # VmHWM: the peak since exec (ru_maxrss may still count the parent's pages)
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
path, ruleset, db = sys.argv[1:4]
base = rss()
league = rankcraft.League(ruleset) if db == "-" else rankcraft.League.open(db, ruleset)
start = time.process_time()
summary = league.record_many(data for _, data in read_match_dicts(path))
seconds = time.process_time() - start
print(summary.recorded, base, rss(), seconds)
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--matches", type=int, default=200_000)
    parser.add_argument("--players", type=int, default=10_000)
    parser.add_argument("--rulesets", default="elo,glicko1,inversus")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "matches.jsonl")
        with open(path, "w", encoding="utf-8") as out:
            for match in workload(args.players, args.matches):
                out.write(json.dumps(match) + "\n")
        size = os.path.getsize(path) / 2**20
        print(f"{args.matches:,} matches among {args.players:,} players ({size:.0f} MB file)")
        print()
        print("| ruleset | store | peak RSS (MB) | after imports (MB) | matches/s |")
        print("|---|---|---|---|---|")
        for ruleset in args.rulesets.split(","):
            for store in ("memory", "SQLite"):
                db = "-" if store == "memory" else os.path.join(folder, f"{ruleset}.sqlite")
                done = subprocess.run(
                    [sys.executable, "-c", CHILD, path, ruleset, db],
                    check=True,
                    capture_output=True,
                    text=True,
                )
                recorded, base, peak, seconds = done.stdout.split()
                rate = int(recorded) / float(seconds)
                print(
                    f"| {ruleset} | {store} | {float(peak):.0f} | {float(base):.0f} "
                    f"| {rate:,.0f} |",
                    flush=True,
                )


if __name__ == "__main__":
    main()
