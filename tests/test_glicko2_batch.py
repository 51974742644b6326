"""Glicko-2 periods in NumPy arrays against the pure-Python reference."""

from __future__ import annotations

import builtins
import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

np = pytest.importorskip("numpy", reason="the numpy extra is part of the test extra")

import rankcraft  # noqa: E402
from rankcraft.plugins._glicko2_batch import rate_period, rate_period_reference  # noqa: E402
from rankcraft.plugins.glicko2 import SCALE  # noqa: E402

states_st = st.tuples(st.floats(-4, 4), st.floats(0.05, 2.5), st.floats(0.02, 0.2))
result_st = st.tuples(
    st.floats(-4, 4),
    st.floats(0.05, 2.5),
    st.sampled_from([0.0, 0.5, 1.0]),
    st.sampled_from([1.0, 0.5, 0.25, 0.0]),
)


@settings(max_examples=200, deadline=None)
@given(
    players=st.lists(
        st.tuples(states_st, st.lists(result_st, max_size=12)), min_size=1, max_size=40
    ),
    tau=st.sampled_from([0.3, 0.5, 1.2, 0.01]),
)
def test_arrays_equal_the_reference(players: list[Any], tau: float) -> None:
    states = [p[0] for p in players]
    results = [p[1] for p in players]
    expected = rate_period_reference(states, results, tau)
    owner = np.repeat(np.arange(len(players)), [len(r) for r in results])
    flat = np.array([r for rs in results for r in rs] or np.empty((0, 4)), dtype=float)
    flat = flat.reshape(-1, 4)
    mu, phi, sigma = rate_period(
        *(np.array(states, dtype=float).T),
        owner=owner,
        opponent_mu=flat[:, 0],
        opponent_phi=flat[:, 1],
        score=flat[:, 2],
        weight=flat[:, 3],
        tau=tau,
    )
    for i, (m, p, s) in enumerate(expected):
        assert math.isclose(mu[i], m, rel_tol=1e-9, abs_tol=1e-12), (i, mu[i], m)
        assert math.isclose(phi[i], p, rel_tol=1e-9, abs_tol=1e-12)
        assert math.isclose(sigma[i], s, rel_tol=1e-9, abs_tol=1e-12)


def test_glickmans_example_in_arrays() -> None:
    mu, phi, sigma = rate_period(
        np.array([0.0, 0.3]),
        np.array([200 / SCALE, 1.0]),
        np.array([0.06, 0.06]),
        owner=np.array([0, 0, 0]),
        opponent_mu=np.array([-100.0, 50.0, 200.0]) / SCALE,
        opponent_phi=np.array([30.0, 100.0, 300.0]) / SCALE,
        score=np.array([1.0, 0.0, 0.0]),
        weight=np.ones(3),
        tau=0.5,
    )
    # Glickman (2012): r' = 1464.06, RD' = 151.52, sigma' = 0.05999
    assert 1500 + SCALE * mu[0] == pytest.approx(1464.06, abs=0.01)
    assert SCALE * phi[0] == pytest.approx(151.52, abs=0.01)
    assert sigma[0] == pytest.approx(0.05999, abs=1e-5)
    # a player without results: only time passes
    assert (mu[1], sigma[1]) == (0.3, 0.06)
    assert phi[1] == pytest.approx(math.sqrt(1.0 + 0.06**2), rel=1e-15)


BATCH_RULESET = """
name = "g2-weekly"
[period]
mode = "batch"
length_days = 7.0
[update]
plugin = "glicko2"
[update.params]
tau = 0.5
bounded = true
[team]
plugin = "mean"
"""


def _weekly_history(n: int) -> list[dict[str, Any]]:
    import random

    rng = random.Random(3)
    return [
        {
            "id": f"m{i}",
            "played_at": "2024-01-01T00:00:00Z",
            "teams": [[f"p{a}"], [f"p{b}"]],
            "scores": rng.choice([[1, 0], [0, 1], [1, 1]]),
        }
        for i in range(n)
        for a, b in [rng.sample(range(300), 2)]
    ]


def test_close_period_in_arrays_equals_the_hooks() -> None:
    ruleset = rankcraft.loads_ruleset(BATCH_RULESET)
    arrays = rankcraft.League(ruleset)
    hooks = rankcraft.League(ruleset)
    hooks._period_kernel = None
    assert arrays._period_kernel is not None
    history = _weekly_history(2000)
    arrays.record_many(history)
    hooks.record_many(history)
    assert len(arrays) == len(hooks) > 250
    for record in hooks.players():
        other = arrays.player(record.id)
        assert not other.pending and other.matches == record.matches
        for field in ("mu", "phi", "sigma"):
            assert getattr(other.skill, field) == pytest.approx(
                getattr(record.skill, field), rel=1e-9, abs=1e-12
            )


def test_without_numpy_the_hooks_rate_the_period(monkeypatch: pytest.MonkeyPatch) -> None:
    real_import = builtins.__import__

    def no_numpy(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "numpy" or name.startswith("numpy."):
            raise ImportError("no numpy here")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_numpy)
    league = rankcraft.League(rankcraft.loads_ruleset(BATCH_RULESET))
    assert league._period_kernel is None
    league.record_many(_weekly_history(50))
    assert all(not r.pending for r in league.players())
