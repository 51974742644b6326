"""The ruleset lab's cost against replaying the history once with each ruleset (issue 29).

On the bundled international football history (rankcraft's CC0 demo file, 49,520
matches; parsed once, before the clocks start) with the rulesets `elo`, `glicko1` and
`openskill`, wall time of, in turn (--rounds times, interleaved, median printed):

* *replays*: each ruleset's plain replay into a League in memory (the scratch store
  ``evaluate`` uses), one after another: the yardstick, "replaying the history once
  with each of them";
* *lab, 1 process*: the lab's comparison (:func:`rankcraft.web.compare`: one-step-ahead
  scores, seasons, standings, tiers, top 20) replaying the rulesets one after another;
* *lab, N processes*: the same with the rulesets replayed in up to N forked processes
  (--processes, default: one per core), as a lab job does;
* *lab job*: a whole job as ``POST /web/lab/jobs`` runs it (:class:`rankcraft.jobs.JobPool`:
  the job's process started, the uploaded matches sent to it and parsed there, the
  rulesets replayed in its N processes, the result sent back).

Printed: each time, the ratios to *replays* (issue 29: the lab at most 1.5x) and the
speed-up of the processes. The machine's cores are shared, so it also prints the load
average and *two busy loops*: how much faster two plain CPU-bound Python processes ran
at once than one after another in the same run (2.0 on two free cores): the ceiling of
any speed-up here. Nothing here is asserted by the tests.

    python benchmarks/lab.py [--rounds 2] [--processes N]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import time
from collections.abc import Callable
from typing import Any

from rankcraft.data import demo_matches_path
from rankcraft.evaluate import scratch_league
from rankcraft.io import parse_match, read_match_dicts
from rankcraft.jobs import JobPool
from rankcraft.lab import LabLimits, run_lab
from rankcraft.model import Match
from rankcraft.processes import default_processes, run_each
from rankcraft.ruleset import load_ruleset
from rankcraft.web import compare

RULESETS = ("elo", "glicko1", "openskill")


def replays(matches: list[Match]) -> None:
    for name in RULESETS:
        league = scratch_league(load_ruleset(name))
        with league.batch():
            for match in matches:
                league.record(match)


def lab(matches: list[Match], processes: int) -> dict[str, Any]:
    return compare([load_ruleset(n) for n in RULESETS], matches, processes=processes)


def _nothing(sides: Any, field: str) -> None:
    return None


def job(documents: list[dict[str, Any]], processes: int) -> dict[str, Any]:
    pool = JobPool(workers=1, timeout=3600, preload=("rankcraft.lab",))  # (as serve does)
    try:
        specs = [{"name": n} for n in RULESETS]
        limits = LabLimits(64, 1024, 10**9)
        submitted = pool.submit(
            "me", run_lab, specs, documents, None, None, limits, _nothing, processes
        )
        done = pool.join(submitted.id, 3600)
        assert done.state == "done", done.error
        result: dict[str, Any] = done.result
        return result
    finally:
        pool.close()


def spin(index: int, tick: Callable[[int], None]) -> int:
    total = 0
    for i in range(15_000_000):
        total += i & 7
    return total


def busy_loops() -> float:
    """How many times faster two busy loops ran at once than one after another."""
    started = time.perf_counter()
    run_each(spin, 2, processes=1)
    alone = time.perf_counter() - started
    started = time.perf_counter()
    run_each(spin, 2, processes=2)
    return alone / (time.perf_counter() - started)


def cpu() -> float:
    """CPU seconds of this process and of its children that have ended (a lab job's
    process is the forkserver's child, not counted)."""
    mine = resource.getrusage(resource.RUSAGE_SELF)
    theirs = resource.getrusage(resource.RUSAGE_CHILDREN)
    return mine.ru_utime + mine.ru_stime + theirs.ru_utime + theirs.ru_stime


def timed(function: Callable[[], Any]) -> tuple[float, float, Any]:
    """(wall seconds, CPU seconds, answer) of ``function()``."""
    started, used = time.perf_counter(), cpu()
    out = function()
    return time.perf_counter() - started, cpu() - used, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--processes", type=int, default=default_processes())
    args = parser.parse_args()
    documents = [d for _, d in read_match_dicts(demo_matches_path())]
    matches = [parse_match(d) for d in documents]
    print(
        f"python {platform.python_version()}, {os.cpu_count()} cores, load average "
        f"{os.getloadavg()[0]:.2f} at the start; {len(matches):,} matches, rulesets "
        f"{', '.join(RULESETS)}, {args.processes} processes"
    )
    kinds: dict[str, Callable[[], Any]] = {
        "replays": lambda: replays(matches),
        "lab, 1 process": lambda: lab(matches, 1),
        f"lab, {args.processes} processes": lambda: lab(matches, args.processes),
        "lab job": lambda: job(documents, args.processes),
        "two busy loops": busy_loops,
    }
    times: dict[str, list[float]] = {k: [] for k in kinds}
    cpus: dict[str, list[float]] = {k: [] for k in kinds}
    answers: dict[str, str] = {}
    for round_ in range(args.rounds):
        order = list(kinds) if round_ % 2 == 0 else list(reversed(kinds))
        for kind in order:
            seconds, used, out = timed(kinds[kind])
            if kind == "two busy loops":
                times[kind].append(out)
                continue
            times[kind].append(seconds)
            cpus[kind].append(used)
            if kind != "replays":
                answers.setdefault(kind, json.dumps(out))
    median = {k: statistics.median(v) for k, v in times.items()}
    base = median["replays"]
    base_cpu = statistics.median(cpus["replays"])
    for kind in list(kinds)[:-1]:
        used = statistics.median(cpus[kind])
        spent = f"{used:6.2f} s CPU ({used / base_cpu:4.2f}x)" if kind != "lab job" else ""
        print(
            f"  {kind:<20} {median[kind]:6.2f} s wall ({median[kind] / base:4.2f}x the "
            f"replays) {spent}"
        )
    parallel = f"lab, {args.processes} processes"
    print(
        f"the lab's comparison costs {median['lab job'] / base:.2f}x replaying the history once "
        f"with each ruleset as a job ({median[parallel] / base:.2f}x in process; issue 29: at "
        f"most 1.5x); the processes make it {median['lab, 1 process'] / median[parallel]:.2f}x "
        f"as fast as one after another (two busy loops at once: "
        f"{median['two busy loops']:.2f}x); load average {os.getloadavg()[0]:.2f} at the end"
    )
    print(f"the same result every way: {len(set(answers.values())) == 1}")


if __name__ == "__main__":
    main()
