"""Quits: INVERSUS's deferred loss and cancelled match, and the plain loss rule."""

from __future__ import annotations

import pytest

import rankcraft
from rankcraft.plugins.glicko2 import Glicko2Skill, rate


def test_inversus_quitter_loses_at_the_next_start_others_are_not_rated() -> None:
    league = rankcraft.League("inversus")
    league.import_state(
        {
            "players": [
                {"id": "q", "skill": {"mu": 0.5, "phi": 0.6, "sigma": 0.06}},
                {"id": "o", "skill": {"mu": 0.2, "phi": 0.4, "sigma": 0.05}},
            ]
        }
    )
    report = league.record(
        {
            "id": "abandoned",
            "played_at": "2024-01-01T10:00:00Z",
            "teams": [["q"], ["o"]],
            "scores": [1, 0],
            "quit": ["q"],
        }
    )
    # The opponent's match is cancelled: no win, no change.
    assert report.change("o").skill_after == Glicko2Skill(0.2, 0.4, 0.05)
    assert report.change("o").factors == {"cancelled": 1.0}
    # The quitter is not rated yet; the loss waits, with the opponent as they stood then.
    q = league.player("q")
    assert q.skill == Glicko2Skill(0.5, 0.6, 0.06)
    assert [(p.opponent, p.score) for p in q.pending] == [(Glicko2Skill(0.2, 0.4, 0.05), 0.0)]
    assert report.change("q").factors == {"deferred": 1.0}
    # The opponent plays on meanwhile; it does not change the stored loss.
    league.record(
        {
            "id": "other",
            "played_at": "2024-01-02T10:00:00Z",
            "teams": [["o"], ["x"]],
            "scores": [1, 0],
        }
    )
    # The quitter's next match starts 3.5 days later: loss first, then 3 whole idle days.
    report = league.record(
        {
            "id": "next",
            "played_at": "2024-01-04T22:00:00Z",
            "teams": [["q"], ["y"]],
            "scores": [1, 0],
        }
    )
    mu, phi, sigma = rate(0.5, 0.6, 0.06, 0.5, [(0.2, 0.4, 0.0, 1.0)])
    params = league.ruleset.update.params
    after_loss = params.clamp(mu, phi, sigma)
    used = report.change("q").skill_used
    assert used.mu == pytest.approx(after_loss.mu)
    assert used.phi == pytest.approx((after_loss.phi**2 + 3 / 14 * after_loss.sigma**2) ** 0.5)
    assert not league.player("q").pending
    assert league.player("q").matches == 2


def test_a_quitter_who_never_returns_keeps_the_loss_pending() -> None:
    league = rankcraft.League("inversus")
    league.record(
        {
            "id": "m",
            "played_at": "2024-01-01",
            "teams": [["q"], ["o"]],
            "scores": [0, 1],
            "quit": ["q"],
        }
    )
    exported = league.export()
    q = next(p for p in exported["players"] if p["id"] == "q")
    assert q["open"]["pending"][0][1] == 0.0
    copy = rankcraft.League("inversus")
    copy.import_state(exported)
    assert copy.player("q").pending == league.player("q").pending


def test_plain_loss_rule(match) -> None:
    ruleset = rankcraft.loads_ruleset(
        'extends = "elo"\nname = "elo-quits"\n[quits]\nquitter = "loss"\n'
    )
    league = rankcraft.League(ruleset)
    league.record(match("m", ["a", "b"], ["c", "d"], scores=[3, 0], quit=["b"]))
    assert league.player("a").skill.rating == pytest.approx(1516.0)  # the side's result
    assert league.player("b").skill.rating == pytest.approx(1484.0)  # the quitter lost
    assert league.player("c").skill.rating == pytest.approx(1484.0)


def test_quit_rules_are_validated() -> None:
    with pytest.raises(rankcraft.RulesetError, match="'quitter' must be in"):
        rankcraft.loads_ruleset('extends = "elo"\nname = "x"\n[quits]\nquitter = "ban"\n')
