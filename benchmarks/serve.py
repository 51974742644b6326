"""Throughput of `rankcraft serve` over PostgreSQL with 1, 2 and 4 worker processes.

For each worker count: a fresh league (its own schema) on the local PostgreSQL server,
`rankcraft serve --workers W` on loopback, and C client processes that POST a shared,
seeded list of 1v1 matches (P players, one moment, so that any commit order is valid)
over keep-alive connections. It prints matches per second (wall clock: the service is
I/O-bound and shares the machine's cores with PostgreSQL and the clients) and checks
that the league ends as a serial replay of its matches in commit order.

The floor is `League.record` called in this process on a PostgreSQL league: the same
transactions without HTTP. Each figure is also printed as a ratio to it.

    python benchmarks/serve.py [--matches 2000] [--players 1000] [--clients 8]
        [--workers 1 2 4] [--ruleset glicko1] [--db postgresql://postgres@127.0.0.1/test]
"""

from __future__ import annotations

import argparse
import http.client
import json
import multiprocessing
import os
import platform
import random
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import rankcraft
from rankcraft.store.postgres import drop_league

EXE = str(Path(sys.executable).with_name("rankcraft"))


def workload(n: int, players: int, seed: int = 7) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        a, b = rng.sample(range(players), 2)
        out.append(
            {
                "id": f"m{i:06d}",
                "played_at": "2024-06-01T12:00:00Z",
                "teams": [[f"p{a}"], [f"p{b}"]],
                "scores": [rng.randint(0, 1), 0] if rng.random() < 0.9 else [1, 1],
            }
        )
    return out


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def client(port: int, matches: list[dict[str, Any]]) -> None:
    con = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    for m in matches:
        con.request(
            "POST",
            "/matches",
            body=json.dumps(m).encode(),
            headers={"Content-Type": "application/json"},
        )
        answer = con.getresponse()
        answer.read()
        if answer.status != 201:
            raise SystemExit(f"{m['id']}: HTTP {answer.status}")
    con.close()


def wait_ready(port: int, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit("the server exited")
        try:
            con = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            con.request("GET", "/health")
            if con.getresponse().status == 200:
                return
        except OSError:
            time.sleep(0.1)
    raise SystemExit("the server did not start")


def run_service(
    server: str, ruleset: str, workers: int, clients: int, matches: list[dict[str, Any]]
) -> float:
    url = f"{server}?schema=bench_{uuid.uuid4().hex[:10]}"
    port = free_port()
    process = subprocess.Popen(
        [
            EXE,
            "serve",
            "--db",
            url,
            "--ruleset",
            ruleset,
            "--port",
            str(port),
            "--workers",
            str(workers),
        ],
        stdout=subprocess.DEVNULL,
    )
    try:
        wait_ready(port, process)
        context = multiprocessing.get_context("fork")
        parts = [matches[k::clients] for k in range(clients)]
        procs = [context.Process(target=client, args=(port, part)) for part in parts]
        start = time.perf_counter()
        for p in procs:
            p.start()
        for p in procs:
            p.join()
        seconds = time.perf_counter() - start
        if any(p.exitcode != 0 for p in procs):
            raise SystemExit("a client failed")
    finally:
        process.terminate()
        process.wait(30)
    try:
        with rankcraft.League.open(url, create=False) as league:
            count = league.match_count
            stored = league.export()["players"]
            order = _in_commit_order(league)
        serial = rankcraft.League(ruleset)
        serial.record_many(order)
        assert count == len(matches), (count, len(matches))
        assert stored == serial.export()["players"], "not a serial replay in commit order"
    finally:
        drop_league(url)
    return len(matches) / seconds


def _in_commit_order(league: rankcraft.League) -> list[dict[str, Any]]:
    """The league's matches in commit (seq) order, in one query."""
    store: Any = league.store
    return [json.loads(r[0]) for r in store._execute("SELECT match FROM matches ORDER BY seq")]


def run_direct(server: str, ruleset: str, matches: list[dict[str, Any]]) -> float:
    url = f"{server}?schema=bench_{uuid.uuid4().hex[:10]}"
    try:
        with rankcraft.League.open(url, ruleset) as league:
            start = time.perf_counter()
            for m in matches:
                league.record(m)
            return len(matches) / (time.perf_counter() - start)
    finally:
        drop_league(url)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=2000)
    parser.add_argument("--players", type=int, default=1000)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--ruleset", default="glicko1")
    parser.add_argument(
        "--db", default=os.environ.get("RANKCRAFT_PG_URL", "postgresql://postgres@127.0.0.1/test")
    )
    args = parser.parse_args()
    matches = workload(args.matches, args.players)
    print(
        f"# {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}; {args.matches} matches, {args.players} "
        f"players, {args.clients} client processes, ruleset {args.ruleset}"
    )
    floor = run_direct(args.db, args.ruleset, matches[: max(200, args.matches // 4)])
    print(f"{'League.record, no HTTP (1 process)':<40}{floor:>10,.0f} matches/s   1.00x")
    for workers in args.workers:
        rate = run_service(args.db, args.ruleset, workers, args.clients, matches)
        print(
            f"{f'rankcraft serve, {workers} worker(s)':<40}{rate:>10,.0f} matches/s"
            f"   {rate / floor:.2f}x"
        )


if __name__ == "__main__":
    main()
