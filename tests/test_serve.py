"""``rankcraft serve``: the HTTP service over a league, in SQLite and in PostgreSQL.

In-process tests use Starlette's TestClient; the slow ones start real uvicorn servers
(one or several worker processes) on loopback and post over HTTP.
"""

from __future__ import annotations

import http.client
import json
import random
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from starlette.routing import Route
from starlette.testclient import TestClient

import rankcraft
from rankcraft.serve import create_app

from .conftest import committed, snapshot

EXE = str(Path(sys.executable).with_name("rankcraft"))


def game(mid: str, a: str, b: str, day: int = 1, score: int = 1, hour: int = 12) -> dict[str, Any]:
    return {
        "id": mid,
        "played_at": f"2024-05-{day:02d}T{hour:02d}:00:00Z",
        "teams": [[a], [b]],
        "scores": [score, 1 - score],
    }


def client_for(db_url: str, ruleset: str | None = None) -> TestClient:
    return TestClient(create_app(rankcraft.League.open(db_url, ruleset)))


def test_the_service_answers_as_the_league_does(db_url: str) -> None:
    matches = [
        game(f"m{i}", f"p{i % 4}", f"p{(i + 1) % 4}", day=1 + i, score=i % 2) for i in range(8)
    ]
    reference = rankcraft.League("inversus")
    with client_for(db_url, "inversus") as client:
        for m in matches:
            answer = client.post("/matches", json=m)
            assert answer.status_code == 201, answer.text
            expected = reference.record(m)
            assert answer.json()["report"] == reference.codec.report_to_dict(expected)
            assert answer.json()["match"] == rankcraft.parse_match(m).to_dict()
        player = client.get("/players/p1").json()
        assert player == {
            "player": reference.codec.record_to_dict(reference.player("p1")),
            "standing": None,
        }
        board = client.get("/leaderboard", params={"top": 3}).json()
        assert [row["id"] for row in board] == [r.id for r in reference.leaderboard(3)]
        assert [row["place"] for row in board] == [1, 2, 3]
        predicted = client.get("/predict", params=[("side", "p0"), ("side", "p2,p3")]).json()
        assert predicted == {
            "sides": [["p0"], ["p2", "p3"]],
            "probabilities": reference.predict([["p0"], ["p2", "p3"]]),
        }
        stored = client.get("/matches/m3").json()
        assert stored["report"] == reference.codec.report_to_dict(reference.report("m3"))
        ruleset = client.get("/ruleset").json()
        assert ruleset["name"] == "inversus"
        assert rankcraft.loads_ruleset(ruleset["toml"]) == reference.ruleset
        assert client.get("/health").json()["matches"] == 8


@pytest.mark.parametrize(
    ("request_args", "status", "kind", "field"),
    [
        (("post", "/matches", {"content": b"{not json"}), 400, "JSONTextError", None),
        (("post", "/matches", {"json": [1, 2]}), 400, "InputError", None),
        (
            ("post", "/matches", {"json": {"id": "x", "teams": [["a"], ["b"]]}}),
            400,
            "MatchError",
            "played_at",
        ),
        (
            ("post", "/matches", {"json": {**game("x", "a", "b"), "teams": [["a"], []]}}),
            400,
            "MatchError",
            "teams[1]",
        ),
        (
            ("post", "/matches", {"json": {**game("x", "a", "b"), "scores": [1, "NaN"]}}),
            400,
            "MatchError",
            "scores",
        ),
        (("post", "/matches", {"json": game("x", "a", "a")}), 400, "MatchError", "teams"),
        (
            ("post", "/matches", {"json": game("m0", "c", "d", day=9)}),
            409,
            "DuplicateMatchError",
            "id",
        ),
        (
            ("post", "/matches", {"json": game("late", "a", "c", hour=1)}),
            409,
            "LateMatchError",
            "played_at",
        ),
        (("get", "/players/nobody", {}), 404, "UnknownPlayerError", None),
        (("get", "/matches/nothing", {}), 404, "NotFoundError", None),
        (("get", "/no/such/path", {}), 404, "HTTPException", None),
        (("get", "/leaderboard?top=0", {}), 400, "InputError", "top"),
        (("get", "/predict?side=a", {}), 400, "InputError", "side"),
        (("get", "/predict?side=a&side=a", {}), 400, "InputError", None),
        (("get", "/predict?side=a&side=b&at=yesterday", {}), 400, "MatchError", "at"),
        (("delete", "/matches", {}), 405, "HTTPException", None),
    ],
)
def test_errors_are_json_and_change_nothing(
    db_url: str,
    request_args: tuple[str, str, dict[str, Any]],
    status: int,
    kind: str,
    field: str | None,
) -> None:
    with client_for(db_url, "elo") as client:
        assert client.post("/matches", json=game("m0", "a", "b")).status_code == 201
        before = snapshot(db_url)
        method, path, kwargs = request_args
        answer = client.request(method.upper(), path, **kwargs)
        assert answer.status_code == status, answer.text
        error = answer.json()["error"]
        assert (error["status"], error["type"], error["field"]) == (status, kind, field)
        assert error["message"]
        assert snapshot(db_url) == before


def test_a_second_worker_reads_what_the_first_committed(db_url: str) -> None:
    rankcraft.League.open(db_url, "elo").close()
    with client_for(db_url) as first, client_for(db_url) as second:
        first.get("/leaderboard")
        second.get("/leaderboard")  # both have read the (empty) league
        assert first.post("/matches", json=game("m1", "a", "b")).status_code == 201
        assert second.get("/players/a").json()["player"]["skill"]["rating"] == 1516.0
        assert [r["id"] for r in second.get("/leaderboard").json()] == ["a", "b"]
        answer = second.post("/matches", json=game("m2", "a", "c", day=2))
        assert answer.json()["report"]["changes"][0]["skill_before"]["rating"] == 1516.0
        assert second.post("/matches", json=game("m1", "a", "b", day=3)).status_code == 409
        assert first.get("/predict?side=a&side=c").json()["probabilities"][0] > 0.5


def test_openapi_describes_every_route() -> None:
    app = create_app(rankcraft.League("elo"))
    with TestClient(app) as client:
        document = client.get("/openapi.json").json()
    assert document["openapi"] == "3.1.0"
    served = {
        (route.path.replace(":path", ""), method.lower())
        for route in app.routes
        if isinstance(route, Route) and route.path != "/openapi.json"
        for method in route.methods or ()
        if method != "HEAD"
    }
    described = {(path, method) for path, ops in document["paths"].items() for method in ops}
    assert served == described
    refs = json.dumps(document).count("#/components/schemas/")
    assert refs >= 8
    for path, ops in document["paths"].items():
        for op in ops.values():
            for code, answer in op["responses"].items():
                if code.startswith(("4", "5")):
                    schema = answer["content"]["application/json"]["schema"]
                    assert schema == {"$ref": "#/components/schemas/Error"}, (path, code)


# -- real servers on loopback -------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Server:
    """``rankcraft serve`` in a subprocess, ready when /health answers."""

    def __init__(self, db: str, workers: int = 1, ruleset: str | None = None) -> None:
        self.port = free_port()
        argv = [EXE, "serve", "--db", db, "--port", str(self.port), "--workers", str(workers)]
        if ruleset:
            argv += ["--ruleset", ruleset]
        self.process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 60
        while True:
            try:
                if self.request("GET", "/health")[0] == 200:
                    return
            except OSError:
                pass
            if self.process.poll() is not None or time.monotonic() > deadline:
                err = self.process.stderr.read().decode() if self.process.stderr else ""
                self.stop()
                raise AssertionError(f"the server did not start: {err}")
            time.sleep(0.1)

    def connection(self) -> http.client.HTTPConnection:
        return http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)

    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        connection: http.client.HTTPConnection | None = None,
    ) -> tuple[int, Any]:
        con = connection or self.connection()
        payload = None if body is None else json.dumps(body).encode()
        con.request(method, path, body=payload, headers={"Content-Type": "application/json"})
        answer = con.getresponse()
        data = json.loads(answer.read())
        if connection is None:
            con.close()
        return answer.status, data

    def stop(self, sig: int = signal.SIGTERM) -> None:
        if self.process.poll() is None:
            self.process.send_signal(sig)
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self.process.stderr:
            self.process.stderr.close()


def post_all(server: Server, matches: list[dict[str, Any]], clients: int) -> list[tuple[str, int]]:
    """Post ``matches`` from ``clients`` threads, each on one keep-alive connection;
    returns (id, status) per answer. A client stops when the server goes away."""
    results: list[tuple[str, int]] = []
    lock = threading.Lock()
    queue = list(reversed(matches))

    def client() -> None:
        con = server.connection()
        try:
            while True:
                with lock:
                    if not queue:
                        return
                    m = queue.pop()
                try:
                    status, _ = server.request("POST", "/matches", m, connection=con)
                except (OSError, http.client.HTTPException):
                    return  # the server was killed
                with lock:
                    results.append((m["id"], status))
        finally:
            con.close()

    threads = [threading.Thread(target=client) for _ in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(300)
    return results


def overlapping(n: int, players: int, seed: int) -> list[dict[str, Any]]:
    """``n`` matches on a few players at one moment (any commit order is valid), shuffled."""
    rng = random.Random(seed)
    matches = []
    for i in range(n):
        a, b = rng.sample(range(players), 2)
        matches.append(game(f"m{i:04d}", f"p{a}", f"p{b}", score=rng.randint(0, 1)))
    rng.shuffle(matches)
    return matches


def serial_export(ruleset: str, matches: list[dict[str, Any]]) -> list[dict[str, Any]]:
    league = rankcraft.League(ruleset)
    league.record_many(matches)
    return list(league.export()["players"])


def stored_export(db: str) -> list[dict[str, Any]]:
    with rankcraft.League.open(db, create=False) as league:
        return list(league.export()["players"])


@pytest.mark.slow
def test_several_workers_end_as_a_serial_replay_in_commit_order(pg_url: str) -> None:
    matches = overlapping(400, players=12, seed=4)
    repeats = [dict(m) for m in matches[:40]]  # the same ids again, racing the first
    server = Server(pg_url, workers=3, ruleset="inversus")
    try:
        results = post_all(server, matches + repeats, clients=6)
        status, late = server.request("POST", "/matches", game("late", "p1", "p2", hour=1))
    finally:
        server.stop()
    assert status == 409 and late["error"]["field"] == "played_at"
    statuses: dict[str, list[int]] = {}
    for mid, code in results:
        statuses.setdefault(mid, []).append(code)
    assert len(results) == 440
    for m in matches:
        expected = [201, 409] if m in repeats else [201]
        assert sorted(statuses[m["id"]]) == expected, m["id"]
    order = committed(pg_url)
    assert sorted(m["id"] for m in order) == sorted(m["id"] for m in matches)
    assert stored_export(pg_url) == serial_export("inversus", order)


def _killed_then_resumed(db: str, ruleset: str) -> None:
    matches = [
        game(f"m{i:04d}", f"p{i % 9}", f"p{(i * 5 + 2) % 9}", day=1 + i // 60, hour=i % 60 // 3)
        for i in range(600)
        if i % 9 != (i * 5 + 2) % 9
    ]
    rng = random.Random(21)
    for _ in range(3):
        server = Server(db, ruleset=ruleset)
        ruleset = None  # the database remembers it
        worker = threading.Thread(target=post_all, args=(server, matches, 1))
        worker.start()
        time.sleep(rng.uniform(0.5, 2.0))
        server.stop(signal.SIGKILL)  # mid-request, most likely
        worker.join(60)
        # what was committed is whole: a prefix of the posted order, each match applied once
        done = committed(db)
        assert [m["id"] for m in done] == [m["id"] for m in matches[: len(done)]]
        assert stored_export(db) == serial_export("elo", done)
    server = Server(db)
    try:
        results = post_all(server, matches, clients=1)
    finally:
        server.stop()
    done_before = {mid for mid, code in results if code == 409}
    assert all(code in (201, 409) for _, code in results)
    assert [m["id"] for m in matches if m["id"] in done_before] == [
        m["id"] for m in matches[: len(done_before)]
    ]
    assert stored_export(db) == serial_export("elo", matches)


@pytest.mark.slow
def test_a_killed_worker_loses_nothing_committed(db_url: str) -> None:
    _killed_then_resumed(db_url, "elo")


@pytest.mark.slow
def test_a_bounded_load_test_on_loopback(pg_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    matches = overlapping(600, players=200, seed=8)
    server = Server(pg_url, workers=2, ruleset="glicko1")
    try:
        start = time.perf_counter()
        results = post_all(server, matches, clients=4)
        seconds = time.perf_counter() - start
    finally:
        server.stop()
    assert sorted(code for _, code in results) == [201] * 600
    assert stored_export(pg_url) == serial_export("glicko1", committed(pg_url))
    with capsys.disabled():
        print(f"\nload test: 600 matches, 2 workers, 4 clients: {600 / seconds:.0f} matches/s")
    assert seconds < 120
