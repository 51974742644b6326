"""League-wide labels for some players read only the players the labels depend on
(``rankcraft_standings_scope``): Skyweaver's Grandweaver needs the Masters alone, the
ladder's title the players from its ``title_from`` tier up."""

from __future__ import annotations

import random
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import attrs
import pytest

import rankcraft
from rankcraft.plugins.ladder import rank_at
from rankcraft.plugins.skyweaver import tier_of

SMALL_TOP = 'extends = "skyweaver"\nname = "sky-top3"\n[rank.params]\ntop_n = 3\n'


def games(n: int, players: int, seed: int) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        a, b = rng.sample(range(players), 2)
        out.append(
            {
                "id": f"g{i}",
                "played_at": f"2024-03-{1 + i // 24:02d}T{i % 24:02d}:00:00Z",
                "teams": [[f"p{a}"], [f"p{b}"]],
                "scores": [1, 0] if rng.random() < 0.5 else [0, 1],
            }
        )
    return out


def with_masters(document: dict[str, Any], points: dict[str, int]) -> dict[str, Any]:
    """The export ``document`` with these players' RP (and tier) set."""
    for player in document["players"]:
        if player["id"] in points:
            player["rank"]["points"] = points[player["id"]]
            player["rank"]["tier"] = tier_of(points[player["id"]])
    return document


def spy_on_reads(league: rankcraft.League, monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """Make reading every player fail the test, and record the ids each scoped read
    (``Store.load_where``) of ``league``'s store returns, in the list returned."""
    store = league.store
    monkeypatch.setattr(store, "load_players", lambda: pytest.fail("read every player"))
    asked: list[list[str]] = []
    load_where = store.load_where

    def spy(*args: Any) -> Any:
        found = load_where(*args)
        asked.append(sorted(found))
        return found

    monkeypatch.setattr(store, "load_where", spy)
    return asked


@pytest.mark.parametrize("on_disk", [False, True])
def test_labels_of_some_players_equal_the_whole_leagues(on_disk: bool, tmp_path: Path) -> None:
    ruleset = rankcraft.loads_ruleset(SMALL_TOP)
    source = rankcraft.League(ruleset)
    source.record_many(games(200, 30, 4))
    masters = {"p3": 1500, "p7": 1300, "p11": 1300, "p20": 1250, "p25": 1200, "p2": 1199}
    document = with_masters(source.export(), masters)
    league = (
        rankcraft.League.open(tmp_path / "l.sqlite", ruleset)
        if on_disk
        else rankcraft.League(ruleset)
    )
    league.import_state(document)
    everyone = league.standings()
    assert [p for p, label in everyone.items() if label == "Grandweaver"] == ["p11", "p3", "p7"]
    assert everyone["p20"] == everyone["p25"] == "Master" and everyone["p2"] != "Master"
    for some in (["p3"], ["p20", "p2", "p0"], ["nobody", "p11"], [r.id for r in league.players()]):
        assert league.standings(some) == {p: everyone[p] for p in some if p in everyone}


def test_a_page_of_a_league_on_disk_reads_the_masters_only(tmp_path: Path, monkeypatch) -> None:
    ruleset = rankcraft.loads_ruleset(SMALL_TOP)
    source = rankcraft.League(ruleset)
    source.record_many(games(120, 25, 8))
    document = with_masters(source.export(), {"p1": 1400, "p2": 1300})
    with rankcraft.League.open(tmp_path / "l.sqlite", ruleset) as league:
        league.import_state(document)
    league = rankcraft.League.open(tmp_path / "l.sqlite")
    asked = spy_on_reads(league, monkeypatch)
    assert league.standings(["p1", "p9"]) == {
        "p1": "Grandweaver",
        "p9": tier_of(league.player("p9").rank.points),
    }
    assert asked == [["p1", "p2"]]
    league.close()


SMALL_TITLE = 'extends = "ladder"\nname = "ladder-top2"\n[rank.params]\ntitle_top = 2\n'


def with_steps(
    league: rankcraft.League, document: dict[str, Any], steps: dict[str, tuple[int, int]]
) -> dict[str, Any]:
    """The export ``document`` with these players' ladder (step, points) set."""
    params = league.ruleset.rank.params
    for player in document["players"]:
        if player["id"] in steps:
            step, points = steps[player["id"]]
            player["rank"] = attrs.asdict(rank_at(params, step, points, games=30))
    return document


def test_the_ladder_title_reads_the_players_from_its_tier_up(
    db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    ruleset = rankcraft.loads_ruleset(SMALL_TITLE)
    source = rankcraft.League(ruleset)
    source.record_many(games(150, 20, 5))
    params = source.ruleset.rank.params
    master = params.title_step
    steps = {"p1": (master, 90), "p2": (master, 40), "p3": (master, 0), "p4": (master - 1, 100)}
    document = with_steps(source, source.export(), steps)
    everyone_in_memory = rankcraft.League(ruleset)
    everyone_in_memory.import_state(document)
    everyone = everyone_in_memory.standings()
    # the two best Masters hold the title; a Diamond I in a promotion series does not
    assert [p for p, label in everyone.items() if label == "Challenger"] == ["p1", "p2"]
    assert everyone["p3"] == "Master" and everyone["p4"] == "Diamond I"
    with rankcraft.League.open(db_url, ruleset) as league:
        league.import_state(document)
    league = rankcraft.League.open(db_url)
    asked = spy_on_reads(league, monkeypatch)
    for some in (["p3"], ["p4", "p0", "nobody"], ["p2", "p9"]):
        assert league.standings(some) == {p: everyone[p] for p in some if p in everyone}
    assert asked == [["p1", "p2", "p3"], ["p1", "p2", "p3"], ["p1", "p2", "p3"]]
    league.close()


def test_the_wager_percentile_counts_the_active_players(
    db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A percentile is a count (``Store.count_below``), not a read of the active players:
    the labels of some players read those players alone."""
    ruleset = rankcraft.loads_ruleset(
        'extends = "team-wager"\nname = "wager-short"\n[update.params]\n'
        "active_days = 2\nplacement_matches = 3\n"
    )
    # the last matches: 2 days and an hour, exactly 2 days, 1.5 days and 0 days before
    # the latest; "active" is within 2 days of it, so p0-p5 are and p6, p7 are not
    last = [
        ("p6", "p7", "08T11"),
        ("p4", "p5", "08T12"),
        ("p2", "p3", "09T00"),
        ("p0", "p1", "10T12"),
    ]
    late = [
        {
            "id": f"late-{a}",
            "played_at": f"2024-04-{day}:00:00Z",
            "teams": [[a], [b]],
            "scores": [1, 0],
        }
        for a, b, day in last
    ]
    db = db_url
    with rankcraft.League.open(db, ruleset) as league:
        league.record_many(games(150, 24, 6) + late)
        everyone = league.standings()
    active = [f"p{i}" for i in range(6)]
    assert sorted(p for p, label in everyone.items() if label.startswith("percentile")) == active
    assert everyone["p6"] == everyone["p20"] == "inactive"
    league = rankcraft.League.open(db)
    asked = spy_on_reads(league, monkeypatch)
    counts = []
    count_below = league.store.count_below
    monkeypatch.setattr(
        league.store, "count_below", lambda *a: counts.append(a[1:]) or count_below(*a)
    )
    for some in (["p0"], ["p20", "p5", "nobody"], ["p6", "p7"], active):
        assert league.standings(some) == {p: everyone[p] for p in some if p in everyone}
    assert asked == [[]] * 4
    since = datetime(2024, 4, 8, 12, tzinfo=UTC)  # (two days before the latest match)
    assert counts == [(since, 3), (since, 3), (since, 3)]  # (p6 and p7: none active)
    league.close()


def test_a_window_reaching_before_the_year_1_holds_everyone(tmp_path: Path) -> None:
    """``active_days`` may be 1e6 (the params allow it): the scope's window then starts
    before any datetime, and everyone who finished placement is active."""
    ruleset = rankcraft.loads_ruleset(
        'extends = "team-wager"\nname = "wager-long"\n[update.params]\n'
        "active_days = 1e6\nplacement_matches = 1\n[display]\nactive_days = 1e6\n"
    )
    with rankcraft.League.open(tmp_path / "l.sqlite", ruleset) as league:
        league.record_many(games(60, 10, 9))
        everyone = league.standings()
        assert all(label.startswith("percentile") for label in everyone.values())
        assert league.standings(["p1", "p2"]) == {"p1": everyone["p1"], "p2": everyone["p2"]}
        assert len(league.leaderboard(20)) == len(everyone) == 10
