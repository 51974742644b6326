"""``rankcraft serve``: the HTTP service over a league, in SQLite and in PostgreSQL.

In-process tests use Starlette's TestClient; the slow ones start real uvicorn servers
(one or several worker processes) on loopback and post over HTTP.
"""

from __future__ import annotations

import http.client
import json
import random
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from starlette.routing import Route
from starlette.testclient import TestClient

import rankcraft
from rankcraft.serve import Settings, create_app
from rankcraft.store import open_store
from rankcraft.tokens import create_token, revoke_token

from .conftest import committed, snapshot

EXE = str(Path(sys.executable).with_name("rankcraft"))


JSON = {"Content-Type": "application/json"}


def game(mid: str, a: str, b: str, day: int = 1, score: int = 1, hour: int = 12) -> dict[str, Any]:
    return {
        "id": mid,
        "played_at": f"2024-05-{day:02d}T{hour:02d}:00:00Z",
        "teams": [[a], [b]],
        "scores": [score, 1 - score],
    }


def client_for(
    db_url: str, ruleset: str | None = None, scope: str = "record", **settings: Any
) -> TestClient:
    """A client of the service over the league at ``db_url``, with a token of ``scope``."""
    league = rankcraft.League.open(db_url, ruleset)
    _, token = create_token(league.store, scope=scope)
    return TestClient(
        create_app(league, Settings(**settings)), headers={"Authorization": f"Bearer {token}"}
    )


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
            "display": reference.shown("p1").to_dict(),
        }
        board = client.get("/leaderboard", params={"top": 3}).json()
        assert [row["id"] for row in board] == [r.id for r in reference.leaderboard(3)]
        assert [row["place"] for row in board] == [1, 2, 3]
        predicted = client.get("/predict", params=[("side", "p0"), ("side", "p2,p3")]).json()
        assert predicted == {
            "sides": [["p0"], ["p2", "p3"]],
            "probabilities": reference.predict([["p0"], ["p2", "p3"]]),
            **reference.forecast([["p0"], ["p2", "p3"]]).to_dict(),
            "new_players": [],
        }
        misspelt = client.post("/predict", json={"sides": [["p0"], ["P1", "new"]]}).json()
        assert misspelt["new_players"] == [
            {"id": "P1", "similar": ["p1"]},
            {"id": "new", "similar": []},
        ]
        stored = client.get("/matches/m3").json()
        assert stored["report"] == reference.codec.report_to_dict(reference.report("m3"))
        ruleset = client.get("/ruleset").json()
        assert ruleset["name"] == "inversus"
        assert rankcraft.loads_ruleset(ruleset["toml"]) == reference.ruleset
        assert client.get("/health").json()["matches"] == 8


@pytest.mark.parametrize(
    ("request_args", "status", "kind", "field"),
    [
        (
            ("post", "/matches", {"content": b"{not json", "headers": JSON}),
            400,
            "JSONTextError",
            None,
        ),
        (
            ("post", "/matches", {"content": json.dumps(game("x", "a", "b"))}),
            415,
            "UnsupportedMediaType",
            "Content-Type",
        ),
        (
            (
                "post",
                "/matches",
                {
                    "content": json.dumps(game("x", "a", "b")),
                    "headers": {"Content-Type": "text/plain"},
                },
            ),
            415,
            "UnsupportedMediaType",
            "Content-Type",
        ),
        (
            (
                "post",
                "/matches",
                {
                    "content": json.dumps(game("x", "a", "b")).encode("utf-16"),
                    "headers": {"Content-Type": "application/json; charset=utf-16"},
                },
            ),
            415,
            "UnsupportedMediaType",
            "Content-Type",
        ),
        (
            (
                "post",
                "/matches",
                {"json": {**game("x", "a", "b"), "meta": {"pad": "x" * (1 << 20)}}},
            ),
            413,
            "PayloadTooLarge",
            None,
        ),
        (
            (
                "post",
                "/matches",
                {"json": {**game("x", "a", "b"), "teams": [[f"p{i}"] for i in range(65)]}},
            ),
            400,
            "LimitError",
            "teams",
        ),
        (
            (
                "post",
                "/matches",
                {
                    "json": {
                        **game("x", "a", "b"),
                        "teams": [[f"p{i}" for i in range(200)], [f"q{i}" for i in range(57)]],
                    }
                },
            ),
            400,
            "LimitError",
            "teams",
        ),
        (
            ("post", "/matches", {"json": {**game("x", "a", "b"), "played_at": "2999-01-01"}}),
            400,
            "LimitError",
            "played_at",
        ),
        (
            ("post", "/matches", {"json": {**game("x", "a", "b"), "scores": [10**400, 0]}}),
            400,
            "JSONTextError",
            None,
        ),
        (("post", "/predict", {"json": {"sides": [["a"], ["a"]]}}), 400, "InputError", None),
        (("post", "/predict", {"json": {"sides": [["a"], [7]]}}), 400, "InputError", "sides[1][0]"),
        (
            ("post", "/predict", {"json": {"sides": [["a"], ["b"]], "x y": 1}}),
            400,
            "RequestError",
            "x y",
        ),
        (
            ("post", "/predict", {"json": {"sides": [["a"], ["b"]], "home": 2}}),
            400,
            "InputError",
            "home",
        ),
        (("post", "/reset", {"json": {"kind": "soft"}}), 403, "Forbidden", "Authorization"),
        (
            ("get", "/predict?" + "&".join(f"side=p{i}" for i in range(65)), {}),
            400,
            "LimitError",
            "side",
        ),
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
        (("get", "/predict?side=a&side=b&home=²", {}), 400, "InputError", "home"),
        (("get", "/leaderboard?top=" + "9" * 5000, {}), 400, "InputError", "top"),
        (("get", "/leaderboard?top=-2", {}), 400, "InputError", "top"),
        (("get", "/leaderboard?offset=-1", {}), 400, "InputError", "offset"),
        (("get", "/leaderboard?offset=x", {}), 400, "InputError", "offset"),
        (("get", "/leaderboard?active_days=-1", {}), 400, "InputError", "active_days"),
        (("get", "/leaderboard?active_days=nan", {}), 400, "InputError", "active_days"),
        (("get", "/leaderboard?active_days=1e400", {}), 400, "InputError", "active_days"),
        (("get", "/leaderboard?tier=", {}), 400, "InputError", "tier"),
        (("get", "/leaderboard?all=yes", {}), 400, "InputError", "all"),
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


def test_leaderboard_pages_and_filters_as_the_library_does(db_url: str) -> None:
    # Elo, K = 32: a beats b (1516, 1484) on Jan 1, c beats d (1516, 1484) on Mar 1, then
    # a (1516) beats c (1516) on Mar 2: a 1532, c 1500; b and d tie at 1484 (ids order them)
    played = (("m1", "a", "b", "01-01"), ("m2", "c", "d", "03-01"), ("m3", "a", "c", "03-02"))
    matches = [
        {"id": mid, "played_at": f"2024-{day}", "teams": [[a], [b]], "scores": [1, 0]}
        for mid, a, b, day in played
    ]
    reference = rankcraft.League("elo")
    with client_for(db_url, "elo") as client:
        for m in matches:
            assert client.post("/matches", json=m).status_code == 201
            reference.record(m)

        def board(**query: Any) -> list[tuple[int, str, float]]:
            answer = client.get("/leaderboard", params=query)
            assert answer.status_code == 200, answer.text
            return [(r["place"], r["id"], r["skill"]["rating"]) for r in answer.json()]

        everyone = [(1, "a", 1532.0), (2, "c", 1500.0), (3, "b", 1484.0), (4, "d", 1484.0)]
        assert board() == everyone
        assert board(offset=1, top=2) == [(2, "c", 1500.0), (3, "b", 1484.0)]
        assert board(offset=4) == []
        # b last played 61 days before the league's latest match (Mar 2)
        assert board(active_days=60) == [(1, "a", 1532.0), (2, "c", 1500.0), (3, "d", 1484.0)]
        assert board(active_days=61.5) == everyone
        assert board(active_days=0.5, offset=1) == [(2, "c", 1500.0)]
        for query in ({"offset": 1, "top": 2}, {"active_days": 60}, {"top": 1}):
            expected = reference.leaderboard(
                query.get("top"),
                offset=query.get("offset", 0),
                active_days=query.get("active_days"),
            )
            assert [r[1] for r in board(**query)] == [r.id for r in expected]


def test_leaderboard_tier_and_all(tmp_path: Path) -> None:
    # skyweaver: the tier is the rank state's; ffa: [display] active_days = 365 hides
    # players idle for longer unless all=true
    league = rankcraft.League("skyweaver")
    for i in range(12):
        league.record(game(f"m{i}", "ace", f"p{i % 3}", day=1 + i))
    client = TestClient(create_app(league))
    tiers = {r.id: r.rank.tier for r in league.players()}
    for tier in set(tiers.values()):
        answer = client.get("/leaderboard", params={"tier": tier}).json()
        assert sorted(r["id"] for r in answer) == sorted(p for p, t in tiers.items() if t == tier)
        assert [r["place"] for r in answer] == list(range(1, len(answer) + 1))
    assert len(set(tiers.values())) >= 2
    assert client.get("/leaderboard", params={"tier": "Nowhere"}).json() == []

    ffa = rankcraft.League("ffa")
    old = {"id": "old", "played_at": "2020-01-01", "teams": [["x"], ["y"]], "ranks": [1, 2]}
    new = {"id": "new", "played_at": "2024-01-01", "teams": [["z"], ["w"]], "ranks": [1, 2]}
    ffa.record(old)
    ffa.record(new)
    client = TestClient(create_app(ffa))
    ids = lambda **q: sorted(r["id"] for r in client.get("/leaderboard", params=q).json())  # noqa: E731
    assert ids() == ["w", "z"]
    assert ids(all="true") == ["w", "x", "y", "z"]
    assert ids(all="true", active_days=10_000) == ["w", "x", "y", "z"]
    assert ids(all="false") == ["w", "z"]


def test_writes_need_a_token_of_their_scope(db_url: str) -> None:
    league = rankcraft.League.open(db_url, "skyweaver")
    _, read = create_token(league.store, scope="read", name="reader")
    _, record = create_token(league.store, scope="record", name="ingest")
    _, admin = create_token(league.store, scope="admin", name="ops")
    _, revoked = create_token(league.store, scope="admin", name="old")
    revoke_token(league.store, "old")

    def post(path: str, body: Any, authorization: str | None, **headers: str) -> Any:
        if authorization is not None:
            headers["Authorization"] = authorization
        return client.post(path, content=json.dumps(body), headers={**JSON, **headers})

    with TestClient(create_app(league)) as client:
        before = snapshot(db_url)
        # what any web page could send (a "simple" cross-origin request): refused
        forged = client.post(
            "/matches",
            content=json.dumps(game("m1", "a", "b")),
            headers={"Content-Type": "text/plain"},
        )
        assert forged.status_code == 401
        cases = [
            (
                None,
                401,
                "needs a token of scope 'record'",
                'Bearer realm="rankcraft", scope="record"',
            ),
            (
                "Basic dXNlcjpwYXNz",
                401,
                "must be 'Bearer TOKEN', got a 'Basic' header",
                "invalid_request",
            ),
            ("Bearer rk_nope", 401, "not one of this league's", "invalid_token"),
            (f"Bearer {revoked}", 401, "not one of this league's", "invalid_token"),
            (f"Bearer {record[:-2]}xx", 401, "not one of this league's", "invalid_token"),
            (
                f"Bearer {read}",
                403,
                "'reader' has scope 'read'; this needs 'record'",
                "insufficient_scope",
            ),
        ]
        for authorization, status, message, challenge in cases:
            answer = post("/matches", game("m1", "a", "b"), authorization)
            error = answer.json()["error"]
            assert (answer.status_code, error["status"], error["field"]) == (
                status,
                status,
                "Authorization",
            )
            assert message in error["message"]
            assert challenge in answer.headers["www-authenticate"]
            assert revoked not in answer.text and record not in answer.text
        assert snapshot(db_url) == before
        assert post("/matches", game("m1", "a", "b"), f"bearer  {record}").status_code == 201
        assert post("/reset", {"kind": "soft"}, f"Bearer {record}").status_code == 403
        assert post("/reset", {"kind": "soft"}, f"Bearer {admin}").json() == {
            "kind": "soft",
            "changed": 2,
        }
        # reads are open by default
        assert client.get("/players/a").status_code == 200
        assert client.post("/predict", json={"sides": [["a"], ["b"]]}).status_code == 200


def test_auth_reads_asks_a_read_token_for_every_read(db_url: str) -> None:
    league = rankcraft.League.open(db_url, "elo")
    _, read = create_token(league.store, scope="read")
    with TestClient(create_app(league, Settings(auth_reads=True))) as client:
        reads = ["/leaderboard", "/players/a", "/matches/m1", "/predict?side=a&side=b", "/ruleset"]
        for path in reads:
            answer = client.get(path)
            assert answer.status_code == 401, path
            assert "scope 'read'" in answer.json()["error"]["message"]
        assert client.post("/predict", json={"sides": [["a"], ["b"]]}).status_code == 401
        assert client.get("/health").status_code == 200
        assert client.get("/openapi.json").status_code == 200
        headers = {"Authorization": f"Bearer {read}"}
        assert client.get("/leaderboard", headers=headers).json() == []
        assert client.get("/predict?side=a&side=b", headers=headers).status_code == 200
        answer = client.post("/matches", json=game("m1", "a", "b"), headers=headers)
        assert answer.status_code == 403


def test_cors_is_off_unless_origins_are_given() -> None:
    preflight = {
        "Origin": "https://evil.example",
        "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "authorization,content-type",
    }
    with TestClient(create_app(rankcraft.League("elo"))) as client:
        answer = client.get("/health", headers={"Origin": "https://evil.example"})
        assert "access-control-allow-origin" not in answer.headers
        assert client.options("/matches", headers=preflight).status_code == 405
    settings = Settings(cors_origins=["https://ok.example"])
    with TestClient(create_app(rankcraft.League("elo"), settings)) as client:
        answer = client.get("/health", headers={"Origin": "https://ok.example"})
        assert answer.headers["access-control-allow-origin"] == "https://ok.example"
        answer = client.get("/health", headers={"Origin": "https://evil.example"})
        assert "access-control-allow-origin" not in answer.headers
        answer = client.options("/matches", headers={**preflight, "Origin": "https://ok.example"})
        assert answer.status_code == 200
        assert answer.headers["access-control-allow-origin"] == "https://ok.example"
        assert "Authorization" in answer.headers["access-control-allow-headers"]
        assert client.options("/matches", headers=preflight).status_code == 400
    with pytest.raises(rankcraft.InputError, match="'cors_origin' must be an origin"):
        Settings(cors_origins=["https://ok.example/"])


def test_the_limits_can_be_set() -> None:
    league = rankcraft.League("elo")
    _, token = create_token(league.store, scope="record")
    settings = Settings(max_body=300, max_sides=3, max_players=4, max_future=60)
    headers = {"Authorization": f"Bearer {token}"}
    with TestClient(create_app(league, settings), headers=headers) as client:
        four = {**game("x", "a", "b"), "teams": [["a"], ["b"], ["c"], ["d"]], "ranks": [1, 2, 3, 4]}
        del four["scores"]
        error = client.post("/matches", json=four).json()["error"]
        assert error["message"] == "'teams' has 4 sides, more than the limit of 3 (--max-sides)"
        five = {**game("x", "a", "b"), "teams": [["a", "b"], ["c", "d", "e"]]}
        error = client.post("/matches", json=five).json()["error"]
        assert error["message"] == "'teams' has 5 players, more than the limit of 4 (--max-players)"
        big = {**game("x", "a", "b"), "meta": {"note": "x" * 300}}
        answer = client.post("/matches", json=big)
        assert answer.status_code == 413 and answer.headers["connection"] == "close"
        assert answer.json()["error"]["message"].startswith("the request body is 4")
        assert "more than the limit of 300 (--max-body)" in answer.json()["error"]["message"]

        def chunked() -> Any:  # no Content-Length: counted as it arrives
            yield json.dumps(big).encode()

        answer = client.post("/matches", content=chunked(), headers=JSON)
        assert answer.status_code == 413
        assert answer.json()["error"]["message"] == (
            "the request body is more than the limit of 300 bytes (--max-body)"
        )
        soon = datetime.now(UTC) + timedelta(seconds=30)
        later = datetime.now(UTC) + timedelta(seconds=120)
        assert (
            client.post(
                "/matches", json={**game("s", "a", "b"), "played_at": soon.isoformat()}
            ).status_code
            == 201
        )
        error = client.post(
            "/matches", json={**game("l", "a", "b"), "played_at": later.isoformat()}
        ).json()["error"]
        assert error["field"] == "played_at"
        assert "is later than the server's clock" in error["message"]
        assert error["message"].endswith("plus 60 s (--max-future)")
    assert league.match_count == 1
    for bad, message in [
        ({"max_body": 0}, "'max_body' must be a whole number >= 1: 0"),
        ({"max_sides": 1}, "'max_sides' must be at least 2: 1"),
        ({"body_timeout": float("nan")}, "'body_timeout' must be a number of seconds > 0: nan"),
    ]:
        with pytest.raises(rankcraft.InputError, match=re.escape(message)):
            Settings(**bad)


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
        if isinstance(route, Route)
        and route.path not in ("/openapi.json", "/docs", "/")
        # the web page's own reads (the lab's jobs are documented: rankcraft.lab, and
        # the champion against the challenger: rankcraft.serve.livecompare)
        and (
            route.path.startswith("/web/lab/jobs")
            or route.path in ("/web/lab/compare", "/web/compare-live")
            or not route.path.startswith(("/web/", "/static/"))
        )
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

    def __init__(
        self, db: str, workers: int = 1, ruleset: str | None = None, *options: str
    ) -> None:
        self.port = free_port()
        self.token = ""
        argv = [EXE, "serve", "--db", db, "--port", str(self.port), "--workers", str(workers)]
        if ruleset:
            argv += ["--ruleset", ruleset]
        argv += options
        self.process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 60
        while True:
            try:
                if self.request("GET", "/health")[0] == 200:
                    store = open_store(db, create=False)
                    try:
                        self.token = create_token(store, scope="record")[1]
                    finally:
                        store.close()
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
        headers = {"Content-Type": "application/json", "Authorization": f"Bearer {self.token}"}
        con.request(method, path, body=payload, headers=headers)
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


def _until_closed(sock: socket.socket, limit: float) -> tuple[float, bytes]:
    """Read until the server closes ``sock``; (seconds it took, what came)."""
    start = time.monotonic()
    sock.settimeout(limit)
    data = b""
    while True:
        try:
            chunk = sock.recv(65536)
        except TimeoutError:
            raise AssertionError(f"still open after {limit} s; got {data!r}") from None
        except ConnectionResetError:
            break
        if not chunk:
            break
        data += chunk
    return time.monotonic() - start, data


@pytest.mark.slow
def test_slow_clients_are_cut_off_and_others_still_answered(tmp_path: Path) -> None:
    db = str(tmp_path / "league.sqlite")
    options = ("--header-timeout", "1", "--body-timeout", "1", "--timeout-keep-alive", "1")
    server = Server(db, 1, "elo", *options)
    figures = {}
    try:
        address = ("127.0.0.1", server.port)
        # 1. connects and says nothing
        with socket.create_connection(address) as silent:
            figures["silent"], data = _until_closed(silent, 10)
            assert data == b""
        # 2. half a request line and headers, then a byte now and then (slowloris)
        with socket.create_connection(address) as slow:
            slow.sendall(b"POST /matches HTTP/1.1\r\nHost: x\r\n")
            start = time.monotonic()
            slow.settimeout(0.3)
            closed = False
            while time.monotonic() - start < 10 and not closed:
                try:
                    slow.sendall(b"X")
                    closed = slow.recv(1) == b""
                except TimeoutError:
                    pass
                except (BrokenPipeError, ConnectionResetError):
                    closed = True
            figures["trickled headers"] = time.monotonic() - start
            assert closed
        # 3. full headers, then part of the body: 408 in JSON, then closed
        with socket.create_connection(address) as partial:
            partial.sendall(
                b"POST /matches HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                b"Authorization: Bearer " + server.token.encode() + b"\r\n"
                b'Content-Length: 100\r\n\r\n{"id": '
            )
            figures["partial body"], data = _until_closed(partial, 10)
            head, _, body = data.partition(b"\r\n\r\n")
            assert head.startswith(b"HTTP/1.1 408 "), data
            assert b"connection: close" in head.lower()
            error = json.loads(body)["error"]
            assert (error["type"], error["status"]) == ("RequestTimeout", 408)
            assert "did not arrive within 1 s (7 bytes came; --body-timeout)" in error["message"]
        # 4. an idle keep-alive connection after a request
        with socket.create_connection(address) as idle:
            idle.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
            figures["keep-alive"], data = _until_closed(idle, 10)
            assert data.startswith(b"HTTP/1.1 200 ")
        # meanwhile others are answered at once, one worker or not
        stalled = [socket.create_connection(address) for _ in range(5)]
        try:
            for s in stalled:
                s.sendall(b"GET /health HTTP/1.1\r\n")
            start = time.monotonic()
            status, _ = server.request("POST", "/matches", game("m1", "a", "b"))
            figures["answer beside 5 stalled"] = time.monotonic() - start
            assert status == 201
        finally:
            for s in stalled:
                s.close()
    finally:
        server.stop()
    print("\nslow clients, seconds until closed:", {k: round(v, 2) for k, v in figures.items()})
    for name in ("silent", "trickled headers", "partial body", "keep-alive"):
        assert 0.8 < figures[name] < 3.0, figures
    assert figures["answer beside 5 stalled"] < 1.0
    assert committed(db) == [rankcraft.parse_match(game("m1", "a", "b")).to_dict()]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--max-body", "0"], "'--max-body' must be a whole number >= 1: 0"),
        (["--max-sides", "1"], "'--max-sides' must be at least 2: 1"),
        (["--body-timeout", "-1"], "'--body-timeout' must be a number of seconds > 0: -1.0"),
        (["--cors-origin", "*"], "'--cors-origin' must be an origin such as https://example.org"),
        (["--limit-concurrency", "0"], "'--limit-concurrency' must be at least 1: 0"),
    ],
)
def test_serve_refuses_bad_limits_before_creating_anything(
    tmp_path: Path, options: list[str], message: str
) -> None:
    import io

    from rankcraft.cli import main

    db = tmp_path / "new.sqlite"
    err = io.StringIO()
    argv = ["serve", "--db", str(db), "--ruleset", "elo", *options]
    assert main(argv, out=io.StringIO(), err=err) == 2
    assert message in err.getvalue()
    assert not db.exists()


def conforms(value: Any, schema: dict[str, Any], document: dict[str, Any], at: str = "$") -> None:
    """Check ``value`` against the subset of JSON Schema the service's document uses."""
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[1]
        schema = document["components"]["schemas"][name]
    for part in schema.get("allOf", []):
        conforms(value, part, document, at)
    for keyword, wanted in (("oneOf", lambda n: n == 1), ("anyOf", lambda n: n >= 1)):
        if keyword in schema:
            passed = 0
            for part in schema[keyword]:
                try:
                    conforms(value, part, document, at)
                    passed += 1
                except AssertionError:
                    pass
            assert wanted(passed), (at, value, schema)
    kinds = schema.get("type")
    if kinds is not None:
        kinds = [kinds] if isinstance(kinds, str) else kinds
        python = {
            "object": dict,
            "array": list,
            "string": str,
            "boolean": bool,
            "null": type(None),
            "integer": int,
            "number": (int, float),
        }
        ok = any(
            isinstance(value, python[k]) and not (k in ("integer", "number") and value is True)
            for k in kinds
        )
        assert ok and not (isinstance(value, bool) and "boolean" not in kinds), (at, value, kinds)
    if "enum" in schema:
        assert value in schema["enum"], (at, value)
    if isinstance(value, dict):
        for key in schema.get("required", []):
            assert key in value, (at, key)
        properties = schema.get("properties", {})
        for key, item in value.items():
            if key in properties:
                conforms(item, properties[key], document, f"{at}.{key}")
            elif isinstance(schema.get("additionalProperties"), dict):
                conforms(item, schema["additionalProperties"], document, f"{at}.{key}")
            else:
                assert schema.get("additionalProperties", True) is not False, (at, key)
    if isinstance(value, list):
        assert schema.get("minItems", 0) <= len(value) <= schema.get("maxItems", len(value)), at
        if schema.get("uniqueItems"):
            assert len({json.dumps(v) for v in value}) == len(value), (at, value)
        prefix = schema.get("prefixItems", [])
        for i, item in enumerate(value):
            part = prefix[i] if i < len(prefix) else schema.get("items")
            if part is not None:
                conforms(item, part, document, f"{at}[{i}]")
    if isinstance(value, str):
        assert schema.get("minLength", 0) <= len(value) <= schema.get("maxLength", len(value)), at
    if isinstance(value, int | float) and not isinstance(value, bool):
        assert value >= schema.get("minimum", value) and value <= schema.get("maximum", value)
        # (no "value - 1" default: past 2**53 a float minus 1 is itself)
        assert "exclusiveMinimum" not in schema or value > schema["exclusiveMinimum"], (at, value)


@pytest.mark.parametrize("name", ["elo", "skyweaver", "team-wager"])
def test_the_openapi_document_describes_real_answers(name: str) -> None:
    league = rankcraft.League(name)
    _, token = create_token(league.store, scope="admin")
    headers = {"Authorization": f"Bearer {token}"}
    with TestClient(create_app(league), headers=headers) as client:
        document = client.get("/openapi.json").json()
        assert document["components"]["securitySchemes"]["bearer"]["scheme"] == "bearer"
        assert document["paths"]["/matches"]["post"]["security"] == [{"bearer": ["record"]}]
        assert "security" not in document["paths"]["/leaderboard"]["get"]

        def answered(method: str, path: str, kind: str = "get", **kwargs: Any) -> None:
            answer = client.request(method, path, **kwargs)
            op = document["paths"][path.split("?")[0].replace("/a", "/{player_id}")][kind]
            declared = op["responses"][str(answer.status_code)]
            schema = declared["content"]["application/json"]["schema"]
            conforms(answer.json(), schema, document)

        for i in range(3):
            answered("POST", "/matches", "post", json=game(f"m{i}", "a", "b", day=1 + i))
        answered("POST", "/matches", "post", json=game("m0", "a", "b", day=9))  # 409
        answered("POST", "/matches", "post", content=b"{}")  # 415
        answered("POST", "/matches", "post", json={}, headers={"Authorization": "x"})  # 401
        answered("GET", "/players/a")
        answered("GET", "/leaderboard?top=2")
        answered("GET", "/leaderboard?top=0")  # 400
        answered("GET", "/predict?side=a&side=b")
        answered("POST", "/predict", "post", json={"sides": [["a"], ["b", "c"]]})
        answered("GET", "/ruleset")
        answered("GET", "/health")
        record = client.get("/players/a").json()["player"]
        if name == "skyweaver":
            assert isinstance(record["rank"]["weekly"], list)  # what the old schema refused
            answered("POST", "/reset", "post", json={"kind": "soft"})
        match = client.get("/matches/m1").json()
        conforms(
            match,
            document["paths"]["/matches/{match_id}"]["get"]["responses"]["200"]["content"][
                "application/json"
            ]["schema"],
            document,
        )
