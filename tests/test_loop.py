"""The one rating loop (rankcraft.loop) gives the same numbers whoever calls it: a League
recording matches with their history, the streaming Rater keeping none, and a scored
replay (evaluate) forecasting from the rows each match meets (tests/test_golden checks
the recorded results through the stream as through the league)."""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rankcraft
import rankcraft.writing
from rankcraft.evaluate import evaluate
from rankcraft.ruleset import bundled_names
from rankcraft.store.memory import MemoryStore

PLAYERS = [f"p{k}" for k in range(9)]


def _history(seed: int, n: int, ffa: bool) -> list[dict[str, Any]]:
    """Random matches of many shapes: duels (most), 2-v-2, free-for-alls of three when
    the ruleset rates them, a home side, draws, hours or weeks apart (decay, periods,
    season events)."""
    rng = random.Random(seed)
    out = []
    day = 0.0
    for i in range(n):
        day += rng.choice([0.0, 0.3, 1.0, 3.0, 9.0])
        shape = rng.random()
        chosen = rng.sample(PLAYERS, 4)
        if shape < 0.7:
            teams = [[chosen[0]], [chosen[1]]]
        elif shape < 0.85 or not ffa:
            teams = [chosen[:2], chosen[2:]]
        else:
            teams = [[chosen[0]], [chosen[1]], [chosen[2]]]
        scores = [rng.choice([0, 1, 1, 2, 3]) for _ in teams]
        match: dict[str, Any] = {
            "id": f"m{i}",
            "played_at": "2024-01-01T00:00:00Z" if day == 0 else _at(day),
            "teams": teams,
            "scores": scores,
        }
        if len(teams) == 2 and rng.random() < 0.2:
            match["home"] = rng.choice([0, 1])
        out.append(match)
    return out


def _at(day: float) -> str:
    from datetime import UTC, datetime, timedelta

    when = datetime(2024, 1, 1, tzinfo=UTC) + timedelta(days=day)
    return when.isoformat().replace("+00:00", "Z")


def _rates_ffa(name: str) -> bool:
    league = rankcraft.League(name)
    try:
        league.record(
            {
                "id": "x",
                "played_at": "2024-01-01",
                "teams": [["a"], ["b"], ["c"]],
                "ranks": [1, 2, 3],
            }
        )
    except rankcraft.RankcraftError:
        return False
    return True


RULESETS = sorted(bundled_names())
FFA = {name: _rates_ffa(name) for name in RULESETS}


@pytest.mark.parametrize("name", RULESETS)
@settings(max_examples=4, deadline=None)
@given(seed=st.integers(0, 10**6))
def test_league_stream_and_scored_replay_rate_alike(name: str, seed: int) -> None:
    matches = _history(seed, 90, FFA[name])
    league = rankcraft.League(name, store=MemoryStore(pack_after=None))
    league.record_many(matches)
    rater = rankcraft.Rater(name)
    forecasts = rater.rate(matches, forecasts=True)
    assert rater.league.export()["players"] == league.export()["players"]
    assert forecasts == [league.report(m["id"]).expected for m in matches]
    # a scored replay: the two-sided matches' expected scores are the reports'
    scored = evaluate(rankcraft.League(name), matches, test_from="2024-01-01")
    two_sided = [league.report(m["id"]).expected[0] for m in matches if len(m["teams"]) == 2]
    if not any(len(m["teams"]) > 2 for m in matches):
        assert [p for p, _ in scored.predictions] == two_sided


def test_a_refused_match_leaves_the_rater_as_it_was() -> None:
    rater = rankcraft.Rater("elo")
    first = [{"id": "a", "played_at": "2024-02-01", "teams": [["x"], ["y"]], "scores": [1, 0]}]
    rater.rate(first)
    before = rater.ratings()
    late = [
        {"id": "b", "played_at": "2024-02-02", "teams": [["x"], ["z"]], "scores": [1, 0]},
        {"id": "c", "played_at": "2024-01-01", "teams": [["y"], ["z"]], "scores": [1, 0]},
    ]
    with pytest.raises(rankcraft.MatchError) as caught:
        rater.rate(late)
    assert caught.value.item == 1
    assert rater.ratings() == before and "z" not in rater.ratings()


def test_a_rater_fed_in_pieces_rates_as_one_feed() -> None:
    matches = _history(7, 200, True)
    whole = rankcraft.Rater("glicko1")
    whole.rate(matches)
    pieces = rankcraft.Rater("glicko1")
    for start in range(0, 200, 37):
        pieces.rate(matches[start : start + 37])
    assert pieces.ratings() == whole.ratings()
    assert rankcraft.rate(matches, "glicko1").skills == whole.ratings()


def test_readers_in_a_transaction_see_each_match_at_once() -> None:
    """The loop changes the transaction's own copy of a row in place: a read between
    two matches of one batch sees the first, and a failed batch leaves the rows as
    they were committed."""
    league = rankcraft.League("elo")
    league.record({"id": "0", "played_at": "2024-01-01", "teams": [["a"], ["b"]], "scores": [1, 0]})
    committed = league.player("a").skill
    with pytest.raises(rankcraft.MatchError), league.batch():
        league.record(
            {"id": "1", "played_at": "2024-01-02", "teams": [["a"], ["b"]], "scores": [1, 0]}
        )
        inside = league.player("a").skill
        league.record(
            {"id": "2", "played_at": "2023-01-01", "teams": [["a"], ["b"]], "scores": [1, 0]}
        )
    assert inside.rating > committed.rating
    assert league.player("a").skill == committed and league.match_count == 1


@pytest.mark.parametrize("name", ["elo", "glicko2", "skyweaver"])
def test_a_league_on_a_database_streams_as_it_records(
    db_url: str, name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``League.stream`` over a database reads a chunk at a time (its players in one
    query) and keeps no match, yet leaves the players as ``record_many`` does, in one
    transaction: a refused match leaves the database as it was."""
    monkeypatch.setattr(rankcraft.writing, "CHUNK", 200)  # (2,000: the same code, 10x the time)
    matches = _history(11, 260, FFA[name])  # (more than one chunk)
    recorded = rankcraft.League(name)
    recorded.record_many(matches)
    with rankcraft.League.open(db_url, name) as league:
        assert league.stream(matches[:250]) == 250
        late = {**matches[-1], "id": "late", "played_at": "2023-01-01T00:00:00Z"}
        with pytest.raises(rankcraft.MatchError) as caught:
            league.stream([*matches[250:], late])
        assert caught.value.item == len(matches) - 250
        with pytest.raises(rankcraft.MatchError) as caught:  # (refused in their turn)
            league.stream([*matches[250:], late, {"id": "bad"}])
        assert caught.value.item == len(matches) - 250 and "'late'" in str(caught.value)
        assert league.stream(matches[250:]) == len(matches) - 250
    with rankcraft.League.open(db_url) as league:
        assert league.match_count == 0
        assert league.export()["players"] == recorded.export()["players"]
