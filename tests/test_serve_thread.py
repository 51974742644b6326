"""The service's league thread (issue 43): it survives anything a plugin raises, ``/health``
says when it cannot answer, and nothing an anonymous visitor sends runs on it."""

from __future__ import annotations

import asyncio
import contextlib
import http.client
import json
import math
import signal
import socket
import sys
import textwrap
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

import rankcraft
from rankcraft.jobs import Busy, Escaped, LeagueThread, Refused, Worker
from rankcraft.manager import PLUGINS_DIR_ENV
from rankcraft.serve import create_app
from rankcraft.serve import league as league_routes
from rankcraft.tokens import create_token

from .test_serve import Server

TRAP = '''
"""Elo, except that ``rankcraft_update`` raises the exception a player's id names
(``raise-KeyboardInterrupt``)."""

import builtins
import time

from rankcraft import hookimpl
from rankcraft.plugins import elo

RANKCRAFT_CONTRACT = 2


def _raise(name):
    raise getattr(builtins, name)("a trap")


@hookimpl
def rankcraft_params(slot):
    return elo.rankcraft_params(slot)


@hookimpl
def rankcraft_initial(slot, params):
    return elo.rankcraft_initial(slot, params)


@hookimpl
def rankcraft_expectation(params, side_states, home, match):
    return elo.rankcraft_expectation(params, side_states, home, match)


@hookimpl
def rankcraft_update(params, state, pairings, games, side, match):
    for team in match.teams if match is not None else ():
        for player in team:
            if player.startswith("raise-"):
                _raise(player[len("raise-"):])
            if player.startswith("sleep-"):
                time.sleep(float(player[len("sleep-"):]))
    return elo.rankcraft_update(params, state, pairings, games, side, match)
'''

SNARE = '''
"""A plugin whose ``rankcraft_params`` raises KeyboardInterrupt."""

from rankcraft import hookimpl

RANKCRAFT_CONTRACT = 2


@hookimpl
def rankcraft_params(slot):
    raise KeyboardInterrupt("a snare")


@hookimpl
def rankcraft_update(params, state, pairings, games, side, match):
    return state
'''

TRAPPED = 'name = "trapped"\n[period]\nmode = "match"\n[update]\nplugin = "trap"\n'


@pytest.fixture
def trap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A plugins folder holding the plugins ``trap`` and ``snare``, on ``RANKCRAFT_PLUGINS_DIR``."""
    folder = tmp_path / "plugins"
    folder.mkdir()
    (folder / "trap.py").write_text(textwrap.dedent(TRAP))
    (folder / "snare.py").write_text(textwrap.dedent(SNARE))
    monkeypatch.setenv(PLUGINS_DIR_ENV, str(folder))
    ruleset = tmp_path / "trapped.toml"
    ruleset.write_text(TRAPPED)
    return ruleset


def game(mid: str, a: str, b: str, day: int) -> dict[str, Any]:
    return {
        "id": mid,
        "played_at": f"2024-05-{day:02d}T12:00:00Z",
        "teams": [[a], [b]],
        "scores": [1, 0],
    }


RAISED = ["KeyboardInterrupt", "SystemExit", "GeneratorExit", "BaseException"]


@pytest.mark.parametrize("raised", RAISED)
def test_a_hook_raising_anything_leaves_the_league_thread_answering(
    trap: Path, db_url: str, raised: str
) -> None:
    # before: KeyboardInterrupt and SystemExit ended the league's thread, and this request
    # and every later one hung; GeneratorExit and BaseException were a plain-text 500
    league = rankcraft.League.open(db_url, str(trap))
    _, token = create_token(league.store, scope="record")
    headers = {"Authorization": f"Bearer {token}"}
    with TestClient(create_app(league), headers=headers, raise_server_exceptions=False) as client:
        assert client.post("/matches", json=game("m1", "ann", "bo", 1)).status_code == 201
        refused = client.post("/matches", json=game("m2", "ann", f"raise-{raised}", 2))
        error = refused.json()["error"]
        assert refused.status_code == 500 and error["type"] == "PluginError"
        assert "'trap'" in error["message"] and raised in error["message"]
        # nothing of the refused match was kept, and the league goes on
        assert client.get("/health").json()["matches"] == 1
        assert client.get("/matches/m2").status_code == 404
        assert client.post("/matches", json=game("m3", "ann", "bo", 3)).status_code == 201
        assert client.get("/players/ann").json()["player"]["matches"] == 2
        health = client.get("/health")
        assert health.status_code == 200 and health.json()["ok"] is True
    reopened = rankcraft.League.open(db_url, str(trap))
    try:
        assert reopened.match_count == 2 and "raise-" + raised not in reopened
    finally:
        reopened.close()


def test_an_anonymous_lab_check_naming_a_raising_plugin_is_an_error_naming_it(
    trap: Path,
) -> None:
    # before: the KeyboardInterrupt of the plugin's rankcraft_params, raised on the
    # league's thread by an anonymous check, ended it: every later read hung
    league = rankcraft.League("elo")
    with TestClient(create_app(league), raise_server_exceptions=False) as client:
        toml = 'name = "x"\n[update]\nplugin = "snare"\n'
        answer = client.post("/web/lab/check", json={"toml": toml})
        error = answer.json()["error"]
        assert answer.status_code == 500 and error["type"] == "PluginError"
        assert "'snare'" in error["message"] and "KeyboardInterrupt" in error["message"]
        assert client.get("/leaderboard").status_code == 200
        assert client.get("/health").json()["ok"] is True


@pytest.mark.slow(seconds=6)
def test_health_says_when_the_league_has_not_answered_for_too_long(
    trap: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # before: /health said ok while the league's thread was stuck (or gone) for good
    monkeypatch.setattr(league_routes, "STALLED", 1.0)
    league = rankcraft.League.open(str(tmp_path / "l.sqlite"), str(trap))
    _, token = create_token(league.store, scope="record")
    headers = {"Authorization": f"Bearer {token}"}
    with TestClient(create_app(league), headers=headers) as client:
        stuck = threading.Thread(
            target=lambda: client.post("/matches", json=game("m1", "ann", "sleep-3", 1))
        )
        stuck.start()
        time.sleep(0.2)
        first = client.get("/health")
        assert first.status_code == 200 and first.json()["ok"] is True  # busy, not stuck yet
        time.sleep(1.0)
        late = client.get("/health")
        assert late.status_code == 503 and late.json()["error"]["type"] == "LeagueUnavailable"
        assert "has not answered for" in late.json()["error"]["message"]
        stuck.join(10)
        assert client.get("/health").json() == {
            "ok": True,
            "rankcraft": rankcraft.__version__,
            "matches": 1,
        }


def test_a_served_league_survives_a_plugins_keyboard_interrupt_and_stops_on_sigterm(
    trap: Path, tmp_path: Path
) -> None:
    # the reproduction, on a real server: before, both requests hung, /health
    # said ok, and SIGTERM no longer stopped the server
    server = Server(str(tmp_path / "served.sqlite"), 1, str(trap))
    try:
        refused = server.request(
            "POST", "/matches", game("m1", "ann", "raise-KeyboardInterrupt", 1)
        )
        assert refused[0] == 500 and "plugin 'trap'" in refused[1]["error"]["message"]
        toml = 'name = "x"\n[update]\nplugin = "snare"\n'
        server.token = ""  # (anonymous)
        checked = server.request("POST", "/web/lab/check", {"toml": toml})
        assert checked[0] == 500 and "plugin 'snare'" in checked[1]["error"]["message"]
        assert server.request("GET", "/health")[1]["ok"] is True
        assert server.request("GET", "/leaderboard")[0] == 200
    finally:
        started = time.monotonic()
        server.stop()
    assert server.process.returncode in (0, -signal.SIGTERM) and time.monotonic() - started < 10


# -- issue 43, item 11: every refused match of a batch; the concurrency limit in JSON -------


def test_a_batch_lists_every_refused_item_that_is_not_an_object(db_url: str) -> None:
    # before: the first non-object item only, and no `errors` list
    league = rankcraft.League.open(db_url, "elo")
    _, token = create_token(league.store, scope="record")
    with TestClient(create_app(league), headers={"Authorization": f"Bearer {token}"}) as client:
        items = [game("m1", "ann", "bo", 1), 1, "x", {"id": "m2"}, None, [], True]
        for body in (items, {"matches": items}):
            answer = client.post("/matches/batch", json=body)
            assert answer.status_code == 400
            errors = answer.json()["errors"]
            assert [e["index"] for e in errors] == [1, 2, 3, 4, 5, 6]
            assert [e["type"] for e in errors] == ["InputError"] * 2 + ["MatchError"] + [
                "InputError"
            ] * 3
            assert errors[0]["message"] == "a match must be a JSON object, got int"
            assert answer.json()["error"]["field"] == "matches[1]"
            assert "(and 5 more errors); nothing was recorded" in answer.json()["error"]["message"]
        # the batch's own shape is still checked first
        empty = client.post("/matches/batch", json={"matches": []}).json()["error"]
        assert empty["field"] == "matches" and "errors" not in empty
        assert client.get("/health").json()["matches"] == 0


def test_the_concurrency_limit_answers_the_documented_json_error(tmp_path: Path) -> None:
    # before: uvicorn's own plain-text 503 "Service Unavailable"
    server = Server(str(tmp_path / "busy.sqlite"), 1, "elo", "--limit-concurrency", "2")
    idle = [socket.create_connection(("127.0.0.1", server.port)) for _ in range(2)]
    try:
        time.sleep(0.2)
        con = server.connection()
        con.request("GET", "/leaderboard")
        answer = con.getresponse()
        assert answer.status == 503 and answer.getheader("Content-Type") == "application/json"
        assert answer.getheader("Retry-After") == "5"
        error = json.loads(answer.read())["error"]
        assert error["status"] == 503 and error["type"] == "ServiceUnavailable"
        assert "--limit-concurrency" in error["message"] and error["field"] is None
        con.close()
        for sock in idle:
            sock.close()
        time.sleep(0.2)
        assert server.request("GET", "/leaderboard")[0] == 200
    finally:
        for sock in idle:
            sock.close()
        server.stop()


# -- issue 43, item 2: nothing an anonymous visitor sends stalls the league's thread ------


def _big_ruleset(limit: int) -> str:
    """A ruleset TOML of elo with as many ``k_by_games`` rules as fit a JSON body
    ``{"toml": TEXT}`` of ``limit`` bytes: seconds of parsing and checking."""
    head = 'name = "big"\nextends = "elo"\n[update.params]\nk_by_games = ['
    size = len(json.dumps({"toml": head + "]\n"}))
    rules: list[str] = []
    while True:
        rule = f"{{games_below = {len(rules) + 1}, k = 9.5}}, "
        if size + len(rule) > limit:
            return head + "".join(rules) + "]\n"
        rules.append(rule)
        size += len(rule)


def _attack(server: Server, path: str, body: bytes) -> None:
    """Send ``body`` anonymously to ``path``; whatever answers (or not) is not awaited."""
    with contextlib.suppress(OSError, http.client.HTTPException):
        con = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
        con.request("POST", path, body=body, headers={"Content-Type": "application/json"})
        con.getresponse().read()
        con.close()


def _read_latencies(server: Server, seconds: float, least: int) -> list[float]:
    """Seconds each read took (a player, then the leaderboard, alternately), for
    ``seconds`` and at least ``least`` reads."""
    out: list[float] = []
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline or len(out) < least:
        path = "/players/p1" if len(out) % 2 else "/leaderboard?top=20"
        started = time.monotonic()
        status, _ = server.request("GET", path)
        out.append(time.monotonic() - started)
        assert status == 200
    return out


@pytest.mark.slow(seconds=12)
def test_reads_keep_their_latency_while_anonymous_visitors_attack(tmp_path: Path) -> None:
    # before: a 1 MiB lab check delayed reads by 4.6 s, a 16 MiB lab body by 20 s, four
    # 64-side predictions by 2.7 s, a balance of 40 players by seconds (all of it on the
    # league's thread)
    db = str(tmp_path / "attacked.sqlite")
    with rankcraft.League.open(db, "elo") as league:
        league.record_many(
            [game(f"m{i}", f"p{i % 40}", f"p{(i * 7 + 1) % 40}", 1) for i in range(400)]
        )
    server = Server(db, 1, "elo")
    try:
        token, server.token = server.token, ""  # (anonymous, as the attack)
        quiet = _read_latencies(server, 1.0, 10)
        check = json.dumps({"toml": _big_ruleset(1 << 20)}).encode()
        assert (1 << 20) - 200 < len(check) <= 1 << 20
        sides = [[f"p{i}"] for i in range(40)] + [[f"new{i}"] for i in range(24)]
        predict = json.dumps({"sides": sides}).encode()
        matches = [game(f"u{i}", f"a{i % 500}", f"b{i % 700}", 1 + i % 28) for i in range(155_000)]
        lab = json.dumps({"rulesets": ["elo"], "matches": matches}).encode()
        assert 15 << 20 < len(lab) <= 16 << 20
        balance = json.dumps({"players": [f"p{i}" for i in range(40)], "teams": 4}).encode()
        attacks = [("/web/lab/check", check)] * 4 + [("/predict", predict)] * 4
        attacks += [("/match/balance", balance)] * 2
        attacks.append(("/web/lab/jobs", lab))
        for path, body in attacks:
            threading.Thread(target=_attack, args=(server, path, body), daemon=True).start()
        time.sleep(0.3)  # (the bodies are in, their work has started)
        attacked = _read_latencies(server, 3.0, 10)
        assert max(attacked) <= max(quiet) + 0.5, (max(quiet), max(attacked))
        server.token = token  # (and a record-token write: four checks delayed one 25 s)
        started = time.monotonic()
        assert server.request("POST", "/matches", game("w1", "p1", "p2", 2))[0] == 201
        written = time.monotonic() - started
        assert written <= max(quiet) + 0.5, written
        print(f"reads: quiet {max(quiet):.3f} s, attacked {max(attacked):.3f} s")
        print(f"a record-token write, attacked: {written:.3f} s")
    finally:  # (not waiting for the attack's answers: SIGTERM would, 30 s at most)
        server.stop(signal.SIGKILL)


def test_the_worker_process_survives_what_its_work_raises_and_keeps_its_limits() -> None:
    worker = Worker(1, queued=2, timeout=1.0)

    async def scenario() -> None:
        assert await worker.run(math.sqrt, 16.0) == 4.0
        with pytest.raises(Refused) as exited:
            await worker.run(sys.exit, 3)  # (a SystemExit: the process lives on)
        assert exited.value.status == 500 and exited.value.error["type"] == "PluginError"
        assert "raised SystemExit" in exited.value.error["message"]
        with pytest.raises(Refused) as bad:
            await worker.run(rankcraft.parse_match, {"id": "x"})
        assert bad.value.status == 400 and bad.value.error["field"] == "played_at"
        assert await worker.run(math.sqrt, 9.0) == 3.0
        # a piece past the time limit: its process is ended (503), the next one starts
        late = asyncio.ensure_future(worker.run(time.sleep, 30))
        waiting = asyncio.ensure_future(worker.run(math.sqrt, 4.0))
        await asyncio.sleep(0.2)
        with pytest.raises(Busy):  # (two waiting or running, the most it takes)
            await worker.run(math.sqrt, 1.0)
        with pytest.raises(Refused) as timed_out:
            await late
        assert timed_out.value.status == 503 and "longer than 1 s" in str(timed_out.value)
        assert await waiting == 2.0

    try:
        started = time.monotonic()
        asyncio.run(scenario())
        assert time.monotonic() - started < 20
    finally:
        worker.close()


def test_the_league_thread_contains_what_its_work_raises_but_a_real_cancel() -> None:
    thread = LeagueThread()

    def raising(kind: type[BaseException]) -> Any:
        raise kind("from the work")

    async def scenario() -> None:
        for kind in (KeyboardInterrupt, SystemExit, GeneratorExit, asyncio.CancelledError):
            with pytest.raises(Escaped) as caught:
                await thread.call(lambda k=kind: raising(k))  # type: ignore[misc]
            assert type(caught.value.exception) is kind
        with pytest.raises(ValueError, match="from the work"):
            await thread.call(lambda: raising(ValueError))
        assert await thread.call(lambda: 42) == 42
        # a caller that gives up cancels the work, which stays cancelled
        slow = asyncio.ensure_future(thread.run(asyncio.sleep(30)))
        await asyncio.sleep(0.1)
        slow.cancel()
        with pytest.raises(asyncio.CancelledError):
            await slow
        assert await thread.call(lambda: 43) == 43

    try:
        asyncio.run(scenario())
    finally:
        assert thread.close(timeout=5)


def test_a_forecast_of_many_sides_integrated_in_the_worker_is_the_leagues(db_url: str) -> None:
    league = rankcraft.League.open(db_url, "glicko2")
    league.record_many(
        [game(f"m{i}", f"p{i % 9}", f"p{(i * 4 + 1) % 9}", 1 + i // 3) for i in range(60)]
    )
    sides = [["p0", "p1"], ["p2"], ["p3", "p4", "new"], ["p5"], ["p8"]]
    with TestClient(create_app(league)) as client:
        answers = []
        for body in ({"sides": sides}, {"sides": sides, "home": 1, "at": "2024-06-30T00:00:00Z"}):
            answer = client.post("/predict", json=body)
            assert answer.status_code == 200, answer.text
            want = league.forecast(sides, at=body.get("at"), home=body.get("home")).to_dict()
            assert {k: answer.json()[k] for k in want} == json.loads(json.dumps(want))
            assert len(answer.json()["places"]) == 5
            answers.append(answer.json())
        query = [("side", ",".join(side)) for side in sides]
        assert client.get("/predict", params=query).json() == answers[0]
    league.close()


@pytest.mark.slow(seconds=10)
def test_a_balance_done_in_the_worker_process_is_the_leagues(db_url: str) -> None:
    # before: 64 TrueSkill players in three teams held the league's thread for 41 s
    league = rankcraft.League.open(db_url, "trueskill")
    league.record_many(
        [game(f"m{i}", f"p{i % 12}", f"p{(i * 5 + 1) % 12}", 1 + i // 4) for i in range(80)]
    )
    players = [f"p{i}" for i in range(12)]
    with TestClient(create_app(league, db=db_url)) as client:
        for teams in (2, 3):
            answer = client.post("/match/balance", json={"players": players, "teams": teams})
            assert answer.status_code == 200, answer.text
            assert answer.json() == json.loads(json.dumps(league.balance(players, teams).to_dict()))
        # a match recorded since is seen by the worker's league too
        _, token = create_token(league.store, scope="record")
        recorded = client.post(
            "/matches",
            json=game("late", "p0", "p11", 28),
            headers={"Authorization": f"Bearer {token}"},
        )
        assert recorded.status_code == 201
        answer = client.post("/match/balance", json={"players": players, "at": "2024-06-01"})
        want = league.balance(players, 2, at="2024-06-01").to_dict()
        assert answer.json() == json.loads(json.dumps(want))
        unknown = client.post("/match/balance", json={"players": ["p0", "nobody"]})
        assert (
            unknown.status_code == 404 and unknown.json()["error"]["type"] == "UnknownPlayerError"
        )
    league.close()


def test_a_quality_judged_in_the_worker_process_is_the_leagues(db_url: str) -> None:
    league = rankcraft.League.open(db_url, "trueskill")
    league.record_many([game(f"m{i}", f"p{i % 6}", f"p{(i + 1) % 6}", 1 + i) for i in range(20)])
    sides = [["p0", "p1"], ["p2", "p3"], ["p4"]]
    with TestClient(create_app(league, db=db_url)) as client:
        answer = client.post("/match/quality", json={"sides": sides, "home": 2})
        assert answer.status_code == 200, answer.text
        value, judged_by = rankcraft.matchmaking.quality(league, sides, home=2)
        assert answer.json() == {
            "sides": sides,
            "quality": value,
            "judged_by": judged_by,
            "probabilities": league.predict(sides, home=2),
        }
        unknown = client.post("/match/quality", json={"sides": [["p0"], ["nobody"]]})
        assert unknown.status_code == 404
    league.close()
