"""The one report encoder writes exactly the JSON of the report's fields."""

from __future__ import annotations

import json
import random
from typing import Any

import attrs
import pytest

import rankcraft
from rankcraft.io import parse_match
from rankcraft.model import format_time
from rankcraft.rated import PACKED, Rated, ReportPacker, ReportWriter, compact_json, match_text
from rankcraft.ruleset import bundled_names
from rankcraft.store import MemoryStore


def independent_dict(report: rankcraft.Report) -> dict[str, Any]:
    """The report as documented (docs/design.md), built without the encoder."""

    def state(value: Any) -> dict[str, Any]:
        return {f.name: getattr(value, f.name) for f in attrs.fields(type(value))}

    changes = []
    for c in report.changes:
        out: dict[str, Any] = {
            "player": c.player,
            "side": c.side,
            "skill_before": state(c.skill_before),
            "skill_after": state(c.skill_after),
        }
        if c.skill_used is not c.skill_before:
            out["skill_used"] = state(c.skill_used)
        if c.rank_after is not None:
            out["rank_before"] = state(c.rank_before)
            out["rank_after"] = state(c.rank_after)
        if c.factors:
            out["factors"] = dict(c.factors)
        changes.append(out)
    return {
        "match_id": report.match_id,
        "played_at": format_time(report.played_at),
        "expected": list(report.expected),
        "changes": changes,
    }


def mixed_history(n: int, seed: int) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        players = rng.sample([f"p{k}" for k in range(12)], 4)
        teams = [[players[0]], [players[1]]] if rng.random() < 0.6 else [players[:2], players[2:]]
        out.append(
            {
                "id": f"m{i}",
                "played_at": f"2024-{1 + i * 11 // n:02d}-{1 + i % 27:02d}T12:00:00Z",
                "teams": teams,
                "scores": rng.choice([[1, 0], [0, 1], [2, 2], [1.5, 0.25]]),
                "seconds_played": [[600] * len(t) for t in teams],
            }
        )
    out.sort(key=lambda m: m["played_at"])
    return out


def monthly_for(name: str, matches: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``matches``; for a history model (``[fit]``), each moved to the first of its month,
    so that the league refits a dozen times, not every day (the store's work is the
    same)."""
    if rankcraft.load_ruleset(name).fit:
        for m in matches:
            m["played_at"] = m["played_at"][:8] + "01" + m["played_at"][10:]
    return matches


def packer_of(league: rankcraft.League) -> ReportPacker:
    def names(cls: type | None) -> tuple[str, ...]:
        return () if cls is None else tuple(f.name for f in attrs.fields(cls))

    return ReportPacker(ReportWriter(names(league.skill_class), names(league.rank_class)))


@pytest.mark.parametrize("name", bundled_names())
def test_the_encoder_writes_the_documented_report(name: str) -> None:
    """The JSON writer's text, and the packed report read back, are the report's fields
    exactly (floats bit for bit) for every bundled ruleset on a mixed history."""
    league = rankcraft.League(name)
    matches = monthly_for(name, mixed_history(300, 11))
    league.record_many(matches)
    codec = league.codec
    packer = packer_of(league)
    for m in matches[::7]:
        row = league.store.match(m["id"])
        assert row is not None
        entry = Rated((row.match, row.report.expected, Rated.changes_of(row.report)))
        documented = independent_dict(row.report)
        assert compact_json(codec.report_to_dict(row.report)) == compact_json(documented)
        match_text, packed = codec.entry_row(entry)
        assert match_text == compact_json(row.match.to_dict())
        assert packed[0] == PACKED
        assert packer.unpack(packed, row.match) == json.loads(compact_json(documented))
        assert codec.report_of(row.match, packed) == row.report


def test_a_packed_report_refuses_changes_out_of_the_match_order() -> None:
    league = rankcraft.League("elo")
    league.record_many(mixed_history(3, 1))
    row = league.store.match("m0")
    assert row is not None
    changes = Rated.changes_of(row.report)[::-1]
    with pytest.raises(ValueError, match="'m0': the changes do not follow its players"):
        packer_of(league).pack(Rated((row.match, row.report.expected, changes)))


@pytest.mark.slow(seconds=6)
@pytest.mark.parametrize("name", bundled_names())
def test_a_packed_memory_store_reads_back_what_it_kept(name: str) -> None:
    """Past ``pack_after`` matches the memory store keeps the older ones in compressed
    blocks of flat tuples; every match, report and history reads back equal to a store
    that kept them as objects."""
    import zlib

    from rankcraft.store.blocks import BLOCK

    matches = monthly_for(name, mixed_history(2 * BLOCK + 120, 5))
    plain = rankcraft.League(name, store=MemoryStore(pack_after=None))
    plain.record_many(matches)
    packed = rankcraft.League(name, store=MemoryStore(pack_after=40))
    packed.record_many(matches[:70])
    packed.record_many(matches[70:])
    store = packed.store
    assert store._matches.frozen == BLOCK and len(store._matches.rows) == BLOCK + 120  # type: ignore[attr-defined]
    assert zlib.decompress(store._matches.blocks[0])[:1] == b"F"  # type: ignore[attr-defined]
    for m in matches:
        assert packed.report(m["id"]) == plain.report(m["id"])
    for player in ("p0", "p5", "p11"):
        got, want = packed.history(player), plain.history(player)
        assert [(r.seq, r.match.to_dict(), r.report) for r in got] == [
            (r.seq, r.match.to_dict(), r.report) for r in want
        ]
    assert packed.export() == plain.export()


def test_a_failed_batch_leaves_a_packing_memory_store_as_it_was() -> None:
    matches = mixed_history(40, 9)
    league = rankcraft.League("glicko1", store=MemoryStore(pack_after=10))
    league.record_many(matches[:20])
    before = league.export()
    bad = {**matches[25], "id": "m3"}  # a repeated id, after packed matches in the batch
    with pytest.raises(rankcraft.DuplicateMatchError, match="m3"):
        league.record_many([*matches[20:30], bad])
    assert league.export() == before and league.match_count == 20
    league.record_many(matches[20:])  # the batch's ids were released
    reference = rankcraft.League("glicko1")
    reference.record_many(matches)
    assert league.export() == reference.export()
    assert league.report("m39") == reference.report("m39")


@pytest.mark.parametrize("size", [0, 254, 255, 70_000])
def test_a_packed_json_text_keeps_its_length_short_or_long(size: int) -> None:
    from rankcraft.rated import json_at, sized_json

    text = json.dumps("x" * max(size - 2, 0)).encode()[:size] if size else b""
    value = "x" * (len(text) - 2) if size else None
    blob = b"\x07" + sized_json(text if size else b"null") + b"\x09"
    got, end = json_at(blob, 1)
    assert got == value and blob[end:] == b"\x09"
    assert len(blob) == len(text or b"null") + (3 if len(text or b"null") < 255 else 7)


def test_a_scratch_league_never_packs_and_a_default_one_does_past_its_limit() -> None:
    from rankcraft.evaluate import scratch_league
    from rankcraft.store.blocks import BLOCK

    matches = mixed_history(2 * BLOCK + 5, 2)
    blocks = {}
    for name, league in (
        ("scratch", scratch_league("elo")),
        ("default", rankcraft.League("elo")),
        ("at once", rankcraft.League("elo", store=MemoryStore(pack_after=0))),
    ):
        league.record_many(matches)
        blocks[name] = len(league.store._matches.blocks)  # type: ignore[attr-defined]
    assert blocks == {"scratch": 0, "default": 0, "at once": 1}
    assert MemoryStore().pack_after == 10_000


MATCHES: list[dict[str, Any]] = [
    {"id": "m1", "played_at": "2024-05-01T20:00:00Z", "teams": [["a"], ["b"]], "scores": [1, 0]},
    {"id": "m2", "played_at": "2024-05-01", "teams": [["a"], ["b"]], "scores": [2.5, 0.125]},
    {
        "id": 'q"uote\\ é ✓ \u0007',
        "played_at": "2024-05-01T20:00:00.250000Z",
        "teams": [["Zoë", 'a"b'], ["日本"], ["c"]],
        "scores": [3, 1e-300, 12345678901234567890],
    },
    {
        "id": "r",
        "played_at": "1999-12-31T23:59:59Z",
        "teams": [["a"], ["b"], ["c"]],
        "ranks": [2, 1, 3],
    },
    {
        "id": "w",
        "played_at": "2024-01-01",
        "teams": [["a"], ["b"]],
        "scores": [1, 0],
        "weight": 0.5,
    },
    {"id": "h", "played_at": "2024-01-01", "teams": [["a"], ["b"]], "scores": [1, 0], "home": 1},
    {"id": "ranked", "played_at": "2024-01-01T10:00:00Z", "teams": [["a"], ["b"]], "ranks": [2, 1]},
    {"id": "r3", "played_at": "2024-01-01", "teams": [["a"], ["b"], ["c"]], "ranks": [1, 3, 1]},
    {
        "id": "meta",
        "played_at": "2024-01-01",
        "teams": [["a"], ["b"]],
        "scores": [0, 0],
        "meta": {"k": [1, "x"]},
    },
    {
        "id": "quit",
        "played_at": "2024-01-01",
        "teams": [["a", "b"], ["c", "d"]],
        "scores": [1, 0],
        "quit": ["b"],
        "seconds_played": [[600, 300], [600, 600]],
    },
]


@pytest.mark.parametrize("data", MATCHES, ids=[str(m["id"]) for m in MATCHES])
def test_a_match_text_is_the_json_of_its_document(data: dict[str, Any]) -> None:
    """What a store keeps per match is the match document's compact JSON, whether written
    from the template (id, time, sides, scores) or through ``to_dict``."""
    match = parse_match(data)
    expected = json.dumps(match.to_dict(), separators=(",", ":"))
    assert match_text(match) == expected
    assert parse_match(json.loads(match_text(match))).to_dict() == match.to_dict()


BATCH_GLICKO2 = """name = "g2-batch"
[period]
mode = "batch"
length_days = 7.0
origin = "2024-01-01"
[update]
plugin = "glicko2"
"""


@pytest.mark.parametrize("name", [*bundled_names(), "g2-batch"])
def test_a_stored_record_is_the_json_of_its_document(name: str) -> None:
    """The texts a store on disk keeps per player are the compact JSON of the record
    document's values (states written by the report writer), open rating periods
    included, for every bundled ruleset and one rated in periods."""
    ruleset = rankcraft.loads_ruleset(BATCH_GLICKO2) if name == "g2-batch" else name
    league = rankcraft.League(ruleset)
    league.record_many(mixed_history(200, 5), close=False)
    codec = league.codec

    def text(value: Any) -> str | None:
        return None if value is None else json.dumps(value, separators=(",", ":"))

    # a codec built without record_texts derives them from record_to_dict
    fields = {f.name: getattr(codec, f.name) for f in attrs.fields(type(codec))}
    derived = type(codec)(**{k: v for k, v in fields.items() if k != "record_texts"})
    opened = 0
    for record in league.players():
        data = codec.record_to_dict(record)
        opened += "open" in data
        expected = (text(data["skill"]), text(data["rank"]), data["last_played"])
        assert codec.record_texts(record) == (*expected, text(data.get("open")))
        assert derived.record_texts(record) == codec.record_texts(record)
    if league.ruleset.period.mode == "batch":
        assert opened  # (the open periods were compared too)


def test_a_time_is_written_as_strftime_writes_it() -> None:
    """format_time (from ``isoformat``) writes what ``strftime`` does, microseconds and
    years before 1000 included."""
    from datetime import UTC, datetime, timedelta, timezone

    rng = random.Random(3)
    moments = [datetime(999, 12, 31, 23, 59, 59, tzinfo=UTC), datetime(1, 1, 1, tzinfo=UTC)]
    moments += [
        datetime(1000, 1, 1, tzinfo=UTC) + timedelta(seconds=rng.uniform(0, 2.8e11))
        for _ in range(500)
    ]
    moments += [m.replace(microsecond=0) for m in moments[:100]]
    moments.append(datetime(2024, 5, 1, 20, tzinfo=timezone(timedelta(hours=2))))
    for moment in moments:
        fraction = f".{moment.microsecond:06d}" if moment.microsecond else ""
        assert format_time(moment) == moment.strftime("%Y-%m-%dT%H:%M:%S") + fraction + "Z"


def test_old_packed_matches_are_compressed_in_blocks_and_read_back() -> None:
    """Past ``pack_after``, the oldest packed matches go into compressed blocks of
    ``BLOCK``; every match reads back as a store keeping objects gives it, and a failed
    batch whose matches reached the blocks leaves the store as it was."""
    from rankcraft.engine import CHUNK
    from rankcraft.store.blocks import BLOCK

    first = 2 * BLOCK + 5
    matches = mixed_history(first + CHUNK + 300, 3)
    plain = rankcraft.League("glicko1")
    plain.record_many(matches)
    league = rankcraft.League("glicko1", store=MemoryStore(pack_after=40))
    league.record_many(matches[:first])
    store = league.store
    assert store._matches.frozen == BLOCK and len(store._matches.blocks) == 1  # type: ignore[attr-defined]
    before = league.export()
    # a repeated id after more than a chunk: the chunk before it was handed to the store
    # (and frozen into blocks) inside the batch
    bad = {**matches[first + CHUNK + 10], "id": "m7"}
    with pytest.raises(rankcraft.DuplicateMatchError, match="m7"):
        league.record_many([*matches[first : first + CHUNK + 10], bad])
    assert league.export() == before and league.match_count == first
    # the blocks of the committed matches stay; the one the batch began in is reopened
    assert (store._matches.frozen, len(store._matches.rows)) == (2 * BLOCK, 5)  # type: ignore[attr-defined]
    league.record_many(matches[first:])
    assert store._matches.frozen > 4 * BLOCK  # type: ignore[attr-defined]
    assert league.export() == plain.export()
    for m in (matches[0], matches[BLOCK - 1], matches[BLOCK], matches[first + 1], matches[-1]):
        assert league.report(m["id"]) == plain.report(m["id"])
    got, want = league.history("p3"), plain.history("p3")
    assert [(r.seq, r.match.to_dict(), r.report) for r in got] == [
        (r.seq, r.match.to_dict(), r.report) for r in want
    ]


def test_a_block_of_matches_marshal_cannot_write_is_kept_packed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A match the flat form cannot hold (say, a state holding a value marshal cannot
    write) puts its block into the packed form; it reads back the same."""
    import zlib

    from rankcraft.store import blocks
    from rankcraft.store.blocks import BLOCK

    flat = blocks._flat

    def refusing(entry: Any, times: Any) -> Any:
        if entry[0].id == "m3":
            raise blocks._NotFlat
        return flat(entry, times)

    monkeypatch.setattr(blocks, "_flat", refusing)
    matches = mixed_history(2 * BLOCK + 5, 4)
    plain = rankcraft.League("elo", store=MemoryStore(pack_after=None))
    plain.record_many(matches)
    league = rankcraft.League("elo", store=MemoryStore(pack_after=0))
    league.record_many(matches)
    store = league.store
    assert zlib.decompress(store._matches.blocks[0])[:1] == b"P"  # type: ignore[attr-defined]
    for m in (matches[0], matches[3], matches[BLOCK + 1]):
        assert league.report(m["id"]) == plain.report(m["id"])
    assert league.export() == plain.export()


def test_a_time_in_another_zone_is_kept_flat_as_its_instant() -> None:
    """A :class:`Match` built by hand with a time in another zone than UTC is kept in a
    flat block and read back as the same instant, in UTC."""
    import zlib
    from datetime import UTC, timedelta, timezone

    from rankcraft.io import parse_match
    from rankcraft.store.blocks import BLOCK

    matches: list[Any] = [parse_match(m) for m in mixed_history(2 * BLOCK + 5, 4)]
    odd = matches[3]
    moment = odd.played_at.astimezone(timezone(timedelta(hours=1)))
    matches[3] = rankcraft.Match(
        id=odd.id, played_at=moment, teams=odd.teams, scores=odd.scores, places=odd.places
    )
    league = rankcraft.League("elo", store=MemoryStore(pack_after=0))
    league.record_many(matches)
    assert zlib.decompress(league.store._matches.blocks[0])[:1] == b"F"  # type: ignore[attr-defined]
    kept = league.report(odd.id).played_at
    assert kept == moment and kept.tzinfo is UTC


@pytest.mark.parametrize("fields", [1, 2, 3])
def test_the_written_out_duel_report_packs_as_the_general_steps(fields: int) -> None:
    """:meth:`ReportPacker.pack` writes the common 1-v-1 report in one struct call; on
    random reports (floats near and past its 1e300 bound, infinities, NaN, -0.0, ints,
    wrong lengths, public states, decay, rank states, factors, other shapes) it gives
    the bytes, or the error, of the general steps (the same packer with the written-out
    path turned off)."""
    rng = random.Random(fields)
    names = tuple(f"f{i}" for i in range(fields))
    written = ReportPacker(ReportWriter(names, ("points",)))
    general = ReportPacker(ReportWriter(names, ("points",)))
    general._plain = lambda *states: False  # type: ignore[method-assign]
    plain, taken = written._plain, []
    written._plain = lambda *states: taken.append(plain(*states)) or taken[-1]  # type: ignore[method-assign]
    odd: list[Any] = [1e300, -1e300, 9.9e299, 1.7e308, float("inf"), float("nan"), -0.0, 3, True]
    state_class = attrs.make_class("S", list(names))

    def value() -> Any:
        return rng.choice(odd) if rng.random() < 0.03 else rng.gauss(1500, 300)

    def state() -> Any:
        values = tuple(value() for _ in range(fields))
        roll = rng.random()
        if roll < 0.01:
            return (*values, 1.0)
        if roll < 0.02:
            return values[:-1]
        return state_class(*values) if roll < 0.04 else values

    shared = {"k": 32.0}
    factor_choices: list[Any] = [None, None, {}, shared, shared, {"k": 16.0, "margin": 1.5}]
    factor_choices.append({"k": float("nan")})
    checked = 0
    for i in range(3000):
        shape = rng.choice(
            [(("a",), ("b",))] * 8 + [(("a", "c"), ("b",)), (("a",), ("b",), ("c",))]
        )
        match = parse_match(
            {
                "id": f"m{i}",
                "played_at": "2024-01-01",
                "teams": [list(side) for side in shape],
                "scores": list(range(len(shape))),
            }
        )
        changes = []
        for side, team in enumerate(shape):
            for player in team:
                before = state()
                used = before if rng.random() < 0.9 else state()
                rank = ((5.0,), (6.0,)) if rng.random() < 0.05 else (None, None)
                factors = rng.choice(factor_choices)
                changes.append((player, side, before, used, state(), *rank, factors))
        if rng.random() < 0.01:
            changes.reverse()
        expected = tuple(rng.random() for _ in range(len(shape) + (rng.random() < 0.02)))
        entry = Rated((match, expected, tuple(changes)))

        def outcome(packer: ReportPacker, entry: Rated = entry) -> Any:
            try:
                return packer.pack(entry)
            except Exception as exc:  # (the same error either way)
                return type(exc), str(exc)

        got = outcome(written)
        assert got == outcome(general), entry
        checked += isinstance(got, bytes)
    assert checked > 1500 and 1000 < sum(taken) < len(taken)  # (both ways, often)
