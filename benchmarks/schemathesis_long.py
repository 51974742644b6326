"""A long Schemathesis run against the HTTP API (issue 31): the checks of
tests/test_schemathesis.py with many more examples per operation and mode, on SQLite and
(when its server answers) PostgreSQL. It prints each operation's time and any failure.

    python benchmarks/schemathesis_long.py --examples 200 [--postgres URL]

The examples are seeded (Hypothesis ``derandomize``, as in the suite): a run with the same
``--examples`` sends the same requests.

Run from the repository's root (it imports the test module for its checks)."""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
import traceback
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.test_schemathesis import CASES, exercise, serve


def run(url: str, examples: int) -> int:
    failures = 0
    league, app, headers = serve(url)
    try:
        for key, mode in CASES:
            started = time.perf_counter()
            try:
                exercise(app, headers, key, mode, examples)
                status = "ok"
            except Exception:
                failures += 1
                status = "FAILED\n" + traceback.format_exc(limit=3)
            print(
                f"{url[:40]:40} {key:28} {mode:8} {time.perf_counter() - started:6.1f} s {status}"
            )
    finally:
        league.close()
    return failures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=200)
    parser.add_argument(
        "--postgres", default="postgresql://postgres@127.0.0.1/test", help="server ('' skips)"
    )
    args = parser.parse_args()
    failures = 0
    with tempfile.TemporaryDirectory() as folder:
        failures += run(str(Path(folder) / "league.sqlite"), args.examples)
    if args.postgres:
        url = f"{args.postgres}?schema=st_{uuid.uuid4().hex[:10]}"
        try:
            failures += run(url, args.examples)
        finally:
            from tests.conftest import drop_schema

            drop_schema(url)
    print(f"{failures} operation(s) failed")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
