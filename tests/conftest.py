"""Shared fixtures: plugin managers, leagues, match builders, file hashing."""

from __future__ import annotations

import functools
import hashlib
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

import rankcraft
from rankcraft.manager import PluginManager

if os.environ.pop("PYTHONDONTWRITEBYTECODE", None):
    # Where the environment forbids bytecode files, every pytest worker and every
    # subprocess a test starts (the command line, the service) would compile rankcraft and
    # its dependencies again: about 0.4 s of CPU each. Their bytecode goes to one cache
    # outside the source tree instead (PYTHONPYCACHEPREFIX), shared by the whole run.
    os.environ.setdefault(
        "PYTHONPYCACHEPREFIX", os.path.join(tempfile.gettempdir(), "rankcraft-test-pycache")
    )

settings.register_profile(
    "ci", deadline=None, suppress_health_check=[HealthCheck.too_slow], print_blob=True
)
settings.register_profile("dev", deadline=None, max_examples=50)
settings.load_profile("ci" if os.environ.get("CI") else "dev")

SHARED_DATA = Path(
    os.environ.get("RANKCRAFT_SHARED_DATA")
    or Path(__file__).resolve().parents[1].parent / "shared" / "data"
)
"""The real match histories the slow tests replay (ATP singles and doubles, NFL with
FiveThirtyEight's forecasts, international football, World Cup line-ups, F1): the
directory named by ``RANKCRAFT_SHARED_DATA``, else the ``data`` folder of a ``shared`` folder
beside the repository. They are test data, never part of the package; the tests that need
them skip without them."""

SHARED_DATA_MISSING = (
    f"needs the shared match histories at {SHARED_DATA} (set RANKCRAFT_SHARED_DATA)"
)
"""The reason every test that reads :data:`SHARED_DATA` gives when it skips."""


@pytest.hookimpl(optionalhook=True)  # (pytest-xdist's hook: the wheel's smoke run has no xdist)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto``: a worker per core and one more. A fifth of the suite's time is spent
    waiting (on the servers, the killed processes and the wheel's install that tests
    start), and the extra worker fills it: on 2 cores, 4:58-5:28 against 5:39-5:44
    (one slow day of the VM; four workers took 5:51)."""
    if chosen := os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):  # (xdist's own setting)
        return int(chosen)
    return (os.cpu_count() or 1) + 1


def pytest_configure(config: pytest.Config) -> None:
    """Under pytest-xdist, hand each worker one test at a time (``--maxschedchunk 1``,
    unless the command line says otherwise). By default a worker is first given a run of
    a quarter of its share: with the slow tests first, one worker was given every slow
    test and ran for 6:32 while the other two had finished at 3:20."""
    if hasattr(config.option, "maxschedchunk") and config.option.maxschedchunk is None:
        config.option.maxschedchunk = 1


def _slowness(item: pytest.Item) -> float:
    """How long ``item`` is expected to take: a ``slow`` mark's ``seconds`` (or 10 s for
    a bare mark); 0 for every other test."""
    mark = item.get_closest_marker("slow")
    return 0.0 if mark is None else float(mark.kwargs.get("seconds", 10))


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Run the tests marked ``slow`` first, the longest first (a stable sort: the order is
    otherwise kept), so that none of them starts last while the other workers idle.

    pytest-xdist hands each of its N workers two tests in a row to start with (two
    pending at least, whatever ``maxschedchunk``): the first 2N tests are dealt so that
    worker i gets the i-th and the (N+i)-th longest, and the N longest start at once on
    different workers."""
    items.sort(key=lambda item: -_slowness(item))
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    head = items[: 2 * workers]
    if workers > 1 and len(head) == 2 * workers:
        items[: 2 * workers] = [
            t for pair in zip(head[:workers], head[workers:], strict=True) for t in pair
        ]


@functools.cache
def bundled(name: str) -> rankcraft.Ruleset:
    """The bundled ruleset ``name``, loaded once per test process, for the property tests
    that make a league per hypothesis example: ``League("elo")`` builds a plugin manager
    each time (the entry points read, every plugin registered with pluggy: 25-50 ms of
    CPU), which took a third to a half of those tests' time. A :class:`Ruleset` is
    frozen, so the leagues share it safely; what a league does with it is the same."""
    return rankcraft.load_ruleset(name)


@pytest.fixture
def pm() -> PluginManager:
    """A plugin manager with the hookspecs and no entry points loaded."""
    return rankcraft.get_plugin_manager(entry_points=False)


@pytest.fixture(scope="session")
def installed() -> rankcraft.Plugins:
    """The facade over every installed plugin (entry points)."""
    return rankcraft.Plugins()


@pytest.fixture
def installed_pm() -> PluginManager:
    """A fresh manager with every installed plugin, for tests that register more."""
    return rankcraft.get_plugin_manager()


MatchFactory = Callable[..., dict[str, Any]]


@pytest.fixture
def match() -> MatchFactory:
    """Build match dicts: ``match("m1", "a", "b", scores=[1, 0], day=1)``."""

    def build(
        mid: str,
        *sides: Any,
        scores: list[float] | None = None,
        ranks: list[int] | None = None,
        day: int = 1,
        **extra: Any,
    ) -> dict[str, Any]:
        teams = [[s] if isinstance(s, str) else list(s) for s in sides]
        out: dict[str, Any] = {
            "id": mid,
            "played_at": f"2024-01-{day:02d}T12:00:00Z",
            "teams": teams,
        }
        if ranks is not None:
            out["ranks"] = ranks
        else:
            out["scores"] = scores if scores is not None else [1, 0]
        out.update(extra)
        return out

    return build


def file_digest(path: Path) -> str | None:
    """SHA-256 of a file's bytes, or None when it does not exist."""
    if not path.exists():
        return None
    return hashlib.sha256(path.read_bytes()).hexdigest()


def drawn_history(seed: int = 2, n: int = 1500) -> list[dict[str, Any]]:
    """Matches between 12 teams of fixed strength (a gauss of 150 points), drawn from
    Davidson's model with κ 0.86 (30% draws between equals), three matches a day from
    2020-01-01 (``draw_history`` fixture)."""
    import random
    from datetime import date, timedelta

    from rankcraft.plugins._matchup import davidson

    rng = random.Random(seed)
    strength = {f"t{i}": rng.gauss(0, 150) for i in range(12)}
    out = []
    for i in range(n):
        a, b = rng.sample(sorted(strength), 2)
        win, draw, _ = davidson(strength[a] - strength[b], 400.0, 0.86, 0.0)
        x = rng.random()
        scores = [1, 0] if x < win else [1, 1] if x < win + draw else [0, 1]
        day = date(2020, 1, 1) + timedelta(days=i // 3)
        out.append(
            {"id": f"m{i}", "played_at": day.isoformat(), "teams": [[a], [b]], "scores": scores}
        )
    return out


@pytest.fixture
def draw_history() -> list[dict[str, Any]]:
    """:func:`drawn_history`: 1,500 matches with draws, 2020-01-01 to 2021-05-14."""
    return drawn_history()


@pytest.fixture
def shared_data() -> Path:
    """:data:`SHARED_DATA`, the real match histories; a test that asks for it skips
    (saying where the data was looked for) when the directory is absent."""
    if not SHARED_DATA.is_dir():
        pytest.skip(SHARED_DATA_MISSING)
    return SHARED_DATA


PG_SERVER = os.environ.get("RANKCRAFT_PG_URL", "postgresql://postgres@127.0.0.1/test")
"""The PostgreSQL server the suite uses (this machine's; each test takes its own schema)."""


@functools.cache
def pg_unreachable() -> str | None:
    """Why the tests cannot use :data:`PG_SERVER` (psycopg missing, no server answering
    within 3 s, a refused login), or None when they can. Asked once per test process."""
    try:
        import psycopg
    except ImportError:
        return "needs psycopg for the PostgreSQL tests (pip install -e '.[test]')"
    try:
        with psycopg.connect(PG_SERVER.split("?")[0], connect_timeout=3):
            return None
    except psycopg.Error as exc:
        reason = str(exc).strip().splitlines()[0]
        return (
            f"needs a PostgreSQL server at {PG_SERVER} (set RANKCRAFT_PG_URL; README.md, "
            f"PostgreSQL): {reason}"
        )


def require_pg() -> None:
    """Skip the calling test, saying why, when :data:`PG_SERVER` cannot be used."""
    reason = pg_unreachable()
    if reason is not None:
        pytest.skip(reason)


def new_pg_url() -> str:
    """A URL naming a fresh schema on :data:`PG_SERVER` (the test skips without one)."""
    import uuid

    require_pg()
    return f"{PG_SERVER}?schema=t_{uuid.uuid4().hex[:12]}"


@pytest.fixture
def pg_url() -> Iterator[str]:
    """A league's URL in a fresh PostgreSQL schema, dropped after the test."""
    url = new_pg_url()
    yield url
    drop_schema(url)


def drop_schema(url: str) -> None:
    """Remove a test's PostgreSQL schema with everything in it."""
    import psycopg
    from psycopg import sql

    from rankcraft.store.postgres import _split

    conninfo, schema, _ = _split(url)
    with psycopg.connect(conninfo, autocommit=True) as connection:
        connection.execute(
            sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema))
        )


@pytest.fixture(params=["sqlite", "postgres"])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """Where a league is kept: an SQLite file, then a PostgreSQL schema (``pg_url``)."""
    if request.param == "sqlite":
        return str(tmp_path / "league.sqlite")
    return str(request.getfixturevalue("pg_url"))


def sql_rows(url: str, query: str) -> list[tuple[Any, ...]]:
    """Run one read query on the league at ``url`` (SQLite file or PostgreSQL schema)."""
    if url.startswith("postgresql://"):
        import psycopg

        from rankcraft.store.postgres import _split

        conninfo, schema, _ = _split(url)
        with psycopg.connect(conninfo) as con:
            con.execute(f'SET search_path TO "{schema}"')
            return [tuple(r) for r in con.execute(query).fetchall()]
    import sqlite3

    con = sqlite3.connect(url)
    try:
        return [tuple(r) for r in con.execute(query).fetchall()]
    finally:
        con.close()


def sql_run(url: str, *statements: str) -> None:
    """Run statements in one transaction on the league at ``url`` (for tests that damage
    or age a database on purpose)."""
    if url.startswith("postgresql://"):
        import psycopg

        from rankcraft.store.postgres import _split

        conninfo, schema, _ = _split(url)
        with psycopg.connect(conninfo) as con:
            con.execute(f'SET search_path TO "{schema}"')
            for statement in statements:
                con.execute(statement)
        return
    import sqlite3

    con = sqlite3.connect(url, isolation_level=None)
    try:
        con.execute("BEGIN")
        for statement in statements:
            con.execute(statement)
        con.execute("COMMIT")
    finally:
        con.close()


def committed(url: str) -> list[dict[str, Any]]:
    """The matches a league holds, in commit order."""
    import json

    return [json.loads(r[0]) for r in sql_rows(url, "SELECT match FROM matches ORDER BY seq")]


def snapshot(url: str) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of a league's tables, to check that a refused command changed nothing."""
    tables = (
        "meta",
        "players",
        "matches",
        "participants",
        "schema_history",
        "api_tokens",
        "edits",
        "outbox",
    )
    try:
        return {t: sorted(sql_rows(url, f"SELECT * FROM {t}")) for t in tables}
    except Exception:  # no league there (yet)
        return {}


def age_to_version_8(url: str) -> None:
    """Turn a current database into what rankcraft wrote at schema version 8: no
    ``outbox`` table (no event to publish)."""
    sql_run(
        url,
        "DROP TABLE outbox",
        "DELETE FROM schema_history WHERE version = 9",
        "UPDATE meta SET value = '8' WHERE key = 'schema_version'",
    )


def age_to_version_7(url: str) -> None:
    """Turn a current database into what rankcraft wrote at schema version 7: no
    ``edits`` table (no correction made)."""
    age_to_version_8(url)
    sql_run(
        url,
        "DROP TABLE edits",
        "DELETE FROM schema_history WHERE version = 8",
        "UPDATE meta SET value = '7' WHERE key = 'schema_version'",
    )


def age_to_version_6(url: str) -> None:
    """Turn a current database into what rankcraft wrote at schema version 6: the
    participants keyed by (player, seq), without buckets (and, on PostgreSQL, no
    ``players_by_id``)."""
    postgres = url.startswith("postgresql://")
    age_to_version_7(url)
    sql_run(
        url,
        "CREATE TABLE participants_6 (player TEXT NOT NULL, "
        f"seq {'BIGINT' if postgres else 'INTEGER'} NOT NULL, PRIMARY KEY (player, seq))"
        + ("" if postgres else " WITHOUT ROWID"),
        "INSERT INTO participants_6 SELECT player, seq FROM participants",
        "DROP TABLE participants",
        "ALTER TABLE participants_6 RENAME TO participants",
        *(
            [
                "ALTER INDEX participants_6_pkey RENAME TO participants_pkey",
                "DROP INDEX players_by_id",
            ]
            if postgres
            else []
        ),
        "DELETE FROM schema_history WHERE version = 7",
        "UPDATE meta SET value = '6' WHERE key = 'schema_version'",
    )


def age_to_version_5(url: str, league: rankcraft.League) -> None:
    """Turn a current database into what rankcraft wrote at schema version 5: every
    report as JSON text (``league``: the same matches in memory)."""
    from rankcraft.rated import compact_json

    age_to_version_6(url)
    statements = []
    if url.startswith("postgresql://"):
        statements.append("ALTER TABLE matches ALTER COLUMN report TYPE TEXT USING ''")
    for seq, match_id in sql_rows(url, "SELECT seq, id FROM matches"):
        text = compact_json(league.codec.report_to_dict(league.report(match_id)))
        statements.append(f"UPDATE matches SET report = '{text}' WHERE seq = {seq}")
    sql_run(
        url,
        *statements,
        "DELETE FROM schema_history WHERE version = 6",
        "UPDATE meta SET value = '5' WHERE key = 'schema_version'",
    )


def fill_disk_after(monkeypatch: pytest.MonkeyPatch, pages: int) -> None:
    """Every SQLite league opened from now on can grow by ``pages`` pages only, then
    fails with SQLITE_FULL exactly as on a full disk (SQLite's ``max_page_count``)."""
    import sqlite3

    from rankcraft.store import SQLiteStore

    real = SQLiteStore._connect

    def small_disk(self: SQLiteStore) -> sqlite3.Connection:
        con = real(self)
        count = con.execute("PRAGMA page_count").fetchone()[0]
        con.execute(f"PRAGMA max_page_count = {count + pages}")
        return con

    monkeypatch.setattr(SQLiteStore, "_connect", small_disk)


def ready_child(code: str, *args: str) -> subprocess.Popen[str]:
    """A Python child running ``code`` with ``args``, returned once it printed "ready"
    (just before the writing that the kill tests interrupt)."""
    child = subprocess.Popen(
        [sys.executable, "-c", code, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None
    line = child.stdout.readline()
    assert line == "ready\n", (line, child.stderr.read() if child.stderr else "")
    return child


def run_or_kill(child: subprocess.Popen[str], delay: float | None) -> tuple[bool, float]:
    """Let a :func:`ready_child` finish (``delay`` None: it must print "done") or SIGKILL it
    ``delay`` s after it was ready; returns whether it finished and the seconds it ran."""
    started = time.perf_counter()
    if delay is None:
        out, err = child.communicate(timeout=300)
        assert child.returncode == 0 and out.endswith("done\n"), err
        return True, time.perf_counter() - started
    time.sleep(delay)
    child.send_signal(signal.SIGKILL)
    out, _ = child.communicate(timeout=60)
    return child.returncode == 0 and out.endswith("done\n"), delay
