"""How fast ``rankcraft consume`` catches up a JetStream stream (issue 41).

Publishes ``--matches`` seeded 1-v-1 matches (10,000 players, one a second) to a fresh
stream on the NATS server at ``--nats``, then times ``rankcraft consume`` (in process, the
``elo`` ruleset, ``--batch`` matches per transaction) rating them all into a new SQLite
file and into a new PostgreSQL schema (``--pg``; left out when no server answers), each
with its own durable consumer: the catch-up time, matches per second, and the rating
events published (two per match). The stream and the schema are removed afterwards.

    python benchmarks/consume.py [--matches 100000] [--batch 2000] [--pg URL]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import tempfile
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from rankcraft import League
from rankcraft.consume import ConsumeOptions, consume


def workload(n: int, seed: int = 41) -> list[bytes]:
    rng = random.Random(seed)
    t0 = datetime(2025, 1, 1, tzinfo=UTC)
    out = []
    for i in range(n):
        a, b = rng.sample(range(10_000), 2)
        when = (t0 + timedelta(seconds=i)).strftime("%Y-%m-%dT%H:%M:%SZ")
        match = {"id": f"m{i}", "played_at": when, "teams": [[f"p{a}"], [f"p{b}"]]}
        match["ranks"] = [1, 2] if rng.random() < 0.5 else [2, 1]
        out.append(json.dumps(match).encode())
    return out


async def _with_js(url: str, work: Any) -> Any:
    import nats

    nc = await nats.connect(url)
    try:
        return await work(nc.jetstream(publish_async_max_pending=20_000))
    finally:
        await nc.close()


def publish(url: str, stream: str, subject: str, items: list[bytes]) -> float:
    async def work(js: Any) -> None:
        await js.add_stream(name=stream, subjects=[subject, f"{subject}.>"])
        for start in range(0, len(items), 10_000):
            futures = [await js.publish_async(subject, d) for d in items[start : start + 10_000]]
            await asyncio.gather(*futures)

    began = time.perf_counter()
    asyncio.run(_with_js(url, work))
    return time.perf_counter() - began


def delete(url: str, stream: str) -> None:
    async def work(js: Any) -> None:
        await js.delete_stream(stream)

    asyncio.run(_with_js(url, work))


def catch_up(db: str, options: ConsumeOptions) -> dict[str, Any]:
    with League.open(db, "elo") as league:
        began = time.perf_counter()
        counts = consume(league, options, db, None)
        seconds = time.perf_counter() - began
        assert league.match_count == counts.rated == options.max_messages, counts
    return {"seconds": seconds, "per_second": counts.rated / seconds, "events": counts.published}


def pg_ready(url: str) -> bool:
    try:
        import psycopg

        psycopg.connect(url.split("?")[0], connect_timeout=3).close()
    except Exception:
        return False
    return True


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=100_000)
    parser.add_argument("--batch", type=int, default=2000)
    parser.add_argument("--nats", default="nats://127.0.0.1:4222")
    parser.add_argument("--pg", default="postgresql://postgres@127.0.0.1/test")
    args = parser.parse_args()
    suffix = uuid.uuid4().hex[:8]
    stream, subject = f"bench_{suffix}", f"bench.{suffix}.matches"
    items = workload(args.matches)
    seconds = publish(args.nats, stream, subject, items)
    print(f"published {args.matches:,} matches in {seconds:.2f} s", file=sys.stderr)
    options = ConsumeOptions(
        nats=args.nats,
        stream=stream,
        subject=subject,
        batch=args.batch,
        max_messages=args.matches,
    )
    targets = {}
    with tempfile.TemporaryDirectory() as folder:
        targets["SQLite"] = str(Path(folder) / "league.sqlite")
        schema = f"bench_{suffix}"
        if pg_ready(args.pg):
            targets["PostgreSQL"] = f"{args.pg}?schema={schema}"
        try:
            print(f"{'store':<12}{'catch-up s':>12}{'matches/s':>12}{'events':>10}")
            for name, db in targets.items():
                found = catch_up(db, options)
                print(
                    f"{name:<12}{found['seconds']:>12.2f}{found['per_second']:>12,.0f}"
                    f"{found['events']:>10,}"
                )
        finally:
            delete(args.nats, stream)
            if "PostgreSQL" in targets:
                import psycopg

                with psycopg.connect(args.pg, autocommit=True) as connection:
                    connection.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


if __name__ == "__main__":
    main()
