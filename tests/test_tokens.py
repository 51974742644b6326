"""API tokens: made, listed and revoked from the command line, kept as digests in the
league's database (SQLite and PostgreSQL), and old databases migrated to hold them."""

from __future__ import annotations

import hashlib
import io
import json
from pathlib import Path

import pytest

import rankcraft
from rankcraft.cli import main
from rankcraft.store import open_store
from rankcraft.store.migrations import SCHEMA_VERSION
from rankcraft.tokens import authenticate, create_token

from .conftest import age_to_version_5, snapshot, sql_rows, sql_run


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def test_create_list_revoke(db_url: str) -> None:
    rankcraft.League.open(db_url, "elo").close()
    code, out, err = run("token", "create", "--db", db_url, "--scope", "record", "--name", "ci")
    assert code == 0, err
    secret = out.strip()
    assert secret.startswith("rk_") and len(secret) == 63
    assert "token 'ci' (scope record)" in err and "shown this once" in err
    code, out, _ = run("token", "create", "--db", db_url, "--scope", "admin", "--json")
    admin = json.loads(out)
    assert admin["scope"] == "admin" and admin["name"] == f"token-{admin['key']}"

    # only the digest is kept: the token's text is nowhere in the database
    rows = sql_rows(db_url, "SELECT name, key, digest, scope FROM api_tokens ORDER BY name")
    assert rows[0] == ("ci", secret[3:19], hashlib.sha256(secret.encode()).hexdigest(), "record")
    assert secret[20:] not in json.dumps(snapshot(db_url))
    assert admin["token"][20:] not in json.dumps(snapshot(db_url))

    code, out, _ = run("token", "list", "--db", db_url)
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split() == ["name", "scope", "created", "token"]
    assert lines[1].split()[:2] == ["ci", "record"]
    assert lines[1].split()[3] == f"rk_{secret[3:19]}_..."
    assert secret[20:] not in out

    store = open_store(db_url, create=False)
    try:
        found = authenticate(store, secret)
        assert found is not None and (found.name, found.scope) == ("ci", "record")
        assert authenticate(store, secret[:-1] + ("A" if secret[-1] != "A" else "B")) is None
    finally:
        store.close()

    code, out, _ = run("token", "revoke", "ci", "--db", db_url)
    assert (code, out) == (0, "revoked token 'ci' (scope record)\n")
    code, out, _ = run("token", "list", "--db", db_url, "--json")
    assert [t["name"] for t in json.loads(out)] == [admin["name"]]
    store = open_store(db_url, create=False)
    try:
        assert authenticate(store, secret) is None
    finally:
        store.close()


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["create", "--scope", "record", "--name", "ci"], "'name' 'ci' is taken"),
        (["create", "--scope", "record", "--name", "a b"], "'name' must be 1 to 64 letters"),
        (["create", "--scope", "record", "--name", "x" * 65], "'name' must be 1 to 64"),
        (["revoke", "nobody"], "'name': no token is named 'nobody'"),
    ],
)
def test_refusals_change_nothing(db_url: str, argv: list[str], message: str) -> None:
    rankcraft.League.open(db_url, "elo").close()
    assert run("token", "create", "--db", db_url, "--scope", "record", "--name", "ci")[0] == 0
    before = snapshot(db_url)
    code, _, err = run("token", *argv, "--db", db_url)
    assert code == 2 and message in err, err
    assert snapshot(db_url) == before


def test_an_unknown_scope_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run("token", "create", "--db", str(tmp_path / "x"), "--scope", "root")[0] == 2
    assert "argument --scope: invalid choice: 'root'" in capsys.readouterr().err


def test_no_league_no_token(tmp_path: Path) -> None:
    db = tmp_path / "none.sqlite"
    code, _, err = run("token", "create", "--db", str(db), "--scope", "read")
    assert code == 2 and "no database at" in err
    assert not db.exists()


def test_a_version_3_database_is_migrated_by_the_token_command(db_url: str) -> None:
    match = {"id": "m", "played_at": "2024-01-01", "teams": [["a"], ["b"]], "ranks": [1, 2]}
    with rankcraft.League.open(db_url, "elo") as league:
        league.record(match)
    reference = rankcraft.League("elo")
    reference.record(match)
    age_to_version_5(db_url, reference)
    sql_run(
        db_url,
        "DROP TABLE api_tokens",
        "DROP INDEX players_by_key",
        "DROP INDEX players_by_last_epoch",
        *(f"ALTER TABLE players DROP COLUMN {c}" for c in ("tier", "sort_key", "last_epoch")),
        "DELETE FROM schema_history WHERE version >= 4",
        "UPDATE meta SET value = '3' WHERE key = 'schema_version'",
    )
    code, _, err = run("token", "create", "--db", db_url, "--scope", "read", "--name", "r")
    assert code == 0, err
    assert sql_rows(db_url, "SELECT value FROM meta WHERE key = 'schema_version'") == [
        (str(SCHEMA_VERSION),)
    ]
    history = sql_rows(db_url, "SELECT version, summary FROM schema_history WHERE version = 4")
    assert history == [(4, "api_tokens: the HTTP service's API tokens, kept as SHA-256 digests")]
    assert sql_rows(db_url, "SELECT name, scope FROM api_tokens") == [("r", "read")]


def test_tokens_of_a_league_in_memory() -> None:
    league = rankcraft.League("elo")
    token, secret = create_token(league.store, scope="admin", name="a")
    assert authenticate(league.store, secret) == token
    assert token.allows("read") and token.allows("record") and token.allows("admin")
    with pytest.raises(rankcraft.InputError, match="'scope' must be one of read, record, admin"):
        create_token(league.store, scope="write")
