"""The test suite itself: without a PostgreSQL server its PostgreSQL tests are skipped,
each saying which server it could not reach (README.md, PostgreSQL), never failed."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.source_tree  # runs the source tree's own tests

ROOT = Path(__file__).resolve().parents[1]


def _closed_port() -> int:
    """A local port nothing listens on (bound, then closed)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_postgres_tests_skip_with_the_reason_when_no_server_answers() -> None:
    url = f"postgresql://postgres@127.0.0.1:{_closed_port()}/test"
    env = {**os.environ, "RANKCRAFT_PG_URL": url, "PYTEST_ADDOPTS": ""}
    # one test on the pg_url fixture, one on both stores (db_url), one naming the server
    tests = [
        "tests/test_postgres.py::test_league_in_postgres_matches_sqlite",
        "tests/test_postgres.py::test_bad_urls_and_schemas",
        # (one test of the file, not the whole of it: its multi-process test, which
        # the main run checks, took half of this one's time)
        "tests/test_stores.py::test_state_survives_reopen",
    ]
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:xdist", "-p", "no:cacheprovider", *tests],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    text = done.stdout + done.stderr
    assert done.returncode == 0, text
    summary = re.search(r"^(\d+) passed, (\d+) skipped in ", text, flags=re.M)
    assert summary is not None, text  # (no "failed", no "error" in the summary line)
    passed, skipped = map(int, summary.groups())
    assert skipped >= 3 and passed >= 1  # (the SQLite half of db_url still runs)
    reasons = re.findall(r"^SKIPPED \[\d+\] .*$", text, flags=re.M)  # (-ra lists them)
    assert reasons and all(f"needs a PostgreSQL server at {url}" in r for r in reasons)
