"""The ``ttt`` plugin in a league: the states the league holds are the TrueSkill Through
Time fit of every earlier day (the engine, checked against the ``trueskillthroughtime``
package in tests/test_ttt_fit.py), TrueSkill's step moves players within a day, and the
decay grows σ by γ² per idle day."""

from __future__ import annotations

import math
import random
from typing import Any

import attrs
import pytest

import rankcraft
from rankcraft.plugins._ttt import Game, ThroughTime
from rankcraft.plugins.ttt import _game, day_of, game_of


def history(days: int = 12, seed: int = 4, teams: int = 1) -> list[dict[str, Any]]:
    """A few matches a day among 10 players, with draws."""
    rng = random.Random(seed)
    out = []
    for day in range(days):
        for k in range(rng.randrange(1, 5)):
            players = rng.sample(range(10), 2 * teams)
            out.append(
                {
                    "id": f"d{day}-{k}",
                    "played_at": f"2024-05-{day + 1:02d}T{10 + k}:00:00Z",
                    "teams": [
                        [f"p{p}" for p in players[:teams]],
                        [f"p{p}" for p in players[teams:]],
                    ],
                    "scores": rng.choice([[1, 0], [0, 1], [2, 2]]),
                }
            )
    return out


def ruleset(extra: str = "", params: str = "") -> rankcraft.Ruleset:
    """``ttt`` with gamma 0.2, draws, tight refits, and more ``[update.params]`` lines."""
    return rankcraft.loads_ruleset(
        'name = "t"\nextends = "ttt"\n[update.params]\ngamma = 0.2\ndraw_probability = 0.2\n'
        + params
        + "[history]\ntolerance = 1e-9\niterations = 200\n"
        + extra
    )


def refitted(rules: rankcraft.Ruleset, matches: list[dict[str, Any]]) -> rankcraft.League:
    """A league of ``matches``, then a match of two newcomers on the next day: the
    league then holds the fit of every day before it."""
    league = rankcraft.League(rules)
    league.record_many(matches)
    league.record(
        {"id": "next", "played_at": "2024-06-01", "teams": [["n1"], ["n2"]], "scores": [1, 0]}
    )
    return league


def engine_fit(matches: list[dict[str, Any]], params: Any) -> ThroughTime:
    """The engine fed day by day, as the league feeds it."""
    fit = ThroughTime(params.mu, params.sigma, params.beta, params.gamma, params.draw_probability)
    days: dict[int, list[Any]] = {}
    for m in matches:
        match = rankcraft.parse_match(m)
        days.setdefault(day_of(match.played_at), []).append(game_of(match))
    for day, games in days.items():
        fit.add(float(day), games)
        fit.converge(1e-9, 200)
    return fit


@pytest.mark.parametrize("teams", [1, 2])
def test_the_league_holds_the_fit_of_the_earlier_days(teams: int) -> None:
    matches = history(teams=teams)
    league = refitted(ruleset(), matches)
    fit = engine_fit(matches, league.ruleset.update.params)
    for player in fit.ids:
        mu, sigma = fit.posterior(player)
        skill = league.player(player).skill
        assert skill.mu == pytest.approx(mu, abs=1e-12) and skill.sigma == pytest.approx(
            sigma, abs=1e-12
        )
    assert [round(mu, 9) for _, mu, _ in fit.curve("p3")] == [
        round(s.mu, 9) for _, s in league.curve("p3")
    ]


def test_a_forecast_grows_sigma_by_gamma_per_idle_day() -> None:
    league = rankcraft.League(ruleset())
    league.record_many(history())
    last = league.player("p1")
    later = last.last_played.replace(day=last.last_played.day + 1)
    days = 10
    at = later.replace(day=later.day + days - 1)
    forecast = league.predict([["p1"], ["p2"]], at=at)
    p1, p2 = league.player("p1").skill, league.player("p2").skill
    gamma, beta = 0.2, 1.0

    def grown(record: Any) -> float:
        idle = (at - record.last_played).total_seconds() / 86400.0
        return math.sqrt(record.skill.sigma**2 + gamma**2 * idle)

    sd = math.sqrt(grown(league.player("p1")) ** 2 + grown(league.player("p2")) ** 2 + 2 * beta**2)
    assert forecast[0] == pytest.approx(0.5 * math.erfc(-(p1.mu - p2.mu) / sd / math.sqrt(2)))


def test_three_way_outcomes_use_the_draw_margin() -> None:
    league = rankcraft.League(ruleset())
    league.record_many(history())
    forecast = league.forecast([["p1"], ["p2"]])
    assert forecast.draw is not None and 0.0 < forecast.draw < 1.0
    assert sum(forecast.win) + forecast.draw == pytest.approx(1.0)


def test_tau_stays_zero() -> None:
    with pytest.raises(rankcraft.RulesetError, match=r"'tau'"):
        rankcraft.loads_ruleset('name = "t"\nextends = "ttt"\n[update.params]\ntau = 0.1\n')


# -- a ranking as evidence of skill (evidence_field) --


def evidence_ruleset() -> rankcraft.Ruleset:
    return ruleset(
        params='evidence_field = "atp_rank"\nevidence_at_one = 3.0\nevidence_per_log = 0.5\n'
        "evidence_sd = 1.5\n"
    )


def with_meta(
    matches: list[dict[str, Any]], key: str, pick: Any, seed: int
) -> list[dict[str, Any]]:
    """``matches`` with ``meta[key] = pick(rng, match)`` added."""
    rng = random.Random(seed)
    for m in matches:
        m["meta"] = {**m.get("meta", {}), key: pick(rng, m)}
    return matches


def ranked(matches: list[dict[str, Any]], seed: int = 9) -> list[dict[str, Any]]:
    """``matches`` with a ranking per side (now and then unknown)."""
    return with_meta(
        matches,
        "atp_rank",
        lambda rng, m: [rng.choice([None, 1, 7, 40, 250]) for _ in m["teams"]],
        seed,
    )


def engine_fit_with_evidence(matches: list[dict[str, Any]], params: Any) -> ThroughTime:
    """The engine fed day by day with each player's first evidence of the day."""
    fit = ThroughTime(params.mu, params.sigma, params.beta, params.gamma, params.draw_probability)
    days: dict[int, tuple[list[Any], dict[Any, tuple[float, float]]]] = {}
    for m in matches:
        match = rankcraft.parse_match(m)
        games, known = days.setdefault(day_of(match.played_at), ([], {}))
        games.append(game_of(match))
        for side, rank in enumerate(m["meta"]["atp_rank"]):
            if rank is not None:
                known.setdefault(match.teams[side][0], (3.0 - 0.5 * math.log(rank), 1.5))
    for day, (games, known) in days.items():
        fit.add(float(day), games, known)
        fit.converge(1e-9, 200)
    return fit


def test_the_fit_takes_each_days_ranking_as_evidence() -> None:
    matches = ranked(history())
    league = refitted(evidence_ruleset(), matches)
    params = league.ruleset.update.params
    fit = engine_fit_with_evidence(matches, params)
    plain = engine_fit(matches, params)
    moved = 0.0
    for player in fit.ids:
        skill = league.player(player).skill
        assert (skill.mu, skill.sigma) == pytest.approx(fit.posterior(player), abs=1e-12)
        moved = max(moved, abs(skill.mu - plain.posterior(player)[0]))
    assert moved > 0.1  # (the evidence counts)


def test_a_newcomer_is_forecast_and_rated_from_the_prior_times_the_evidence() -> None:
    league = rankcraft.League(evidence_ruleset())
    params = league.ruleset.update.params
    first = {
        "id": "n",
        "played_at": "2024-05-01",
        "teams": [["top"], ["unknown"]],
        "scores": [0, 1],
        "meta": {"atp_rank": [1, None]},
    }
    # prior N(0, 6²) times evidence N(3, 1.5²): precision 1/36 + 1/2.25
    pi = 1 / 36 + 1 / 2.25
    mu, sigma = 3.0 / 2.25 / pi, pi**-0.5
    sd = math.sqrt(sigma**2 + 36 + 2 * params.beta**2)
    expected = 0.5 * math.erfc(-mu / sd / math.sqrt(2))
    report = league.record(first)
    assert report.expected[0] == pytest.approx(expected, abs=1e-12)
    # the update starts from that belief: TrueSkill's step of a player who had it and lost
    c = sd
    t = (-mu - params.draw_margin(2)) / c  # (the winner's mean, 0, less the loser's, less ε)
    v = math.exp(-t * t / 2) / math.sqrt(2 * math.pi) / (0.5 * math.erfc(-t / math.sqrt(2)))
    w = v * (v + t)
    top = league.player("top").skill
    assert top.mu == pytest.approx(mu - sigma**2 / c * v, abs=1e-12)
    assert top.sigma == pytest.approx(sigma * math.sqrt(1 - sigma**2 / c**2 * w), abs=1e-12)


def test_a_ranking_of_a_team_side_is_no_evidence() -> None:
    """Evidence is about one player: a side of two newcomers listed with a rank is
    forecast and rated as without it."""
    match = {
        "id": "d",
        "played_at": "2024-05-01",
        "teams": [["a", "b"], ["c", "d"]],
        "scores": [1, 0],
        "meta": {"atp_rank": [1, 500]},
    }
    with_rank = rankcraft.League(evidence_ruleset()).record(match)
    plain = rankcraft.League(ruleset()).record(match)
    assert with_rank.expected == plain.expected
    assert with_rank.changes == plain.changes


@pytest.mark.parametrize(
    "params",
    ['evidence_field = "meta.atp_rank"', "evidence_sd = 0.0", "evidence_per_log = nan"],
)
def test_bad_evidence_params_are_refused(params: str) -> None:
    with pytest.raises(rankcraft.RulesetError, match=params.split(" ")[0]):
        rankcraft.loads_ruleset(f'name = "t"\nextends = "ttt"\n[update.params]\n{params}\n')


# -- a skill offset per value of a match field (offset_field) --


def offset_ruleset() -> rankcraft.Ruleset:
    return ruleset(
        params='offset_field = "surface"\noffset_values = ["Hard", "Clay"]\n'
        "offset_sigma = 0.7\noffset_gamma = 0.05\n"
    )


def surfaced(matches: list[dict[str, Any]], seed: int = 3) -> list[dict[str, Any]]:
    """``matches`` on a surface each (now and then one without offsets, or none)."""
    return with_meta(
        matches, "surface", lambda rng, m: rng.choice(["Hard", "Hard", "Clay", "Grass"]), seed
    )


def test_the_fit_plays_each_player_with_their_offset() -> None:
    matches = surfaced(history())
    league = refitted(offset_ruleset(), matches)
    params = league.ruleset.update.params
    fit = ThroughTime(params.mu, params.sigma, params.beta, params.gamma, params.draw_probability)
    days: dict[int, list[Any]] = {}
    for m in matches:
        match = rankcraft.parse_match(m)
        surface = m["meta"]["surface"]
        teams = match.teams
        if surface in ("Hard", "Clay"):
            teams = tuple((p, f"{p}/{surface}") for side in match.teams for p in side)
            for side in teams:
                fit.priors.setdefault(side[1], (0.0, 0.7))
                fit.drifts.setdefault(side[1], 0.05)
        days.setdefault(day_of(match.played_at), []).append(
            rankcraft.plugins._ttt.Game(teams, game_of(match).results)
        )
    for day, games in days.items():
        fit.add(float(day), games)
        fit.converge(1e-9, 200)
    for player in (p for p in fit.ids if "/" not in p):
        skill = league.player(player).skill
        assert (skill.mu, skill.sigma) == pytest.approx(fit.posterior(player), abs=1e-12)
        last = fit.curve(player)[-1][0]
        for k, surface in enumerate(("Hard", "Clay")):
            offset = f"{player}/{surface}"
            want = fit.belief(offset, last) if offset in fit.index else (0.0, 0.7)
            got = (skill.offset_mu[k], skill.offset_sigma[k])
            assert got == pytest.approx(want, abs=1e-12)


def test_a_forecast_adds_the_offset_of_the_matchs_value() -> None:
    league = rankcraft.League(offset_ruleset())
    league.record_many(surfaced(history()))
    a, b = league.player("p1"), league.player("p2")
    at = max(a.last_played, b.last_played)
    params = league.ruleset.update.params
    for surface, k in (("Clay", 1), ("Grass", None)):
        match = {
            "id": f"x-{surface}",
            "played_at": at.isoformat(),
            "teams": [["p1"], ["p2"]],
            "scores": [1, 0],
            "meta": {"surface": surface},
        }
        grown = []
        for record in (a, b):
            idle = (at - record.last_played).total_seconds() / 86400.0
            mu, var = record.skill.mu, record.skill.sigma**2 + 0.2**2 * idle
            if k is not None:
                mu += record.skill.offset_mu[k]
                var += record.skill.offset_sigma[k] ** 2 + 0.05**2 * idle
            grown.append((mu, var))
        performers = 2 if k is None else 4  # (a player and their offset: each adds β²)
        sd = math.sqrt(grown[0][1] + grown[1][1] + performers * params.beta**2)
        expected = 0.5 * math.erfc(-(grown[0][0] - grown[1][0]) / sd / math.sqrt(2))
        report = league.record(match)
        assert report.expected[0] == pytest.approx(expected, abs=1e-12)
        after = league.player("p1").skill
        if k is None:  # (no offset moves on a value without one)
            assert after.offset_mu == a.skill.offset_mu
        else:  # (only the match's offset moves)
            assert after.offset_mu[0] == a.skill.offset_mu[0]
            assert after.offset_mu[1] > a.skill.offset_mu[1]
        a, b = league.player("p1"), league.player("p2")


def test_an_offset_never_played_on_keeps_its_prior_while_idle() -> None:
    """As in the fit (a belief drifts only after its first game), the decay leaves an
    offset never played on at its prior; the skill drifts by gamma."""
    league = rankcraft.League(offset_ruleset())
    first = {"id": "h", "played_at": "2024-01-01", "teams": [["a"], ["b"]], "scores": [1, 0]}
    league.record({**first, "meta": {"surface": "Hard"}})
    later = {**first, "id": "c", "played_at": "2024-04-10", "meta": {"surface": "Clay"}}
    a, b = league.player("a").skill, league.player("b").skill
    assert a.offset_sigma[1] == 0.7 and a.offset_sigma[0] < 0.7  # (clay never played)
    report = league.record(later)
    idle, gamma = 100.0, 0.2
    variance = sum(s.sigma**2 + gamma**2 * idle + 0.7**2 for s in (a, b))  # (clay at its prior)
    sd = math.sqrt(variance + 4 * 1.0)  # (4 performers: two players and their offsets, beta 1)
    gap = a.mu + a.offset_mu[1] - (b.mu + b.offset_mu[1])
    assert report.expected[0] == pytest.approx(0.5 * math.erfc(-gap / sd / math.sqrt(2)), abs=1e-12)


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ('offset_field = "surface"', "needs 'offset_values'"),
        ('offset_field = "surface"\noffset_values = ["Hard", "Hard"]', "a value twice"),
        ("offset_sigma = 0.0", "offset_sigma"),
        ("offset_gamma = -1.0", "offset_gamma"),
    ],
)
def test_bad_offset_params_are_refused(params: str, message: str) -> None:
    with pytest.raises(rankcraft.RulesetError, match=message):
        rankcraft.loads_ruleset(f'name = "t"\nextends = "ttt"\n[update.params]\n{params}\n')


def test_the_tennis_rulesets_of_the_accuracy_page_load() -> None:
    """benchmarks/rulesets (docs/accuracy.md): each loads, and ttt-tennis is ttt-ranked
    with surface offsets."""
    from pathlib import Path

    folder = Path(__file__).resolve().parents[1] / "benchmarks" / "rulesets"
    if not folder.is_dir():
        pytest.skip("benchmarks/ is not beside the tests (an installed copy)")
    loaded = {p.stem: rankcraft.load_ruleset(p) for p in folder.glob("ttt-*.toml")}
    assert set(loaded) == {"ttt-atp", "ttt-ranked", "ttt-tennis"}
    ranked, tennis = loaded["ttt-ranked"].update.params, loaded["ttt-tennis"].update.params
    assert (tennis.evidence_field, tennis.offset_field) == ("atp_rank", "surface")
    assert attrs.evolve(tennis, offset_field=None, offset_values=()) == ranked


def test_the_fit_weighs_a_player_by_their_share_of_play() -> None:
    """``seconds_played`` enters the fit as each player's weight in the team's
    performance (the package's ``weights``; the engine's are checked against it in
    tests/test_ttt_fit.py), as it enters the within-day step."""
    matches = history(teams=2)
    for m in matches:
        m["seconds_played"] = [[90, 45], [90, 90]]  # (the second player of side 0: half)
    league = refitted(ruleset(), matches)
    params = league.ruleset.update.params
    weighted = ThroughTime(
        params.mu, params.sigma, params.beta, params.gamma, params.draw_probability
    )
    plain = ThroughTime(params.mu, params.sigma, params.beta, params.gamma, params.draw_probability)
    days: dict[int, list[Any]] = {}
    for m in matches:
        match = rankcraft.parse_match(m)
        results = [-float(place) for place in match.places]
        days.setdefault(day_of(match.played_at), []).append((match.teams, results))
    for day, games in days.items():
        weighted.add(float(day), [Game(t, r, [[1.0, 0.5], [1.0, 1.0]]) for t, r in games])
        plain.add(float(day), [Game(t, r) for t, r in games])
        weighted.converge(1e-9, 200)
        plain.converge(1e-9, 200)
    moved = 0.0
    for player in weighted.ids:
        skill = league.player(player).skill
        assert (skill.mu, skill.sigma) == pytest.approx(weighted.posterior(player), abs=1e-12)
        moved = max(moved, abs(weighted.posterior(player)[0] - plain.posterior(player)[0]))
    assert moved > 0.05  # (the weights change the fit)


def test_a_game_carries_the_shares_of_play_as_the_step_floors_them() -> None:
    """With offsets each player's share weighs their offset too; a player with no time
    counts at the step's ``min_delta``; shares all 1 are left out (the duel's fast path)."""
    params = ruleset(params='offset_field = "surface"\noffset_values = ["Clay"]\n').update.params
    fit = ThroughTime(params.mu, params.sigma, params.beta, params.gamma, params.draw_probability)
    match = rankcraft.parse_match(
        {"id": "m", "played_at": "2024-05-01", "teams": [["a", "b"], ["c"]], "scores": [1, 0],
         "seconds_played": [[90, 0], [45]], "meta": {"surface": "Clay"}}
    )  # fmt: skip
    game = _game(params, fit, match)
    floor = params.min_delta
    assert game.weights == [[1.0, 1.0, floor, floor], [0.5, 0.5]]
    assert len(game.teams[0]) == 4 and game.teams[1][0] == "c"
    even = rankcraft.parse_match(
        {"id": "e", "played_at": "2024-05-01", "teams": [["a"], ["c"]], "scores": [1, 0],
         "seconds_played": [[90], [90]]}
    )  # fmt: skip
    assert game_of(even).weights is None
