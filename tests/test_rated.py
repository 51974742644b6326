"""The one report encoder writes exactly the JSON of the report's fields."""

from __future__ import annotations

import random
from typing import Any

import attrs
import pytest

import rankcraft
from rankcraft.model import format_time
from rankcraft.rated import Rated, compact_json
from rankcraft.ruleset import bundled_names


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


@pytest.mark.parametrize("name", bundled_names())
def test_the_encoder_writes_the_documented_report(name: str) -> None:
    league = rankcraft.League(name)
    matches = mixed_history(300, 11)
    league.record_many(matches)
    writer_texts = league.codec.entry_texts
    for m in matches[::7]:
        row = league.store.match(m["id"])
        assert row is not None
        match_text, report_text = writer_texts(
            Rated((row.match, row.report.expected, Rated.changes_of(row.report)))
        )
        assert report_text == compact_json(independent_dict(row.report))
        assert match_text == compact_json(row.match.to_dict())
