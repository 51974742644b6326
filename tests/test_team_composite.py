"""composite-opponent: INVERSUS Deluxe's virtual opponent, exactly as its shipped code."""

from __future__ import annotations

import pytest

import rankcraft
from rankcraft.forms import layout
from rankcraft.plugins.glicko2 import Glicko2Skill
from rankcraft.plugins.team_composite import rankcraft_team


def inversus_virtual_opponent(
    local_player: float, local_team: list[float], opposing: list[tuple[float, float]]
) -> tuple[float, float]:
    """The INVERSUS write-up's virtual opponent, written out plainly as the oracle."""
    local_rating = sum(local_team) / len(local_team)
    opposing_rating = sum(r for r, _ in opposing) / len(opposing)
    opposing_deviation = sum(d for _, d in opposing) / len(opposing)
    return local_player + (opposing_rating - local_rating), opposing_deviation


def test_virtual_opponent_is_the_shipped_codes() -> None:
    # states as the hooks get them: (mu, phi, sigma) tuples, with their layout
    alice, alex = (0.8, 0.4, 0.06), (-0.3, 1.5, 0.05)
    betty, bill = (0.1, 0.9, 0.06), (0.5, 0.3, 0.07)
    pairings = rankcraft_team(
        [[alice, alex], [betty, bill]], [1, 2], 1.0, None, layout(Glicko2Skill)
    )
    for member, (pairing,) in zip([alice, alex], pairings[0], strict=True):
        mu, phi = inversus_virtual_opponent(
            member[0], [alice[0], alex[0]], [(betty[0], betty[1]), (bill[0], bill[1])]
        )
        assert pairing[0][0] == pytest.approx(mu) and pairing[0][1] == pytest.approx(phi)
        assert pairing[1] == 1.0 and pairing[2] == 1.0
    (first,) = pairings[1][0]
    assert first[1] == 0.0
    mu, phi = inversus_virtual_opponent(
        betty[0], [betty[0], bill[0]], [(alice[0], alice[1]), (alex[0], alex[1])]
    )
    assert first[0][0] == pytest.approx(mu) and first[0][1] == pytest.approx(phi)


def test_own_deviation_is_what_gets_updated(match) -> None:
    league = rankcraft.League("inversus")
    league.import_state(
        {
            "players": [
                {"id": "alice", "skill": {"mu": 1.0, "phi": 0.5, "sigma": 0.06}},
                {"id": "alex", "skill": {"mu": -1.0, "phi": 1.5, "sigma": 0.06}},
                {"id": "betty", "skill": {"mu": 0.0, "phi": 1.0, "sigma": 0.06}},
                {"id": "bill", "skill": {"mu": 0.0, "phi": 1.0, "sigma": 0.06}},
            ]
        }
    )
    report = league.record(match("t", ["alice", "alex"], ["betty", "bill"], scores=[1, 0]))
    alice, alex = report.change("alice"), report.change("alex")
    # Same team result, same expected score against the composite, different own phi:
    assert alice.skill_after.mu - 1.0 < alex.skill_after.mu + 1.0
    assert alice.skill_after.phi < 0.5 and alex.skill_after.phi < 1.5


def test_unequal_team_sizes(match) -> None:
    league = rankcraft.League("inversus")
    report = league.record(match("t", ["a"], ["b", "c", "d"], scores=[1, 0]))
    assert report.change("a").skill_after.mu > 0 > report.change("d").skill_after.mu
    assert sum(report.expected) == pytest.approx(1.0)
