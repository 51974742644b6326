"""Matchmaking (docs/matchmaking.md): rank filters over active players, match quality,
balanced teams, from Python, the command line and HTTP."""

from __future__ import annotations

import io
import itertools
import json
import math
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rankcraft
from rankcraft import InputError, UnknownPlayerError, matchmaking
from rankcraft.cli import main
from rankcraft.matchmaking import RankFilter, closeness, gaussian_quality, split_count

ACTIVE_AT = "2024-05-01T20:00:00Z"


def elo_league(ratings: dict[str, float], last: str = ACTIVE_AT) -> rankcraft.League:
    league = rankcraft.League("elo")
    league.import_state(
        {
            "players": [
                {"id": p, "skill": {"rating": r, "peak": r}, "matches": 3, "last_played": last}
                for p, r in ratings.items()
            ]
        }
    )
    return league


LADDER = {f"p{i:02d}": 1400.0 + 10 * i for i in range(20)}
"""20 active players 10 points apart: p{i} is at percentile 5i."""


@pytest.fixture(scope="module")
def ladder() -> rankcraft.League:
    league = elo_league(LADDER)
    league.import_state(
        {
            "players": [
                {
                    "id": "idle",
                    "skill": {"rating": 1500.0, "peak": 1500.0},
                    "matches": 9,
                    "last_played": "2024-03-01T00:00:00Z",
                },
            ]
        }
    )
    return league


# -- active players and percentiles --------------------------------------------------------


def test_active_players_are_sorted_once_and_leave_out_the_idle(ladder: rankcraft.League) -> None:
    active = ladder.active_players()
    assert [p for p, _ in active] == sorted(LADDER)
    assert [v for _, v in active] == sorted(LADDER.values())
    assert ("idle", 1500.0) in ladder.active_players(active_days=90)
    assert ladder.active_players(at="2024-03-01T12:00:00Z", active_days=1) == [("idle", 1500.0)]


def test_a_database_reads_the_active_players_columns_alone(
    db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a database the active players are its ids and sort keys in the window
    (``Store.active_keys``), never every player's record; the answers are a league in
    memory's, windows ending at the latest match or at ``at``, edges included."""
    from .test_census import games

    history = games(300, 40, 11)
    memory = rankcraft.League("elo")
    memory.record_many(history)
    with rankcraft.League.open(db_url, "elo") as league:
        league.record_many(history)
    league = rankcraft.League.open(db_url)
    monkeypatch.setattr(league.store, "load_players", lambda: pytest.fail("read every player"))
    last = sorted({r.last_played for r in memory.players() if r.last_played})
    edge = last[-1] - last[-5]  # (a window starting exactly on a player's last match)
    for days in (0.0, edge.total_seconds() / 86400, 7.0, 1e6):
        for at in (None, last[len(last) // 2].isoformat()):
            asked = league.active_players(active_days=days, at=at)
            assert asked == memory.active_players(active_days=days, at=at)
    assert len(league.active_players(active_days=edge.total_seconds() / 86400)) >= 5
    with pytest.raises(InputError, match=r"'at' must be a time with a time zone"):
        league.active_players(at=datetime(2024, 1, 8))  # (naive: local time in SQL)
    ids = [p for p, _ in league.active_players(active_days=7.0)]
    for party in (ids[:1], ids[len(ids) // 2 :][:2]):
        assert league.find_opponents(party, active_days=7.0) == memory.find_opponents(
            party, active_days=7.0
        )
    league.close()


def test_the_wager_ruleset_says_who_is_active() -> None:
    league = rankcraft.League("team-wager")
    assert matchmaking.active_days_of(league) == 30.0
    assert matchmaking.active_days_of(rankcraft.League("elo")) == matchmaking.DEFAULT_ACTIVE_DAYS


def test_percentiles_count_strictly_lower_players_and_ties_share() -> None:
    league = elo_league({"a": 1000.0, "b": 1100.0, "c": 1100.0, "d": 1300.0})
    found = league.find_opponents(["b", "c"], RankFilter(width=0, strict=True))
    # b and c tie: 1 of 4 below them -> 25; d has 3 below -> 75
    assert found.percentiles == (25.0, 25.0)
    assert found.candidates == ()
    wide = league.find_opponents("a", RankFilter(width=100, strict=True))
    assert [(c.id, c.percentile) for c in wide.candidates] == [
        ("b", 25.0),
        ("c", 25.0),
        ("d", 75.0),
    ]
    assert wide.active == 4 and wide.found == 3


def test_the_wager_s_standing_is_the_percentile_s_bucket() -> None:
    league = rankcraft.League("team-wager")
    ranks = [1.0, 2.5, 2.5, 3.0, 7.25, 7.25, 7.25, 12.0, 20.0, 31.5, 31.5]
    league.import_state(
        {
            "players": [
                {"id": f"w{i}", "skill": {"rank": r}, "matches": 12, "last_played": ACTIVE_AT}
                for i, r in enumerate(ranks)
            ]
        }
    )
    standings = league.standings()
    everyone = league.find_opponents("w0", RankFilter(width=100, strict=True))
    for c in [
        *everyone.candidates,
        rankcraft.matchmaking.Candidate(id="w0", value=1.0, percentile=0.0),
    ]:
        assert standings[c.id] == f"percentile {1 + math.floor(c.percentile)}", c


# -- rank filters --------------------------------------------------------------------------


def test_a_strict_filter_never_widens(ladder: rankcraft.League) -> None:
    found = ladder.find_opponents("p10", RankFilter(width=5, strict=True), needed=5, waited=1e6)
    assert found.width == 5.0 and (found.low, found.high) == (45.0, 55.0)
    assert [c.id for c in found.candidates] == ["p09", "p11"]
    assert not found.enough and found.found == 2


def test_a_loose_filter_widens_on_its_schedule(ladder: rankcraft.League) -> None:
    rank_filter = RankFilter(width=2, widen=[(10, 5), (20, 10), (30, 20)])
    seen = []
    for waited in (0, 9.9, 10, 25, 30):
        found = ladder.find_opponents("p10", rank_filter, needed=4, waited=waited)
        seen.append((found.width, found.found, found.enough))
    assert seen == [
        (2.0, 0, False),
        (2.0, 0, False),
        (5.0, 2, False),
        (10.0, 4, True),
        (10.0, 4, True),  # enough at 10: the 20-percentile step is not taken
    ]
    assert rank_filter.widths(25) == [2.0, 5.0, 10.0]
    assert RankFilter(width=6, widen=[(10, 5), (20, 10)]).widths(60) == [6.0, 10.0]
    assert RankFilter(width=2, strict=True).widths(60) == [2.0]


def test_a_party_filter_spans_its_lowest_and_highest_players(ladder: rankcraft.League) -> None:
    found = ladder.find_opponents(["p12", "p08"], RankFilter(width=5, strict=True), limit=3)
    assert found.percentiles == (60.0, 40.0)
    assert (found.low, found.high) == (35.0, 65.0)
    assert found.found == 5  # p07, p09, p10, p11, p13: the party itself is left out
    assert [c.id for c in found.candidates] == ["p10", "p09", "p11"]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"width": 101}, "'width' must be a number in [0, 100]: 101"),
        ({"widen": [(30, 5), (20, 10)]}, "'widen' must grow"),
        ({"widen": [(30,)]}, "'widen[0]' must be a pair"),
    ],
)
def test_bad_filters_are_refused(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(InputError, match=message.replace("[", r"\[")):
        RankFilter(**kwargs)


def test_bad_opponent_queries_are_refused(ladder: rankcraft.League) -> None:
    with pytest.raises(UnknownPlayerError, match="unknown player 'nobody'"):
        ladder.find_opponents(["p01", "nobody"])
    with pytest.raises(InputError, match="'needed' must be a whole number >= 1: 0"):
        ladder.find_opponents("p01", needed=0)
    with pytest.raises(InputError, match="names a player twice"):
        ladder.find_opponents(["p01", "p01"])


# -- quality -------------------------------------------------------------------------------


def test_the_two_team_quality_is_herbrich_s_formula_by_hand() -> None:
    # teams (30, 4) + (20, 3) against (24, 5), beta 4: n = 3 players, S = 16 + 9 + 25
    c = 3 * 16 + 50
    expected = math.sqrt(48 / c) * math.exp(-((50 - 24) ** 2) / (2 * c))
    assert gaussian_quality([[(30, 4), (20, 3)], [(24, 5)]], beta=4) == pytest.approx(
        expected, rel=1e-12
    )
    # TrueSkill's defaults, two new players: sqrt(0.2)
    assert gaussian_quality([[(25, 25 / 3)], [(25, 25 / 3)]], 25 / 6) == pytest.approx(
        math.sqrt(0.2), rel=1e-12
    )
    # certain, equal teams: a draw is as likely as it can be
    assert gaussian_quality([[(10, 0)], [(10, 0)], [(10, 0)]], 1.0) == pytest.approx(1.0)


TEAMS = [
    [[(25.0, 3.0), (30.0, 4.0)], [(20.0, 5.0)], [(28.0, 2.0), (1.0, 1.0), (5.0, 6.0)]],
    [[(25.0, 3.0), (30.0, 4.0)], [(20.0, 5.0)]],
    [[(25.0, 8.3)], [(27.0, 1.5)], [(24.0, 4.0)], [(26.0, 2.0)]],
]


@pytest.mark.parametrize("teams", TEAMS)
def test_the_quality_of_several_teams_agrees_with_the_trueskill_package(teams: Any) -> None:
    trueskill = pytest.importorskip("trueskill")
    theirs = trueskill.TrueSkill(beta=25 / 6).quality(
        [tuple(trueskill.Rating(mu, sigma) for mu, sigma in team) for team in teams],
    )
    assert gaussian_quality(teams, 25 / 6) == pytest.approx(theirs, rel=1e-9)


@given(st.lists(st.floats(0.0, 1.0), min_size=2, max_size=6))
@settings(max_examples=40, deadline=None)
def test_closeness_is_symmetric_and_in_range(raw: list[float]) -> None:
    total = sum(raw)
    p = [x / total for x in raw] if total > 0 else [1 / len(raw)] * len(raw)
    value = closeness(p)
    assert 0.0 <= value <= 1.0
    assert value == pytest.approx(closeness(p[::-1]), abs=1e-12)


def test_closeness_is_one_for_equal_sides_and_zero_for_a_foregone_result() -> None:
    assert closeness([0.5, 0.5]) == 1.0
    assert closeness([1 / 3] * 3) == pytest.approx(1.0)
    assert closeness([1.0, 0.0]) == 0.0 and closeness([1.0, 0.0, 0.0]) == 0.0
    assert closeness([0.7, 0.3]) == pytest.approx(0.6)


def test_league_quality_falls_back_to_closeness(ladder: rankcraft.League) -> None:
    sides = [["p00", "p19"], ["p05", "p12"]]
    p = ladder.predict(sides)
    assert ladder.quality(sides) == pytest.approx(1 - abs(p[0] - p[1]), abs=1e-15)
    assert ladder.quality(sides) == pytest.approx(ladder.quality(sides[::-1]), abs=1e-15)
    assert ladder.quality([["p03"], ["p04"]]) < 1.0
    assert matchmaking.quality(ladder, sides)[1] == "closeness"


def test_glicko_quality_is_the_gaussian_one_with_glicko_s_beta() -> None:
    league = rankcraft.League("glicko1")
    league.import_state(
        {
            "players": [
                {"id": "a", "skill": {"rating": 1700.0, "deviation": 80.0}},
                {"id": "b", "skill": {"rating": 1500.0, "deviation": 120.0}},
            ]
        }
    )
    beta = math.pi / (math.log(10) / 400 * math.sqrt(6))  # 2 beta^2 = pi^2 / (3 q^2)
    c = 2 * beta**2 + 80.0**2 + 120.0**2
    expected = math.sqrt(2 * beta**2 / c) * math.exp(-(200.0**2) / (2 * c))
    assert league.quality([["a"], ["b"]]) == pytest.approx(expected, rel=1e-12)
    assert matchmaking.quality(league, [["b"], ["a"]])[1] == "glicko1"
    # the home side's rating is raised by home_advantage (0 here: no change)
    assert league.quality([["a"], ["b"]], home=1) == pytest.approx(expected, rel=1e-12)


def test_bad_quality_queries_are_refused(ladder: rankcraft.League) -> None:
    with pytest.raises(UnknownPlayerError):
        ladder.quality([["p01"], ["ghost"]])
    with pytest.raises(InputError, match="at least 2 sides"):
        ladder.quality([["p01"]])
    with pytest.raises(InputError, match="appears twice"):
        ladder.quality([["p01"], ["p01"]])
    with pytest.raises(InputError, match="'home' must be a side index"):
        ladder.quality([["p01"], ["p02"]], home=2)


# -- balancing -----------------------------------------------------------------------------


def brute_force(league: rankcraft.League, players: list[str], k: int) -> float:
    """The best quality over every labelled assignment with sizes differing by <= 1."""
    best = -1.0
    for labels in itertools.product(range(k), repeat=len(players)):
        sizes = [labels.count(t) for t in range(k)]
        if min(sizes) == 0 or max(sizes) - min(sizes) > 1:
            continue
        sides = [[p for p, t in zip(players, labels, strict=True) if t == s] for s in range(k)]
        best = max(best, league.quality(sides))
    return best


@pytest.mark.parametrize(("n", "k"), [(4, 2), (5, 2), (6, 2), (6, 3), (7, 3), (7, 2)])
def test_the_exact_split_is_the_brute_force_optimum(n: int, k: int) -> None:
    ratings = {f"x{i}": 1500.0 + ((i * 7919) % 400) - 200 for i in range(n)}
    league = elo_league(ratings)
    got = league.balance(list(ratings), k)
    assert got.method == "exact" and got.splits == split_count(n, k)
    assert got.quality == pytest.approx(brute_force(league, list(ratings), k), abs=1e-12)
    assert got.quality == pytest.approx(league.quality([list(t) for t in got.teams]), abs=1e-15)


def test_split_counts_match_the_enumeration() -> None:
    for n, k in [(5, 2), (6, 3), (7, 3), (8, 4), (9, 2), (10, 3)]:
        assert sum(1 for _ in matchmaking._splits(n, k)) == split_count(n, k)
    assert split_count(12, 2) == 462 and split_count(12, 4) == 15400


RATINGS = {f"r{i:02d}": 1200.0 + ((i * 104729) % 800) for i in range(24)}
RATED = elo_league(RATINGS)


@given(
    st.lists(st.sampled_from(sorted(RATINGS)), min_size=2, max_size=14, unique=True),
    st.integers(2, 5),
    st.booleans(),
    st.randoms(use_true_random=False),
)
@settings(max_examples=15, deadline=None)
def test_every_player_is_placed_once_in_teams_of_near_equal_size(
    players: list[str], k: int, exact: bool, rnd: Any
) -> None:
    if len(players) < k:
        with pytest.raises(InputError, match="fewer than the"):
            RATED.balance(players, k)
        return
    limit = matchmaking.EXACT_LIMIT if exact else 0
    got = matchmaking.balance(RATED, players, k, exact_limit=min(limit, 2000))
    placed = [p for team in got.teams for p in team]
    assert sorted(placed) == sorted(players)
    sizes = [len(t) for t in got.teams]
    assert len(sizes) == k and max(sizes) - min(sizes) <= 1
    assert 0.0 <= got.quality <= 1.0
    shuffled = list(players)
    rnd.shuffle(shuffled)
    again = matchmaking.balance(RATED, shuffled, k, exact_limit=min(limit, 2000))
    assert {frozenset(t) for t in again.teams} == {frozenset(t) for t in got.teams}


def test_the_swaps_reach_a_good_split_beyond_the_exact_limit() -> None:
    players = sorted(RATINGS)
    got = RATED.balance(players, 3)  # 24 players in 3 teams: far beyond the exact limit
    assert got.method == "swaps"
    assert got.quality > 0.99
    exact = matchmaking.balance(RATED, players[:9], 3)
    swaps = matchmaking.balance(RATED, players[:9], 3, exact_limit=0)
    assert swaps.method == "swaps" and swaps.quality <= exact.quality + 1e-12


@pytest.mark.parametrize(
    ("players", "k", "error", "message"),
    [
        (["p01", "p02"], 1, InputError, "'teams' must be a whole number >= 2: 1"),
        (["p01", "p02"], 3, InputError, "'players' has 2 players, fewer than the 3 teams"),
        (["p01", "ghost"], 2, UnknownPlayerError, "unknown player 'ghost'"),
        (["p01", "p01", "p02"], 2, InputError, "'players' names a player twice"),
    ],
)
def test_bad_balance_queries_are_refused(
    ladder: rankcraft.League, players: list[str], k: int, error: type, message: str
) -> None:
    with pytest.raises(error, match=message):
        ladder.balance(players, k)


# -- command line and HTTP -----------------------------------------------------------------


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def test_the_match_commands_round_trip(tmp_path: Path) -> None:
    db = str(tmp_path / "league.sqlite")
    document = elo_league(LADDER).export()
    (tmp_path / "state.json").write_text(json.dumps(document))
    assert run("import", str(tmp_path / "state.json"), "--db", db)[0] == 0
    code, out, _ = run(
        "match", "opponents", "p10", "--width", "5", "--strict", "--json", "--db", db
    )
    assert code == 0
    assert [c["id"] for c in json.loads(out)["candidates"]] == ["p09", "p11"]
    code, out, _ = run(
        "match",
        "opponents",
        "p10",
        "--needed",
        "4",
        "--waited",
        "40",
        "--widen",
        "30:10",
        "--db",
        db,
    )
    assert code == 0 and out.startswith("4 of 20 active players within 10 percentiles")
    code, out, _ = run("match", "quality", "p00,p19", "p09,p10", "--db", db)
    assert (code, out) == (0, "1.0000\n")
    code, out, _ = run("match", "balance", "p00", "p05", "p10", "p15", "--json", "--db", db)
    assert code == 0
    assert json.loads(out)["teams"] == [["p00", "p15"], ["p05", "p10"]]
    code, _, err = run("match", "balance", "p00", "p05", "--teams", "3", "--db", db)
    assert code == 2 and "fewer than the 3 teams" in err
    code, _, err = run("match", "quality", "p00", "ghost", "--db", db)
    assert code == 2 and "unknown player 'ghost'" in err
    code, _, err = run("match", "opponents", "p00", "--widen", "30-5", "--db", db)
    assert code == 2 and "'--widen' must be SECONDS:WIDTH" in err


def test_the_match_endpoints_round_trip(ladder: rankcraft.League) -> None:
    from starlette.testclient import TestClient

    from rankcraft.serve import create_app

    with TestClient(create_app(ladder)) as client:
        paths = client.get("/openapi.json").json()["paths"]
        assert {"/match/opponents", "/match/quality", "/match/balance"} <= set(paths)
        answer = client.post(
            "/match/opponents",
            json={
                "players": ["p10"],
                "width": 2,
                "widen": [[10, 5], [20, 10]],
                "waited": 15,
                "needed": 2,
            },
        )
        assert answer.status_code == 200
        body = answer.json()
        assert (body["width"], body["found"], body["enough"]) == (5.0, 2, True)
        assert body["candidates"][0] == {"id": "p09", "value": 1490.0, "percentile": 45.0}
        answer = client.post("/match/quality", json={"sides": [["p10"], ["p11"]]})
        assert answer.status_code == 200
        assert answer.json()["quality"] == pytest.approx(ladder.quality([["p10"], ["p11"]]))
        assert answer.json()["judged_by"] == "closeness"
        answer = client.post("/match/balance", json={"players": ["p00", "p05", "p10", "p15"]})
        assert answer.json()["teams"] == [["p00", "p15"], ["p05", "p10"]]
        for path, body, status, field in [
            ("/match/balance", {"players": ["p00", "p05"], "teams": 1}, 400, "teams"),
            ("/match/balance", {"players": ["p00", "p05"], "teams": 3}, 400, "players"),
            ("/match/balance", {"players": ["p00", "ghost"]}, 404, None),
            ("/match/opponents", {"players": ["p00"], "width": 200}, 400, "width"),
            ("/match/quality", {"sides": [["p00"], ["p01"]], "home": 2}, 400, "home"),
        ]:
            answer = client.post(path, json=body)
            assert answer.status_code == status, (path, body, answer.text)
            assert answer.json()["error"]["field"] == field, answer.text


# -- the hook ------------------------------------------------------------------------------


def hook_league(answer: float) -> tuple[rankcraft.League, list[Any]]:
    """A league whose expectation plugin implements ``rankcraft_quality`` with ``answer``,
    recording what the hook was handed."""
    import attrs

    calls: list[Any] = []

    @attrs.frozen
    class Points:
        points: float = rankcraft.state_field(role="location")

    class Sums:
        @rankcraft.hookimpl
        def rankcraft_initial(self) -> Points:
            return Points(10.0)

        @rankcraft.hookimpl
        def rankcraft_expectation(self, side_states: Any) -> list[float]:
            total = sum(s.points for s in side_states)
            return [s.points / total for s in side_states]

        @rankcraft.hookimpl
        def rankcraft_update(self, state: Points, pairings: Any) -> Points:
            return Points(state.points + sum(p.score for p in pairings))

        @rankcraft.hookimpl
        def rankcraft_quality(self, sides: Any, side_states: Any, home: Any) -> float:
            calls.append(
                (
                    [[s.points for s in side] for side in sides],
                    [s.points for s in side_states],
                    home,
                )
            )
            return answer

    pm = rankcraft.get_plugin_manager()
    pm.register(Sums(), name="sums")
    plugins = rankcraft.Plugins(pm)
    text = 'name = "sums"\n[update]\nplugin = "sums"\n'
    league = rankcraft.League(rankcraft.loads_ruleset(text, plugins=plugins))
    for i, (a, b) in enumerate([("a", "b"), ("c", "d"), ("a", "c")]):
        league.record(
            {"id": f"m{i}", "played_at": "2024-01-01", "teams": [[a], [b]], "scores": [1, 0]}
        )
    return league, calls


def test_the_quality_hook_gets_players_per_side_and_the_aggregates() -> None:
    league, calls = hook_league(0.25)
    value, judged_by = matchmaking.quality(league, [["a", "b"], ["c", "d"]], home=1)
    assert (value, judged_by) == (0.25, "sums")
    # a won twice (12), b lost (10), c won and lost (11), d lost (10); the mean team plugin
    assert calls == [([[12.0, 10.0], [11.0, 10.0]], [11.0, 10.5], 1)]
    assert league.balance(["a", "b", "c", "d"]).judged_by == "sums"


@pytest.mark.parametrize("answer", [1.5, -0.1, float("nan")])
def test_a_quality_outside_the_unit_interval_is_the_plugin_s_error(answer: float) -> None:
    league, _ = hook_league(answer)
    with pytest.raises(rankcraft.PluginError, match="quality plugin 'sums' returned"):
        league.quality([["a"], ["b"]])
