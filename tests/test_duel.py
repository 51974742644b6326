"""The written-out 1-v-1 (``Loop.duel``, rankcraft.loop) gives the general steps' numbers, bit for
bit: every bundled ruleset it serves, over random histories of duels and other shapes, some
with times played (alike: the duel rates them; unlike: the general steps do)."""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rankcraft
from rankcraft.ruleset import bundled_names
from rankcraft.store.memory import MemoryStore


def _duel_rulesets() -> list[str]:
    names = []
    for name in bundled_names():
        if rankcraft.League(name)._steps.duel_ok:  # type: ignore[attr-defined]
            names.append(name)
    return names


DUEL_RULESETS = _duel_rulesets()


def _history(seed: int, n: int) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        players = rng.sample([f"p{k}" for k in range(8)], 4)
        shape = rng.random()
        teams = [[players[0]], [players[1]]] if shape < 0.8 else [players[:2], players[2:]]
        match: dict[str, Any] = {
            "id": f"m{i}",
            # days apart, some on the same day: idle-time decay applies or not
            "played_at": f"2024-{1 + i // 28:02d}-{1 + i % 28:02d}T{rng.choice([9, 18]):02d}:00Z",
            "teams": teams,
            "scores": rng.choice([[1, 0], [0, 1], [2, 2], [3, 1]]),
        }
        if rng.random() < 0.2:
            match["home"] = rng.choice([0, 1])
        if rng.random() < 0.3:  # times: alike (the duel rates it) or not (the general steps)
            played = rng.choice([5400, 600])
            other = played if rng.random() < 0.7 else played // 3
            match["seconds_played"] = [[played] * len(teams[0]), [other] * len(teams[1])]
        out.append(match)
    out.sort(key=lambda m: m["played_at"])
    return out


def test_the_duel_path_serves_the_common_rulesets() -> None:
    assert {"elo", "glicko1", "tennis"} <= set(DUEL_RULESETS)


@pytest.mark.parametrize("name", DUEL_RULESETS)
@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 10**6))
def test_the_written_out_duel_rates_as_the_general_steps(name: str, seed: int) -> None:
    # (a history model refits every day, outside the duel path: 40 matches check its
    # duels as well)
    matches = _history(seed, 40 if rankcraft.load_ruleset(name).fit else 120)
    fast = rankcraft.League(name, store=MemoryStore(pack_after=None))
    fast.record_many(matches)
    general = rankcraft.League(name, store=MemoryStore(pack_after=None))
    general._writer.loop.duels = False  # type: ignore[attr-defined]
    general.record_many(matches)
    assert fast.export() == general.export()
    for m in matches[::7]:
        assert fast.report(m["id"]) == general.report(m["id"])
