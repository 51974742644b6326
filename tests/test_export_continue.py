"""Export, import into a new database, continue: the same as continuing the original, for
every bundled ruleset (a season schedule and the ruleset travel with the document)."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

import rankcraft
from rankcraft.cli import main
from rankcraft.ruleset import bundled_names


def history(n: int = 700, players: int = 16, seed: int = 5) -> list[dict[str, Any]]:
    """1-v-1 matches over about three years (weekly, monthly and yearly events all come)."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        a, b = rng.sample(range(players), 2)
        day = i * 1100 // n
        out.append(
            {
                "id": f"m{i}",
                "played_at": "2020-01-01T12:00:00Z".replace("2020-01-01", _date(day)),
                "teams": [[f"p{a}"], [f"p{b}"]],
                "scores": rng.choice([[1, 0], [0, 1], [2, 2], [3, 1]]),
                "seconds_played": [[600 + rng.randrange(300)], [600 + rng.randrange(300)]],
            }
        )
    return out


def _date(day: int) -> str:
    from datetime import date, timedelta

    return (date(2020, 1, 1) + timedelta(days=day)).isoformat()


@pytest.mark.parametrize("name", bundled_names())
def test_export_import_continue_equals_continuing(name: str) -> None:
    # (a history model refits every day and holds no season event: a sparser history of
    # the same three years checks the same; ttt's fit weighs these 1-v-1 shares of play,
    # and converges more slowly with them)
    matches = history(150 if rankcraft.load_ruleset(name).fit else 700)
    cut = len(matches) * 9 // 14
    original = rankcraft.League(name)
    original.record_many(matches[:cut], close=False)
    document = json.loads(json.dumps(original.export()))  # through JSON, as a file is
    assert document["ruleset_toml"] == rankcraft.dumps_ruleset(original.ruleset)
    copy = rankcraft.League(rankcraft.loads_ruleset(document["ruleset_toml"]))
    copy.import_state(document)
    original.record_many(matches[cut:])
    copy.record_many(matches[cut:])
    assert copy.export()["players"] == original.export()["players"]
    assert copy.export().get("schedule") == original.export().get("schedule")


def test_an_import_into_a_new_database_needs_no_ruleset_file(tmp_path: Path) -> None:
    custom = tmp_path / "mine.toml"
    custom.write_text('name = "mine"\nextends = "elo"\n[update.params]\nk_factor = 20.0\n')
    source = tmp_path / "m.jsonl"
    source.write_text("".join(json.dumps(m) + "\n" for m in history(100)))
    old, new = str(tmp_path / "old.sqlite"), str(tmp_path / "new.sqlite")
    assert main(["replay", str(source), "--ruleset", str(custom), "--db", old]) == 0
    backup = tmp_path / "backup.json"
    assert main(["export", "--db", old, "--out", str(backup)]) == 0
    custom.unlink()  # the ruleset file is gone: the backup carries the ruleset
    assert main(["import", str(backup), "--db", new]) == 0
    with rankcraft.League.open(new) as league, rankcraft.League.open(old) as before:
        assert league.ruleset.name == "mine" and league.ruleset == before.ruleset
        assert league.export()["players"] == before.export()["players"]


def test_a_schedule_that_does_not_fit_the_ruleset_is_refused() -> None:
    league = rankcraft.League("skyweaver")
    document = league.export()
    document["schedule"] = ["2024-01-01"]  # skyweaver has two scheduled events
    with pytest.raises(rankcraft.StateError, match="'schedule' must list one time"):
        league.import_state(document)
    document["schedule"] = ["2024-01-01", "soon"]
    with pytest.raises(rankcraft.StateError, match="schedule\\[1\\]"):
        league.import_state(document)
