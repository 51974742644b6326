"""How fast ``rankcraft consume`` catches up a JetStream stream (issue 41).

Publishes ``--matches`` seeded 1-v-1 matches (10,000 players, one a second) to a fresh
stream on the NATS server at ``--nats``, then times ``rankcraft consume`` (in process, the
``elo`` ruleset, ``--batch`` matches per transaction) rating them all into a new SQLite
file and into a new PostgreSQL schema (``--pg``; left out when no server answers), each
with its own durable consumer: the catch-up time (wall clock), matches per second, the
rating events published (two per match; with ``--pack N`` also a run whose events go N
to a message), and the CPU seconds of the consumer (this process), of its relay process
(which publishes the events; none with ``--no-relay``) and of the NATS server (when it
runs on this machine): what the two cores of the machine spent. The stream and the
schema are removed afterwards.

``--floors`` also measures, in the same process, what each stage costs on its own, so
that the consumer's rate can be set against what the machine allows: pulling and
acknowledging the messages alone, decoding them (JSON and ``parse_match``) alone,
publishing two events a match alone (each acknowledged by JetStream), and rating alone
into SQLite (each batch in one transaction, with and without its events written to the
outbox). Their sum (one core does them all) is the floor of a consumer that publishes
one message per event.

    python benchmarks/consume.py [--matches 100000] [--batch 10000] [--pg URL] [--floors]
        [--pack N] [--no-relay]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import sys
import tempfile
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import attrs

from rankcraft import League
from rankcraft.consume import ConsumeOptions, consume, decoded
from rankcraft.engine import collecting
from rankcraft.io import parse_match
from rankcraft.jetstream import Publisher, Puller
from rankcraft.ratingevents import EventWriter


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


def server_cpu() -> float | None:
    """CPU seconds the local ``nats-server`` process has used (None: not found here)."""
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            if (entry / "comm").read_text().strip() == "nats-server":
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
                return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        except OSError:
            continue
    return None


def catch_up(db: str, options: ConsumeOptions) -> dict[str, Any]:
    """The catch-up of ``db``: wall seconds, this process's CPU seconds, its relay's
    (the children it waited for) and the NATS server's (when it runs here)."""
    with League.open(db, "elo") as league:
        server, children = server_cpu(), os.times()
        began, cpu = time.perf_counter(), time.process_time()
        counts = consume(league, options, db, None)
        seconds, cpu = time.perf_counter() - began, time.process_time() - cpu
        after, server_after = os.times(), server_cpu()
        assert league.match_count == counts.rated == options.max_messages, counts
        assert not league.store.outbox(1), "events left in the outbox"
    relay = after.children_user + after.children_system
    relay -= children.children_user + children.children_system
    return {
        "seconds": seconds,
        "cpu": cpu,
        "relay": relay,
        "server": None if server is None or server_after is None else server_after - server,
        "per_second": counts.rated / seconds,
        "events": counts.published,
    }


def pulled(url: str, stream: str, subject: str, n: int, batch: int) -> tuple[float, list[Any]]:
    """Seconds to pull (and acknowledge, a batch at a time) the stream's ``n`` matches
    with a durable consumer of its own; the messages."""

    async def work(js: Any) -> tuple[float, list[Any]]:
        from nats.js.api import AckPolicy, ConsumerConfig

        config = ConsumerConfig(
            durable_name="floor",
            ack_policy=AckPolicy.ALL,
            max_ack_pending=-1,
            filter_subject=subject,
        )
        await js.add_consumer(stream, config)
        puller = await Puller(js._nc, stream, "floor").start()
        began, msgs = time.perf_counter(), list[Any]()
        while len(msgs) < n:
            got = await puller.fetch(min(batch, n - len(msgs)), timeout=5)
            await got[-1].ack_sync()
            msgs += got
        return time.perf_counter() - began, msgs

    found: tuple[float, list[Any]] = asyncio.run(_with_js(url, work))
    return found


def published(url: str, subject: str, events: list[tuple[str, str]], batch: int) -> float:
    """Seconds to publish ``events`` (each with its Nats-Msg-Id), a round of ``2 * batch``
    at a time, each round acknowledged before the next."""

    async def work(js: Any) -> float:
        publisher = await Publisher(js._nc, subject).start()
        began = time.perf_counter()
        for start in range(0, len(events), 2 * batch):
            sent = await publisher.send(events[start : start + 2 * batch])
            await publisher.confirm(sent, 30)
        return time.perf_counter() - began

    seconds: float = asyncio.run(_with_js(url, work))
    return seconds


def rated(db: str, matches: list[Any], batch: int, subject: str, outbox: bool) -> float:
    """Seconds to rate ``matches`` into a new SQLite league, a transaction per batch
    (with ``outbox``: each batch's events written there, as the consumer does)."""
    with League.open(db, "elo") as league:
        writer = EventWriter(league.skill_class, league.rank_class, subject)
        began = time.perf_counter()
        for start in range(0, len(matches), batch):
            part = matches[start : start + batch]
            with league.batch(), collecting(league) as entries:
                league.store.recorded({m.id for m in part})
                league.record_many(part, skip_seen=True, close=False)
                if outbox:
                    league.store.add_outbox(writer.events(entries))
        return time.perf_counter() - began


def timed(work: Any) -> tuple[float, float, Any]:
    """``work()``'s wall-clock seconds, this process's CPU seconds, and its result."""
    began, cpu = time.perf_counter(), time.process_time()
    found = work()
    return time.perf_counter() - began, time.process_time() - cpu, found


def floors(args: Any, stream: str, subject: str, items: list[bytes], db: str) -> None:
    """Each stage alone (see the module's docstring), per match and its two events: the
    wall clock, and this process's CPU time (what other processes on a loaded machine
    take from it does not count there; the NATS server's own work does not either)."""
    n, batch = args.matches, args.batch
    pull = timed(lambda: pulled(args.nats, stream, subject, n, batch))
    msgs = pull[2][1]
    decode = timed(lambda: decoded(msgs))
    assert not decode[2][1] and len(decode[2][0]) == n
    matches = [parse_match(json.loads(d)) for d in items]
    with League.open(db + ".events", "elo") as league:  # (the events the consumer writes)
        with league.batch(), collecting(league) as entries:
            league.record_many(matches, close=False)
        events = EventWriter(league.skill_class, league.rank_class, subject).events(entries)
    stages = {
        "pull and acknowledge": pull,
        "decode (JSON, parse_match)": decode,
        "publish 2 events a match": timed(
            lambda: published(args.nats, f"{subject}.floor", events, batch)
        ),
        "rate into SQLite, no events": timed(lambda: rated(db, matches, batch, subject, False)),
        "rate into SQLite, events to outbox": timed(
            lambda: rated(db + ".outbox", matches, batch, subject, True)
        ),
    }
    print(f"\nfloors, {n:,} matches, batch {batch:,}:")
    print(f"{'stage alone':<38}{'seconds':>9}{'matches/s':>11}{'CPU s':>8}{'per CPU s':>11}")
    for name, (seconds, cpu, _) in stages.items():
        print(f"{name:<38}{seconds:>9.2f}{n / seconds:>11,.0f}{cpu:>8.2f}{n / cpu:>11,.0f}")
    chosen = [v for k, v in stages.items() if k != "rate into SQLite, no events"]
    wall, cpu = sum(v[0] for v in chosen), sum(v[1] for v in chosen)
    total = f"{wall:>9.2f}{n / wall:>11,.0f}{cpu:>8.2f}{n / cpu:>11,.0f}"
    print(f"{'sum (one core, serially)':<38}{total}")


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
    parser.add_argument("--batch", type=int, default=10_000)
    parser.add_argument(
        "--no-relay", action="store_true", help="publish from the consumer's own process"
    )
    parser.add_argument("--nats", default="nats://127.0.0.1:4222")
    parser.add_argument("--pg", default="postgresql://postgres@127.0.0.1/test")
    parser.add_argument("--floors", action="store_true", help="also time each stage alone")
    parser.add_argument("--pack", type=int, default=1, help="also a run with N events a message")
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
        relay=not args.no_relay,
    )
    targets = {}
    with tempfile.TemporaryDirectory() as folder:
        targets["SQLite"] = str(Path(folder) / "league.sqlite")
        schema = f"bench_{suffix}"
        if pg_ready(args.pg):
            targets["PostgreSQL"] = f"{args.pg}?schema={schema}"
        if args.pack > 1:
            targets[f"SQLite, --pack {args.pack}"] = str(Path(folder) / "packed.sqlite")
        try:
            print(
                f"{'store':<22}{'catch-up s':>12}{'matches/s':>12}{'events':>10}"
                f"{'CPU s: consumer':>17}{'relay':>7}{'NATS':>7}"
            )
            for name, db in targets.items():
                pack = args.pack if "--pack" in name else 1
                found = catch_up(db, attrs.evolve(options, pack=pack))
                server = "?" if found["server"] is None else f"{found['server']:.2f}"
                print(
                    f"{name:<22}{found['seconds']:>12.2f}{found['per_second']:>12,.0f}"
                    f"{found['events']:>10,}{found['cpu']:>17.2f}{found['relay']:>7.2f}"
                    f"{server:>7}"
                )
            if args.floors:
                floors(args, stream, subject, items, str(Path(folder) / "floor.sqlite"))
        finally:
            delete(args.nats, stream)
            if "PostgreSQL" in targets:
                import psycopg

                with psycopg.connect(args.pg, autocommit=True) as connection:
                    connection.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


if __name__ == "__main__":
    main()
