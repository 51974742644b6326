"""A league of 1,000,000 players in SQLite, built and used in bounded memory: the
checks of tests/test_limits.py's ``test_a_hundred_thousand_players`` at ten times its
size (50,000 first matches of ten against ten), the figure docs/performance.md states.
Prints each process's peak resident set and the time taken; fails (exit 1) when a
check or the 600 MB bound fails.

    python benchmarks/limits.py [--matches 50000]

Run from the repository's root (it imports the test module for its checks)."""

from __future__ import annotations

import argparse
import importlib.util
import sys
import tempfile
import time
from pathlib import Path

# loaded from its file: a distribution may install a top-level ``tests`` package (glicko2
# does), which ``import tests.test_limits`` would find first
_spec = importlib.util.spec_from_file_location(
    "test_limits", Path(__file__).resolve().parents[1] / "tests" / "test_limits.py"
)
assert _spec is not None and _spec.loader is not None
test_limits = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(test_limits)
PEAK_MB, build_and_use = test_limits.PEAK_MB, test_limits.build_and_use


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=50_000)
    args = parser.parse_args()
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as folder:
        built, used = build_and_use(Path(folder) / "players.sqlite", args.matches)
    print(f"{20 * args.matches:,} players, {time.perf_counter() - started:.1f} s")
    print(f"build: peak {built['peak_mb']:.0f} MB; use: peak {used['peak_mb']:.0f} MB")
    if max(built["peak_mb"], used["peak_mb"]) >= PEAK_MB:
        print(f"over the {PEAK_MB} MB bound", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
