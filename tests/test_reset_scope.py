"""Season events read only the players they can change (``rankcraft_reset_scope``).

A scoped event must give exactly what the same event over every player gives; the
stores answer a scope along their indexed columns (memory, SQLite, PostgreSQL).
"""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import attrs
import pytest

import rankcraft
from rankcraft import PlayerScope
from rankcraft.plugins.skyweaver import SkyweaverRp


def _rank(points: int) -> dict[str, Any]:
    """A whole Skyweaver rank state of ``points`` (an import takes no field left out)."""
    return attrs.asdict(SkyweaverRp(points))


WEEKS = """
extends = "skyweaver"
name = "sw-scope"
resets = [
  { kind = "soft", every_days = 7.0, start = "2024-01-01" },
  { kind = "hard", every_days = 28.0, start = "2024-01-01" },
]
"""
IMPORTED = [  # two Masters (capped by the soft resets) and players of every kind
    {"id": "m1", "skill": {"rating": 1900.0, "deviation": 60.0}, "rank": _rank(1450)},
    {"id": "m2", "skill": {"rating": 1850.0, "deviation": 80.0}, "rank": _rank(1250)},
    {"id": "e1", "skill": {"rating": 1600.0, "deviation": 120.0}, "rank": _rank(950)},
    {
        "id": "idle",
        "skill": {"rating": 1400.0, "deviation": 200.0},
        "rank": _rank(400),
        "last_played": "2023-12-20",
    },
]
START = datetime(2024, 1, 1, tzinfo=UTC)


def history() -> list[dict[str, Any]]:
    """Twelve weeks; p0-p5 play every week, p6-p9 only in the first four (then idle);
    the Masters play in weeks 1 and 5."""
    out = []
    for week in range(12):
        for k in range(6 if week > 3 else 10):
            a, b = f"p{k}", f"p{(k + week + 1) % (6 if week > 3 else 10)}"
            if a == b:
                continue
            day = (START + timedelta(days=1 + week * 7)).isoformat()
            out.append(
                {"id": f"w{week}-{k}", "played_at": day, "teams": [[a], [b]], "scores": [1, 0]}
            )
        if week in (1, 5):
            day = (START + timedelta(days=2 + week * 7)).isoformat()
            out.append(
                {"id": f"m{week}", "played_at": day, "teams": [["m1"], ["m2"]], "scores": [1, 0]}
            )
    return out


def counting(league: rankcraft.League) -> list[int]:
    """Records handed to the reset hook, per call."""
    handed: list[int] = []
    original = league._steps.reset
    assert original is not None

    def wrapped(players: Any, kind: str, context: Any) -> Any:
        handed.append(len(players))
        return original(players, kind, context)

    league._steps.reset = wrapped
    return handed


def run(store_of: Any, scoped: bool) -> tuple[dict[str, Any], list[int]]:
    league = rankcraft.League(rankcraft.loads_ruleset(WEEKS), store=store_of())
    if not scoped:
        league._steps.reset_scope = None
    handed = counting(league)
    league.import_state({"players": IMPORTED})
    matches = history()
    league.record_many(matches[:40])  # two transactions: the second starts from the store
    league.record_many(matches[40:])
    document = league.export()
    league.close()
    return document, handed


def test_scoped_soft_resets_give_what_resets_over_everyone_give(tmp_path: Path) -> None:
    paths = iter(range(100))

    def sqlite() -> Any:
        return rankcraft.store.open_store(tmp_path / f"l{next(paths)}.sqlite")

    for store_of in (rankcraft.store.MemoryStore, sqlite):
        scoped, handed = run(store_of, True)
        everyone, handed_all = run(store_of, False)
        assert scoped == everyone
        assert handed_all == [14] * 12  # 10 soft and 2 hard resets, every player each time
        # before the first hard reset (2024-01-29) every player; after it, a soft reset
        # reads those who played since a week before the hard reset: p0-p9 (02-05),
        # the Masters too once they played again (02-12 to 02-26); after the second
        # hard reset, the six regulars alone
        assert handed == [14] * 5 + [10, 12, 12, 12, 14, 6, 6]
    weeks = {p["id"]: len(p["rank"]["weekly"]) for p in scoped["players"]}
    assert weeks["p0"] == 2 and weeks["p9"] == weeks["m1"] == 0  # since the 02-26 reset


def test_scoped_resets_in_postgres(pg_url: str) -> None:
    want, _ = run(rankcraft.store.MemoryStore, False)
    got, handed = run(lambda: rankcraft.store.open_store(pg_url), True)
    assert got == want and handed[-1] == 6


PLAYERS = [
    {
        "id": "a",
        "skill": {"rating": 1500.0, "deviation": 50.0},
        "rank": _rank(1300),
        "last_played": "2024-01-01",
    },
    {
        "id": "b",
        "skill": {"rating": 1500.0, "deviation": 50.0},
        "rank": _rank(650),
        "last_played": "2024-03-01",
    },
    {"id": "c", "skill": {"rating": 1500.0, "deviation": 50.0}, "rank": _rank(920)},
]


@pytest.mark.parametrize("kind", ["memory", "sqlite", "postgres"])
def test_stores_answer_a_scope_along_their_columns(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    if kind == "memory":
        store = rankcraft.store.MemoryStore()
    elif kind == "sqlite":
        store = rankcraft.store.open_store(tmp_path / "s.sqlite")
    else:
        store = rankcraft.store.open_store(request.getfixturevalue("pg_url"))
    league = rankcraft.League("skyweaver", store=store)
    league.import_state({"players": PLAYERS})
    feb = datetime(2024, 2, 1, tzinfo=UTC)

    def ids(**scope: Any) -> list[str]:
        return sorted(store.load_where(rankcraft.PlayerScope(**scope)))

    assert ids(played_since=feb) == ["b"]
    assert ids(played_since=datetime(2024, 1, 1, tzinfo=UTC)) == ["a", "b"]  # at or after
    assert ids(sort_key_from=900.0) == ["a", "c"]
    assert ids(sort_key_from=1300.0) == ["a"]
    assert ids(tiers=["Expert I", "Wanderer"]) == ["c"]  # 920 RP: Expert I
    assert ids(played_since=feb, sort_key_from=1000.0, tiers=["Expert I"]) == ["a", "b", "c"]
    assert ids() == []
    assert store.load_where(rankcraft.PlayerScope(sort_key_from=1300.0))["a"] == league.player("a")
    league.close()


def test_a_plugin_without_a_scope_gets_every_player() -> None:
    ruleset = """
extends = "elo"
name = "r"
[reset]
plugin = "regress"
[reset.params]
fraction = {fraction}
target = 1500.0
"""
    for fraction, handed_want, rating in (("0.5", [3], 1550.0), ("0.0", [0], 1600.0)):
        league = rankcraft.League(rankcraft.loads_ruleset(ruleset.format(fraction=fraction)))
        handed = counting(league)
        league.import_state(
            {"players": [{"id": p, "skill": {"rating": 1600.0, "peak": 1600.0}} for p in "abc"]}
        )
        assert league.reset("season") == (3 if rating != 1600.0 else 0)
        assert handed == handed_want  # fraction 0 moves nobody: nobody is read
        assert league.player("b").skill.rating == rating


def test_a_scope_is_validated() -> None:
    with pytest.raises(ValueError, match="'sort_key_from' must be a finite number: nan"):
        PlayerScope(sort_key_from=math.nan)
    with pytest.raises(ValueError, match="'tiers' must be tier names"):
        PlayerScope(tiers=[3])  # type: ignore[list-item]
    assert PlayerScope(tiers=["Master"]).tiers == ("Master",)


def test_a_soft_reset_triggered_by_the_data_reads_everyone() -> None:
    # its `since` is its previous run, however long before: a week recorded before the
    # hard reset may belong to a player idle since, so no scope is exact
    ruleset = rankcraft.loads_ruleset(
        'extends = "skyweaver"\nname = "sw-gap"\nresets = [\n'
        '  { kind = "soft", gap_days = 3.0 },\n'
        '  { kind = "hard", every_days = 28.0, start = "2024-01-01" },\n]\n'
    )
    league = rankcraft.League(ruleset)
    handed = counting(league)
    league.import_state({"players": IMPORTED})
    league.record_many(history())
    assert handed and all(n == len(league) for n in handed)
