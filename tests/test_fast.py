"""The fused 1-v-1 path gives exactly what the ordinary hooks give, and keeps the same
guarantees (one transaction, errors from the ordinary path, nothing half-applied)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rankcraft
from rankcraft import DuplicateMatchError, League, MatchError
from rankcraft.fast import FastEntry
from rankcraft.ruleset import bundled_names

PLAIN_GLICKO2 = str(Path(__file__).with_name("glicko2-no-decay.toml"))
FUSED = ("elo", "elo-fide", "glicko1", "inversus", PLAIN_GLICKO2)


def test_which_rulesets_take_the_fused_path() -> None:
    fused = {name: League(name)._fast is not None for name in bundled_names()}
    assert fused == {
        "elo": True,
        "elo-538": False,  # margin of victory: Elo's kernel declines it
        "elo-fide": True,
        "glicko1": True,
        "inversus": True,
        "skyweaver": False,  # season resets and a rank plugin without kernels
        "team-wager": False,
    }
    assert League(PLAIN_GLICKO2)._fast is not None  # no-decay offers its kernel


@st.composite
def histories(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Matches among a few players: mostly plain 1-v-1, mixed with every kind the fused
    path hands to the hooks (teams, home, weight, quits, ranks, draws, long gaps)."""
    players = [f"p{i}" for i in range(draw(st.integers(3, 8)))]
    n = draw(st.integers(1, 60))
    day = 0.0
    out = []
    for i in range(n):
        day += draw(st.sampled_from([0.0, 0.0, 0.3, 1.0, 20.0, 400.0]))
        kind = draw(
            st.sampled_from(
                ["plain"] * 6
                + ["draw", "home", "team", "quit", "ranks", "weight", "seconds", "meta"]
            )
        )
        a, b = draw(st.permutations(players))[:2]
        won = draw(st.booleans())
        m: dict[str, Any] = {
            "id": f"m{i}",
            "played_at": "2024-01-01T00:00:00Z" if day == 0 else _at(day),
            "teams": [[a], [b]],
            "scores": [1, 0] if won else [0, 1],
        }
        if kind == "draw":
            m["scores"] = [2.5, 2.5]
        elif kind == "home":
            m["home"] = 1
        elif kind == "team":
            third = next(p for p in players if p not in (a, b))
            m["teams"] = [[a, third], [b]]
        elif kind == "quit":
            m["quit"] = [b]
        elif kind == "ranks":
            del m["scores"]
            m["ranks"] = [1, 2] if won else [2, 1]
        elif kind == "weight":
            m["weight"] = 0.5
        elif kind == "seconds":  # carried on the fused path
            m["seconds_played"] = [[draw(st.integers(0, 7200))], [draw(st.integers(0, 7200))]]
        elif kind == "meta":
            m["meta"] = {"server": "eu-1", "note": 'quote " and \u00e9'}
        out.append(m)
    return out


def _at(day: float) -> str:
    seconds = round(day * 86400)
    base = 1704067200  # 2024-01-01T00:00:00Z
    from datetime import UTC, datetime

    return datetime.fromtimestamp(base + seconds, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _everything(league: League, matches: list[dict[str, Any]]) -> str:
    reports = [league.codec.report_to_dict(league.report(m["id"])) for m in matches]
    history = {
        p.id: [league.codec.report_to_dict(r.report) for r in league.history(p.id, None)]
        for p in league.players()
    }
    return json.dumps([league.export(), reports, history], sort_keys=True)


def _both_ways(ruleset: Any, matches: list[dict[str, Any]]) -> League:
    """Replay ``matches`` on the fused path and through the hooks, in memory; assert
    that every state, report and history is the same; return the fused league."""
    fused = League(ruleset)
    hooks = League(ruleset, fast=False)
    assert fused._fast is not None
    fused.record_many(matches)
    hooks.record_many(matches)
    assert _everything(fused, matches) == _everything(hooks, matches)
    return fused


@pytest.mark.parametrize("name", FUSED)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(matches=histories())
def test_fused_path_equals_the_hooks_bit_for_bit(name: str, matches: list[dict[str, Any]]) -> None:
    fused = _both_ways(name, matches)
    # the JSON a store writes for an entry is what json.dumps gives of the ordinary
    # match and report dicts, byte for byte
    compact = {"separators": (",", ":")}
    for entry in fused.store._rows:  # type: ignore[attr-defined]
        if isinstance(entry, FastEntry):
            assert entry.json_texts(fused.codec) == (
                json.dumps(entry.match.to_dict(), **compact),
                json.dumps(fused.codec.report_to_dict(entry.report), **compact),
            )


@pytest.mark.parametrize("name", FUSED)
def test_fused_path_into_sqlite_stores_what_the_hooks_store(name: str, tmp_path: Path) -> None:
    import random

    rng = random.Random(7)
    matches = []
    for i in range(3000):
        a, b = rng.sample(range(60), 2)
        matches.append(
            {
                "id": f"m{i}",
                "played_at": _at(i * 0.37),
                "teams": [[f"p{a}"], [f"p{b}"]],
                "scores": rng.choice([[1, 0], [0, 1], [1, 1]]),
            }
        )
    matches[1500]["home"] = 0  # one match through the hooks in the middle
    fused = League.open(tmp_path / "fused.sqlite", name)
    fused.record_many(matches)
    fused.close()
    hooks = League.open(tmp_path / "hooks.sqlite", name, fast=False)
    hooks.record_many(matches)
    hooks.close()
    a = League.open(tmp_path / "fused.sqlite")
    b = League.open(tmp_path / "hooks.sqlite")
    assert _everything(a, matches) == _everything(b, matches)
    a.close()
    b.close()


def test_the_last_report_is_returned_from_either_path() -> None:
    lg = League("elo")
    summary = lg.record_many(
        [
            {"id": "a", "played_at": "2024-01-01", "teams": [["x"], ["y"]], "scores": [1, 0]},
            {"id": "b", "played_at": "2024-01-02", "teams": [["x"], ["y"]], "scores": [0, 1]},
        ]
    )
    assert summary.recorded == 2
    assert summary.last is not None and summary.last.match_id == "b"
    # y (1484) beats x (1516): y gains 32 * (1 - 1 / (1 + 10 ** (32 / 400)))
    gain = 32 * (1 - 1 / (1 + 10 ** (32 / 400)))
    assert summary.last.change("y").skill_after.rating == pytest.approx(1484 + gain, abs=1e-9)
    assert summary.last.changes[0].factors == {"k": 32.0}


@pytest.mark.parametrize(
    ("bad", "error"),
    [
        (
            {"id": "m1", "played_at": "2024-03-01", "teams": [["a"], ["b"]], "scores": [1, 0]},
            DuplicateMatchError,
        ),
        (
            {"id": "z", "played_at": "2023-01-01", "teams": [["a"], ["b"]], "scores": [1, 0]},
            MatchError,
        ),
        (
            {"id": "z", "played_at": "2024-03-01", "teams": [["a"], ["a"]], "scores": [1, 0]},
            MatchError,
        ),
        (
            {
                "id": "z",
                "played_at": "2024-03-01",
                "teams": [["a"], ["b"]],
                "scores": [math.nan, 0],
            },
            MatchError,
        ),
        (
            {"id": "z", "played_at": "2024-03-01", "teams": [["a"], ["b"]], "scores": [True, 0]},
            MatchError,
        ),
        (
            {"id": "", "played_at": "2024-03-01", "teams": [["a"], ["b"]], "scores": [1, 0]},
            MatchError,
        ),
        ({"id": "z", "played_at": "March", "teams": [["a"], ["b"]], "scores": [1, 0]}, MatchError),
    ],
)
def test_a_bad_match_after_fused_ones_keeps_nothing(bad: dict[str, Any], error: type) -> None:
    lg = League("glicko1")
    lg.record_many(
        [
            {"id": "m0", "played_at": "2024-01-01", "teams": [["a"], ["b"]], "scores": [1, 0]},
            {"id": "m1", "played_at": "2024-02-01", "teams": [["a"], ["c"]], "scores": [0, 1]},
        ]
    )
    before = json.dumps(lg.export(), sort_keys=True)
    good = [
        {"id": f"n{i}", "played_at": "2024-02-02", "teams": [["b"], ["c"]], "scores": [1, 0]}
        for i in range(5)
    ]
    with pytest.raises(error):
        lg.record_many([*good, bad])
    assert json.dumps(lg.export(), sort_keys=True) == before
    assert "n0" not in lg._seen and lg.match_count == 2
    # and the league goes on from where it was
    lg.record_many(good)
    assert lg.player("b").matches == 6


def test_entries_build_the_match_as_parse_match_does() -> None:
    lg = League("elo")
    raw = {
        "id": "q",
        "played_at": "2024-05-01T20:00:00+02:00",
        "teams": [["a"], ["b"]],
        "scores": [3, 3],
        "meta": {"map": "dust"},
    }
    lg.record_many([raw])
    entry = lg.store._rows[0]  # type: ignore[attr-defined]
    assert isinstance(entry, FastEntry)
    parsed = rankcraft.parse_match(raw)
    assert entry.match.to_dict() == parsed.to_dict() == json.loads(entry.json_texts(lg.codec)[0])
    assert entry.match.places == parsed.places == (1, 1)
    assert json.loads(entry.json_texts(lg.codec)[1]) == lg.codec.report_to_dict(entry.report)


@pytest.mark.parametrize(
    "rank_params",
    [
        "tightest_deviation = true",
        "deviation_speed = true",
        "bonus_after_cap = false\nmax_change = 120.0",
        "min_change = 0.0\nupset_bonus = 0.0",
        "step_fraction = 1.0\nconfidence = 1.0",
    ],
)
def test_inversus_rank_kernel_equals_the_hook_for_every_option(rank_params: str) -> None:
    """The Rank Point kernel and the hook, for every option rp_change reads, both ways."""
    import random

    ruleset = rankcraft.loads_ruleset(
        f'extends = "inversus"\nname = "variant"\n[rank.params]\n{rank_params}\n'
    )
    rng = random.Random(11)
    skill = {f"p{i}": rng.gauss(0, 2) for i in range(12)}
    matches = []
    for i in range(600):
        a, b = rng.sample(sorted(skill), 2)
        won = rng.random() < 1 / (1 + math.exp(skill[b] - skill[a]))
        scores = rng.choice([[1, 1], [1, 0] if won else [0, 1], [1, 0] if won else [0, 1]])
        matches.append(
            {"id": f"m{i}", "played_at": _at(i * 0.7), "teams": [[a], [b]], "scores": scores}
        )
    fused = _both_ways(ruleset, matches)
    factors = {k for m in matches for c in fused.report(m["id"]).changes for k in c.factors}
    assert {"target", "step"} <= factors
