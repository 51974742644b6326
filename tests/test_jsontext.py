"""The strict JSON decoder: what it refuses, where it says, and that it reads the rest as
json.loads does."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rankcraft.errors import InputError
from rankcraft.jsontext import JSONTextError, loads_strict


@pytest.mark.parametrize(
    ("text", "message", "field", "position"),
    [
        (b'{"id": "m\xff1"}', r"byte 9 \(b'\\xff'\) is not UTF-8 text", None, 9),
        ('{"scores": [NaN, 0]}', r"NaN is not a JSON number \(line 1, column 13\)", None, 12),
        ('{"s": "NaN", "w": Infinity}', r"Infinity is not a JSON number", None, 18),
        ("[1,\n -Infinity]", r"-Infinity is not a JSON number \(line 2, column 2\)", None, 5),
        ('{"scores": [1e400, 0]}', r"the number 1e400 is too large for a double", None, 12),
        ('{"scores": [-1.5e999, 0]}', r"the number -1.5e999 is too large", None, 12),
        ('{"x": 1, "scores": [1' + "0" * 400 + ", 0]}", r"the integer 100000000000.", None, 20),
        ("[" + "9" * 5000 + "]", r"an integer of 5000 digits is longer than 4300", None, 1),
        ('{"id": "a\\ud800"}', r"'id' holds a lone surrogate \(\\ud800\)", "id", None),
        (
            '{"teams": [["a"], ["\\udfff"]]}',
            r"'teams\[1\]\[0\]' holds a lone surrogate",
            "teams[1][0]",
            None,
        ),
        ('{"id": "a\\u0000b"}', r"'id' holds a NUL character", "id", None),
        ('{"meta": {"k\\u0000": 1}}', r"the key 'k\\x00' holds a NUL", "meta.k\x00", None),
        ('{"id": "a", "id": "b"}', r"the key 'id' appears twice in one object", None, None),
        ('{"id": "a",}', r"not JSON: Expecting property name .* \(line 1, column 12\)", None, 11),
        ("\ufeff{}", r"not JSON: Unexpected UTF-8 BOM", None, 0),
        (
            "[" * 65 + "]" * 65,
            r"arrays and objects nest deeper than 64 \(line 1, column 65\)",
            None,
            64,
        ),
        ("[" * 100_000, r"arrays and objects nest deeper than 64", None, 64),
        ('{"a": "[[[[", "b": ' + "[" * 63 + "]" * 63 + "}", None, None, None),  # depth 64
    ],
)
def test_refusals_name_the_place(
    text: str | bytes, message: str | None, field: str | None, position: int | None
) -> None:
    if message is None:
        assert loads_strict(text, what="match")["a"] == "[[[["
        return
    with pytest.raises(JSONTextError, match=r"^match: " + message) as caught:
        loads_strict(text, what="match")
    assert isinstance(caught.value, InputError)
    assert caught.value.field == field
    assert caught.value.position == position


def test_the_good_surrogate_pairs_and_escapes_are_read() -> None:
    text = '{"id": "\\ud83c\\udfc6 \\u00e9\\\\ud800", "n": [1.5, -2, 0, 1e308]}'
    assert loads_strict(text, what="x") == json.loads(text)
    assert loads_strict(text.encode(), what="x")["id"] == "\U0001f3c6 é\\ud800"


def test_the_limits_can_be_changed() -> None:
    with pytest.raises(JSONTextError, match="nest deeper than 2"):
        loads_strict("[[[1]]]", what="x", max_depth=2)
    with pytest.raises(JSONTextError, match="an integer of 4 digits is longer than 3"):
        loads_strict("[1234]", what="x", max_digits=3)


def test_a_mebibyte_of_brackets_is_read_whole() -> None:
    # Its speed is a benchmark's business (benchmarks/serve.py), not a timed assertion.
    flat = "[" + ",".join(["[]"] * 300_000) + "]"  # ~900 KB, depth 2
    assert loads_strict(flat, what="x") == [[]] * 300_000


VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(10**30), 10**30)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(st.characters(exclude_categories=["Cs"], exclude_characters="\x00"), max_size=8),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(
            st.text(
                st.characters(exclude_categories=["Cs"], exclude_characters="\x00"), max_size=6
            ),
            children,
            max_size=4,
        )
    ),
    max_leaves=20,
)


@given(VALUES, st.booleans())
def test_what_it_accepts_it_reads_as_json_loads_does(value: Any, ascii_only: bool) -> None:
    text = json.dumps(value, ensure_ascii=ascii_only)
    assert loads_strict(text, what="x") == json.loads(text)
    assert loads_strict(text.encode(), what="x") == json.loads(text)


# -- where rankcraft reads JSON from outside ----------------------------------------------

GAME = '{"id": "m1", "played_at": "2024-05-01", "teams": [["a"], ["b"]], "scores": [%s, 0]}'


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ((GAME % "NaN").encode(), "NaN is not a JSON number"),
        ((GAME % "1e400").encode(), "the number 1e400 is too large for a double"),
        ((GAME % ("1" + "0" * 400)).encode(), "the integer 10000000000.* is too large"),
        ((GAME % ("1" * 5000)).encode(), "an integer of 5000 digits is longer than 4300"),
        (b"[" * 5000 + b"]" * 5000, "arrays and objects nest deeper than 64"),
        ((GAME % "1").replace('"m1"', '"m\\ud800"').encode(), "'id' holds a lone surrogate"),
        (
            (GAME % "1").replace('"a"', '"a\\u0000"').encode(),
            r"'teams\[0\]\[0\]' holds a NUL character",
        ),
        ((GAME % "1").replace('"m1"', '"m1", "id": "m2"').encode(), "the key 'id' appears twice"),
        ((GAME % "1").replace("m1", "m\xe9").encode("latin-1"), r"byte 9 \(b'\\xe9'\)"),
    ],
)
def test_the_service_answers_400_and_stores_nothing(body: bytes, message: str) -> None:
    from starlette.testclient import TestClient

    import rankcraft
    from rankcraft.serve import create_app
    from rankcraft.tokens import create_token

    league = rankcraft.League("elo")
    _, token = create_token(league.store, scope="record")
    headers = {"Content-Type": "application/json", "Authorization": f"Bearer {token}"}
    with TestClient(create_app(league)) as client:
        answer = client.post("/matches", content=body, headers=headers)
    assert answer.status_code == 400, answer.text
    error = answer.json()["error"]
    assert error["type"] == "JSONTextError"
    assert error["message"].startswith("the request body: ")

    assert re.search(message, error["message"]), error["message"]
    assert league.match_count == 0


def test_import_refuses_a_document_with_nan_and_creates_nothing(tmp_path: Any) -> None:
    from rankcraft.cli import main

    document = tmp_path / "state.json"
    document.write_text('{"ruleset": "elo", "players": [{"id": "a", "skill": {"rating": NaN}}]}')
    db = tmp_path / "new.sqlite"
    import io

    err = io.StringIO()
    assert main(["import", str(document), "--db", str(db)], out=io.StringIO(), err=err) == 2
    assert f"{document}: NaN is not a JSON number (line 1, column 64)" in err.getvalue()
    assert not db.exists()
