"""A league a consumer feeds from a log (issue 41, item 5): every read still answered over
HTTP, every write refused with a message naming the log, and nothing changed."""

from __future__ import annotations

import json

from starlette.testclient import TestClient

import rankcraft
from rankcraft.serve import create_app
from rankcraft.store.base import CONSUMED, FED_BY
from rankcraft.tokens import create_token

MATCH = {"id": "m1", "played_at": "2024-05-01", "teams": [["ann"], ["bo"]], "scores": [1, 0]}


def test_writes_to_a_league_fed_by_a_log_are_refused_and_reads_answered() -> None:
    league = rankcraft.League("skyweaver")
    league.record(MATCH)
    with league.batch():
        league.store.set_meta(FED_BY, "nats://127.0.0.1:4222 RESULTS results.league1")
    _, secret = create_token(league.store, scope="admin", name="ops")
    client = TestClient(create_app(league), headers={"Authorization": f"Bearer {secret}"})
    before = league.export()
    late = {**MATCH, "id": "m2", "played_at": "2024-05-02"}
    writes = [
        ("/matches", late),
        ("/matches/batch", {"matches": [late]}),
        ("/matches/m1/void", {"reason": "x"}),
        ("/matches/m1/correct", {"fields": {"scores": [0, 1]}, "reason": "x"}),
        ("/reset", {"kind": "soft"}),
    ]
    for path, body in writes:
        answer = client.post(path, json=body)
        assert answer.status_code == 409, (path, answer.text)
        assert "RESULTS results.league1" in answer.json()["error"]["message"]
    assert league.export() == before and league.match_count == 1
    assert client.get("/players/ann").status_code == 200
    assert [row["id"] for row in client.get("/leaderboard").json()] == ["ann", "bo"]
    assert client.get("/matches/m1").status_code == 200


def test_health_says_what_the_consumer_said_last() -> None:
    league = rankcraft.League("elo")
    client = TestClient(create_app(league))
    assert "consumer" not in client.get("/health").json()
    said = {"log": "nats://127.0.0.1:4222 RESULTS results.x", "lag": 12, "matches_per_s": 950.5}
    with league.batch():
        league.store.set_meta(CONSUMED, json.dumps(said))
    assert client.get("/health").json()["consumer"] == said
