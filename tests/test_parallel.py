"""Replay-bound features in parallel processes (issue 29, item 5): rankcraft.processes,
``evaluate --jobs``, the lab's rulesets in processes of its job (and cancelling a job
ends them). A process with threads (a pytest-xdist worker) never forks, so what must
fork runs in a fresh interpreter or in a lab job's own process."""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from rankcraft.io import parse_match
from rankcraft.jobs import JobPool
from rankcraft.lab import LabHistory, LabLimits, run_lab
from rankcraft.processes import run_each
from rankcraft.ruleset import load_ruleset
from rankcraft.serve import Settings
from rankcraft.serve.parsing import check_sides
from rankcraft.web import compare

from .test_evaluate import run
from .test_lab_jobs import games

RULESETS = ["elo", "glicko1", "openskill"]


def fresh(code: str) -> subprocess.CompletedProcess[str]:
    """``code`` run by a fresh interpreter (one thread: it may fork)."""
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )


def test_pieces_run_in_other_processes_and_answer_in_order() -> None:
    found = fresh(
        """
        import os, time
        from rankcraft.processes import run_each

        def piece(i, tick):
            time.sleep(0.3 if i == 0 else 0.01)  # the first ends last
            tick(i + 1)
            return (i, os.getpid())

        seen = []
        out = run_each(piece, 5, processes=2, progress=lambda d, f: seen.append((list(d), f)))
        print([i for i, _ in out], len({p for _, p in out}), os.getpid() in {p for _, p in out})
        print(seen[-1])

        def failing(i, tick):
            time.sleep(0.3 if i == 1 else 0.0)
            if i in (1, 2):
                raise ValueError(f"piece {i}")
            return i

        try:
            run_each(failing, 4, processes=2)
        except ValueError as exc:
            print(exc)
        """
    )
    assert found.returncode == 0, found.stderr
    lines = found.stdout.splitlines()
    assert lines[0] == "[0, 1, 2, 3, 4] 2 False"  # two processes, neither this one
    assert lines[1] == "([1, 2, 3, 4, 5], 5)"  # every tick seen, every piece finished
    assert lines[2] == "piece 1"  # the first failing piece in order, as one after another


@pytest.mark.parametrize("processes", [1, 2])
def test_pieces_run_here_where_forking_is_unsafe(processes: int) -> None:
    """With one process, or while another thread runs (forking is then unsafe): one after
    another, here, in order."""
    ticks: list[list[int]] = []
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        out = run_each(
            lambda i, tick: (tick(10 * i), os.getpid())[1],
            3,
            processes=processes,
            progress=lambda d, f: ticks.append(list(d)),
        )
    finally:
        stop.set()
        other.join()
    assert out == [os.getpid()] * 3
    assert ticks[-1] == [0, 10, 20]


def write_games(path: Path, n: int) -> Path:
    with path.open("w", encoding="utf-8") as out:
        for game in games(n, players=40, seed=3):
            out.write(json.dumps(game) + "\n")
    return path


def test_evaluate_jobs_gives_the_sequential_results_in_order(tmp_path: Path) -> None:
    history = write_games(tmp_path / "games.jsonl", 3000)
    argv = ["evaluate", str(history), "--test-from", "2006-01-01", "--json"]
    for name in ("glicko1", "elo", "openskill"):
        argv += ["--ruleset", name]
    code, alone, _ = run(*argv, "--jobs", "1")  # (here: one after another)
    assert code == 0
    found = fresh(
        f"from rankcraft.cli import main; raise SystemExit(main({[*argv, '--jobs', '2']!r}))"
    )
    assert found.returncode == 0, found.stderr
    assert found.stdout == alone
    assert list(json.loads(found.stdout)["results"]) == ["glicko1", "elo", "openskill"]
    assert "evaluating glicko1, elo, openskill in 2 processes: 100% (9,000 of 9,000)" in (
        found.stderr
    )


def test_evaluate_jobs_must_be_at_least_one(tmp_path: Path) -> None:
    history = write_games(tmp_path / "games.jsonl", 30)
    code, _, err = run(
        "evaluate", str(history), "--ruleset", "elo", "--test-from", "2000-06-01", "--jobs", "0"
    )
    assert code == 2
    assert "'--jobs' must be a whole number >= 1: 0" in err


# the service's own check of a match's sides (a job's process imports it by name: a function
# of this test module could not be, since the tests are no importable package)
_nothing = functools.partial(check_sides, settings=Settings())


def _group(leader: int) -> list[int]:
    """The live processes of the process group ``leader`` leads (Linux /proc)."""
    members = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", encoding="utf-8") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == leader and fields[0] != "Z":
            members.append(int(name))
    return members


LIMITS = LabLimits(8, 64, 10**7)
SPECS = [{"name": name} for name in RULESETS]


def test_a_lab_job_replays_its_rulesets_in_parallel_processes() -> None:
    documents = games(4000, players=50, seed=5)
    pool = JobPool(workers=1)
    try:
        job = pool.submit(
            "ann", run_lab, SPECS, LabHistory(documents=documents), None, LIMITS, _nothing, 2
        )
        stages = set()
        deadline = time.monotonic() + 120
        while not (seen := pool.get(job.id)).ended:
            assert time.monotonic() < deadline
            stages.add(seen.stage)
            time.sleep(0.01)
        assert seen.state == "done", seen.error
        assert (seen.done, seen.total) == (12_000, 12_000)
        assert any(s.startswith("replaying 3 rulesets in 2 processes (") for s in stages), stages
        alone = compare([load_ruleset(n) for n in RULESETS], [parse_match(d) for d in documents])
        alone["warnings"] = []  # (the job's: no ruleset here has a home advantage)
        assert json.dumps(seen.result) == json.dumps(alone)
    finally:
        pool.close()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_cancelling_a_lab_job_ends_the_processes_it_started() -> None:
    documents = games(30_000, players=200, seed=6)
    pool = JobPool(workers=1)
    try:
        job = pool.submit(
            "ann", run_lab, SPECS, LabHistory(documents=documents), None, LIMITS, _nothing, 2
        )
        deadline = time.monotonic() + 120
        while True:  # the job's process and the two replaying its rulesets
            assert time.monotonic() < deadline and not pool.get(job.id).ended
            process = pool.get(job.id).process
            if process is not None and process.pid and len(_group(process.pid)) == 3:
                break
            time.sleep(0.02)
        leader = process.pid
        assert pool.cancel(job.id).state == "cancelled"
        while _group(leader):
            assert time.monotonic() < deadline, _group(leader)
            time.sleep(0.05)
    finally:
        pool.close()


def test_lab_processes_is_a_whole_number_of_at_least_one() -> None:
    from rankcraft.errors import InputError
    from rankcraft.serve import Settings

    assert Settings(lab_processes=3).lab_processes == 3
    assert Settings.from_json(Settings().to_json()).lab_processes is None  # one per core
    for bad in (0, -1, 1.5, True):
        with pytest.raises(InputError, match=r"'lab_processes' must be a whole number >= 1"):
            Settings(lab_processes=bad)  # type: ignore[arg-type]
    code, _, err = run("serve", "--lab-processes", "0", "--port", "0")
    assert code == 2
    assert "'--lab-processes' must be a whole number >= 1: 0" in err
