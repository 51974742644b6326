"""What every database store must do, run on an SQLite file and on a PostgreSQL schema
(the ``db_url`` fixture): persistence, the remembered ruleset, atomic batches, and several
leagues or processes writing into one database."""

from __future__ import annotations

import multiprocessing
import random
from pathlib import Path
from typing import Any

import pytest

import rankcraft

from .conftest import committed, file_digest, snapshot


def test_state_survives_reopen(db_url: str, match) -> None:
    with rankcraft.League.open(db_url, "elo") as league:
        league.record_many([match(f"m{i}", "a", "b", scores=[1, 0], day=i + 1) for i in range(3)])
        exported = league.export()
        report = league.report("m2")
    with rankcraft.League.open(db_url) as league:
        assert league.ruleset.name == "elo"
        assert league.export() == exported
        assert league.report("m2") == report
        assert [r.match.id for r in league.history("a", limit=2)] == ["m2", "m1"]
        assert league.match_count == 3
        with pytest.raises(rankcraft.DuplicateMatchError):
            league.record(match("m1", "a", "b", day=9))
        league.record(match("m3", "a", "b", day=9))
    with rankcraft.League.open(db_url, "elo") as league:
        assert league.player("a").matches == 4


def test_a_closed_league_says_so_and_closes_again_quietly(db_url: str, match) -> None:
    league = rankcraft.League.open(db_url, "elo")
    league.record(match("m1", "a", "b", scores=[1, 0], day=1))
    league.close()
    league.close()
    for use in (
        lambda: league.record(match("m2", "a", "b", day=2)),
        lambda: league.player("a"),
        lambda: league.match_count,
    ):
        with pytest.raises(rankcraft.StoreError, match=r"is closed .*League\.open"):
            use()
    with rankcraft.League.open(db_url) as again:
        assert again.match_count == 1


def test_another_ruleset_is_refused_naming_both(db_url: str, tmp_path, match) -> None:
    with rankcraft.League.open(db_url, "elo") as league:
        league.record(match("m1", "a", "b"))
    before = snapshot(db_url)
    with pytest.raises(
        rankcraft.LeagueMismatchError,
        match="created with ruleset 'elo'; it cannot be used with ruleset 'elo-fide'",
    ):
        rankcraft.League.open(db_url, "elo-fide")
    k16 = tmp_path / "elo.toml"
    k16.write_text('name = "elo"\n[update]\nplugin = "elo"\n[update.params]\nk_factor = 16.0\n')
    with pytest.raises(rankcraft.LeagueMismatchError, match="same name, different parameters"):
        rankcraft.League.open(db_url, k16)
    assert snapshot(db_url) == before


def test_a_failed_batch_changes_no_row(db_url: str, match) -> None:
    with rankcraft.League.open(db_url, "inversus") as league:
        league.record(match("m0", "a", "b"))
    before = snapshot(db_url)
    digest = file_digest(Path(db_url))  # an SQLite file is left byte for byte
    many = [match(f"m{i}", f"p{i % 50}", f"q{i % 70}", day=2) for i in range(1, 3000)]
    many.append(match("m0", "a", "b", day=3))
    with rankcraft.League.open(db_url) as league:
        with pytest.raises(rankcraft.DuplicateMatchError):
            league.record_many(many)
        assert league.match_count == 1
        assert len(league) == 2
        with pytest.raises(rankcraft.LateMatchError):
            league.record({**match("m1", "c", "a"), "played_at": "2023-12-31"})
    assert snapshot(db_url) == before
    assert file_digest(Path(db_url)) == digest


def test_a_stale_league_reads_what_another_committed(db_url: str) -> None:
    first = rankcraft.League.open(db_url, "elo")
    second = rankcraft.League.open(db_url)
    first.record({"id": "a", "played_at": "2024-01-01", "teams": [["x"], ["y"]], "scores": [1, 0]})
    report = second.record(
        {"id": "b", "played_at": "2024-01-02", "teams": [["x"], ["z"]], "scores": [1, 0]}
    )
    assert report.change("x").skill_before.rating == 1516.0
    with pytest.raises(rankcraft.DuplicateMatchError):
        second.record(
            {"id": "a", "played_at": "2024-01-03", "teams": [["x"], ["y"]], "scores": [1, 0]}
        )
    second.refresh()
    assert second.player("y").skill.rating == 1484.0
    first.refresh(["z"])
    assert first.player("z").skill.rating < 1500.0
    first.close()
    second.close()


def test_duplicates_are_refused_after_another_process_commits(db_url: str) -> None:
    first, second = rankcraft.League.open(db_url, "elo"), rankcraft.League.open(db_url)
    game = {"id": "x0", "played_at": "2024-01-01", "teams": [["a"], ["b"]], "scores": [1, 0]}
    first.record(game)
    assert second.record_many([game], skip_seen=True).skipped == 1
    with pytest.raises(rankcraft.DuplicateMatchError):
        second.record(game)
    with pytest.raises(rankcraft.DuplicateMatchError):
        second.record_many([{**game, "id": "y"}, {**game, "id": "y"}])
    first.close()
    second.close()


def _writer(db: str, matches: list[dict[str, Any]]) -> None:
    with rankcraft.League.open(db) as league:
        for match in matches:
            league.record(match)


@pytest.mark.slow
def test_several_processes_end_as_a_serial_replay_in_commit_order(db_url: str) -> None:
    rankcraft.League.open(db_url, "glicko1").close()
    rng = random.Random(5)
    matches = []
    for i in range(600):
        a, b = rng.sample(range(12), 2)
        s = rng.choice([0, 1, 1, 2])
        matches.append(
            {
                "id": f"m{i:04d}",
                "played_at": "2024-05-01T12:00:00Z",  # one moment: any commit order is valid
                "teams": [[f"p{a}"], [f"p{b}"]],
                "scores": [s, 2 - s],
            }
        )
    context = multiprocessing.get_context("fork")
    workers = [context.Process(target=_writer, args=(db_url, matches[k::3])) for k in range(3)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(120)
        assert w.exitcode == 0
    order = committed(db_url)
    assert sorted(m["id"] for m in order) == sorted(m["id"] for m in matches)
    serial = rankcraft.League("glicko1")
    serial.record_many(order)
    with rankcraft.League.open(db_url) as league:
        assert league.export()["players"] == serial.export()["players"]
