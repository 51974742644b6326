"""Corrections over HTTP (issue 40): ``POST /matches/{id}/void``, ``POST
/matches/{id}/correct``, ``GET /edits``, ``?at=`` on the leaderboard and a player, and the
web page's player answer with the player's corrections. Each answer is checked against a
second league that replays the edited matches from scratch."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

import rankcraft
from rankcraft.serve import create_app
from rankcraft.tokens import create_token

from .test_serve import conforms

JSON = {"Content-Type": "application/json"}


def game(mid: str, a: str, b: str, day: int, score: float = 1) -> dict[str, Any]:
    return {
        "id": mid,
        "played_at": f"2024-05-{day:02d}T12:00:00Z",
        "teams": [[a], [b]],
        "scores": [score, 1 - score],
    }


MATCHES = [
    game("m1", "ann", "bo", 1),
    game("m2", "bo", "cy", 2),
    game("m3", "ann", "cy", 3, 0),
    game("m4", "ann", "bo", 4, 0.5),
    game("m5", "cy", "dee", 5),
    game("m6", "bo", "ann", 6),
]


@pytest.fixture(params=["memory", "sqlite"])
def league(request: pytest.FixtureRequest, tmp_path: Path) -> rankcraft.League:
    """A league holding MATCHES, in memory or in an SQLite file."""
    if request.param == "memory":
        made = rankcraft.League("elo")
    else:
        made = rankcraft.League.open(str(tmp_path / "league.sqlite"), "elo")
    made.record_many(MATCHES)
    return made


def client_of(league: rankcraft.League, scope: str = "record", name: str = "ingest") -> TestClient:
    _, secret = create_token(league.store, scope=scope, name=name)
    return TestClient(create_app(league), headers={"Authorization": f"Bearer {secret}"})


def replayed(matches: list[dict[str, Any]]) -> rankcraft.League:
    """A league that recorded ``matches`` (in time order) from scratch."""
    reference = rankcraft.League("elo")
    reference.record_many(sorted(matches, key=lambda m: m["played_at"]))
    return reference


def players_of(league: rankcraft.League) -> dict[str, dict[str, Any]]:
    return {r.id: league.codec.record_to_dict(r) for r in league.players()}


def shown(league: rankcraft.League, player: str) -> dict[str, Any]:
    record = league.player(player)
    return {
        "value": league.display.value(record.skill, record.rank),
        "skill": league.display.skill(record.skill),
        "tier": league.codec.tier(record),
        "matches": record.matches,
    }


def test_void_answers_the_edit_and_the_league_is_a_replay_without_the_match(
    league: rankcraft.League,
) -> None:
    with client_of(league) as client:
        answer = client.post("/matches/m3/void", json={"reason": "result was entered twice"})
        assert answer.status_code == 200, answer.text
        edit = answer.json()
        document = client.get("/openapi.json").json()
        conforms(edit, {"$ref": "#/components/schemas/Edit"}, document)
        reference = replayed([m for m in MATCHES if m["id"] != "m3"])
        assert players_of(league) == players_of(reference)
        assert (edit["n"], edit["kind"], edit["match_id"]) == (1, "void", "m3")
        assert (edit["reason"], edit["by"], edit["new"]) == (
            "result was entered twice",
            "ingest",
            None,
        )
        assert edit["old"] == rankcraft.parse_match(MATCHES[2]).to_dict()
        assert edit["rerated"] == 3  # m4, m5, m6 rated again
        after = {c["player"]: c["after"] for c in edit["changes"]}
        assert sorted(after) == ["ann", "bo", "cy", "dee"]
        for player, moved in after.items():
            assert moved == shown(reference, player)
        before = {c["player"]: c["before"] for c in edit["changes"]}
        assert before["ann"]["matches"] == 4 and after["ann"]["matches"] == 3
        # the service's reads answer as the reference does
        player = client.get("/players/cy").json()
        assert player["player"] == reference.codec.record_to_dict(reference.player("cy"))
        board = client.get("/leaderboard").json()
        assert [(r["id"], r["skill"]) for r in board] == [
            (r.id, reference.codec.record_to_dict(r)["skill"]) for r in reference.leaderboard()
        ]
        assert client.get("/matches/m3").status_code == 404
        assert client.get("/edits").json() == [edit]


def test_correct_answers_the_edit_and_the_league_is_a_replay_of_the_corrected_match(
    league: rankcraft.League,
) -> None:
    with client_of(league, name="scorer") as client:
        answer = client.post(
            "/matches/m2/correct", json={"fields": {"scores": [0, 1]}, "reason": "swapped"}
        )
        assert answer.status_code == 200, answer.text
        edit = answer.json()
        corrected = [dict(m, scores=[0, 1]) if m["id"] == "m2" else m for m in MATCHES]
        reference = replayed(corrected)
        assert players_of(league) == players_of(reference)
        assert (edit["kind"], edit["by"], edit["rerated"]) == ("correct", "scorer", 5)
        assert edit["old"]["scores"] == [1.0, 0.0] and edit["new"]["scores"] == [0.0, 1.0]
        assert {c["player"]: c["after"] for c in edit["changes"]} == {
            p: shown(reference, p) for p in ("ann", "bo", "cy", "dee")
        }
        # a new time moves the match: m1 now after m4
        moved = client.post(
            "/matches/m1/correct",
            json={"fields": {"played_at": "2024-05-04T18:00:00Z"}, "reason": "clock was off"},
        )
        assert moved.status_code == 200, moved.text
        corrected = [
            dict(m, played_at="2024-05-04T18:00:00Z") if m["id"] == "m1" else m for m in corrected
        ]
        assert players_of(league) == players_of(replayed(corrected))
        assert moved.json()["rerated"] == 6  # from the first place: m2 ... m6 and m1
        match = client.get("/matches/m1").json()["match"]
        assert match["played_at"] == "2024-05-04T18:00:00Z"
        assert [e["n"] for e in client.get("/edits?match=m1").json()] == [2]
        assert [e["match_id"] for e in client.get("/edits", params={"player": "cy"}).json()] == [
            "m2"
        ]
        assert client.get("/edits?player=nobody").json() == []
        document = client.get("/openapi.json").json()
        conforms(client.get("/edits").json(), {"$ref": "#/components/schemas/Edits"}, document)


def test_writes_need_a_record_token(league: rankcraft.League) -> None:
    _, read = create_token(league.store, scope="read", name="reader")
    before = league.export()
    with TestClient(create_app(league)) as client:
        for path, body in [
            ("/matches/m1/void", {"reason": "x"}),
            ("/matches/m1/correct", {"fields": {"scores": [0, 1]}, "reason": "x"}),
        ]:
            answer = client.post(path, json=body)
            assert answer.status_code == 401
            assert answer.json()["error"]["field"] == "Authorization"
            assert "needs a token of scope 'record'" in answer.json()["error"]["message"]
            answer = client.post(path, json=body, headers={"Authorization": f"Bearer {read}"})
            assert answer.status_code == 403
            assert "'reader' has scope 'read'; this needs 'record'" in answer.text
        assert client.get("/edits").json() == []
        assert league.export() == before
        assert league.edits() == []


def test_refused_edits_change_nothing(league: rankcraft.League) -> None:
    with client_of(league) as client:
        assert client.post("/matches/m5/void", json={"reason": "no-show"}).status_code == 200
        before, edits = league.export(), client.get("/edits").json()
        cases: list[tuple[str, Any, int, str, str | None, str]] = [
            ("/matches/nope/void", {"reason": "x"}, 404, "NotFoundError", None, "'nope'"),
            ("/matches/m5/void", {"reason": "again"}, 409, "Conflict", "match_id", "void already"),
            (
                "/matches/m5/correct",
                {"fields": {"scores": [0, 1]}, "reason": "x"},
                409,
                "Conflict",
                "match_id",
                "void already",
            ),
            ("/matches/m1/void", {}, 400, "InputError", "reason", "'reason'"),
            ("/matches/m1/void", {"reason": "   "}, 400, "RequestError", "reason", "'   '"),
            ("/matches/m1/void", {"reason": 7}, 400, "InputError", "reason", ": 7"),
            ("/matches/m1/void", [], 400, "InputError", None, "JSON object"),
            ("/matches/m1/void", {"reason": "x", "by": "me"}, 400, "RequestError", "by", "'by'"),
            (
                "/matches/m1/correct",
                {"fields": {"winner": 0}, "reason": "x"},
                400,
                "RequestError",
                "fields.winner",
                "'winner'",
            ),
            (
                "/matches/m1/correct",
                {"fields": {"id": "m9"}, "reason": "x"},
                400,
                "RequestError",
                "fields.id",
                "'m9'",
            ),
            (
                "/matches/m1/correct",
                {"fields": {}, "reason": "x"},
                400,
                "RequestError",
                "fields",
                "at least one",
            ),
            (
                "/matches/m1/correct",
                {"fields": {"scores": [1, 0, 0]}, "reason": "x"},
                400,
                "MatchError",
                "scores",
                "[1, 0, 0]",
            ),
            (
                "/matches/m1/correct",
                {"fields": {"played_at": "yesterday"}, "reason": "x"},
                400,
                "MatchError",
                "fields.played_at",
                "'yesterday'",
            ),
            (
                "/matches/m1/correct",
                {"fields": {"played_at": "2999-01-01"}, "reason": "x"},
                400,
                "LimitError",
                "fields.played_at",
                "later than the server's clock",
            ),
            (
                "/matches/m1/correct",
                {"fields": {"teams": [["a"]] * 65}, "reason": "x"},
                400,
                "LimitError",
                "fields.teams",
                "65",
            ),
            ("/matches/m1/correct", {"reason": "x"}, 400, "InputError", "fields", "'fields'"),
        ]
        document = client.get("/openapi.json").json()
        for path, body, status, kind, field, said in cases:
            answer = client.post(path, json=body)
            error = answer.json()["error"]
            template = "/matches/{match_id}/" + path.rsplit("/", 1)[1]
            assert str(status) in document["paths"][template]["post"]["responses"]
            conforms(answer.json(), {"$ref": "#/components/schemas/Error"}, document)
            assert (answer.status_code, error["status"], error["type"]) == (status, status, kind), (
                path,
                body,
                answer.text,
            )
            assert error["field"] == field, (body, error)
            assert said in error["message"], (body, error)
        answer = client.post("/matches/m1/void", content=b"{", headers=JSON)
        assert answer.status_code == 400
        answer = client.post("/matches/m1/void", content=json.dumps({"reason": "x"}))
        assert answer.status_code == 415
        assert league.export() == before
        assert client.get("/edits").json() == edits
        assert client.get("/edits?match=").json()["error"]["field"] == "match"


def test_at_answers_as_a_league_of_the_matches_up_to_then(league: rankcraft.League) -> None:
    with client_of(league) as client:
        assert client.post("/matches/m2/void", json={"reason": "forfeit"}).status_code == 200
        kept = [m for m in MATCHES if m["id"] != "m2"]
        for at in ("2024-05-03T12:00:00Z", "2024-05-04", "2024-05-05T12:00:00+02:00"):
            moment = rankcraft.io.parse_time(at, field="at")
            then = replayed([m for m in kept if rankcraft.io.parse_time(m["played_at"]) <= moment])
            board = client.get("/leaderboard", params={"at": at}).json()
            assert [(r["place"], r["id"], r["matches"]) for r in board] == [
                (i + 1, r.id, r.matches) for i, r in enumerate(then.leaderboard())
            ]
            assert [r["display"] for r in board] == [
                then.shown(r).to_dict() for r in then.leaderboard()
            ]
            for player in ("ann", "bo"):
                answer = client.get(f"/players/{player}", params={"at": at}).json()
                assert answer == {
                    "player": then.codec.record_to_dict(then.player(player)),
                    "standing": None,
                    "display": then.shown(player).to_dict(),
                }
        # before a player's first match: unknown then; before any: an empty board
        assert client.get("/players/dee?at=2024-05-04").status_code == 404
        assert client.get("/leaderboard?at=2024-04-01").json() == []
        # with paging and now (no at): as the league is
        top = client.get("/leaderboard?at=2030-01-01&top=2").json()
        assert top == client.get("/leaderboard?top=2").json()
        for url in ("/leaderboard?at=soon", "/players/ann?at=2024-13-01", "/leaderboard?at="):
            answer = client.get(url)
            assert answer.status_code == 400, url
            assert answer.json()["error"]["field"] == "at"


def test_the_web_page_lists_the_player_s_corrections(league: rankcraft.League) -> None:
    with client_of(league) as client:
        client.post("/matches/m3/void", json={"reason": "wrong players"})
        client.post("/matches/m4/correct", json={"fields": {"scores": [1, 0]}, "reason": "typo"})
        ann = client.get("/web/players/ann").json()
        assert [(e["kind"], e["match_id"], e["reason"]) for e in ann["corrections"]] == [
            ("void", "m3", "wrong players"),
            ("correct", "m4", "typo"),
        ]
        assert [m["id"] for m in ann["matches"]] == ["m1", "m4", "m6"]
        dee = client.get("/web/players/dee").json()
        assert dee["corrections"] == []
        page = client.get("/").text
        assert 'id="player-corrections"' in page
        assert "renderCorrections" in client.get("/static/app.js").text


def test_the_document_lists_the_corrections() -> None:
    league = rankcraft.League("elo")
    with TestClient(create_app(league)) as client:
        document = client.get("/openapi.json").json()
    paths = document["paths"]
    void = paths["/matches/{match_id}/void"]["post"]
    assert void["security"] == [{"bearer": ["record"]}]
    assert void["requestBody"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/Void"
    }
    assert {"200", "401", "403", "404", "409"} <= set(void["responses"])
    correct = paths["/matches/{match_id}/correct"]["post"]
    assert correct["requestBody"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/Correction"
    }
    assert [p["name"] for p in paths["/edits"]["get"]["parameters"]] == ["match", "player"]
    assert "at" in [p["name"] for p in paths["/players/{player_id}"]["get"]["parameters"]]
    schemas = document["components"]["schemas"]
    assert schemas["Correction"]["required"] == ["fields", "reason"]
    assert schemas["Edit"]["properties"]["kind"]["enum"] == ["void", "correct", "late"]


@pytest.mark.parametrize("late", ["refuse", "rerate"])
def test_a_late_match_over_http_as_the_ruleset_says(tmp_path: Path, late: str) -> None:
    ruleset = tmp_path / "elo-late.toml"
    ruleset.write_text(f'name = "elo-late"\n[update]\nplugin = "elo"\n[history]\nlate = "{late}"\n')
    league = rankcraft.League(str(ruleset))
    league.record_many(MATCHES)
    early = game("m0", "ann", "bo", 1, 0) | {"played_at": "2024-04-30T12:00:00Z"}
    with client_of(league) as client:
        before = league.export()
        answer = client.post("/matches", json=early)
        if late == "refuse":
            assert answer.status_code == 409
            assert answer.json()["error"]["type"] == "LateMatchError"
            assert answer.json()["error"]["field"] == "played_at"
            assert league.export() == before
            assert client.get("/edits").json() == []
            return
        assert answer.status_code == 201, answer.text
        reference = rankcraft.League(str(ruleset))
        reference.record_many([early, *MATCHES])
        assert players_of(league) == players_of(reference)
        edits = client.get("/edits?match=m0").json()
        assert [(e["kind"], e["reason"], e["old"]) for e in edits] == [("late", "late", None)]
        assert edits[0]["new"] == rankcraft.parse_match(early).to_dict()
        assert edits[0]["by"] == "ingest"  # (the token's name)
        ann = client.get("/web/players/ann").json()
        assert [e["kind"] for e in ann["corrections"]] == ["late"]


def test_a_batch_with_a_late_match_under_rerate_places_it(tmp_path: Path) -> None:
    ruleset = tmp_path / "elo-late.toml"
    ruleset.write_text('name = "elo-late"\n[update]\nplugin = "elo"\n[history]\nlate = "rerate"\n')
    league = rankcraft.League(str(ruleset))
    league.record_many(MATCHES)
    early = game("e0", "ann", "bo", 1, 0) | {"played_at": "2024-04-30T12:00:00Z"}
    fresh = game("e1", "ann", "bo", 30, 0)
    with client_of(league) as client:
        answer = client.post("/matches/batch", json={"matches": [early, fresh]})
        assert answer.status_code == 201, answer.text
        assert [r["match_id"] for r in answer.json()["reports"]] == ["e0", "e1"]
        again = client.post("/matches/batch", json={"matches": [early]})
        assert again.status_code == 409 and again.json()["errors"][0]["index"] == 0
    reference = rankcraft.League(str(ruleset))
    reference.record_many([early, *MATCHES, fresh])
    assert players_of(league) == players_of(reference)


def test_the_league_as_of_a_time_needs_a_token() -> None:
    """``?at=`` replays the history on the league's thread: an anonymous visitor may
    not ask for it, even where reads need no token."""
    league = rankcraft.League("elo")
    league.record_many(MATCHES)
    anonymous = TestClient(create_app(league))
    for path in ("/leaderboard?at=2024-05-03T00:00:00Z", "/players/ann?at=2024-05-03T00:00:00Z"):
        answer = anonymous.get(path)
        assert answer.status_code == 401 and answer.json()["error"]["field"] == "Authorization"
        assert anonymous.get(path.split("?")[0]).status_code == 200
    with client_of(league, scope="read", name="reader") as client:
        board = client.get("/leaderboard?at=2024-05-03T00:00:00Z").json()
    assert {row["id"] for row in board} == {"ann", "bo", "cy"}
