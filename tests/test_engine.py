"""The League: the order of steps, reports, atomic batches, state documents, resets."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta
from typing import Any

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

import rankcraft
from rankcraft.plugins.elo import EloSkill


def test_report_keeps_expectation_states_and_factors(match) -> None:
    league = rankcraft.League("elo")
    league.record(match("m1", "a", "b", scores=[1, 0], day=1))
    report = league.record(match("m2", "a", "c", scores=[0, 1], day=2))
    assert report.match_id == "m2"
    assert report.played_at == datetime(2024, 1, 2, 12, tzinfo=UTC)
    a = report.change("a")
    assert a.side == 0 and a.skill_before.rating == 1516.0 and a.skill_used is a.skill_before
    assert report.expected[0] == pytest.approx(1 / (1 + 10 ** (-16 / 400)))
    assert a.skill_after.rating == pytest.approx(1516.0 - 32 * report.expected[0])
    assert a.factors == {"k": 32.0}
    assert league.report("m2") == report
    assert [row.match.id for row in league.history("a")] == ["m2", "m1"]


def test_records_count_matches_and_time(match) -> None:
    league = rankcraft.League("elo")
    league.record(match("m1", "a", "b", day=3))
    record = league.player("a")
    assert record.matches == 1
    assert record.last_played == datetime(2024, 1, 3, 12, tzinfo=UTC)
    assert len(league) == 2 and "b" in league and "zed" not in league
    with pytest.raises(rankcraft.UnknownPlayerError, match="unknown player 'zed'"):
        league.player("zed")


def test_refused_match_changes_nothing(match) -> None:
    league = rankcraft.League("elo")
    league.record(match("m1", "a", "b", day=5))
    before = league.export()
    bad = [
        (match("m1", "a", "c", day=6), "already recorded"),
        (match("m2", "a", "c", day=4), "earlier than the last match of player 'a'"),
        (match("m3", "a", "a", day=6), "appears twice"),
        (match("m4", "a", "c", scores=[1, float("nan")], day=6), "finite"),
    ]
    for data, message in bad:
        with pytest.raises(rankcraft.MatchError, match=message):
            league.record(data)
        assert league.export() == before
        assert league.match_count == 1


def test_record_many_is_all_or_nothing(match) -> None:
    league = rankcraft.League("elo")
    league.record(match("m0", "x", "y", day=1))
    before = league.export()
    batch = [match(f"m{i}", "a", "b", day=2) for i in range(1, 5)] + [match("m2", "a", "c", day=3)]
    with pytest.raises(rankcraft.DuplicateMatchError, match="'m2' is already recorded"):
        league.record_many(batch)
    assert league.export() == before
    assert league.match_count == 1
    summary = league.record_many(batch[:4])
    assert (summary.recorded, summary.skipped) == (4, 0)
    summary = league.record_many([*batch, match("m5", "a", "c", day=3)], skip_seen=True)
    assert (summary.recorded, summary.skipped) == (1, 5)


def test_equal_times_are_allowed_and_order_matters(match) -> None:
    league = rankcraft.League("elo")
    league.record(match("m1", "a", "b", day=1))
    league.record(match("m2", "b", "a", day=1))
    assert league.player("a").matches == 2


def test_predict(match) -> None:
    league = rankcraft.League("elo")
    assert league.predict([["new1"], ["new2"]]) == [0.5, 0.5]
    league.record(match("m1", "a", "b"))
    p = league.predict([["a"], ["b"]])
    assert p[0] == pytest.approx(1 / (1 + 10 ** (-32 / 400)))
    for sides, message in (
        ([["a"]], "at least 2"),
        ([["a"], []], "non-empty"),
        ([["a"], ["a"]], "twice"),
    ):
        with pytest.raises(rankcraft.InputError, match=message):
            league.predict(sides)


def test_leaderboard_orders_by_location_then_id(match) -> None:
    league = rankcraft.League("elo")
    league.record(match("m1", "a", "b"))
    league.record(match("m2", "c", "d"))
    assert [r.id for r in league.leaderboard()] == ["a", "c", "b", "d"]
    assert [r.id for r in league.leaderboard(top=1)] == ["a"]


def test_export_import_round_trip(match) -> None:
    league = rankcraft.League("elo")
    league.record_many(
        [match(f"m{i}", "a", "b", scores=[i % 2, 1 - i % 2], day=i + 1) for i in range(5)]
    )
    document = league.export()
    assert document["ruleset"] == "elo"
    assert document["rankcraft"] == rankcraft.__version__
    a = document["players"][0]
    assert a["id"] == "a" and a["matches"] == 5 and a["last_played"] == "2024-01-05T12:00:00Z"
    assert set(a["skill"]) == {"rating", "peak"}
    other = rankcraft.League("elo")
    assert other.import_state(document) == 2
    assert other.export() == document


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ({"ruleset": "glicko", "players": []}, "exported with ruleset 'glicko'"),
        ({"players": [{"id": "a", "skill": {"rating": "high"}}]}, "expected a number"),
        ({"players": [{"id": "a", "skill": {"rating": float("inf")}}]}, "finite"),
        ({"players": [{"id": "a", "skill": {"rating": 1.0, "mu": 2.0}}]}, "mu"),
        ({"players": [{"id": "a"}]}, "'skill' is missing"),
        (
            {"players": [{"id": "a", "skill": {"rating": 1.0, "peak": 1.0}, "matches": -1}]},
            "matches",
        ),
        (
            {
                "players": [
                    {"id": "a", "skill": {"rating": 1.0, "peak": 1.0}},
                    {"id": "a", "skill": {"rating": 2.0, "peak": 2.0}},
                ]
            },
            "twice",
        ),
        ({"players": {}}, "must be a list"),
        ({"players": [], "extra": 1}, "unknown key"),
    ],
)
def test_import_refuses_bad_documents(document: dict[str, Any], message: str) -> None:
    league = rankcraft.League("elo")
    league.import_state({"players": [{"id": "keep", "skill": {"rating": 1234.0, "peak": 1234.0}}]})
    before = league.export()
    with pytest.raises(rankcraft.StateError, match=message):
        league.import_state(document)
    assert league.export() == before


# -- the steps, observed through ad-hoc plugins --------------------------------------------


@attrs.frozen
class Probe:
    """A decay, rank and reset plugin that records what the engine hands it."""

    calls: list[tuple[str, Any]] = attrs.field(factory=list)

    @rankcraft.hookimpl
    def rankcraft_decay(self, state: EloSkill, periods: float) -> EloSkill:
        self.calls.append(("decay", periods))
        return EloSkill(state.rating - periods, state.peak)

    @rankcraft.hookimpl
    def rankcraft_initial(self, slot: str) -> Any:
        return Points(0.0)

    @rankcraft.hookimpl
    def rankcraft_rank(
        self,
        rank_state: Points,
        before: EloSkill,
        after: EloSkill,
        context: rankcraft.PlayerContext,
    ) -> Points:
        self.calls.append(("rank", context.score))
        context.explain("step", after.rating - before.rating)
        return Points(rank_state.points + after.rating - before.rating)

    @rankcraft.hookimpl
    def rankcraft_reset(
        self, players: list[rankcraft.PlayerRecord], kind: str, context: rankcraft.ResetContext
    ) -> list[rankcraft.PlayerRecord]:
        if kind != "soft":
            raise rankcraft.InputError(f"unknown reset kind {kind!r}")
        return [attrs.evolve(p, rank=Points(p.rank.points / 2)) for p in players]


@attrs.frozen
class Points:
    points: float = rankcraft.state_field(role="location")


PROBE_RULESET = """
name = "probe"
[period]
length_days = 7.0
granularity_days = {granularity}
[update]
plugin = "elo"
[decay]
plugin = "probe"
[rank]
plugin = "probe"
[reset]
plugin = "probe"
"""


def _probe_league(installed_pm, granularity: float = 0.0) -> tuple[rankcraft.League, Probe]:
    probe = Probe()
    installed_pm.register(probe, name="probe")
    plugins = rankcraft.Plugins(installed_pm)
    ruleset = rankcraft.loads_ruleset(
        PROBE_RULESET.format(granularity=granularity), plugins=plugins
    )
    return rankcraft.League(ruleset), probe


def test_decay_gets_real_periods(installed_pm, match) -> None:
    league, probe = _probe_league(installed_pm)
    league.record(
        {"id": "m1", "played_at": "2024-01-01T00:00", "teams": [["a"], ["b"]], "scores": [1, 0]}
    )
    assert probe.calls.count(("decay", pytest.approx(0))) == 0  # new players are not decayed
    report = league.record(
        {"id": "m2", "played_at": "2024-01-11T12:00", "teams": [["a"], ["c"]], "scores": [1, 0]}
    )
    assert ("decay", pytest.approx(10.5 / 7)) in probe.calls
    a = report.change("a")
    assert a.skill_used.rating == pytest.approx(a.skill_before.rating - 10.5 / 7)
    assert a.skill_used is not a.skill_before


def test_decay_granularity_counts_whole_days(installed_pm) -> None:
    league, probe = _probe_league(installed_pm, granularity=1.0)
    league.record(
        {"id": "m1", "played_at": "2024-01-01T00:00", "teams": [["a"], ["b"]], "scores": [1, 0]}
    )
    league.record(
        {"id": "m2", "played_at": "2024-01-01T21:00", "teams": [["a"], ["b"]], "scores": [1, 0]}
    )
    league.record(
        {"id": "m3", "played_at": "2024-01-15T20:00", "teams": [["a"], ["b"]], "scores": [1, 0]}
    )
    decays = [v for k, v in probe.calls if k == "decay"]
    assert decays == [pytest.approx(13 / 7), pytest.approx(13 / 7)]


def test_rank_and_reset_slots(installed_pm, match) -> None:
    league, probe = _probe_league(installed_pm)
    report = league.record(match("m1", "a", "b", scores=[1, 0]))
    a = report.change("a")
    assert a.rank_before == Points(0.0) and a.rank_after == Points(16.0)
    assert a.factors == {"k": 32.0, "step": 16.0}
    assert ("rank", 1.0) in probe.calls and ("rank", 0.0) in probe.calls
    assert [r.id for r in league.leaderboard()] == ["a", "b"]
    assert league.reset("soft") == 2
    assert league.player("a").rank == Points(8.0)
    before = league.export()
    with pytest.raises(rankcraft.InputError, match="unknown reset kind 'hard'"):
        league.reset("hard")
    assert league.export() == before


def test_reset_without_slot_is_refused() -> None:
    with pytest.raises(rankcraft.InputError, match="no \\[reset\\] slot"):
        rankcraft.League("elo").reset("soft")


def test_hook_implementations_are_resolved_once(installed_pm, match, monkeypatch) -> None:
    league = rankcraft.League("elo")

    def boom(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("pm.hook must not be called per match")

    for name in ("rankcraft_update", "rankcraft_expectation", "rankcraft_team"):
        monkeypatch.setattr(league.plugins.pm.hook, name, boom)
    league.record_many([match(f"m{i}", "a", "b") for i in range(10)])
    assert league.player("a").matches == 10


def test_a_broken_expectation_plugin_is_caught(installed_pm, match) -> None:
    class Bad:
        @rankcraft.hookimpl
        def rankcraft_expectation(self, side_states: list[Any]) -> list[float]:
            return [0.7, 0.7]

    installed_pm.register(Bad(), name="bad")
    ruleset = rankcraft.loads_ruleset(
        'name = "x"\n[update]\nplugin = "elo"\n[expectation]\nplugin = "bad"\n',
        plugins=rankcraft.Plugins(installed_pm),
    )
    league = rankcraft.League(ruleset)
    with pytest.raises(rankcraft.PluginError, match="summing to 1"):
        league.record(match("m1", "a", "b"))
    assert len(league) == 0


@given(
    st.lists(
        st.tuples(
            st.integers(0, 5),
            st.integers(0, 5),
            st.integers(0, 3),
            st.sampled_from([0.0, 0.5, 1.0]),
        ),
        min_size=1,
        max_size=60,
    )
)
def test_refused_matches_never_leave_partial_state(
    steps: list[tuple[int, int, int, float]],
) -> None:
    league = rankcraft.League("elo")
    day = 10
    for i, (a, b, back, s) in enumerate(steps):
        day = day + 1 - back  # sometimes goes back in time
        when = datetime(2024, 2, 1, tzinfo=UTC) + timedelta(days=day)
        data = {
            "id": f"m{i % 40}",
            "played_at": when.isoformat(),
            "teams": [[str(a)], [str(b)]],
            "scores": [s, 1 - s],
        }
        before = league.export()
        try:
            report = league.record(data)
        except rankcraft.MatchError:
            assert league.export() == before
            continue
        assert math.fsum(report.expected) == pytest.approx(1.0)
        for change in report.changes:
            assert math.isfinite(change.skill_after.rating)
