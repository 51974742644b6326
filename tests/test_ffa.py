"""The bundled ``ffa`` ruleset and the free-for-all options it uses: opponent weights
shared among the rivals (``split``, ``power``), and the active table."""

from __future__ import annotations

import gzip
import itertools
import json
from datetime import timedelta
from typing import Any

import pytest

import rankcraft
from rankcraft.plugins._team import opponent_share

from .conftest import SHARED_DATA, SHARED_DATA_MISSING


def _race(mid: str, day: str, drivers: list[str]) -> dict[str, Any]:
    return {
        "id": mid,
        "played_at": day,
        "teams": [[d] for d in drivers],
        "ranks": list(range(1, len(drivers) + 1)),
    }


def _elo(weight: str, power: float = 0.5) -> rankcraft.League:
    text = (
        f'extends = "elo"\nname = "x"\n[team.params]\nopponent_weight = "{weight}"\n'
        f"opponent_power = {power}\n"
    )
    return rankcraft.League(rankcraft.loads_ruleset(text))


def _winner_gain(league: rankcraft.League, field: int) -> float:
    report = league.record(_race("r", "2024-01-01", [f"d{i}" for i in range(field)]))
    return float(report.changes[0].skill_after.rating - 1500.0)


def test_opponent_share_spans_full_to_split() -> None:
    assert opponent_share(19, 0.0) == 1.0
    assert opponent_share(19, 1.0) == pytest.approx(1 / 19)
    assert opponent_share(16, 0.5) == pytest.approx(0.25)
    assert opponent_share(1, 0.8) == 1.0  # a duel is one game whatever the power


@pytest.mark.parametrize("field", [5, 20])
def test_power_between_a_game_per_rival_and_one_per_race(field: int) -> None:
    """A winner among newcomers gains K/2 per rival weight: 16·(n−1)·(n−1)^−power."""
    rivals = field - 1
    assert _winner_gain(_elo("full"), field) == pytest.approx(16.0 * rivals)
    assert _winner_gain(_elo("split"), field) == pytest.approx(16.0)
    assert _winner_gain(_elo("power", 0.0), field) == pytest.approx(16.0 * rivals)
    assert _winner_gain(_elo("power", 1.0), field) == pytest.approx(16.0)
    assert _winner_gain(_elo("power", 0.5), field) == pytest.approx(16.0 * rivals**0.5)


def test_power_in_the_individual_plugin() -> None:
    text = (
        'extends = "elo"\nname = "x"\n[team]\nplugin = "individual"\n[team.params]\n'
        'opponent_weight = "power"\nopponent_power = 0.5\n'
    )
    league = rankcraft.League(rankcraft.loads_ruleset(text))
    report = league.record(
        {
            "id": "m",
            "played_at": "2024-01-01",
            "teams": [["a"], ["b", "c", "d", "e"]],
            "scores": [1, 0],
        }
    )
    assert report.change("a").skill_after.rating == pytest.approx(1500 + 16.0 * 4 * 0.5)


def test_opponent_power_is_checked() -> None:
    with pytest.raises(rankcraft.RulesetError, match=r"'opponent_power' must be .*: 1.5"):
        rankcraft.loads_ruleset(
            'name = "x"\nextends = "ffa"\n[team.params]\nopponent_power = 1.5\n'
        )


def test_ffa_shares_a_race_and_shows_the_active_table() -> None:
    league = rankcraft.League("ffa")
    drivers = [f"d{i:02d}" for i in range(20)]
    report = league.record(_race("r1", "2024-03-02", drivers))
    assert round(report.changes[0].skill_after.rating - 1500.0, 1) == 154.1
    league.record(_race("r2", "2025-04-06", drivers[1:]))
    assert "d00" not in [p.id for p in league.leaderboard()]
    assert "d00" in [p.id for p in league.leaderboard(everyone=True)]
    shown = [league.shown(p).value for p in league.leaderboard()]
    assert shown == sorted(shown, reverse=True)


@pytest.mark.skipif(not SHARED_DATA.is_dir(), reason=SHARED_DATA_MISSING)
def test_formula_one_prefix() -> None:
    """The first 300 races (1950–1978): no race moves an ffa rating by more than 250
    points (elo: more than 500), and the table lists only drivers of the last year."""
    with gzip.open(SHARED_DATA / "f1_races_1950_2026.jsonl.gz", "rt", encoding="utf-8") as f:
        races = [json.loads(line) for line in itertools.islice(f, 300)]
    biggest = {}
    for name in ("elo", "ffa"):
        league = rankcraft.League(name)
        league.record_many(races)
        biggest[name] = max(
            abs(c.skill_after.rating - c.skill_before.rating)
            for race in races
            for c in league.report(race["id"]).changes
        )
        if name == "ffa":
            table = league.leaderboard()
            latest = max(p.last_played for p in league.players() if p.last_played)
            assert table and all(latest - p.last_played <= timedelta(days=365) for p in table)
            assert len(table) < len(league) / 5
    assert biggest["ffa"] < 250 < 500 < biggest["elo"]
