"""Limits: a match with 1,000 players per side, a league of 1,000,000 players, a 100 MB
match file streamed — each handled, with the memory it takes bounded and measured.

Memory is read in a child process as its peak resident set (``VmHWM`` in
``/proc/self/status``: since exec, unlike ``ru_maxrss``, which a child may inherit from
the forking test process).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import rankcraft

PEAK = """
def _peak():
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
"""

needs_proc = pytest.mark.skipif(
    not Path("/proc/self/status").exists(), reason="reads the peak from /proc (Linux)"
)


def run_measured(code: str) -> dict[str, Any]:
    """Run ``code`` in a fresh interpreter; it prints one JSON object, to which the
    process's peak resident set in MB is added as ``peak_mb``."""
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            PEAK + code + "\nimport json, sys\n"
            "result['peak_mb'] = _peak()\nprint(json.dumps(result))",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    return result


def test_a_thousand_players_per_side() -> None:
    league = rankcraft.League("inversus")
    sides = [[f"a{i}" for i in range(1000)], [f"b{i}" for i in range(1000)]]
    report = league.record(
        {"id": "big", "played_at": "2024-01-01", "teams": sides, "scores": [1, 0]}
    )
    assert len(report.changes) == 2000 and len(league) == 2000
    assert report.expected == pytest.approx((0.5, 0.5))
    # every loser moved down by the same amount, every winner up
    after = {c.player: c.skill_after.mu for c in report.changes}
    assert len({round(after[f"a{i}"], 12) for i in range(1000)}) == 1
    assert after["a0"] > 0.0 > after["b0"]


PEAK_MB = 600
"""The peak resident set a league of a million players may take, built or used
(docs/performance.md, Memory; ``benchmarks/limits.py`` measures it)."""
SMALL_PEAK_MB = 150
"""The same bound for a tenth of the players: SQLite's page cache, 128 bytes a player
during a batch, is 13 MB here (128 MB at a million); the build peaked at 91 MB, the use
at 29 MB. It is loose: what bounds the memory of a million players is
``benchmarks/limits.py``; this test checks the same path and answers at a size the suite
can afford."""


def build_and_use(db: Path, matches: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """Record ``matches`` first matches of ten against ten (``20 * matches`` new players)
    into SQLite at ``db`` in one process, then reopen, query and record into it in
    another; check every answer and return what each process measured (``peak_mb``).
    (Ten a side: twenty new players for a match's rating work.)"""
    players = 20 * matches
    built = run_measured(
        f"""
import rankcraft
league = rankcraft.League.open({str(db)!r}, "elo")
games = (
    {{"id": f"m{{i}}", "played_at": "2024-01-01",
      "teams": [[f"p{{20 * i + j}}" for j in range(10)],
                [f"p{{20 * i + 10 + j}}" for j in range(10)]],
      "scores": [1, 0]}}
    for i in range({matches})
)
summary = league.record_many(games)
result = {{"recorded": summary.recorded, "players": len(league)}}
league.close()
"""
    )
    assert built["recorded"] == matches and built["players"] == players
    used = run_measured(
        f"""
import rankcraft
league = rankcraft.League.open({str(db)!r})
report = league.record(
    {{"id": "x", "played_at": "2024-02-01", "teams": [["p10"], ["p0"]], "scores": [1, 0]}}
)
top = league.leaderboard(3)
result = {{
    "players": len(league),
    "matches": league.match_count,
    "p10": league.player("p10").skill.rating,
    "p19": league.player("p19").skill.rating,
    "top": [r.skill.rating for r in top],
    "predict": league.predict([["p0"], ["p10"]]),
    "history": [row.match.id for row in league.history("p0")],
}}
league.close()
"""
    )
    # the first match's winners (p0-p9) went to 1516, its losers (p10-p19) to 1484;
    # then p10 beats p0: the underdog wins
    gain = 32 * (1 - 1 / (1 + 10 ** ((1516 - 1484) / 400)))
    assert used["players"] == players and used["matches"] == matches + 1
    assert used["p10"] == pytest.approx(1484 + gain, abs=1e-9)
    assert used["p19"] == 1484.0
    assert used["top"] == [1516.0, 1516.0, 1516.0]
    # (p0 lost what p10 won: 1516 - gain against 1484 + gain)
    assert used["predict"][0] == pytest.approx(1 / (1 + 10 ** ((2 * gain - 32) / 400)))
    assert used["history"] == ["x", "m0"]
    return built, used


@needs_proc
@pytest.mark.slow(seconds=10)
def test_a_hundred_thousand_players(tmp_path: Path) -> None:
    """100,000 players (5,000 first matches of ten against ten) recorded into SQLite,
    reopened, queried and recorded into, in bounded memory. The million players of
    docs/performance.md are ``benchmarks/limits.py``: the same code at 50,000 matches
    (65 s of the suite's longest test, and most of its CPU, before it moved there)."""
    built, used = build_and_use(tmp_path / "players.sqlite", 5_000)
    print(f"build: {built}, use: {used['peak_mb']} MB")
    assert built["peak_mb"] < SMALL_PEAK_MB, built
    assert used["peak_mb"] < SMALL_PEAK_MB, used


def write_matches(path: Path, count: int, players: int = 2000) -> int:
    """``count`` matches, written one line at a time; each carries a note in ``meta`` so
    that lines are about 3 KB, like a verbose feed's (fewer matches fill 100 MB, which
    keeps the test's time down; memory is what it measures). Returns the file's size."""
    note = "rematch after the server restart; " * 86
    with path.open("w", encoding="utf-8") as out:
        for i in range(count):
            a, b = (i * 7919) % players, (i * 104729 + 1) % players
            if a == b:
                b = (b + 1) % players
            out.write(
                json.dumps(
                    {
                        "id": f"match-{i:08d}",
                        "played_at": f"2024-{1 + i * 12 // count:02d}-01T12:00:00Z",
                        "teams": [[f"player-{a:05d}"], [f"player-{b:05d}"]],
                        "scores": [1, 0] if (i * 31) % 7 < 4 else [0, 1],
                        "meta": {"server": f"eu-{i % 9}", "note": note},
                    }
                )
                + "\n"
            )
    return path.stat().st_size


REPLAY = """
from rankcraft.cli import main
import io, contextlib
out = io.StringIO()
with contextlib.redirect_stdout(out):
    code = main(["replay", {file!r}, "--db", {db!r}, "--ruleset", "glicko1", "--json"])
result = {{"code": code, **json.loads(out.getvalue())}}
"""


@needs_proc
@pytest.mark.slow(seconds=25)
def test_a_100_mb_file_is_streamed_in_bounded_memory(tmp_path: Path) -> None:
    """`rankcraft replay` of a 100 MB file into SQLite peaks at about what a 10 MB file
    takes: the file is read line by line, and neither matches nor their ids stay in
    memory (the league asks the database which ids it has, a chunk at a time)."""
    peaks = {}
    for name, count in (("small", 3_500), ("large", 35_000)):
        file = tmp_path / f"{name}.jsonl"
        size = write_matches(file, count)
        if name == "large":
            assert size > 100 * 2**20
        result = run_measured(
            "import json\n" + REPLAY.format(file=str(file), db=str(tmp_path / f"{name}.sqlite"))
        )
        assert result["code"] == 0 and result["recorded"] == count and result["players"] == 2000
        peaks[name] = result["peak_mb"]
    # ten times the file, the same memory (within a few MB of SQLite's page cache)
    print(f"peak RSS: {peaks}")
    assert peaks["large"] < peaks["small"] + 15, peaks
    assert peaks["large"] < 100, peaks
    # and the streamed replay is complete: the league equals one built in memory (checked
    # on the small file; the large one recorded every match, asserted above)
    memory = rankcraft.League("glicko1")
    memory.record_many(data for _, data in rankcraft.io.read_match_dicts(tmp_path / "small.jsonl"))
    with rankcraft.League.open(tmp_path / "small.sqlite") as stored:
        assert stored.export() == memory.export()
