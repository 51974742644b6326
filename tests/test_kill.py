"""Fault injection (issue 31, item 11): every write path killed with SIGKILL at seeded
random moments, then the league reopened and compared with an uninterrupted run.

The paths: a replay (``--commit-every``: what is kept is an exact prefix of the file, in
whole chunks), an import (all players or none), a batch POST (all matches or none) and a
season catch-up (a match long after the last one: every due event and the match, or
nothing). Each runs in a child process that says "ready" just before it starts writing;
the parent kills it after a delay drawn from ``random.Random(SEED)`` within the time an
uninterrupted run took, on SQLite and on PostgreSQL."""

from __future__ import annotations

import json
import random
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import rankcraft

from .conftest import committed, drop_schema, new_pg_url, ready_child, run_or_kill
from .test_reset_scope import WEEKS

SEED = 31
KILLS = 3
"""Kills per write path and store (and one uninterrupted run that measures the time)."""

CHILD = r"""
import json, sys
import rankcraft

op, db, data = sys.argv[1:4]
if op == "replay":
    from rankcraft.cli import main

    rankcraft.League("elo").close()  # (the plugins loaded: the kill lands in the replay)
    print("ready", flush=True)
    code = main(["replay", data, "--db", db, "--commit-every", "100", "--skip-seen"])
    assert code == 0, code
else:
    league = rankcraft.League.open(db)
    if op == "batch":
        import rankcraft.tokens
        from starlette.testclient import TestClient
        from rankcraft.serve import Settings, create_app

        _, token = rankcraft.tokens.create_token(league.store, scope="record")
        client = TestClient(
            create_app(league, Settings(max_body=1 << 24)),
            headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
        )
        body = open(data).read()
        print("ready", flush=True)
        answer = client.post("/matches/batch", content=body)
        assert answer.status_code == 201, answer.text
    else:
        document = json.load(open(data))
        print("ready", flush=True)
        if op == "import":
            league.import_state(document)
        else:  # a match long after the last one: the season catch-up, then the match
            league.record(document)
    league.close()
print("done", flush=True)
"""


def matches(count: int, players: int, first: int = 0, day0: int = 0) -> list[dict[str, Any]]:
    rng = random.Random(count + players + first)
    out = []
    for i in range(count):
        a, b = rng.sample(range(players), 2)
        out.append(
            {
                "id": f"k{first + i}",
                "played_at": f"2024-{1 + (day0 + i // 400) // 28:02d}-"
                f"{1 + (day0 + i // 400) % 28:02d}T{(i % 400) // 20:02d}:{i % 20 * 2:02d}:00Z",
                "teams": [[f"p{a}"], [f"p{b}"]],
                "scores": [1, 0] if rng.random() < 0.5 else [0, 1],
            }
        )
    return out


def _state(url: str) -> dict[str, Any]:
    with rankcraft.League.open(url) as league:
        document = league.export()
        return {
            "players": document["players"],
            "schedule": document.get("schedule"),
            "matches": [m["id"] for m in committed(url)],
        }


def _kill_run(url: str, op: str, data: Path, delay: float | None) -> tuple[bool, float]:
    """Run the child on ``url``; SIGKILL it ``delay`` s after it is ready (None: let it
    finish). Returns (whether it finished, seconds from ready to its end or the kill)."""
    return run_or_kill(ready_child(CHILD, op, url, str(data)), delay)


def _prepare(op: str, url: str, folder: Path) -> tuple[Path, Callable[[], None]]:
    """Make the league of ``op`` at ``url``; returns its input file and a function that
    puts the league back as it was made."""
    base = matches(200, 60)
    document: dict[str, Any] | None = None
    if op == "replay":
        data = folder / "m.jsonl"
        data.write_text("".join(json.dumps(m) + "\n" for m in matches(1200, 300, 5000, 10)))
        ruleset: Any = "elo"
    elif op == "import":
        source = rankcraft.League("elo")
        source.record_many(matches(1500, 1000))
        data = folder / "doc.json"
        data.write_text(json.dumps(source.export()))
        ruleset = "elo"
    elif op == "batch":
        data = folder / "batch.json"
        data.write_text(json.dumps({"matches": matches(1000, 400, first=10_000, day0=20)}))
        ruleset = "elo"
    else:
        data = folder / "far.json"
        far = {"id": "far", "played_at": "2029-06-01", "teams": [["p1"], ["p2"]]}
        data.write_text(json.dumps({**far, "scores": [1, 0]}))
        ruleset = rankcraft.loads_ruleset(WEEKS)
        mem = rankcraft.League(ruleset)  # (its players imported: quicker in PostgreSQL)
        mem.record_many(matches(1500, 1000))
        document = mem.export()

    def make() -> None:
        if url.startswith("postgresql://"):
            drop_schema(url)
        else:
            for suffix in ("", "-wal", "-shm", "-journal"):
                Path(url + suffix).unlink(missing_ok=True)
        with rankcraft.League.open(url, ruleset) as league:
            if document is None:
                league.record_many(base)
            else:
                league.import_state(document)

    if not url.startswith("postgresql://"):  # (SQLite: made once, copied back)
        make()
        pristine = folder / "pristine.sqlite"
        shutil.copy(url, pristine)

        def restore() -> None:
            for suffix in ("-wal", "-shm", "-journal"):
                Path(url + suffix).unlink(missing_ok=True)
            shutil.copy(pristine, url)

        return data, restore
    return data, make


def _reference(op: str, before: dict[str, Any], after: dict[str, Any], data: Path) -> Callable:
    """What a killed run may leave: for a replay, the state after an exact prefix in whole
    chunks; for the others, the state before or after."""

    def check(found: dict[str, Any]) -> str:
        if op != "replay":
            assert found in (before, after), f"{op}: neither before nor after"
            return "after" if found == after else "before"
        ids = [json.loads(line)["id"] for line in data.read_text().splitlines()]
        kept = found["matches"][len(before["matches"]) :]
        assert found["matches"][: len(before["matches"])] == before["matches"]
        assert kept == ids[: len(kept)], "not a prefix of the file"
        assert len(kept) % 100 == 0 or len(kept) == len(ids), len(kept)
        return f"{len(kept)} kept"

    return check


def _replayed_prefix(url: str, data: Path, kept: int) -> dict[str, Any]:
    """The players after replaying the league's base and the file's first ``kept``
    matches uninterrupted (in memory)."""
    league = rankcraft.League("elo")
    league.record_many(matches(200, 60))
    rows = [json.loads(line) for line in data.read_text().splitlines()[:kept]]
    league.record_many(rows)
    return {"players": league.export()["players"], "schedule": None}


@pytest.mark.slow(seconds=40)
@pytest.mark.parametrize("store", ["sqlite", "postgres"])
def test_every_write_path_killed_leaves_a_whole_state(tmp_path: Path, store: str) -> None:
    rng = random.Random(SEED)
    outcomes: dict[str, list[str]] = {}
    for op in ("replay", "import", "batch", "reset"):
        url = str(tmp_path / f"{op}.sqlite") if store == "sqlite" else new_pg_url()
        try:
            data, restore = _prepare(op, url, tmp_path)
            if store == "postgres":
                restore()
            before = _state(url)
            finished, seconds = _kill_run(url, op, data, None)
            after = _state(url)
            assert finished and after != before
            check = _reference(op, before, after, data)
            outcomes[op] = [f"whole run {seconds:.2f} s"]
            for _ in range(KILLS):
                restore()
                delay = rng.uniform(0.0, seconds)
                finished, _ = _kill_run(url, op, data, delay)
                found = _state(url)  # reopens: nothing half-written stops it
                outcome = check(found)
                if op == "replay":
                    kept = len(found["matches"]) - len(before["matches"])
                    want = _replayed_prefix(url, data, kept)
                    assert found["players"] == want["players"]
                if not url.startswith("postgresql://"):
                    assert _integrity(url) == "ok"
                outcomes[op].append(f"killed at {delay:.2f} s: {outcome}")
        finally:
            if store == "postgres":
                drop_schema(url)
    print(json.dumps(outcomes, indent=1))


def _integrity(path: str) -> str:
    import sqlite3

    con = sqlite3.connect(path)
    try:
        return str(con.execute("PRAGMA integrity_check").fetchone()[0])
    finally:
        con.close()
