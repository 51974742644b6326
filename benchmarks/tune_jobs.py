"""Trials per minute of `rankcraft tune` with --jobs 1 and --jobs 2 (issue 29: >= 1.6x).

Tunes the bundled `elo` ruleset's K factor and home advantage (Optuna, seed 0) on the
last --matches matches of the bundled international football history (rankcraft's CC0
demo file), in turn with one worker process and with two, --rounds times interleaved.
Each run is a whole `tune` call as `rankcraft tune` makes it: the start's scores, the
trials, the chosen ruleset's scores. Printed: the wall time of each run, trials per
minute (the whole call, and the search alone: the first trial's start to the last
trial's end), their ratio (median over the rounds), the load average and how much
faster two plain busy loops ran at once than one after another (2.0 on two free cores:
the ceiling of any speed-up, since the machine's cores are shared). Also checks that
both pick the same values (the result does not depend on --jobs). Nothing here is
asserted by the tests.

    python benchmarks/tune_jobs.py [--matches 49520] [--trials 16] [--rounds 2]
"""

from __future__ import annotations

import argparse
import gzip
import os
import platform
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from lab import busy_loops, cpu  # (benchmarks/lab.py: the same ceiling and clock)

import rankcraft.tune
from rankcraft.data import demo_matches_path
from rankcraft.ruleset import load_ruleset
from rankcraft.tune import has_optuna, parse_param, tune


def history(matches: int, folder: str) -> tuple[Path, str]:
    """The last ``matches`` lines of the demo file, and the date their last fifth starts
    (the test part)."""
    with gzip.open(demo_matches_path(), "rt", encoding="utf-8") as source:
        lines = source.readlines()[-matches:]
    path = Path(folder) / "matches.jsonl"
    path.write_text("".join(lines), encoding="utf-8")
    test_from = lines[len(lines) * 4 // 5].split('"played_at":"', 1)[1][:10]
    return path, test_from


def one(
    path: Path, test_from: str, trials: int, jobs: int, method: str
) -> tuple[float, float, float, tuple[float, ...]]:
    """(whole seconds, search seconds, CPU seconds, chosen values) of one tune call."""
    ruleset = load_ruleset("elo")
    params = [
        parse_param("update.k_factor=10:60", ruleset),
        parse_param("update.home_advantage=0:150", ruleset),
    ]
    marks: list[float] = []
    for name in ("optimize", "_search_random"):  # (the search's start marked)
        search = getattr(rankcraft.tune, name)
        search = getattr(search, "__wrapped__", search)

        def marked(*a: Any, search: Any = search, **k: Any) -> Any:
            marks.append(time.perf_counter())
            return search(*a, **k)

        marked.__wrapped__ = search  # type: ignore[attr-defined]
        setattr(rankcraft.tune, name, marked)
    started, used = time.perf_counter(), cpu()
    result = tune(
        path,
        ruleset,
        params,
        test_from=test_from,
        trials=trials,
        jobs=jobs,
        method=method,
        home_from="meta.home_team_index",
        progress=lambda *_: marks.append(time.perf_counter()),
    )
    whole = time.perf_counter() - started
    return whole, marks[-1] - marks[0], cpu() - used, result.best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=49_520)
    parser.add_argument("--trials", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--method", default="optuna" if has_optuna() else "random")
    args = parser.parse_args()
    print(
        f"python {platform.python_version()}, {os.cpu_count()} cores, load average "
        f"{os.getloadavg()[0]:.2f} at the start"
    )
    with tempfile.TemporaryDirectory() as folder:
        path, test_from = history(args.matches, folder)
        print(
            f"tune elo (k_factor, home_advantage; {args.method}, {args.trials} trials) on the "
            f"last {args.matches:,} matches of the demo history, test part from {test_from}"
        )
        ratios, search_ratios, ceilings = [], [], []
        chosen = set()
        for round_ in range(args.rounds):
            figures = {}
            for jobs in (1, 2) if round_ % 2 == 0 else (2, 1):
                whole, search, used, best = one(path, test_from, args.trials, jobs, args.method)
                chosen.add(best)
                figures[jobs] = (whole, search)
                print(
                    f"  round {round_ + 1}, --jobs {jobs}: {whole:6.1f} s in all "
                    f"({60 * args.trials / whole:5.1f} trials/min), search {search:6.1f} s "
                    f"({60 * args.trials / search:5.1f} trials/min); {used:6.1f} s CPU"
                )
            ratios.append(figures[1][0] / figures[2][0])
            search_ratios.append(figures[1][1] / figures[2][1])
            ceilings.append(busy_loops())
        print(
            f"--jobs 2 / --jobs 1, trials per minute: {statistics.median(ratios):.2f}x the "
            f"whole call, {statistics.median(search_ratios):.2f}x the search alone "
            f"(issue 29 wants >= 1.6x); two busy loops at once: "
            f"{statistics.median(ceilings):.2f}x; load average {os.getloadavg()[0]:.2f} at the end"
        )
        print(f"same values chosen by every run: {len(chosen) == 1}")


if __name__ == "__main__":
    main()
