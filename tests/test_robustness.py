"""Crash safety, several writers on one SQLite league, and fuzzed input."""

from __future__ import annotations

import json
import math
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rankcraft

from .conftest import bundled

EXE = str(Path(sys.executable).with_name("rankcraft"))


def history(n: int, players: int = 40, seed: int = 3) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        a, b = rng.sample(range(players), 2)
        s = rng.choice([0, 1, 1, 2])
        out.append(
            {
                "id": f"m{i:05d}",
                "played_at": f"2024-{1 + i // 2000:02d}-01",
                "teams": [[f"p{a}"], [f"p{b}"]],
                "scores": [s, 2 - s],
            }
        )
    return out


def write(path: Path, matches: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(m) + "\n" for m in matches))
    return path


def export(db: Path) -> dict[str, Any]:
    with rankcraft.League.open(db, create=False) as league:
        return league.export()


@pytest.mark.slow(seconds=18)
def test_killed_replays_leave_a_prefix_and_resume_exactly(tmp_path: Path) -> None:
    matches = history(12_000)
    source = write(tmp_path / "m.jsonl", matches)
    reference = rankcraft.League("inversus")
    reference.record_many(matches)
    expected = reference.export()["players"]
    rng = random.Random(11)
    for attempt in range(4):
        db = tmp_path / f"k{attempt}.sqlite"
        argv = [
            EXE,
            "replay",
            str(source),
            "--ruleset",
            "inversus",
            "--db",
            str(db),
            "--commit-every",
            "500",
        ]
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(rng.uniform(0.3, 2.5))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        if db.exists():
            con = sqlite3.connect(db)
            try:
                ids = [r[0] for r in con.execute("SELECT id FROM matches ORDER BY seq")]
            except sqlite3.OperationalError:
                ids = []  # killed before the schema was committed
            con.close()
            assert ids == [m["id"] for m in matches[: len(ids)]], "not a prefix"
            if ids:
                prefix = rankcraft.League("inversus")
                prefix.record_many(matches[: len(ids)])
                assert export(db)["players"] == prefix.export()["players"]
        done = subprocess.run([*argv[:-2], "--skip-seen"], capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        assert export(db)["players"] == expected


# -- fuzzing -----------------------------------------------------------------------------

JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(10**6), 10**6)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=12,
)
GOOD = {"id": "g", "played_at": "2024-01-02", "teams": [["a", "b"], ["c"]], "scores": [1, 0]}
KEYS = [*GOOD, "ranks", "seconds_played", "quit", "weight", "meta", "home", "forecast"]


@st.composite
def mutated_matches(draw: st.DrawFn) -> Any:
    data: dict[str, Any] = dict(GOOD)
    data["id"] = draw(st.sampled_from(["g", "h", "i", "j"]))
    for key in draw(st.lists(st.sampled_from(KEYS), max_size=3)):
        if draw(st.booleans()):
            data.pop(key, None)
        else:
            data[key] = draw(JSON)
    return data if draw(st.integers(0, 9)) else draw(JSON)


@pytest.mark.parametrize("name", ["elo", "inversus", "skyweaver", "team-wager"])
@settings(max_examples=150)
@given(st.lists(mutated_matches(), min_size=1, max_size=12))
def test_fuzzed_matches_fail_cleanly(name: str, inputs: list[Any]) -> None:
    league = rankcraft.League(bundled(name))  # (the ruleset loaded once: conftest)
    league.record(
        {"id": "first", "played_at": "2024-01-01", "teams": [["a"], ["c"]], "scores": [1, 0]}
    )
    for data in inputs:
        before = league.export()
        try:
            report = league.record(data)
        except rankcraft.RankcraftError:
            assert league.export() == before
            continue
        for change in report.changes:
            for state in (change.skill_after, change.rank_after):
                if state is None:
                    continue
                for value in (
                    vars(state).values()
                    if hasattr(state, "__dict__")
                    else [getattr(state, f) for f in state.__slots__ if not f.startswith("__")]
                ):
                    if isinstance(value, float):
                        assert math.isfinite(value)


PARAM_VALUES = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(-10, 10**6),
    st.text(max_size=5),
    st.booleans(),
    st.lists(st.floats(), max_size=3),
)


@settings(max_examples=200)
@given(
    st.sampled_from(["elo", "glicko1", "inversus", "skyweaver", "team-wager"]),
    st.dictionaries(
        st.sampled_from(
            [
                "k_factor",
                "c",
                "tau",
                "initial_phi",
                "min_deviation",
                "bounded",
                "rating_bounds",
                "divisor",
                "nope",
                "home_advantage",
                "margin",
                "initial_rating",
            ]
        ),
        PARAM_VALUES,
        max_size=3,
    ),
)
def test_fuzzed_rulesets_fail_cleanly(base: str, params: dict[str, Any]) -> None:
    import tomli_w

    table = rankcraft.ruleset.to_dict(bundled(base))
    table["update"].setdefault("params", {}).update(params)
    try:
        text = tomli_w.dumps(table)
    except (TypeError, ValueError):
        return  # not representable in TOML
    try:
        # (with the plugins the base was loaded with: the same checks, without a plugin
        # manager built per example)
        ruleset = rankcraft.loads_ruleset(text, plugins=bundled(base).plugins)
    except rankcraft.RulesetError:
        return
    league = rankcraft.League(ruleset)
    report = league.record(
        {"id": "m", "played_at": "2024-01-01", "teams": [["a"], ["b"]], "scores": [1, 0]}
    )
    assert all(math.isfinite(p) for p in report.expected)
