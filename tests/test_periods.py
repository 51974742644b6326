"""Time and rating periods: match, batch and live modes."""

from __future__ import annotations

import math
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import attrs
import pytest

import rankcraft
from rankcraft.plugins.glicko2 import rate
from rankcraft.ruleset import PeriodSpec

G2 = """name = "g2"
[period]
mode = "{mode}"
length_days = 7.0
origin = "2024-01-01"
[update]
plugin = "glicko2"
"""


def league(mode: str, text: str = G2) -> rankcraft.League:
    return rankcraft.League(rankcraft.loads_ruleset(text.format(mode=mode)))


def game(mid: str, a: str, b: str, day: int, s: float = 1.0) -> dict[str, object]:
    return {
        "id": mid,
        "played_at": f"2024-01-{day:02d}T12:00:00Z",
        "teams": [[a], [b]],
        "scores": [s, 1 - s],
    }


def test_period_index() -> None:
    spec = PeriodSpec(mode="batch", length_days=7.0, origin="2024-01-01")
    at = [datetime(2024, 1, d, tzinfo=UTC) for d in (1, 7, 8, 15)]
    assert [spec.index(t) for t in at] == [0, 0, 1, 2]
    assert spec.index(datetime(2023, 12, 31, 23, tzinfo=UTC)) == -1


def test_batch_rates_a_period_when_it_closes() -> None:
    lg = league("batch")
    first = lg.record(game("m1", "a", "b", 1))
    assert first.change("a").skill_after == first.change("a").skill_before  # nothing yet
    assert first.change("a").factors == {"pending": 1.0}
    lg.record(game("m2", "a", "c", 2))
    assert lg.player("a").skill.mu == 0.0 and len(lg.player("a").pending) == 2
    # A match in a later period closes the period of its participants first.
    lg.record(game("m3", "a", "d", 9))
    a = lg.player("a")
    assert a.skill.mu != 0.0 and a.period == 1 and len(a.pending) == 1
    init = rankcraft.loads_ruleset(G2.format(mode="batch")).update.params
    mu, phi, sigma = rate(
        0.0,
        init.initial_phi,
        0.06,
        0.5,
        [(0.0, init.initial_phi, 1.0, 1.0), (0.0, init.initial_phi, 1.0, 1.0)],
    )
    assert (a.skill.mu, a.skill.phi, a.skill.sigma) == pytest.approx((mu, phi, sigma))
    # b played only in period 0: still pending until the period is closed for everyone.
    assert lg.player("b").pending
    assert lg.close_period() == 4
    assert not any(p.pending for p in lg.players())


def test_batch_replay_closes_its_last_period() -> None:
    lg = league("batch")
    lg.record_many([game("m1", "a", "b", 1), game("m2", "a", "b", 2)])
    assert not lg.player("a").pending and lg.player("a").skill.mu > 0


def test_batch_decays_idle_periods_only() -> None:
    lg = league("batch")
    lg.record_many([game("m1", "a", "b", 1)])
    before = lg.player("a").skill
    report = lg.record(game("m2", "a", "c", 29))  # period 4: periods 1-3 were idle
    used = report.change("a").skill_used
    assert used.phi == pytest.approx(math.sqrt(before.phi**2 + 3 * before.sigma**2))


def test_live_shows_the_period_rerated_after_every_match() -> None:
    live, batch = league("live"), league("batch")
    games = [game("m1", "a", "b", 1), game("m2", "a", "c", 2, 0.0), game("m3", "a", "d", 3)]
    for i, g_ in enumerate(games, 1):
        report = live.record(g_)
        batch_now = league("batch")
        batch_now.record_many(games[:i])
        # (with NumPy, close_period rates in arrays: equal to the hooks within rounding)
        after, closed = report.change("a").skill_after, batch_now.player("a").skill
        assert attrs.astuple(after) == pytest.approx(attrs.astuple(closed), rel=1e-12)
    assert len(live.player("a").pending) == 3 and live.player("a").base is not None
    batch.record_many(games)
    live_a, batch_a = attrs.astuple(live.player("a").skill), attrs.astuple(batch.player("a").skill)
    assert live_a == pytest.approx(batch_a, rel=1e-12)
    # Time passing the period's end commits it: the next period starts from that state.
    live.record(game("m4", "a", "e", 10))
    a = live.player("a")
    assert a.period == 1 and len(a.pending) == 1
    assert attrs.astuple(a.base) == pytest.approx(batch_a, rel=1e-12)


def test_match_mode_rates_every_match() -> None:
    lg = league("match")
    report = lg.record(game("m1", "a", "b", 1))
    assert report.change("a").skill_after.mu > 0 and not lg.player("a").pending


def test_three_modes_differ_on_one_history() -> None:
    history = [game(f"m{i}", "a", "bcd"[i % 3], 1 + i, float(i % 2)) for i in range(12)]
    finals = {}
    for mode in ("match", "batch", "live"):
        lg = league(mode)
        lg.record_many(history)
        lg.close_period()
        finals[mode] = lg.player("a").skill
    assert finals["batch"] == finals["live"]
    assert finals["match"] != finals["batch"]


def test_glicko1_batch_counts_the_current_period_as_glickmans_step_1() -> None:
    text = (
        'name = "g1"\n[period]\nmode = "{mode}"\nlength_days = 7.0\norigin = "2024-01-01"\n'
        '[update]\nplugin = "glicko1"\n[update.params]\nc = 30.0\n'
    )
    lg = league("batch", text)
    lg.import_state(
        {
            "players": [
                {
                    "id": "a",
                    "skill": {"rating": 1500.0, "deviation": 100.0},
                    "matches": 5,
                    "last_played": "2023-12-30T00:00:00Z",
                    "open": {"period": -1, "pending": []},
                },
                {"id": "b", "skill": {"rating": 1500.0, "deviation": 100.0}},
            ]
        }
    )
    lg.record_many([game("m1", "a", "b", 2)])
    # t = 1 (a competed in the previous period): RD at onset sqrt(100² + 30²); b is new to
    # the league's history (no previous competition), so its RD stays 100 at onset.
    from rankcraft.plugins.glicko1 import rate as g1_rate

    a_expected = g1_rate(1500.0, math.sqrt(100**2 + 30**2), [(1500.0, 100.0, 1.0, 1.0)])
    b_expected = g1_rate(1500.0, 100.0, [(1500.0, math.sqrt(100**2 + 30**2), 0.0, 1.0)])
    assert (lg.player("a").skill.rating, lg.player("a").skill.deviation) == pytest.approx(
        a_expected
    )
    # Glickman's order: b meets a at a's onset RD (grown first), not at a's stored 100
    b_plain = g1_rate(1500.0, 100.0, [(1500.0, 100.0, 0.0, 1.0)])
    assert (lg.player("b").skill.rating, lg.player("b").skill.deviation) == pytest.approx(
        b_expected
    )
    assert b_expected != b_plain


def test_rank_layer_needs_match_or_live_mode(installed_pm) -> None:
    class Ranks:
        @rankcraft.hookimpl
        def rankcraft_rank(self, rank_state: object) -> object:
            return rank_state

    installed_pm.register(Ranks(), name="ranks")
    with pytest.raises(rankcraft.RulesetError, match="needs \\[period\\] mode 'match' or 'live'"):
        rankcraft.loads_ruleset(
            'name = "x"\n[period]\nmode = "batch"\n[update]\nplugin = "elo"\n'
            '[rank]\nplugin = "ranks"\n',
            plugins=rankcraft.Plugins(installed_pm),
        )


@pytest.mark.parametrize("mode", ["batch", "live"])
def test_open_periods_survive_a_restart(tmp_path: Path, mode: str) -> None:
    games = [
        game("m1", "a", "b", 1),
        game("m2", "a", "c", 2, 0.0),
        game("m3", "b", "c", 3),
        game("m4", "a", "b", 9),
    ]
    text = G2.format(mode=mode)
    db = tmp_path / "l.sqlite"
    with rankcraft.League.open(db, rankcraft.loads_ruleset(text)) as lg:
        for g_ in games[:2]:
            lg.record(g_)
        exported = lg.export()
    assert exported["players"][0]["open"]["pending"]
    with rankcraft.League.open(db) as lg:
        assert lg.export() == exported
        for g_ in games[2:]:
            lg.record(g_)
        lg.close_period()
        on_disk = lg.export()
    memory = rankcraft.League(rankcraft.loads_ruleset(text))
    for g_ in games:
        memory.record(g_)
    memory.close_period()
    assert memory.export()["players"] == on_disk["players"]
    copy = rankcraft.League(rankcraft.loads_ruleset(text))
    copy.import_state(exported)
    assert copy.export() == exported


def test_imported_players_decay_for_idle_periods_in_batch_mode() -> None:
    lg = league("batch")
    lg.import_state(
        {
            "players": [
                {
                    "id": "a",
                    "skill": {"mu": 0.0, "phi": 0.3, "sigma": 0.06},
                    "last_played": "2024-01-02T00:00:00Z",
                    "matches": 3,
                }
            ]
        }
    )
    report = lg.record(game("m1", "a", "b", 30))  # period 4; a last played in period 0
    assert report.change("a").skill_used.phi == pytest.approx(math.sqrt(0.09 + 3 * 0.06**2))


G1 = """name = "g1"
[period]
mode = "{mode}"
length_days = 7.0
origin = "2024-01-01"
[update]
plugin = "glicko1"
[update.params]
c = 34.6
"""


@pytest.mark.parametrize("mode", ["batch", "live"])
def test_glicko1_periods_grow_every_rd_before_rating(mode: str) -> None:
    # Glickman's order: at the period's onset every RD grows (the opponent's too), then
    # each player is rated against the opponents' grown RDs.
    lg = league(mode, G1)
    lg.import_state(
        {
            "players": [
                {
                    "id": pid,
                    "skill": {"rating": 1500.0, "deviation": rd},
                    "matches": 5,
                    "last_played": "2024-01-03T12:00:00Z",
                }
                for pid, rd in (("a", 100.0), ("c", 60.0))
            ]
        }
    )
    lg.record(game("m1", "a", "c", 9))
    lg.close_period()
    a, c = lg.player("a").skill, lg.player("c").skill
    assert (round(a.rating, 4), round(a.deviation, 4)) == (1528.9178, 101.4245)
    assert (round(c.rating, 4), round(c.deviation, 4)) == (1487.3624, 68.0569)


@pytest.mark.parametrize(
    ("extends", "mode", "plugin", "slot"),
    [
        ("football-goals", "live", "goals", "update"),
        ("football-goals", "batch", "goals", "update"),
        ("team-wager", "batch", "wager", "team"),
        ("team-wager", "live", "wager", "team"),
    ],
)
def test_a_plugin_is_refused_in_a_period_mode_it_does_not_declare(
    extends: str, mode: str, plugin: str, slot: str
) -> None:
    # issue 43 item 3: goals in a live period was accepted (each match rated from the
    # period's start), team-wager in a batch period ended every replay in a ValueError
    text = f'name = "x"\nextends = "{extends}"\n[period]\nmode = "{mode}"\n'
    with pytest.raises(rankcraft.RulesetError) as caught:
        rankcraft.loads_ruleset(text)
    assert str(caught.value) == (
        f"<string>: plugin {plugin!r} in slot {slot!r} rates only in [period] mode 'match', "
        f"not in mode {mode!r} @ ruleset.period.mode"
    )


def test_a_plugin_that_declares_no_modes_rates_in_every_mode() -> None:
    class Quiet:  # a third party's decay that declares nothing: any mode, as before
        @rankcraft.hookimpl
        def rankcraft_decay(self, state: Any) -> Any:
            return state

    class Weekly(Quiet):  # one that declares its modes
        @rankcraft.hookimpl
        def rankcraft_needs(self, slot: str) -> rankcraft.Needs | None:
            return rankcraft.Needs(modes=("match", "live")) if slot == "decay" else None

    installed = rankcraft.get_plugin_manager()
    installed.register(Quiet(), name="quiet")
    installed.register(Weekly(), name="weekly")
    plugins = rankcraft.Plugins(installed)
    for mode in ("match", "batch", "live"):
        for decay in ("quiet", "weekly"):
            text = f'name = "q"\n[period]\nmode = "{mode}"\n[update]\nplugin = "glicko2"\n'
            text += f'[decay]\nplugin = "{decay}"\n'
            if (decay, mode) == ("weekly", "batch"):
                with pytest.raises(
                    rankcraft.RulesetError,
                    match="plugin 'weekly' in slot 'decay' "
                    "rates only in \\[period\\] mode 'match' or 'live', not in mode 'batch'",
                ):
                    rankcraft.loads_ruleset(text, plugins=plugins)
                continue
            assert rankcraft.loads_ruleset(text, plugins=plugins).period.mode == mode
    assert rankcraft.Needs().modes == ("match", "batch", "live")
