"""Season events: League.reset, `rankcraft reset`, and schedules run during replays."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

import rankcraft
from rankcraft.cli import main

from .conftest import file_digest

WEEKLY = """
extends = "skyweaver"
name = "sw-weekly"
resets = [
  {{ kind = "soft", every_days = 7.0, start = "{start}" }},
  {{ kind = "hard", every_days = 14.0, start = "{start}" }},
]
"""


def game(mid: str, day: str, a: str = "a", b: str = "b", s: float = 1.0) -> dict[str, object]:
    return {"id": mid, "played_at": day, "teams": [[a], [b]], "scores": [s, 1 - s]}


def schedule_league(store: rankcraft.store.Store | None = None) -> rankcraft.League:
    ruleset = rankcraft.loads_ruleset(WEEKLY.format(start="2024-01-01"))
    return rankcraft.League(ruleset, store=store)


def test_scheduled_resets_run_before_the_first_match_after_them() -> None:
    league = schedule_league()
    league.record_many([game("m1", "2024-01-02"), game("m2", "2024-01-05", "c", "a")])
    a = league.player("a")
    assert a.rank.weekly == () and a.rank.seasons == ()
    league.record(game("m3", "2024-01-09", "a", "c"))  # after the first soft reset (01-08)
    a = league.player("a")
    assert len(a.rank.weekly) == 1 and a.rank.seasons == ()
    league.record(game("m4", "2024-01-16", "a", "b"))  # soft (01-15), then hard (01-15)
    a = league.player("a")
    assert len(a.rank.seasons) == 1 and a.rank.weekly == ()
    assert a.skill.deviation != 350.0  # reset to 350, then the match after it moved it


def test_a_long_gap_runs_every_missed_event_in_order() -> None:
    league = schedule_league()
    league.record(game("m1", "2024-01-02"))
    league.record(game("m2", "2024-03-01"))  # 8 soft resets and 4 hard resets in between
    # a played in the first season only: the three idle seasons archive nothing
    assert [s for s, _ in league.player("a").rank.seasons] == ["Wanderer"]


def test_a_refused_match_rolls_its_resets_back(match) -> None:
    league = schedule_league()
    league.record(game("m1", "2024-01-02"))
    before = league.export()
    with pytest.raises(rankcraft.MatchError):
        league.record({**game("m2", "2024-01-20"), "teams": [["a"], ["a"]]})
    assert league.export() == before
    league.record(game("m2", "2024-01-20"))
    assert len(league.player("a").rank.seasons) == 1


def test_schedule_survives_a_restart(tmp_path: Path) -> None:
    db = tmp_path / "sw.sqlite"
    ruleset = rankcraft.loads_ruleset(WEEKLY.format(start="2024-01-01"))
    with rankcraft.League.open(db, ruleset) as league:
        league.record_many([game("m1", "2024-01-02"), game("m2", "2024-01-09")])
    with rankcraft.League.open(db) as league:
        league.record(game("m3", "2024-01-10"))
        assert len(league.player("a").rank.weekly) == 1  # not run twice
    memory = schedule_league()
    memory.record_many(
        [game("m1", "2024-01-02"), game("m2", "2024-01-09"), game("m3", "2024-01-10")]
    )
    with rankcraft.League.open(db) as league:
        assert league.export()["players"] == memory.export()["players"]


def test_schedule_needs_a_reset_slot() -> None:
    with pytest.raises(rankcraft.RulesetError, match=r"\[\[resets\]\] needs a \[reset\] slot"):
        rankcraft.loads_ruleset(
            'extends = "elo"\nname = "x"\n[[resets]]\nkind = "soft"\n'
            'every_days = 7.0\nstart = "2024-01-01"\n'
        )


def test_reset_command(tmp_path: Path) -> None:
    db = tmp_path / "sw.sqlite"
    ruleset = tmp_path / "sw.toml"
    ruleset.write_text('extends = "skyweaver"\nname = "sw"\nresets = []\n')
    src = tmp_path / "m.jsonl"
    src.write_text(
        "\n".join(json.dumps(game(f"m{i}", f"2024-01-0{i + 1}", s=float(i % 2))) for i in range(4))
        + "\n"
    )
    out, err = io.StringIO(), io.StringIO()
    assert (
        main(["replay", str(src), "--ruleset", str(ruleset), "--db", str(db)], out=out, err=err)
        == 0
    )
    out = io.StringIO()
    assert main(["reset", "soft", "--db", str(db), "--json"], out=out, err=err) == 0
    assert json.loads(out.getvalue()) == {"kind": "soft", "changed": 2}
    digest = file_digest(db)
    err = io.StringIO()
    assert main(["reset", "monthly", "--db", str(db)], out=io.StringIO(), err=err) == 2
    assert "runs ('soft', 'hard'): 'monthly'" in err.getvalue()
    assert file_digest(db) == digest
    out = io.StringIO()
    assert main(["player", "a", "--db", str(db)], out=out, err=io.StringIO()) == 0
    text = out.getvalue()
    assert "standing: Wanderer" in text and "points 200 -> " in text and "why: mmr_change" in text


def test_an_idle_players_archive_does_not_grow() -> None:
    league = schedule_league()  # soft every week, hard every two weeks, from 2024-01-01
    league.record(game("m0", "2024-01-02", "a", "idle"))
    days = [f"2024-{1 + d // 28:02d}-{1 + d % 28:02d}" for d in range(7, 7 * 40, 7)]
    league.record_many(game(f"m{i + 1}", day, "a", "b", i % 2) for i, day in enumerate(days))
    idle, a = league.player("idle").rank, league.player("a").rank
    assert len(idle.seasons) == 1  # the season of its one match, not the ~20 since
    assert len(a.seasons) >= 15 and idle.weekly == ()
    # an idle player's RP, MMR and RD still follow every season end (Table 1, eq. 5)
    assert league.player("idle").skill.deviation == 350.0


def _counted(league: rankcraft.League) -> list[int]:
    calls = [0]
    reset = league._steps.reset
    assert reset is not None

    def counting(players, kind, context):  # type: ignore[no-untyped-def]
        calls[0] += 1
        return reset(players, kind, context)

    league._steps.reset = counting
    return calls


def _players(n: int = 60) -> list[dict[str, object]]:
    return [game(f"p{i}", f"2024-01-{2 + i % 20:02d}", f"x{i}", f"y{i % 7}") for i in range(n)]


def test_a_far_future_match_runs_no_event_after_the_league_is_at_rest() -> None:
    league = schedule_league()
    league.record_many(sorted(_players(), key=lambda m: str(m["played_at"])))
    calls = _counted(league)
    league.record(game("far", "9000-06-01", "x1", "y1"))  # ~365,000 weekly events due
    assert calls[0] < 60
    # the first moments after the match, 2024-01-01 plus whole weeks (and fortnights)
    assert league.export()["schedule"] == ["9000-06-02T00:00:00Z", "9000-06-02T00:00:00Z"]


def test_skipping_quiet_events_changes_no_result() -> None:
    matches = sorted(_players(), key=lambda m: str(m["played_at"]))
    later = [game("late", "2027-03-10", "x1", "y2"), game("later", "2027-03-30", "y2", "z")]
    fast, slow = schedule_league(), schedule_league()
    run = slow._writer.run_reset  # (the season events the writer runs before a match)
    slow._writer.run_reset = lambda *args: run(*args) or 1
    calls = _counted(fast), _counted(slow)
    for league in (fast, slow):
        league.record_many(matches)
        league.record_many(later)
    assert fast.export() == slow.export()
    assert calls[0][0] < 40 < 150 < calls[1][0]


def test_a_match_after_the_last_representable_event_is_refused_at_once() -> None:
    league = schedule_league()
    league.record(game("m1", "2024-01-02"))
    before = league.export()
    calls = _counted(league)
    with pytest.raises(rankcraft.MatchError, match="no room for the season schedule"):
        league.record(game("m2", "9999-12-31"))
    assert league.export() == before and calls[0] < 60


def test_a_catch_up_reports_its_progress() -> None:
    league = schedule_league()
    league.record(game("m1", "2024-01-02"))
    calls: list[tuple[int, int]] = []
    league.catch_up_progress = lambda done, total: calls.append((done, total))
    league.record(game("m2", "2024-01-09"))  # one event due (01-08): no catch-up to show
    assert calls == []
    # soft resets 01-15 to 12-30 (51), hard resets 01-15 to 12-30 (26): 77 due; once the
    # league is at rest the rest are passed over in one step
    league.record(game("m3", "2024-12-31"))
    assert calls[0] == (1, 77) and calls[-1] == (77, 77)
    assert [d for d, _ in calls] == sorted({d for d, _ in calls}) and len(calls) < 77


class _Terminal(io.StringIO):
    """A stream that says it is a terminal, so that progress bars draw on it."""

    def isatty(self) -> bool:
        return True


def test_replay_draws_a_catch_up_bar_on_a_terminal_only(tmp_path: Path) -> None:
    source = tmp_path / "m.jsonl"
    # the bundled skyweaver schedule from the first match (2024-01-02): soft resets
    # 2024-01-09 to 2030-01-01 (313) and hard resets from 2024-01-30 (78) before m3
    matches = [
        game("m1", "2024-01-02"),
        game("m2", "2024-01-03", "c", "a"),
        game("m3", "2030-01-01", "a", "c"),
    ]
    source.write_text("".join(json.dumps(m) + "\n" for m in matches))
    for n, err in enumerate((_Terminal(), io.StringIO())):
        out = io.StringIO()
        argv = [
            "replay",
            str(source),
            "--ruleset",
            "skyweaver",
            "--db",
            str(tmp_path / f"{n}.sqlite"),
        ]
        assert main(argv, out=out, err=err) == 0
        drawn = "season events" in err.getvalue()
        assert drawn == (n == 0) and ("/391" in err.getvalue()) == (n == 0)
        assert "recorded 3 matches" in out.getvalue()


class _Tamper:
    """A reset plugin whose records an import would refuse (issue 43 item 7)."""

    def __init__(self, **changes: object) -> None:
        self.changes = changes

    @rankcraft.hookimpl
    def rankcraft_reset(self, players: list[rankcraft.PlayerRecord]) -> object:
        import attrs

        return [attrs.evolve(p, **self.changes) for p in players]


@pytest.mark.parametrize(
    ("changes", "said"),
    [
        ({"matches": -7}, "record 'a'.matches must be a whole number in [0, 2147483647]: -7"),
        ({"skill": "strong"}, "AttributeError"),
    ],
    ids=["negative-matches", "no-state"],
)
def test_records_a_reset_plugin_returns_are_checked_as_an_import_checks_them(
    db_url: str, changes: dict[str, object], said: str
) -> None:
    pm = rankcraft.get_plugin_manager()
    pm.register(_Tamper(**changes), name="tamper")
    plugins = rankcraft.Plugins(pm)
    text = 'name = "t"\n[update]\nplugin = "elo"\n[reset]\nplugin = "tamper"\n'
    ruleset = rankcraft.loads_ruleset(text, plugins=plugins)
    with rankcraft.League.open(db_url, ruleset, plugins=plugins) as league:
        league.record(game("m1", "2024-01-01"))
        before = league.export()
        with pytest.raises(rankcraft.PluginError) as caught:
            league.reset("soft")
        message = str(caught.value)
        assert message.startswith(
            "plugin 'tamper': rankcraft_reset returned a record of player 'a' that an import "
            "would refuse: "
        )
        assert said in message
        assert league.export() == before  # nothing written, and the league still reads
    with rankcraft.League.open(db_url, plugins=plugins) as again:
        assert again.export() == before
