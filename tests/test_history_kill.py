"""A history model's league killed with SIGKILL during a replay (the forward models' test
in tests/test_kill.py, for the ``ttt`` and ``football-goals-fit`` rulesets): what is kept
is an exact prefix of the file in whole chunks, its players are those of an uninterrupted
replay of that prefix, and the reopened league, its fit rebuilt from the stored history,
goes on to end where an uninterrupted replay of the whole file ends."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

import rankcraft
from rankcraft.cli import main

from .conftest import ready_child, run_or_kill
from .test_goals_fit_league import history as football
from .test_history_model import history as matches

CHILD = r"""
import sys
import rankcraft
from rankcraft.cli import main

db, data, name = sys.argv[1:4]
rankcraft.League(name).close()  # (the plugins loaded: the kill lands in the replay)
print("ready", flush=True)
code = main(["replay", data, "--ruleset", name, "--db", db, "--commit-every", "20"])
assert code == 0, code
print("done", flush=True)
"""


def _run(db: Path, data: Path, name: str, delay: float | None) -> float:
    return run_or_kill(ready_child(CHILD, str(db), str(data), name), delay)[1]


def _players(league: rankcraft.League) -> list[dict[str, Any]]:
    return list(league.export()["players"])


def _history(name: str) -> list[dict[str, Any]]:
    if name == "ttt":
        return matches(160, seed=42, players=30, a_day=4)
    return football(days=70, seed=42)  # (scores, home sides, competitions)


@pytest.mark.slow(seconds=30)
@pytest.mark.parametrize("name", ["ttt", "football-goals-fit"])
def test_a_killed_replay_keeps_a_prefix_and_the_fit_is_rebuilt(tmp_path: Path, name: str) -> None:
    history = _history(name)
    data = tmp_path / "m.jsonl"
    data.write_text("".join(json.dumps(m) + "\n" for m in history))
    whole = rankcraft.League(name)
    whole.record_many(history)
    seconds = _run(tmp_path / "whole.sqlite", data, name, None)
    rng = random.Random(7)
    for k in range(2):
        db = tmp_path / f"killed{k}.sqlite"
        _run(db, data, name, rng.uniform(0.2, 0.9) * seconds)
        if not db.exists():  # (killed before the first commit made the file)
            continue
        with rankcraft.League.open(db, create=False) as league:
            ids = [match.id for _, match in league.store.history()]
            done = len(ids)
            assert ids == [m["id"] for m in history[:done]]  # a prefix of the file
            assert done % 20 == 0 or done == len(history), done
            prefix = rankcraft.League(name)
            prefix.record_many(history[:done])
            assert _players(league) == _players(prefix)
        # a second run passes over what was kept, its fit rebuilt from the stored history
        assert main(["replay", str(data), "--db", str(db), "--skip-seen"]) == 0
        with rankcraft.League.open(db, create=False) as league:
            assert _players(league) == _players(whole)
