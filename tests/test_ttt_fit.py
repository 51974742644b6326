"""The TrueSkill Through Time engine (plugins/_ttt.py) against the reference package
``trueskillthroughtime`` 1.1.0 (Landfried and Mocskos): its documented examples, a slice
of the ATP singles history, draws and 2-v-2 teams; then the warm start and the snapshot.

The package computes Φ with a rational approximation of erfc (relative error ~1e-7)
where the engine uses ``math.erfc``; converged with the tolerance 1e-9 on both sides the
beliefs agree within 1e-6. A chain of three or more teams stops at the package's inner
tolerance (1e-6 on a message), so those games agree within 1e-5.
"""

from __future__ import annotations

import datetime
import gzip
import json
import math
import random
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest
from packaging.version import Version

from rankcraft.plugins._ttt import Game, ThroughTime

TIGHT = 1e-9


def _package() -> Any:
    ttt = pytest.importorskip("trueskillthroughtime")
    if Version(metadata.version("trueskillthroughtime")) < Version("1.1"):
        pytest.skip("needs trueskillthroughtime >= 1.1")
    return ttt


def _fit(
    history: list[tuple[float, list[Game]]], tolerance: float = TIGHT, **params: Any
) -> ThroughTime:
    fit = ThroughTime(**params)
    for time, games in history:
        fit.add(time, games)
    assert fit.converge(tolerance=tolerance, iterations=500).converged
    return fit


def _worst(fit: ThroughTime, curves: dict[Any, list[tuple[Any, Any]]]) -> float:
    """The largest difference in μ or σ between ``fit`` and the package's curves, after
    checking that both have the same players at the same times."""
    worst = 0.0
    assert sorted(map(str, curves)) == sorted(map(str, fit.ids))
    for player, points in curves.items():
        mine = fit.curve(player)
        assert [t for t, _ in points] == [t for t, _, _ in mine]
        for (_, g), (_, mu, sigma) in zip(points, mine, strict=True):
            worst = max(worst, abs(g.mu - mu), abs(g.sigma - sigma))
    return worst


def _best_first(teams: list[list[str]], results: list[float]) -> tuple[list[Any], list[Any]]:
    """The game with its teams listed best first (ties keep their order).

    The package maps a ≥ 3-team game's messages back to the teams with the sorting
    permutation instead of its inverse (``t[o[e]]`` in ``Game.likelihood_teams``), which
    is right only when that permutation is its own inverse; listed best first, it is."""
    order = sorted(range(len(teams)), key=lambda i: -results[i])
    return [teams[i] for i in order], [results[i] for i in order]


def _reference(ttt: Any, games: list[tuple[float, list[list[str]], list[float]]], **p: Any) -> Any:
    sorted_games = [_best_first(g[1], g[2]) for g in games]
    history = ttt.History(
        [g[0] for g in sorted_games], [g[1] for g in sorted_games], [g[0] for g in games], **p
    )
    history.convergence(epsilon=TIGHT, iterations=500, verbose=False)
    return history.learning_curves()


def _batched(games: list[tuple[float, list[list[str]], list[float]]]) -> list[Any]:
    history: list[tuple[float, list[Game]]] = []
    for time, teams, results in games:
        if not history or history[-1][0] != time:
            history.append((time, []))
        history[-1][1].append(Game(teams, results))
    return history


# -- the package's documented examples (its README, "Games" and "Sequence of Events") --


def test_readme_two_versus_two() -> None:
    # README: Game([[a1, a2], [a3, a4]]) with default players -> a1 N(mu=2.361, sigma=5.516)
    fit = _fit([(0.0, [Game([["a1", "a2"], ["a3", "a4"]])])])
    assert fit.posterior("a1") == pytest.approx((2.361, 5.516), abs=5e-4)
    assert fit.posterior("a3") == pytest.approx((-2.361, 5.516), abs=5e-4)
    assert fit.forecast([["a1", "a2"], ["a3", "a4"]], 0.0)[1] == 0.0


def _flat(fit: ThroughTime, player: str) -> list[float]:
    return [x for point in fit.curve(player) for x in point]


def test_readme_three_players_online_then_converged() -> None:
    # README: TrueSkill pass a (1, 3.339, 4.985), (3, -2.688, 3.779); b (1, -3.339,
    # 4.985), (2, 0.059, 4.218); after convergence every belief N(0, 2.395).
    games = [Game([["a"], ["b"]]), Game([["b"], ["c"]]), Game([["c"], ["a"]])]
    fit = ThroughTime(gamma=0.0)
    for time, game in enumerate(games, start=1):
        fit.add(float(time), [game])
    fit.converge(iterations=0)  # one forward pass: the online TrueSkill estimates
    assert _flat(fit, "a") == pytest.approx([1, 3.339, 4.985, 3, -2.688, 3.779], abs=5e-4)
    assert _flat(fit, "b") == pytest.approx([1, -3.339, 4.985, 2, 0.059, 4.218], abs=5e-4)
    assert fit.converge(tolerance=TIGHT, iterations=500).converged
    for player in "abc":
        for _, mu, sigma in fit.curve(player):
            assert (mu, sigma) == pytest.approx((0.0, 2.395), abs=5e-4)


def test_readme_skill_evolution_with_priors() -> None:
    """README "Skill evolution": a player against opponents with known priors (σ 0.2),
    shortened to 80 games and drawn with ``random`` instead of NumPy."""
    ttt = _package()
    rng = random.Random(99)
    target = [2.0 / (1.0 + math.exp(0.0075 * (500 - 12 * i))) for i in range(80)]
    opponents = [rng.gauss(t, 0.5) for t in target]
    games = []
    for i, (t, o) in enumerate(zip(target, opponents, strict=True)):
        won = rng.gauss(t, 1.0) > rng.gauss(o, 1.0)
        games.append((float(i), [["a"], [str(i)]], [1.0, 0.0] if won else [0.0, 1.0]))
    priors = {str(i): ttt.Player(ttt.Gaussian(o, 0.2)) for i, o in enumerate(opponents)}
    curves = _reference(ttt, games, priors=priors, gamma=0.015)
    mine = {str(i): (o, 0.2) for i, o in enumerate(opponents)}
    fit = _fit(_batched(games), priors=mine, gamma=0.015)
    assert _worst(fit, curves) < 1e-6


# -- real data, draws and teams against the package --


def test_atp_singles_slice(shared_data: Path) -> None:
    """The first 160 matches of the ATP singles file (three batches), days since
    2000-01-01, the package's ATP parameters (sigma 1.6, gamma 0.036)."""
    ttt = _package()
    games = []
    epoch = datetime.date(2000, 1, 1).toordinal()
    with gzip.open(shared_data / "atp_singles_2000_2024.jsonl.gz", "rt") as handle:
        for line, _ in zip(handle, range(160), strict=False):
            match = json.loads(line)
            day = datetime.date.fromisoformat(match["played_at"][:10]).toordinal() - epoch
            games.append((float(day), match["teams"], match["scores"]))
    curves = _reference(ttt, games, sigma=1.6, gamma=0.036)
    fit = _fit(_batched(games), sigma=1.6, gamma=0.036)
    assert len(fit.batches.times) >= 2
    assert _worst(fit, curves) < 1e-6


def _random_games(
    seed: int, teams: int, size: int, draws: bool, count: int = 32
) -> list[tuple[float, list[list[str]], list[float]]]:
    rng = random.Random(seed)
    players = [f"p{i}" for i in range(10)]
    games = []
    for i in range(count):
        chosen = rng.sample(players, teams * size)
        sides = [chosen[k * size : (k + 1) * size] for k in range(teams)]
        scores = [float(x) for x in rng.sample(range(teams + 1), teams)]
        if draws and rng.random() < 0.3:
            scores[1] = scores[0]
        games.append((float(i // 4), sides, scores))
    return games


@pytest.mark.parametrize(
    ("teams", "size", "p_draw", "within"),
    [(2, 1, 0.25, 1e-6), (2, 2, 0.0, 1e-6), (2, 2, 0.3, 1e-6), (3, 1, 0.2, 1e-5)],
    ids=["duel-draws", "2v2", "2v2-draws", "three-teams-draws"],
)
def test_against_package(teams: int, size: int, p_draw: float, within: float) -> None:
    ttt = _package()
    games = _random_games(teams * 10 + size, teams, size, p_draw > 0, count=48 // teams)
    curves = _reference(ttt, games, p_draw=p_draw, sigma=1.0, gamma=0.2)
    fit = _fit(_batched(games), p_draw=p_draw, sigma=1.0, gamma=0.2)
    assert _worst(fit, curves) < within


def test_own_drifts_and_priors_against_package() -> None:
    """A player's own gamma (and prior): each side a player and their offset on one of two
    surfaces, the offsets drifting slowly (the package's ``Player(prior, beta, gamma)``)."""
    ttt = _package()
    rng = random.Random(12)
    games = []
    for i in range(40):
        a, b = rng.sample(range(6), 2)
        surface = rng.choice("HC")
        teams = [[f"p{a}", f"p{a}/{surface}"], [f"p{b}", f"p{b}/{surface}"]]
        games.append((float(i // 3), teams, [1.0, 0.0] if rng.random() < 0.6 else [0.0, 1.0]))
    offsets = {f"p{k}/{s}" for k in range(6) for s in "HC"}
    priors = {x: ttt.Player(ttt.Gaussian(0.0, 0.5), beta=1.0, gamma=0.01) for x in offsets}
    curves = _reference(ttt, games, priors=priors, sigma=1.0, gamma=0.2)
    curves = {x: c for x, c in curves.items() if any(x in t for _, ts, _ in games for t in ts)}
    fit = _fit(
        _batched(games),
        sigma=1.0,
        gamma=0.2,
        priors={x: (0.0, 0.5) for x in offsets},
        drifts={x: 0.01 for x in offsets},
    )
    assert _worst(fit, curves) < 1e-6
    last = fit.curve("p1/H")[-1]
    grown = fit.belief("p1/H", last[0] + 100.0)
    assert grown == pytest.approx((last[1], math.sqrt(last[2] ** 2 + 0.01**2 * 100)))


def test_weights_against_package() -> None:
    """Partial play: one weight per player (the package's ``weights``)."""
    ttt = _package()
    rng = random.Random(5)
    games, weights = _random_games(11, 2, 2, False, count=24), []
    for _ in games:
        weights.append([[rng.choice([1.0, 0.5, 0.0, 1.5]) for _ in range(2)] for _ in range(2)])
    history = ttt.History(
        [g[1] for g in games],
        [g[2] for g in games],
        [g[0] for g in games],
        sigma=1.0,
        gamma=0.2,
        weights=weights,
    )
    history.convergence(epsilon=TIGHT, iterations=500, verbose=False)
    batched: list[tuple[float, list[Game]]] = []
    for (time, teams, results), w in zip(games, weights, strict=True):
        if not batched or batched[-1][0] != time:
            batched.append((time, []))
        batched[-1][1].append(Game(teams, results, w))
    fit = _fit(batched, sigma=1.0, gamma=0.2)
    assert _worst(fit, history.learning_curves()) < 1e-6


def test_forecast_matches_package_game_evidence() -> None:
    """The package's Game evidence is P(the given result) under the priors."""
    ttt = _package()
    fit = ThroughTime(p_draw=0.2, priors={"x": (1.0, 2.0), "y": (0.5, 1.0)})
    x = ttt.Player(ttt.Gaussian(1.0, 2.0))
    y = ttt.Player(ttt.Gaussian(0.5, 1.0))
    win, draw, loss = fit.forecast([["x"], ["y"]], 0.0)
    assert win == pytest.approx(ttt.Game([[x], [y]], [1, 0], p_draw=0.2).evidence, abs=1e-6)
    assert draw == pytest.approx(ttt.Game([[x], [y]], [0, 0], p_draw=0.2).evidence, abs=1e-6)
    assert win + draw + loss == pytest.approx(1.0, abs=1e-12)
    assert fit.win_probabilities([["x"], ["y"]], 0.0)[0] == pytest.approx(
        ThroughTime(priors={"x": (1.0, 2.0), "y": (0.5, 1.0)}).forecast([["x"], ["y"]], 0.0)[0],
        abs=1e-9,
    )


# -- warm start and snapshot --


def test_day_by_day_equals_one_go() -> None:
    """Converging after every day, or once at the end, lands on the same fixed point:
    both stop when nothing moves by more than 1e-8, so they agree within 1e-6 (the
    stopping error, amplified by slow modes of the chain, stays well under 100x)."""
    games = _random_games(7, 2, 1, False, count=80)
    history = _batched(games)
    whole = _fit(history, tolerance=1e-8, sigma=1.0)
    daily = ThroughTime(sigma=1.0)
    for time, day in history:
        daily.add(time, day)
        assert daily.converge(tolerance=1e-8, iterations=500).converged
    for player in whole.ids:
        for a, b in zip(whole.curve(player), daily.curve(player), strict=True):
            assert a == pytest.approx(b, abs=1e-6)


def _weakly_linked(days: int) -> list[tuple[float, list[Game]]]:
    """Six groups of five players, 95% of the games within a group, a game a day (the
    history of benchmarks/ttt_drift.py)."""
    rng = random.Random(4)
    groups = [[f"G{g}T{k}" for k in range(5)] for g in range(6)]
    history = []
    for day in range(days):
        group = rng.choice(groups)
        a, b = rng.sample(group, 2) if rng.random() < 0.95 else (group[0], rng.choice(groups)[1])
        if a != b:
            results = [1.0, 0.0] if rng.random() < 0.5 else [0.0, 1.0]
            history.append((float(day), [Game(((a,), (b,)), results)]))
    return history


@pytest.mark.slow(seconds=4)
def test_small_moves_add_up_and_are_passed_on() -> None:
    """A converged refit leaves no belief more than the tolerance from what its
    neighbours were last told, however many refits each moved it by less; so daily warm
    refits of a weakly linked history end near the fit converged to 1e-7 (0.025 at
    tolerance 1e-3 after 300 days: before the told beliefs were kept, moves under the
    tolerance were dropped and the refits ended 0.120 away)."""
    history = _weakly_linked(300)
    warm = ThroughTime(0.0, 6.0, 1.0, 0.03, 0.0)
    exact = ThroughTime(0.0, 6.0, 1.0, 0.03, 0.0)
    checked = 0
    for time, day in history:
        warm.add(time, day)
        exact.add(time, day)
        if not warm.converge(1e-3, 30).converged or time % 20:
            continue  # (what still moves stays marked for the next refit)
        checked += 1
        store = warm.store
        for s in range(len(store.ap_player)):
            mu, sigma = store.posterior(s)
            assert abs(mu - store.told_mu[s]) <= 1e-3 and abs(sigma - store.told_sigma[s]) <= 1e-3
    assert checked > len(history) // 40
    exact.converge(1e-7, 2000)
    worst = max(abs(warm.posterior(p)[0] - exact.posterior(p)[0]) for p in exact.ids)
    assert 0.01 < worst < 0.04


def test_snapshot_round_trip_is_exact() -> None:
    games = _random_games(3, 2, 2, True)
    fit = ThroughTime(p_draw=0.3, priors={"p1": (1.5, 0.5)}, drifts={"p2": 0.5})
    half = _batched(games)
    for time, day in half[:8]:
        fit.add(time, day)
    fit.converge(tolerance=1e-3, iterations=2)
    data = json.loads(json.dumps(fit.to_dict()))
    again = ThroughTime.from_dict(data)
    assert again.to_dict() == data
    for time, day in half[8:]:
        fit.add(time, day)
        again.add(time, day)
    assert fit.converge(tolerance=1e-4) == again.converge(tolerance=1e-4)
    assert fit.to_dict() == again.to_dict()
    forced = again.converge(tolerance=1e-4, since=half[3][0])  # batches 3.. visited again
    assert forced.converged and forced.games >= sum(len(day) for _, day in half[3:])
    assert again.converge(tolerance=1e-4).games == 0  # nothing left to do


def test_bad_drifts_refused() -> None:
    with pytest.raises(ValueError, match="gamma of 'a' must be ≥ 0"):
        ThroughTime(drifts={"a": -0.1})
    with pytest.raises(ValueError, match="gamma of 'a' must be a finite number"):
        ThroughTime(drifts={"a": math.inf})


@pytest.mark.parametrize(
    "game",
    [
        Game([["a"]], None),
        Game([["a"], []], None),
        Game([["a"], ["a"]], None),
        Game([["a"], ["b"]], [1.0, 1.0]),
        Game([["a"], ["b"]], [1.0, math.nan]),
        Game([["a"], ["b"]], [1.0, 0.0], [[1.0], [-1.0]]),
    ],
    ids=["one-team", "empty", "twice", "draw-without-p_draw", "nan", "negative-weight"],
)
def test_bad_games_refused(game: Game) -> None:
    fit = ThroughTime()
    fit.add(1.0, [Game([["a"], ["b"]])])
    with pytest.raises(ValueError):
        fit.add(1.0, [game])
    with pytest.raises(ValueError):
        fit.add(0.5, [Game([["a"], ["b"]])])
    assert len(fit.store.games) == 1


# -- evidence from outside the games --


def test_evidence_at_a_first_appearance_is_a_prior_times_it() -> None:
    """Evidence N(2, 0.5²) about a newcomer at their first game is their prior
    N(0, 6²) times it; given again about the same player and time, it is not counted
    twice; at a later time it joins that appearance."""
    pi = 6.0**-2 + 0.5**-2
    games = [Game([["a"], ["b"]], [1.0, 0.0]), Game([["b"], ["c"]], [1.0, 0.0])]
    known = ThroughTime(priors={"a": (2.0 * 0.5**-2 / pi, pi**-0.5)})
    told = ThroughTime()
    known.add(1.0, games[:1])
    told.add(1.0, games[:1], {"a": (2.0, 0.5)})
    told.add(1.0, games[1:], {"b": (-1.0, 2.0)})
    told.add(1.0, [Game([["a"], ["c"]], [1.0, 0.0])], {"a": (9.0, 0.1)})  # (ignored)
    known.add(1.0, games[1:], {"b": (-1.0, 2.0)})
    known.add(1.0, [Game([["a"], ["c"]], [1.0, 0.0])])
    for fit in (known, told):
        fit.add(5.0, [Game([["c"], ["a"]], [1.0, 0.0])], {"c": (1.0, 1.0)})
        assert fit.converge(1e-12, 500).converged
    for player in "abc":
        for a, b in zip(told.curve(player), known.curve(player), strict=True):
            assert a == pytest.approx(b, abs=1e-12)


@pytest.mark.parametrize(
    "evidence",
    [
        {"z": (0.0, 1.0)},
        {"a": (0.0, 0.0)},
        {"a": (math.nan, 1.0)},
        {"a": (1.0,)},
        {"a": (0.0, 1e-200)},
        {"a": (1e300, 1e-5)},
    ],
    ids=["not-playing", "zero-sigma", "nan", "not-a-pair", "overflowing", "infinite-tau"],
)
def test_bad_evidence_refused_and_nothing_added(evidence: dict[str, Any]) -> None:
    fit = ThroughTime()
    fit.add(0.0, [Game([["a"], ["b"]])])
    fit.converge()
    before = fit.to_dict()
    with pytest.raises(ValueError, match="evidence"):
        fit.add(1.0, [Game([["a"], ["c"]])], evidence)
    assert fit.to_dict() == before


def test_a_snapshot_keeps_the_evidence() -> None:
    fit = ThroughTime()
    fit.add(1.0, [Game([["a"], ["b"]], [1.0, 0.0])], {"a": (1.0, 0.5)})
    fit.add(2.0, [Game([["b"], ["a"]], [1.0, 0.0])], {"b": (0.5, 0.7)})
    fit.converge(1e-3, 3)
    data = json.loads(json.dumps(fit.to_dict()))
    again = ThroughTime.from_dict(data)
    assert again.to_dict() == data
    fit.add(3.0, [Game([["a"], ["c"]], [1.0, 0.0])], {"a": (0.0, 0.5)})
    again.add(3.0, [Game([["a"], ["c"]], [1.0, 0.0])], {"a": (0.0, 0.5)})
    assert fit.converge(1e-9, 100) == again.converge(1e-9, 100)
    assert fit.to_dict() == again.to_dict()
    data["evidence"][0][1] = "nobody"
    with pytest.raises(ValueError, match="fits no appearance"):
        ThroughTime.from_dict(data)
