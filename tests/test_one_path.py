"""One path: a plugin written with the documented hooks alone runs on the same loop as the
bundled plugins, and gives the same numbers when it does the same arithmetic."""

from __future__ import annotations

import functools
import random
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

import rankcraft
from rankcraft.cli import main

from .conftest import bundled

EXAMPLES = Path(__file__).resolve().parents[1] / "docs" / "examples" / "plugins"
HOOKS_ELO = 'name = "hooks-elo"\n[update]\nplugin = "hooks_elo"\n'


@functools.cache
def hooks_elo() -> rankcraft.Ruleset:
    """The ruleset of the folder plugin, loaded once per process (the property below
    makes two leagues per example)."""
    plugins = rankcraft.Plugins(rankcraft.get_plugin_manager(plugin_dirs=[EXAMPLES]))
    return rankcraft.loads_ruleset(HOOKS_ELO, plugins=plugins)


def hooks_elo_league() -> rankcraft.League:
    return rankcraft.League(hooks_elo())


def history(seed: int, n: int, players: int = 30) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        a, b = rng.sample(range(players), 2)
        out.append(
            {
                "id": f"m{i}",
                "played_at": f"2024-01-{1 + i * 28 // n:02d}",
                "teams": [[f"p{a}"], [f"p{b}"]],
                "scores": rng.choice([[1, 0], [0, 1], [1, 1], [3, 2]]),
            }
        )
    return out


def test_a_third_party_elo_equals_the_bundled_one_bit_for_bit() -> None:
    matches = history(7, 3000)
    ours, theirs = rankcraft.League("elo"), hooks_elo_league()
    ours.record_many(matches)
    theirs.record_many(matches)
    assert len(ours) == len(theirs) == 30
    for record in ours.players():
        assert theirs.player(record.id).skill.rating == record.skill.rating
    last = matches[-1]["id"]
    assert theirs.report(last).expected == ours.report(last).expected
    assert theirs.report(last).change(matches[-1]["teams"][0][0]).factors == {"k": 32.0}


@given(st.integers(0, 10_000), st.integers(1, 300))
def test_any_history_gives_the_same_ratings_on_either_plugin(seed: int, n: int) -> None:
    matches = history(seed, n, players=8)
    ours, theirs = rankcraft.League(bundled("elo")), hooks_elo_league()
    ours.record_many(matches)
    theirs.record_many(matches)
    assert [r.skill.rating for r in ours.players()] == [r.skill.rating for r in theirs.players()]
    assert ours.predict([["p0"], ["p1"]]) == theirs.predict([["p0"], ["p1"]])


def test_a_folder_plugin_replays_from_the_command_line(tmp_path: Path, capsys: Any) -> None:
    import json

    source = tmp_path / "m.jsonl"
    source.write_text("".join(json.dumps(m) + "\n" for m in history(3, 200)))
    ruleset = tmp_path / "hooks-elo.toml"
    ruleset.write_text(HOOKS_ELO)
    db = str(tmp_path / "l.sqlite")
    args = ["--plugins-dir", str(EXAMPLES), "replay", str(source), "--ruleset", str(ruleset)]
    assert main([*args, "--db", db]) == 0
    assert main(["--plugins-dir", str(EXAMPLES), "leaderboard", "--db", db, "--json"]) == 0
    board = json.loads(capsys.readouterr().out.split("\n", 1)[1])
    reference = rankcraft.League("elo")
    reference.record_many(history(3, 200))
    best = reference.leaderboard(1)[0]
    assert board[0]["id"] == best.id
    assert board[0]["skill"]["rating"] == best.skill.rating
    # without the folder the stored ruleset names a plugin nobody provides
    assert main(["leaderboard", "--db", db]) == 2
