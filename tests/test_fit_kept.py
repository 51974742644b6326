"""A whole-history model's fit kept when a league closes (``rankcraft_fit_dump``) and
taken up when the next league opens the database (``rankcraft_fit_load``): the league
then hands the fit only the matches after those it covers, and ends exactly where a
league that never closed ends. A kept fit whose matches the history no longer begins
with (an edit), or that its model cannot load, is passed over for a rebuild."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import rankcraft
from rankcraft.refits import FIT_KEPT

from .test_goals_fit_league import history as football
from .test_ttt import history as tennis
from .test_ttt import ranked, surfaced

TTT_BOTH = (
    'name = "ttt-both"\nextends = "ttt"\n[update.params]\ngamma = 0.2\n'
    'draw_probability = 0.2\nevidence_field = "atp_rank"\nevidence_at_one = 3.0\n'
    'evidence_per_log = 0.5\noffset_field = "surface"\noffset_values = ["Hard", "Clay"]\n'
)
"""``ttt`` with a ranking as evidence and surface offsets: its kept fit carries the
offsets' priors and drifts and each day's evidence."""


def histories() -> dict[str, list[dict[str, Any]]]:
    return {
        "ttt": tennis(days=24, seed=7),
        "football-goals-fit": football(days=40, seed=4),
        "ttt-both": ranked(surfaced(tennis(days=24, seed=7))),
    }


def ruleset_of(name: str) -> str | rankcraft.Ruleset:
    return rankcraft.loads_ruleset(TTT_BOTH) if name == "ttt-both" else name


def refits_of(league: rankcraft.League) -> Any:
    return league._refits  # type: ignore[attr-defined]


@pytest.mark.parametrize("name", ["ttt", "football-goals-fit", "ttt-both"])
def test_a_reopened_league_starts_from_the_kept_fit(tmp_path: Path, name: str) -> None:
    matches = histories()[name]
    cut = len(matches) * 2 // 3
    never_closed = rankcraft.League(ruleset_of(name))
    never_closed.record_many(matches)
    db = tmp_path / "l.sqlite"
    with rankcraft.League.open(db, ruleset_of(name)) as league:
        league.record_many(matches[:cut])
    with rankcraft.League.open(db) as league:
        kept = json.loads(league.store.get_meta(FIT_KEPT) or "{}")
        assert kept["matches"] == cut and kept["fit"]
        if name == "ttt-both":
            assert kept["fit"]["evidence"] and kept["fit"]["drifts"]
        league.record_many(matches[cut:])
        fit = refits_of(league)
        # resumed: only the days after the kept matches were refitted, not the whole history
        days = {m["played_at"][:10] for m in matches[cut:]}
        assert fit.refits <= len(days) and fit.handed == len(matches)
        assert league.export()["players"] == never_closed.export()["players"]
    with rankcraft.League.open(db) as league:  # (kept again, covering everything)
        assert json.loads(league.store.get_meta(FIT_KEPT) or "{}")["matches"] == len(matches)


def test_an_edit_inside_the_kept_matches_rebuilds(tmp_path: Path) -> None:
    matches = histories()["football-goals-fit"]
    db = tmp_path / "l.sqlite"
    with rankcraft.League.open(db, "football-goals-fit") as league:
        league.record_many(matches)
    with rankcraft.League.open(db) as league:
        league.void(matches[3]["id"], "entered twice")
        league.record(
            {"id": "x", "played_at": "2024-03-01", "teams": [["T1"], ["T2"]], "scores": [2, 1]}
        )
        got = league.export()["players"]
    replay = rankcraft.League("football-goals-fit")
    replay.record_many([m for m in matches if m["id"] != matches[3]["id"]])
    replay.record(
        {"id": "x", "played_at": "2024-03-01", "teams": [["T1"], ["T2"]], "scores": [2, 1]}
    )
    assert got == replay.export()["players"]


@pytest.mark.parametrize("form", ["other", "rankcraft-ttt/2"])
def test_a_kept_fit_the_model_cannot_load_is_passed_over(tmp_path: Path, form: str) -> None:
    """A snapshot of another format, or of the format before the fit weighed partial
    play (``rankcraft-ttt/2``: its games have no weights), is rebuilt, not resumed."""
    matches = histories()["ttt"]
    for m in matches:
        m["seconds_played"] = [[90], [45]]  # (a weight the /2 fit would have left out)
    db = tmp_path / "l.sqlite"
    with rankcraft.League.open(db, "ttt") as league:
        league.record_many(matches[:40])
    with rankcraft.League.open(db) as league:
        kept = json.loads(league.store.get_meta(FIT_KEPT) or "{}")
        assert kept["fit"]["format"] == "rankcraft-ttt/3"
        with league.batch():
            fit = {**kept["fit"], "format": form}
            league.store.set_meta(FIT_KEPT, json.dumps({**kept, "fit": fit}))
    with rankcraft.League.open(db) as league:
        league.record_many(matches[40:])
        assert refits_of(league).handed == len(matches)
        later_days = {m["played_at"][:10] for m in matches[40:]}
        assert refits_of(league).refits > len(later_days)  # (every day refitted: rebuilt)
        got = league.export()["players"]
    never_closed = rankcraft.League("ttt")
    never_closed.record_many(matches)
    assert got == never_closed.export()["players"]


def test_a_league_in_memory_keeps_nothing() -> None:
    league = rankcraft.League("ttt")
    league.record_many(histories()["ttt"][:20])
    league.close()
    assert league.store.get_meta(FIT_KEPT) is None


def test_a_league_that_only_reads_writes_nothing(tmp_path: Path) -> None:
    """A read (``player --curve`` opens the file read-only) rebuilds the fit it needs and
    writes nothing back, even where the kept fit is stale (an edit made it so)."""
    from rankcraft.cli import main

    matches = histories()["ttt"]
    db = tmp_path / "l.sqlite"
    with rankcraft.League.open(db, "ttt") as league:
        league.record_many(matches)
    with rankcraft.League.open(db) as league:
        league.void(matches[2]["id"], "entered twice")  # (the kept fit no longer fits)
    before = db.read_bytes()
    assert main(["player", "p1", "--db", str(db), "--curve"]) == 0
    assert db.read_bytes() == before


def test_a_failing_block_closes_the_store_and_keeps_its_own_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Leaving a ``with`` block on an error closes the store without keeping the fit (the
    caller's error is the one raised); a keep that fails on ``close()`` still closes."""
    from rankcraft.refits import Refits

    def broken(self: Refits) -> None:
        raise RuntimeError("the keep failed")

    monkeypatch.setattr(Refits, "keep", broken)
    db = tmp_path / "l.sqlite"
    with pytest.raises(KeyError, match="mine"), rankcraft.League.open(db, "ttt") as league:
        league.record_many(histories()["ttt"][:10])
        raise KeyError("mine")
    league = rankcraft.League.open(db)
    league.record_many(histories()["ttt"][10:20])
    with pytest.raises(RuntimeError, match="the keep failed"):
        league.close()
    with pytest.raises(rankcraft.StoreError, match="is closed"):  # (closed all the same)
        league.player("p1")
    league.close()  # (closing again does nothing, the fit still unkept)
    failed = rankcraft.League.open(tmp_path / "other.sqlite", "ttt")
    with pytest.raises(KeyError, match="mine"), failed:
        failed.record_many(histories()["ttt"][:10])
        raise KeyError("mine")
    failed.close()  # (a block's error closed it without keeping: nothing more to do)
