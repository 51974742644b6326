"""The service's OpenAPI document is generated from what validates and answers requests:
the request bodies' field specs, the match declaration parse_match reads, the league's
state classes and the table of operations (rankcraft.openapi, rankcraft.fields)."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import re
from pathlib import Path
from typing import Any, Literal

import attrs
import pytest
from hypothesis import example, given, settings
from starlette.testclient import TestClient

import rankcraft
import rankcraft.serve.parsing as parsing
from rankcraft.errors import InputError, MatchError
from rankcraft.fields import Body, Field, state_schema
from rankcraft.io import MATCH, MATCH_KEYS, parse_match
from rankcraft.serve import OPERATIONS, Settings, create_app, openapi_document, request_bodies
from rankcraft.serve.predict import PredictRoutes
from rankcraft.tokens import create_token

from .test_robustness import mutated_matches
from .test_serve import conforms, game

ROOT = Path(__file__).resolve().parents[1]


def token_client(league: rankcraft.League, scope: str = "admin", **kwargs: Any) -> TestClient:
    _, token = create_token(league.store, scope=scope)
    return TestClient(
        create_app(league, Settings(**kwargs)), headers={"Authorization": f"Bearer {token}"}
    )


def fits(value: Any, schema: dict[str, Any], document: dict[str, Any] | None = None) -> bool:
    try:
        conforms(value, schema, document or {})
    except AssertionError:
        return False
    return True


# -- request bodies: one spec, two uses ----------------------------------------------------


def test_a_field_added_to_a_body_spec_changes_validation_and_schema(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    plain = rankcraft.League("elo")
    with token_client(plain, "read") as client:
        schema = client.get("/openapi.json").json()["components"]["schemas"]["Prediction"]
        assert "label" not in schema["properties"]
        refused = client.post("/predict", json={"sides": [["a"], ["b"]], "label": "x"})
        assert refused.status_code == 400
        assert refused.json()["error"]["type"] == "RequestError"

    def with_label(settings: Settings) -> dict[str, Body]:
        bodies = request_bodies(settings)
        label = Field("label", "string", min_length=2, must="a label", description="a note")
        prediction = bodies["Prediction"]
        bodies["Prediction"] = attrs.evolve(prediction, fields=[*prediction.fields, label])
        return bodies

    monkeypatch.setattr(parsing, "request_bodies", with_label)
    with token_client(rankcraft.League("elo"), "read") as client:
        document = client.get("/openapi.json").json()
        schema = document["components"]["schemas"]["Prediction"]
        assert schema["properties"]["label"] == {
            "type": "string",
            "description": "a note",
            "minLength": 2,
        }
        accepted = client.post("/predict", json={"sides": [["a"], ["b"]], "label": "xy"})
        assert accepted.status_code == 200, accepted.text
        short = client.post("/predict", json={"sides": [["a"], ["b"]], "label": "x"})
        assert short.status_code == 400
        error = short.json()["error"]
        assert (error["type"], error["field"]) == ("InputError", "label")
        assert error["message"] == "'label' must be a label: 'x'"
        assert not fits({"sides": [["a"], ["b"]], "label": "x"}, schema)


def test_the_limits_in_the_schemas_are_the_ones_enforced() -> None:
    league = rankcraft.League("elo")
    with token_client(league, max_sides=3, max_players=4) as client:
        schemas = client.get("/openapi.json").json()["components"]["schemas"]
        for schema, key in ((schemas["Prediction"], "sides"), (schemas["Match"], "teams")):
            assert schema["properties"][key]["maxItems"] == 3
            assert "4 players" in schema["properties"][key]["description"]
        four = [["a"], ["b"], ["c"], ["d"]]
        answer = client.post("/predict", json={"sides": four})
        assert answer.json()["error"]["type"] == "LimitError"
        assert not fits({"sides": four}, schemas["Prediction"])
        answer = client.post("/matches", json={**game("m", "a", "b"), "teams": four})
        assert answer.json()["error"]["type"] == "LimitError"


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ([], None),
        ({}, "sides"),
        ({"sides": "ab"}, "sides"),
        ({"sides": [["a"]]}, "sides"),
        ({"sides": [["a"], []]}, "sides[1]"),
        ({"sides": [["a"], [""]]}, "sides[1][0]"),
        ({"sides": [["a"], ["b"]], "at": 7}, "at"),
        ({"sides": [["a"], ["b"]], "home": -1}, "home"),
        ({"sides": [["a"], ["b"]], "home": True}, "home"),
        ({"sides": [["a"], ["b"]], "home": 2}, "home"),  # across fields: not in the schema
    ],
)
def test_a_refused_prediction_is_one_the_schema_refuses(body: Any, field: str | None) -> None:
    prediction = request_bodies(Settings())["Prediction"]
    with pytest.raises(InputError) as caught:
        prediction.check(body)
        asyncio.run(PredictRoutes(rankcraft.League("elo"), Settings()).predict_sides(body))
    assert caught.value.field == field
    assert fits(body, prediction.schema()) == (field == "home" and body.get("home") == 2)


def test_the_season_event_body() -> None:
    event = request_bodies(Settings())["SeasonEvent"]
    assert event.schema()["required"] == ["kind"]
    for bad in ({}, {"kind": 3}, {"kind": "soft", "at": 1}):
        with pytest.raises(InputError):
            event.check(bad)
        assert not fits(bad, event.schema())
    assert event.check({"kind": "soft", "at": None, "extra": 1})  # (open, as it always was)


# -- the match: declared once, validated by parse_match -----------------------------------


def test_the_match_schema_has_the_keys_parse_match_allows() -> None:
    schema = MATCH.schema()
    assert set(schema["properties"]) == MATCH_KEYS
    assert schema["additionalProperties"] is False
    assert set(schema["required"]) == {"id", "played_at", "teams"}
    served = openapi_document(rankcraft.League("elo"))["components"]["schemas"]["Match"]
    assert set(served["properties"]) == MATCH_KEYS


def test_the_match_table_of_the_design_documents_the_declaration() -> None:
    text = (ROOT / "docs" / "design.md").read_text("utf-8")
    section = text.split("## The match document", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| `(\w+)` \| ([^|]+) \|", section, flags=re.MULTILINE)
    assert {key for key, _ in rows} == MATCH_KEYS
    assert {key for key, required in rows if required.strip() == "yes"} == {
        f.name for f in MATCH.fields if f.required
    }


PROBES: list[Any] = [
    None,
    True,
    0,
    1,
    -1,
    2,
    0.5,
    1.5,
    "",
    "x",
    "a",
    "2024-05-01",
    [],
    [1],
    [1, 0],
    [0, 1],
    [1, 1],
    [1.5, 0],
    [True, 0],
    ["a"],
    ["a", "a"],
    ["x"],
    [[]],
    [["a"]],
    [["a"], ["b"]],
    [["a"], [""]],
    [["a"], ["a"]],
    [["x"], ["y"]],
    [[0], [0]],
    [[1], [-1]],
    [[1.5], [0]],
    [["a"], ["b"], ["c"]],
    {},
    {"p": 0.5},
]
ACROSS_FIELDS = {
    # what the schema lets through and parse_match refuses, by a rule across keys or
    # beyond JSON types (the descriptions say each): a real date, no player twice, one
    # score or rank per side, seconds_played shaped like teams, quit players in teams,
    # home a side
    ("played_at", "x"),
    ("played_at", "a"),
    ("played_at", ""),
    ("teams", "[['a'], ['a']]"),
    ("teams", "[['a'], ['b'], ['c']]"),
    ("home", "2"),
    ("quit", "['x']"),
}


def probe_agreement(key: str, value: Any) -> tuple[bool, bool]:
    base = {"id": "m", "played_at": "2024-05-01", "teams": [["a"], ["b"]], "scores": [1, 0]}
    data = {**base, key: value}
    if key == "ranks" and value is not None:
        data.pop("scores")
    try:
        parse_match(data)
        parsed = True
    except MatchError:
        parsed = False
    return fits(data, MATCH.schema()), parsed


@pytest.mark.parametrize("key", sorted(MATCH_KEYS))
def test_the_match_schema_agrees_with_parse_match_on_probes(key: str) -> None:
    disagree = []
    for value in PROBES:
        in_schema, parsed = probe_agreement(key, value)
        if parsed:
            assert in_schema, f"parse_match takes {key}={value!r}; the schema refuses it"
        elif in_schema and (key, str(value)) not in ACROSS_FIELDS:
            short = key in ("scores", "ranks", "seconds_played") and isinstance(value, list)
            if not (short and len(value) != 2):  # one per side: across fields
                disagree.append(value)
    assert not disagree, f"the schema lets {key}= {disagree} through; parse_match refuses"


@settings(max_examples=300)
@given(mutated_matches())
@example(  # (found by the fuzzer: a score past 2**53, where x - 1 == x)
    {"id": "g", "played_at": "2024-01-02", "teams": [["a"], ["c"]], "scores": [0, 2.0**53 + 4]}
)
def test_every_match_parse_match_takes_fits_the_schema(data: Any) -> None:
    try:
        parse_match(data)
    except MatchError:
        return
    assert fits(data, MATCH.schema())


# -- state classes -----------------------------------------------------------------------


@attrs.frozen
class Made:
    """A state for the test.

    Attributes:
        rating: the rating, over
            two lines.
        count, streak: two whole numbers.
        tier: a name.
        weekly: a list.
        seasons: pairs.
        best: maybe a number.
        mode: one of two.
    """

    rating: float
    count: int
    streak: int
    tier: str
    weekly: tuple[int, ...]
    seasons: tuple[tuple[str, float], ...]
    best: float | None
    mode: Literal["a", "b"]


def test_a_state_schema_comes_from_the_attrs_fields() -> None:
    schema = state_schema(Made)
    assert schema["required"] == [f.name for f in attrs.fields(Made)]
    props = schema["properties"]
    assert props["rating"] == {"type": "number", "description": "the rating, over two lines."}
    assert props["count"]["type"] == props["streak"]["type"] == "integer"
    assert props["count"]["description"] == "two whole numbers."
    assert props["weekly"]["items"] == {"type": "integer"}
    assert props["seasons"]["items"]["prefixItems"] == [{"type": "string"}, {"type": "number"}]
    assert props["best"]["type"] == ["number", "null"]
    assert props["mode"]["enum"] == ["a", "b"]
    made = Made(1.0, 2, 3, "x", (1,), (("s", 1.0),), None, "a")
    value = json.loads(json.dumps(attrs.asdict(made)))  # as JSON writes it: tuples are lists
    assert fits(value, schema)
    assert not fits({**value, "weekly": [1.5]}, schema)
    assert not fits({**value, "other": 1}, schema)


@pytest.mark.parametrize("name", ["elo", "skyweaver", "team-wager", "inversus"])
def test_the_state_schemas_are_the_league_s_classes(name: str) -> None:
    league = rankcraft.League(name)
    schemas = openapi_document(league)["components"]["schemas"]
    assert list(schemas["Skill"]["properties"]) == [
        f.name for f in attrs.fields(league.skill_class)
    ]
    if league.rank_class is None:
        assert schemas["Rank"]["type"] == "null"
    else:
        assert list(schemas["Rank"]["properties"]) == [
            f.name for f in attrs.fields(league.rank_class)
        ]


# -- statuses ----------------------------------------------------------------------------


def statuses(document: dict[str, Any], path: str, method: str) -> set[int]:
    return {int(code) for code in document["paths"][path][method]["responses"]}


def test_every_error_the_service_answers_is_listed_where_it_happens() -> None:
    league = rankcraft.League("skyweaver")
    _, reader = create_token(league.store, scope="read")
    cases = [
        ("post", "/matches", "/matches", {"json": {}}, 400),
        ("post", "/matches", "/matches", {"json": {}, "headers": {"Authorization": ""}}, 401),
        ("post", "/reset", "/reset", {"json": {"kind": "soft"}, "reader": True}, 403),
        ("get", "/matches/nothing", "/matches/{match_id}", {}, 404),
        ("get", "/players/nobody", "/players/{player_id}", {}, 404),
        ("put", "/matches", "/matches", {}, 405),
        ("post", "/matches", "/matches", {"json": game("m0", "a", "b")}, 409),
        ("post", "/predict", "/predict", {"content": b"[" + b" " * 5000 + b"]"}, 413),
        ("post", "/predict", "/predict", {"content": b"{}"}, 415),
        ("get", "/leaderboard?top=x", "/leaderboard", {}, 400),
        ("get", "/predict?side=a", "/predict", {}, 400),
        ("post", "/reset", "/reset", {"json": {"kind": "never"}}, 400),
    ]
    with token_client(league, max_body=4096, auth_reads=True) as client:
        document = client.get("/openapi.json").json()
        assert client.post("/matches", json=game("m0", "a", "b")).status_code == 201
        for method, url, path, kwargs, status in cases:
            if kwargs.pop("reader", False):
                kwargs["headers"] = {"Authorization": f"Bearer {reader}"}
            if "content" in kwargs:
                kwargs.setdefault("headers", {})["Content-Type"] = (
                    "text/plain" if status == 415 else "application/json"
                )
            answer = client.request(method.upper(), url, **kwargs)
            assert answer.status_code == status, (url, answer.text)
            listed = {m: statuses(document, path, m) for m in document["paths"][path]}
            if status == 405:
                assert all(405 in codes for codes in listed.values())
            else:
                assert status in listed[method], (method, path, status)
            conforms(answer.json(), {"$ref": "#/components/schemas/Error"}, document)


def test_a_failure_of_the_service_is_a_listed_500(monkeypatch: pytest.MonkeyPatch) -> None:
    league = rankcraft.League("elo")

    def broken(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError("broken")

    monkeypatch.setattr(league, "placed", broken)
    with TestClient(create_app(league), raise_server_exceptions=False) as client:
        document = client.get("/openapi.json").json()
        answer = client.get("/leaderboard")
    assert answer.status_code == 500
    assert answer.json()["error"]["type"] == "RuntimeError"
    for path, ops in document["paths"].items():
        for method in ops:
            assert {405, 500} <= statuses(document, path, method), (path, method)


@pytest.mark.parametrize("auth_reads", [False, True])
def test_token_errors_are_listed_where_a_token_is_needed(auth_reads: bool) -> None:
    document = openapi_document(rankcraft.League("elo"), Settings(auth_reads=auth_reads))
    for op in OPERATIONS:
        codes = statuses(document, op.path, op.method.lower())
        needs = op.scope is not None and (op.scope != "read" or auth_reads)
        assert ({401, 403} <= codes) == needs, op.path
        assert ("security" in document["paths"][op.path][op.method.lower()]) == needs
        if op.body is not None:
            assert {400, 408, 413, 415} <= codes, op.path


# -- /docs -------------------------------------------------------------------------------


def test_the_docs_page_is_served_from_the_package() -> None:
    with TestClient(create_app(rankcraft.League("elo"))) as client:
        answer = client.get("/docs")
    assert answer.status_code == 200
    assert answer.headers["content-type"].startswith("text/html")
    page = answer.text
    assert 'fetch("openapi.json")' in page
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", page)  # nothing from elsewhere
    policy = answer.headers["content-security-policy"]
    script = re.search(r"<script>(.*?)</script>", page, flags=re.DOTALL)
    assert script is not None
    digest = base64.b64encode(hashlib.sha256(script.group(1).encode()).digest()).decode()
    assert f"script-src 'sha256-{digest}'" in policy
    assert "connect-src 'self'" in policy


def test_an_open_rating_period_fits_the_player_schema(tmp_path: Path) -> None:
    ruleset = tmp_path / "g1.toml"
    ruleset.write_text(
        'name = "g1"\n[period]\nmode = "batch"\nlength_days = 7.0\norigin = "2024-01-01"\n'
        '[update]\nplugin = "glicko1"\n'
    )
    with token_client(rankcraft.League(str(ruleset))) as client:
        document = client.get("/openapi.json").json()
        assert client.post("/matches", json=game("m1", "a", "b")).status_code == 201
        player = client.get("/players/a").json()
        assert player["player"]["open"]["pending"]  # the period is open, a pairing waits
        conforms(player, {"$ref": "#/components/schemas/Standing"}, document)
        board = client.get("/leaderboard").json()
        conforms(board, {"$ref": "#/components/schemas/Leaderboard"}, document)


def test_a_query_parameter_spec_changes_validation_and_schema(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    original = parsing.query_parameters

    def top_at_most_two(settings: Settings) -> dict[str, Field]:
        params = original(settings)
        params["top"] = attrs.evolve(params["top"], maximum=2)
        return params

    league = rankcraft.League("elo")
    league.record_many(
        [
            {
                "id": f"m{i}",
                "played_at": "2024-01-01",
                "teams": [["a"], [f"b{i}"]],
                "scores": [1, 0],
            }
            for i in range(3)
        ]
    )
    with token_client(league, "read") as client:
        assert client.get("/leaderboard?top=3").status_code == 200
    monkeypatch.setattr(parsing, "query_parameters", top_at_most_two)
    with token_client(league, "read") as client:
        refused = client.get("/leaderboard?top=3")
        assert refused.status_code == 400
        assert refused.json()["error"]["message"] == "'top' must be a whole number >= 1: 3"
        assert len(client.get("/leaderboard?top=2").json()) == 2
        parameters = client.get("/openapi.json").json()["paths"]["/leaderboard"]["get"][
            "parameters"
        ]
        (top,) = [p for p in parameters if p["name"] == "top"]
        assert top["schema"]["maximum"] == 2


def test_the_leaderboard_parameters_are_the_ones_checked() -> None:
    """``/leaderboard`` documents the parameters League.leaderboard takes, and accepts a
    value exactly when its documented schema does."""
    league = rankcraft.League("elo")
    league.record(game("m1", "a", "b"))
    with token_client(league, "read") as client:
        document = client.get("/openapi.json").json()
        listed = document["paths"]["/leaderboard"]["get"]["parameters"]
        schemas = {p["name"]: p["schema"] for p in listed}
        assert list(schemas) == ["top", "offset", "active_days", "tier", "all", "holding", "at"]
        probes = [
            ("offset", "0", 0, True),
            ("offset", "-1", -1, False),
            ("active_days", "2.5", 2.5, True),
            ("active_days", "0", 0.0, True),
            ("active_days", "-0.5", -0.5, False),
            ("tier", "Gold", "Gold", True),
            ("tier", "", "", False),
            ("all", "true", True, True),
            ("all", "false", False, True),
            ("holding", "a" * 100, "a" * 100, True),
            ("holding", "a" * 101, "a" * 101, False),
        ]
        for name, text, value, ok in probes:
            answer = client.get("/leaderboard", params={name: text})
            assert fits(value, schemas[name]) is ok, (name, text)
            assert answer.status_code == (200 if ok else 400), (name, text, answer.text)
            if not ok:
                assert answer.json()["error"]["field"] == name
                assert repr(value) in answer.json()["error"]["message"]
        for name, text in [("offset", "1.5"), ("active_days", "inf"), ("all", "1")]:
            answer = client.get("/leaderboard", params={name: text})  # not of the type
            assert answer.status_code == 400
            assert answer.json()["error"]["field"] == name
            assert repr(text) in answer.json()["error"]["message"]
        conforms(client.get("/leaderboard?offset=1").json(), _ref_of("Leaderboard"), document)


def _ref_of(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}
