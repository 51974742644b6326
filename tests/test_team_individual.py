"""The individual team plugin: every player against every opposing player."""

from __future__ import annotations

import pytest

import rankcraft
from rankcraft.plugins.elo import expected_score

RULESET = """
name = "elo-individual"
[update]
plugin = "elo"
[team]
plugin = "individual"
[team.params]
opponent_weight = "{weight}"
"""


@pytest.mark.parametrize("weight", ["split", "full"])
def test_pairings_against_each_opponent(match, weight: str) -> None:
    league = rankcraft.League(rankcraft.loads_ruleset(RULESET.format(weight=weight)))
    league.import_state(
        {
            "players": [
                {"id": p, "skill": {"rating": r, "peak": r}}
                for p, r in (("a", 1500.0), ("b1", 1400.0), ("b2", 1700.0))
            ]
        }
    )
    league.record(match("t", ["a"], ["b1", "b2"], scores=[1, 0]))
    w = 0.5 if weight == "split" else 1.0
    change = 32 * w * ((1 - expected_score(1500, 1400)) + (1 - expected_score(1500, 1700)))
    assert league.player("a").skill.rating == pytest.approx(1500 + change)
    # b1 faced only a: its single pairing has the whole weight when split over 1 opponent.
    assert league.player("b1").skill.rating == pytest.approx(1400 - 32 * expected_score(1400, 1500))
