"""Reading matches: the match format's rules and JSON Lines files."""

from __future__ import annotations

import gzip
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import rankcraft
from rankcraft.io import parse_match, read_match_dicts, read_matches

GOOD: dict[str, Any] = {
    "id": "m1",
    "played_at": "2024-05-01T20:00:00Z",
    "teams": [["a", "b"], ["c"]],
    "scores": [2, 1],
}


def test_a_full_match() -> None:
    m = parse_match(
        {
            **GOOD,
            "seconds_played": [[60, 30], [60]],
            "quit": ["b"],
            "weight": 0.5,
            "meta": {"map": "x"},
            "forecast": {"p_team0_wins": 0.6},
        }
    )
    assert m.teams == (("a", "b"), ("c",))
    assert m.scores == (2.0, 1.0) and m.places == (1, 2) and m.ranks is None
    assert m.seconds_played == ((60, 30), (60,))
    assert m.quit == ("b",) and m.weight == 0.5
    assert m.meta == {"map": "x", "forecast": {"p_team0_wins": 0.6}}
    assert m.played_at == datetime(2024, 5, 1, 20, tzinfo=UTC)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2024-05-01", datetime(2024, 5, 1, tzinfo=UTC)),
        ("2024-05-01T20:15", datetime(2024, 5, 1, 20, 15, tzinfo=UTC)),
        ("2024-05-01T22:00:00+02:00", datetime(2024, 5, 1, 20, tzinfo=UTC)),
    ],
)
def test_times_without_zone_are_utc(text: str, expected: datetime) -> None:
    assert parse_match({**GOOD, "played_at": text}).played_at == expected


def test_places_from_scores_and_ranks() -> None:
    assert parse_match({**GOOD, "teams": [["a"], ["b"], ["c"]], "scores": [1, 3, 1]}).places == (
        2,
        1,
        2,
    )
    m = parse_match(
        {"id": "r", "played_at": "2024-01-01", "teams": [["a"], ["b"], ["c"]], "ranks": [3, 1, 3]}
    )
    assert m.places == (3, 1, 3) and m.ranks == (3, 1, 3) and m.scores is None


BAD = [
    ("not-object", [1, 2], "must be a JSON object"),
    (
        "no-id",
        {k: v for k, v in GOOD.items() if k != "id"},
        "'id' must be a non-empty string: None",
    ),
    ("unknown-key", {**GOOD, "score": [1, 0]}, "unknown key\\(s\\) 'score'"),
    ("no-time", {k: v for k, v in GOOD.items() if k != "played_at"}, "'played_at' is missing"),
    ("bad-time", {**GOOD, "played_at": "yesterday"}, "not an ISO-8601 .*'yesterday'"),
    ("one-side", {**GOOD, "teams": [["a"]], "scores": [1]}, "at least 2 sides"),
    ("empty-side", {**GOOD, "teams": [["a"], []]}, "'teams\\[1\\]' must be a non-empty list"),
    ("twice", {**GOOD, "teams": [["a", "b"], ["b"]]}, "player 'b' appears twice"),
    ("bad-id", {**GOOD, "teams": [["a", 3], ["c"]]}, "not a non-empty string: 3"),
    ("both", {**GOOD, "ranks": [1, 2]}, "exactly one of 'scores' and 'ranks'"),
    ("neither", {k: v for k, v in GOOD.items() if k != "scores"}, "exactly one of"),
    ("nan-score", {**GOOD, "scores": [float("nan"), 1]}, "finite numbers: nan"),
    ("inf-score", {**GOOD, "scores": [float("inf"), 1]}, "finite numbers: inf"),
    ("str-score", {**GOOD, "scores": ["2", 1]}, "finite numbers: '2'"),
    ("short-scores", {**GOOD, "scores": [1]}, "list of 2 numbers"),
    ("rank-zero", {**GOOD, "scores": None, "ranks": [0, 1]}, "whole numbers >= 1: 0"),
    ("seconds-shape", {**GOOD, "seconds_played": [[60], [60]]}, "shaped like 'teams'"),
    ("seconds-negative", {**GOOD, "seconds_played": [[60, -1], [60]]}, ">= 0: -1"),
    ("quit-stranger", {**GOOD, "quit": ["z"]}, "'quit' names 'z', who is not in 'teams'"),
    ("weight-zero", {**GOOD, "weight": 0}, "'weight' must be a number in \\(0, 1\\]: 0"),
    ("weight-nan", {**GOOD, "weight": float("nan")}, "'weight' must be"),
    ("meta", {**GOOD, "meta": [1]}, "'meta' must be an object"),
]


@pytest.mark.parametrize(
    ("data", "message"), [(d, m) for _, d, m in BAD], ids=[i for i, _, _ in BAD]
)
def test_bad_matches_name_field_and_value(data: Any, message: str) -> None:
    with pytest.raises(rankcraft.MatchError, match=message):
        parse_match(data)


def test_errors_name_match_and_line() -> None:
    with pytest.raises(rankcraft.MatchError) as info:
        parse_match({**GOOD, "weight": 2}, line=7)
    assert str(info.value).startswith("line 7, match 'm1': 'weight'")
    assert info.value.line == 7 and info.value.match_id == "m1"


def _write(path: Path, lines: list[str], gz: bool = False) -> Path:
    data = ("\n".join(lines) + "\n").encode()
    path.write_bytes(gzip.compress(data) if gz else data)
    return path


@pytest.mark.parametrize("gz", [False, True])
def test_reads_jsonl_and_gzip(tmp_path: Path, gz: bool) -> None:
    lines = [json.dumps({**GOOD, "id": f"m{i}"}) for i in range(3)]
    path = _write(tmp_path / ("m.jsonl.gz" if gz else "m.jsonl"), [lines[0], "", *lines[1:]], gz)
    assert [m.id for m in read_matches(path)] == ["m0", "m1", "m2"]
    assert [n for n, _ in read_match_dicts(path)] == [1, 3, 4]


def test_not_json_names_the_line(tmp_path: Path) -> None:
    path = _write(tmp_path / "m.jsonl", [json.dumps(GOOD), "{oops", json.dumps(GOOD)])
    with pytest.raises(rankcraft.MatchError, match=r"^line 2: not JSON"):
        list(read_matches(path))


def test_truncated_gzip(tmp_path: Path) -> None:
    full = gzip.compress(
        ("\n".join(json.dumps({**GOOD, "id": f"m{i}"}) for i in range(500)) + "\n").encode()
    )
    path = tmp_path / "cut.jsonl.gz"
    path.write_bytes(full[: len(full) // 2])
    with pytest.raises(rankcraft.InputError, match="truncated gzip file"):
        list(read_matches(path))


def test_corrupt_and_fake_gzip(tmp_path: Path) -> None:
    fake = tmp_path / "fake.jsonl.gz"
    fake.write_text(json.dumps(GOOD))
    with pytest.raises(rankcraft.InputError, match="not a gzip file"):
        list(read_matches(fake))
    broken = tmp_path / "broken.jsonl.gz"
    data = bytearray(gzip.compress(b"x" * 1000))
    data[20:30] = b"\xff" * 10
    broken.write_bytes(bytes(data))
    with pytest.raises(rankcraft.InputError, match="gzip"):
        list(read_matches(broken))


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(rankcraft.InputError, match="cannot read"):
        list(read_matches(tmp_path / "nope.jsonl"))


def test_round_trip_through_to_dict() -> None:
    m = parse_match(
        {
            **GOOD,
            "seconds_played": [[60, 30], [60]],
            "quit": ["b"],
            "weight": 0.5,
            "meta": {"map": "x"},
        }
    )
    again = parse_match(m.to_dict())
    assert again.to_dict() == m.to_dict()


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"scores": [10**400, 0]}, r"'scores' must hold finite numbers"),
        ({"weight": 10**400}, r"'weight' must be a number in \(0, 1\]"),
        ({"id": "m\x00"}, r"'id' holds a NUL character"),
        ({"id": "m\ud800"}, r"'id' holds a lone surrogate"),
        ({"teams": [["a\x00"], ["b"]]}, r"'teams\[0\]' has a player id that holds a NUL"),
        ({"teams": [["a"], ["\udc80b"]]}, r"'teams\[1\]' has a player id that holds a lone"),
    ],
)
def test_values_no_store_can_keep_are_refused(change: dict[str, Any], message: str) -> None:
    data = {"id": "m1", "played_at": "2024-05-01", "teams": [["a"], ["b"]], "scores": [1, 0]}
    data.update(change)
    with pytest.raises(rankcraft.MatchError, match=message):
        parse_match(data)


@pytest.mark.parametrize("when", ["0001-01-01T00:00+01:00", "9999-12-31T23:59-01:00"])
def test_times_beyond_utcs_range_are_refused(when: str) -> None:
    data = {"id": "m1", "played_at": when, "teams": [["a"], ["b"]], "scores": [1, 0]}
    with pytest.raises(rankcraft.MatchError, match=r"'played_at' is out of range in UTC"):
        parse_match(data)


def test_shared_score_tuples_keep_the_sign_of_zero() -> None:
    base = {"id": "m1", "played_at": "2024-05-01", "teams": [["a"], ["b"]]}
    whole = parse_match({**base, "scores": [1, 0]})
    again = parse_match({**base, "id": "m2", "scores": [1, 0]})
    negative_zero = parse_match({**base, "id": "m3", "scores": [1.0, -0.0]})
    assert whole.scores is again.scores == (1.0, 0.0)
    assert str(negative_zero.scores) == "(1.0, -0.0)"


@pytest.mark.parametrize(
    ("meta", "message"),
    [
        ({"x": float("nan")}, r"'meta.x' must be a finite number: nan"),
        ({"x": [1, float("inf")]}, r"'meta.x\[1\]' must be a finite number: inf"),
        ({"x": 10**400}, r"'meta.x' must be a finite number"),
        ({"x": {1: "a"}}, r"'meta.x' has a key that is not text: 1"),
        ({"x": "a\x00"}, r"'meta.x' holds a NUL character"),
        ({"x": {"when": datetime(2024, 1, 1, tzinfo=UTC)}}, r"'meta.x.when' must hold JSON"),
    ],
)
def test_free_data_must_be_json_a_store_can_keep(meta: Any, message: str) -> None:
    data = {"id": "m1", "played_at": "2024-05-01", "teams": [["a"], ["b"]], "scores": [1, 0]}
    with pytest.raises(rankcraft.MatchError, match=message):
        parse_match({**data, "meta": meta})
    with pytest.raises(rankcraft.MatchError, match=message.replace("meta", "forecast", 1)):
        parse_match({**data, "forecast": meta})
    nested: Any = 1
    for _ in range(70):
        nested = [nested]
    with pytest.raises(rankcraft.MatchError, match="nests deeper than 64"):
        parse_match({**data, "meta": {"deep": nested}})


class _General(dict):  # type: ignore[type-arg]
    """A dict that is not exactly ``dict``: parse_match reads it with its general steps."""


_IDS = st.sampled_from(["a", "b", "", "x\x00", "\ud800", "é", "m1", 7, None, ["a"]])
_SCORE = st.one_of(st.integers(-3, 3), st.sampled_from([True, 1.5, -0.0, 10**400, "1", None]))


_RANK = st.one_of(st.integers(-1, 3), st.sampled_from([True, 1.0, "1", None]))
_GOOD_ID = st.sampled_from(["a", "b", "m1"])


def _mostly(good: Any, any_: Any) -> Any:
    """Half the time a valid value (so the written-out path is reached), else anything."""
    return st.one_of(good, any_)


@settings(max_examples=600, deadline=None)
@example(
    match_id="m1", first=["a"], second=["b"], outcome=("scores", [1, 0]), played_at="2024-05-01"
)
@example(
    match_id="m1", first=["a"], second=["a"], outcome=("scores", [1, 0]), played_at="2024-05-01"
)
@example(
    match_id="m1", first=["a"], second=["b"], outcome=("ranks", [2, 1]), played_at="2024-05-01"
)
@given(
    match_id=_mostly(_GOOD_ID, _IDS),
    first=_mostly(st.lists(_GOOD_ID, min_size=1, max_size=1), st.lists(_IDS, max_size=2)),
    second=_mostly(st.lists(_GOOD_ID, min_size=1, max_size=1), st.lists(_IDS, max_size=1)),
    outcome=st.one_of(
        st.tuples(st.just("scores"), st.lists(_SCORE, min_size=2, max_size=2)),
        st.tuples(st.just("scores"), st.lists(_SCORE, min_size=1, max_size=3)),
        st.tuples(st.just("ranks"), st.lists(_RANK, min_size=2, max_size=2)),
        st.tuples(st.just("ranks"), st.lists(_RANK, min_size=1, max_size=3)),
        st.tuples(st.just("weight"), st.just(1)),
    ),
    played_at=st.one_of(
        st.sampled_from(["2024-05-01", "2024-05-01T20:00:00+02:00", "nope", 5, "2024-13-01"]),
        st.datetimes().map(lambda t: t.isoformat()),  # (most of them never seen before)
    ),
)
def test_the_common_shape_is_parsed_as_the_general_steps_parse_it(
    match_id: Any, first: list[Any], second: list[Any], outcome: Any, played_at: Any
) -> None:
    """parse_match's written-out path for ``{id, played_at, teams, scores or ranks}``
    gives the general steps' Match, or the same error (a time seen before or not)."""
    key, value = outcome
    data = {"id": match_id, "played_at": played_at, "teams": [first, second], key: value}
    for text in ("2024-05-01", "2024-05-01T20:00:00+02:00"):
        parse_match({"id": "warm", "played_at": text, "teams": [["a"], ["b"]], "scores": [1, 0]})
    results = []
    for given_as in (_General(data), data):  # the general steps, then the written-out path
        try:
            match = parse_match(given_as)
            results.append((match.to_dict(), match.places, match.ranks, match.meta == {}))
        except rankcraft.MatchError as exc:
            results.append(str(exc))
    assert results[1] == results[0]


def test_the_common_shape_takes_the_written_out_path() -> None:
    from rankcraft.matchparse import _duel

    data = {"id": "m1", "played_at": "2024-05-01", "teams": [["a"], ["b"]], "scores": [2, 1]}
    match = _duel(data)
    assert match is not None and match.scores == (2.0, 1.0) and match.places == (1, 2)
    assert _duel({**data, "teams": [["a"], ["a"]]}) is None
    ranked = _duel(
        {"id": "m2", "played_at": "2024-05-02T10:00:00Z", "teams": [["a"], ["b"]], "ranks": [2, 1]}
    )
    assert ranked is not None and ranked.ranks == ranked.places == (2, 1)
    assert ranked.scores is None and ranked.played_at.hour == 10


# -- one reader for the command line and the lab (issue 43, item 12) -----------------------


def _csv(*rows: str, bom: bool = False) -> str:
    head = "\ufeff" if bom else ""
    return head + "id,played_at,teams,scores,meta\n" + "".join(r + "\n" for r in rows)


CSV_ROW = 'm{i},2024-05-0{d},"[[""ann""], [""bo""]]","[1, 0]",{meta}'
"""A CSV row of the documented form (docs/matches.md#csv)."""


def _rows(meta: str = "") -> list[str]:
    return [CSV_ROW.format(i=i, d=i + 1, meta=meta if i == 1 else "") for i in range(3)]


def _lab(text: str, name: str) -> Any:
    """The lab's answer to ``text`` uploaded as a file named ``name``."""
    from starlette.testclient import TestClient

    from rankcraft.serve import create_app

    with TestClient(create_app(rankcraft.League("elo"))) as client:
        return client.post(
            "/web/lab/compare",
            json={"rulesets": ["elo", "glicko1"], "history": text, "history_name": name},
        )


def test_a_csv_with_excel_s_byte_order_mark_is_read_by_the_command_line_and_the_lab(
    tmp_path: Path,
) -> None:
    text = _csv(*_rows(), bom=True)
    path = tmp_path / "excel.csv"
    path.write_text(text, encoding="utf-8")  # (the BOM written as Excel writes it)
    assert path.read_bytes().startswith(b"\xef\xbb\xbfid,played_at")
    read = [m.id for m in read_matches(path)]
    assert read == ["m0", "m1", "m2"]
    answer = _lab(text, "excel.csv")
    assert answer.status_code == 200, answer.text
    assert answer.json()["matches"] == 3
    # JSON Lines with a BOM too: the same reader
    lines = "\ufeff" + "".join(
        json.dumps(
            {"id": f"j{i}", "played_at": "2024-05-01", "teams": [["a"], ["b"]], "scores": [1, 0]}
        )
        + "\n"
        for i in range(2)
    )
    (tmp_path / "bom.jsonl").write_text(lines, encoding="utf-8")
    assert [m.id for m in read_matches(tmp_path / "bom.jsonl")] == ["j0", "j1"]


@pytest.mark.parametrize(
    ("meta", "message"),
    [
        (
            '"{""x"": 1, ""x"": 2}"',
            'line 3: \'meta\' must be JSON text in a CSV cell (e.g. [["alice"], ["bob"]] or '
            "[1, 0]): '{\"x\": 1, \"x\": 2}' (the key 'x' appears twice in one object)",
        ),
        (
            '"{""note"": ""' + "x" * 140_000 + '""}"',
            "line 3: a CSV cell in column 'meta' holds more than 128 KiB",
        ),
        # 128 KiB in bytes: 70,000 two-byte letters are fewer characters than the csv
        # module's own limit
        (
            '"{""note"": ""' + "é" * 70_000 + '""}"',
            "line 3: a CSV cell in column 'meta' holds more than 128 KiB",
        ),
    ],
    ids=["duplicate-key", "past-131072-characters", "past-128-KiB-of-UTF-8"],
)
def test_a_csv_cell_is_refused_alike_by_the_command_line_and_the_lab(
    tmp_path: Path, meta: str, message: str
) -> None:
    text = _csv(*_rows(meta))
    path = tmp_path / "cells.csv"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(rankcraft.errors.MatchError) as refused:
        list(read_match_dicts(path))
    assert str(refused.value) == message
    assert refused.value.line == 3 and refused.value.field == "meta"
    answer = _lab(text, "cells.csv")
    assert answer.status_code == 400, answer.text
    error = answer.json()["error"]
    assert error["message"] == f"cells.csv {message}"
    assert error["field"] == "history"
