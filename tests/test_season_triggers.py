"""Season events triggered by the data: a season field of the match, or a long gap.

The histories are small and the ratings hand-computed: Elo with K = 32 from 1500, and a
regression half of the way back to 1500 at each season's end.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

import rankcraft
from rankcraft.cli import main

REGRESS = """
extends = "elo"
name = "{name}"
[reset]
plugin = "regress"
[reset.params]
fraction = 0.5
target = 1500.0
[[resets]]
kind = "season"
{trigger}
"""
BY_SEASON = REGRESS.format(name="by-season", trigger='season_field = "meta.season"')
BY_GAP = REGRESS.format(name="by-gap", trigger="gap_days = 60.0")
BY_DATE = REGRESS.format(name="by-date", trigger='every_days = 366.0\nstart = "2023-06-01"')


def expected(a: float, b: float) -> float:
    return 1.0 / (1.0 + 10.0 ** ((b - a) / 400.0))


def game(mid: str, day: str, a: str, b: str, season: Any = None) -> dict[str, Any]:
    match: dict[str, Any] = {"id": mid, "played_at": day, "teams": [[a], [b]], "scores": [1, 0]}
    if season is not None:
        match["meta"] = {"season": season}
    return match


# a basketball-like calendar: the 2023-24 finals run into June, the next season starts
# in October
SEASONS = [
    game("m1", "2024-01-10", "a", "b", "2023-24"),
    game("m2", "2024-06-05", "a", "b", "2023-24"),  # finals: June 1 would have reset
    game("m3", "2024-10-20", "c", "d", "2024-25"),
]
# after m1: a 1516, b 1484; after m2:
A2 = 1516.0 + 32.0 * (1.0 - expected(1516.0, 1484.0))
B2 = 3000.0 - A2


def ratings(league: rankcraft.League, *players: str) -> list[float]:
    return [league.player(p).skill.rating for p in players]


def test_a_season_field_resets_before_the_first_match_of_a_new_season() -> None:
    league = rankcraft.League(rankcraft.loads_ruleset(BY_SEASON))
    league.record_many(SEASONS[:2])
    assert ratings(league, "a", "b") == pytest.approx([A2, B2], abs=1e-9)  # no reset yet
    league.record(SEASONS[2])
    assert ratings(league, "a", "b") == pytest.approx(
        [1500 + (A2 - 1500) / 2, 1500 + (B2 - 1500) / 2], abs=1e-9
    )
    # the same history with the reset dated June 1: it falls between m1 and m2 (finals)
    dated = rankcraft.League(rankcraft.loads_ruleset(BY_DATE))
    dated.record_many(SEASONS[:2])
    a1, b1 = 1508.0, 1492.0  # m1's 1516/1484 halfway back to 1500 on 2024-06-01
    a2 = a1 + 32.0 * (1.0 - expected(a1, b1))
    assert ratings(dated, "a") == pytest.approx([a2], abs=1e-9)


def test_a_long_gap_resets_once_before_the_match_after_it() -> None:
    league = rankcraft.League(rankcraft.loads_ruleset(BY_GAP))
    league.record(game("m1", "2024-01-01", "a", "b"))
    league.record(game("m2", "2024-02-15", "c", "d"))  # 45 days: no event
    assert ratings(league, "a", "c") == [1516.0, 1516.0]
    # predict sees the gap rule: 15 days on, nothing; 107 days on, the regression
    assert league.predict([["a"], ["b"]], at="2024-03-01")[0] == pytest.approx(
        expected(1516.0, 1484.0)
    )
    ahead = league.predict([["a"], ["b"]], at="2024-06-01")[0]
    assert ahead == pytest.approx(expected(1508.0, 1492.0))
    assert ratings(league, "a") == [1516.0]  # a prediction changes nothing
    league.record(game("m3", "2024-06-01", "a", "b"))  # 107 days after m2: event first
    # record and predict agree on the first match after the event
    assert ratings(league, "a", "c", "d") == pytest.approx(
        [1508.0 + 32.0 * (1.0 - ahead), 1508.0, 1492.0]
    )
    league.record(game("m4", "2024-06-20", "c", "d"))  # 19 days: no event
    assert ratings(league, "d") == pytest.approx([1492.0 - 32.0 * expected(1492.0, 1508.0)])


def test_predict_applies_a_new_season_only_when_given_it() -> None:
    league = rankcraft.League(rankcraft.loads_ruleset(BY_SEASON))
    league.record_many(SEASONS[:2])
    # no match says a new season has begun: a prediction a year on is unregressed
    assert league.predict([["a"], ["b"]], at="2025-06-01")[0] == pytest.approx(expected(A2, B2))
    same = league.predict([["a"], ["b"]], at="2024-06-20", season="2023-24")[0]
    assert same == pytest.approx(expected(A2, B2))
    a3, b3 = 1500 + (A2 - 1500) / 2, 1500 + (B2 - 1500) / 2
    ahead = league.forecast([["a"], ["b"]], at="2024-10-20", season="2024-25")
    assert ahead.expected_score[0] == pytest.approx(expected(a3, b3))
    assert ratings(league, "a") == pytest.approx([A2])  # a prediction changes nothing
    league.record(game("m3", "2024-10-20", "a", "b", "2024-25"))  # record agrees
    assert ratings(league, "a") == pytest.approx([a3 + 32.0 * (1.0 - ahead.expected_score[0])])
    for season, at in ((2024.5, "2025-01-01"), (True, "2025-01-01"), ("2025-26", None)):
        with pytest.raises(rankcraft.InputError, match="'season' must be a string or an int"):
            league.predict([["a"], ["b"]], at=at, season=season)  # type: ignore[arg-type]


def test_a_match_without_its_season_is_refused_and_nothing_changes() -> None:
    league = rankcraft.League(rankcraft.loads_ruleset(BY_SEASON))
    league.record(SEASONS[0])
    before = league.export()
    with pytest.raises(rankcraft.MatchError, match=r"'m9' has no 'meta.season'"):
        league.record(game("m9", "2024-02-01", "a", "c"))
    with pytest.raises(
        rankcraft.MatchError, match=r"'meta.season' must be a string or an int.*2024.5"
    ):
        league.record(game("m9", "2024-02-01", "a", "c", 2024.5))
    with pytest.raises(rankcraft.MatchError, match="True") as caught:
        league.record_many([SEASONS[1], game("m9", "2024-07-01", "a", "c", True)])
    assert caught.value.item == 1
    assert league.export() == before


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ('season_field = "season"', "'season_field' must name a field of the match's free data"),
        ('season_field = "meta."', "'meta.'"),
        ("gap_days = 0.0", "'gap_days' must be a finite number"),
        ("gap_days = 30.0\nevery_days = 7.0", "exactly one of 'every_days'"),
        ("", "exactly one of 'every_days'"),
        ('gap_days = 30.0\nstart = "2024-01-01"', "'start' goes with 'every_days'"),
    ],
)
def test_bad_entries_are_refused_naming_the_field(entry: str, message: str) -> None:
    text = REGRESS.format(name="bad", trigger=entry)
    with pytest.raises(rankcraft.RulesetError, match=message) as caught:
        rankcraft.loads_ruleset(text)
    assert "ruleset.resets[0]" in str(caught.value)


HISTORY = [
    game(f"g{i}", f"{year}-{month:02d}-{day:02d}", x, y, f"{year - (month < 8)}")
    for i, (year, month, day, x, y) in enumerate(
        [
            (2022, 10, 1, "a", "b"),
            (2022, 12, 5, "c", "a"),
            (2023, 6, 10, "b", "c"),
            (2023, 10, 2, "d", "a"),
            (2023, 11, 9, "a", "c"),
            (2024, 2, 1, "b", "d"),
            (2024, 6, 14, "c", "d"),
            (2024, 10, 3, "a", "b"),
            (2025, 1, 7, "d", "c"),
        ]
    )
]


def players(league: rankcraft.League) -> Any:
    return league.export()["players"], league.export().get("schedule")


@pytest.mark.parametrize("ruleset", [BY_SEASON, BY_GAP])
def test_every_path_runs_the_same_events(ruleset: str, tmp_path: Path) -> None:
    rules = rankcraft.loads_ruleset(ruleset)
    one = rankcraft.League(rules)
    for match in HISTORY:
        one.record(match)
    want = players(one)
    many = rankcraft.League(rules)
    many.record_many(HISTORY)
    assert players(many) == want
    db = tmp_path / "l.sqlite"
    with rankcraft.League.open(db, rules) as league:  # two processes' worth, reopened
        league.record_many(HISTORY[:4])
    with rankcraft.League.open(db) as league:
        league.record_many(HISTORY[4:])
        assert players(league) == want
    moved = rankcraft.League(rules)
    moved.import_state(many.export())  # the schedule travels with the document
    moved.record(game("late", "2025-12-01", "a", "d", "2025"))
    many.record(game("late", "2025-12-01", "a", "d", "2025"))
    assert players(moved) == players(many)
    source = tmp_path / "h.jsonl"
    source.write_text("".join(json.dumps(m) + "\n" for m in HISTORY))
    toml = tmp_path / "r.toml"
    toml.write_text(ruleset)
    argv = ["replay", str(source), "--ruleset", str(toml), "--db", str(tmp_path / "r.sqlite")]
    assert main(argv, out=io.StringIO(), err=io.StringIO()) == 0
    with rankcraft.League.open(tmp_path / "r.sqlite") as league:
        assert players(league) == want
    # the events ran: a's rating is not what the same matches give without them
    plain = rankcraft.League("elo")
    plain.record_many(HISTORY)
    assert plain.export()["players"] != want[0]


@pytest.mark.parametrize("ruleset", [BY_SEASON, BY_GAP])
def test_postgres_one_match_path_runs_the_same_events(ruleset: str, pg_url: str) -> None:
    rules = rankcraft.loads_ruleset(ruleset)
    want = rankcraft.League(rules)
    want.record_many(HISTORY)
    with rankcraft.League.open(pg_url, rules) as league:
        for match in HISTORY:  # one match per transaction, row locks when no event is due
            league.record(match)
        assert players(league) == players(want)


def test_a_state_document_schedule_is_validated() -> None:
    league = rankcraft.League(rankcraft.loads_ruleset(BY_SEASON))
    league.record_many(SEASONS[:2])
    document = league.export()
    assert document["schedule"] == [{"since": "2024-01-10T00:00:00Z", "season": "2023-24"}]
    for bad, message in (
        (["2024-01-01"], r"'schedule\[0\]' must be an object with 'since'"),
        ([{"since": "2024-01-01"}], r"'schedule\[0\].season' must be a string or an integer"),
        ([{"since": "later", "season": "x"}], r"schedule\[0\].since"),
    ):
        with pytest.raises(rankcraft.StateError, match=message):
            rankcraft.League(rankcraft.loads_ruleset(BY_SEASON)).import_state(
                {**document, "schedule": bad}
            )


def test_the_cli_and_the_service_pass_the_season_on(tmp_path: Path) -> None:
    """``predict --season`` and ``POST /predict {"season"}`` forecast as League.forecast
    with the season; a whole number on the command line is read as a number."""
    from starlette.testclient import TestClient

    from rankcraft.serve import Settings, create_app
    from rankcraft.tokens import create_token

    ruleset = tmp_path / "by-season.toml"
    ruleset.write_text(BY_SEASON)
    db = tmp_path / "league.sqlite"
    history = [
        game("m1", "2024-01-10", "a", "b", 2023),
        game("m2", "2024-06-05", "a", "b", 2023),
    ]
    with rankcraft.League.open(db, rankcraft.load_ruleset(ruleset)) as league:
        league.record_many(history)
        want = {
            season: league.forecast([["a"], ["b"]], at="2024-10-20", season=season)
            for season in (2023, 2024)
        }
    assert want[2023].expected_score[0] == pytest.approx(expected(A2, B2))
    a3, b3 = 1500 + (A2 - 1500) / 2, 1500 + (B2 - 1500) / 2
    assert want[2024].expected_score[0] == pytest.approx(expected(a3, b3))
    for season in (2023, 2024):
        out, err = io.StringIO(), io.StringIO()
        argv = ["predict", "a", "b", "--db", str(db), "--at", "2024-10-20", "--json"]
        assert main([*argv, "--season", str(season)], out=out, err=err) == 0, err.getvalue()
        assert json.loads(out.getvalue())["expected_score"] == list(want[season].expected_score)
    league = rankcraft.League.open(db)
    _, token = create_token(league.store, scope="read")
    client = TestClient(
        create_app(league, Settings()), headers={"Authorization": f"Bearer {token}"}
    )
    body = {"sides": [["a"], ["b"]], "at": "2024-10-20T00:00:00Z", "season": 2024}
    answer = client.post("/predict", json=body)
    assert answer.status_code == 200, answer.text
    assert answer.json()["expected_score"] == list(want[2024].expected_score)
    answer = client.post("/predict", json={**body, "season": 2024.5})
    assert answer.status_code == 400 and "season" in answer.text
    league.close()
