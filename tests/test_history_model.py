"""The core's side of a whole-history model (the ``[fit]`` slot, rankcraft.fithooks): a third
party's fit on the same path as a bundled one, refitted before each day's first match,
kept or rolled back with the transaction, rebuilt from the stored history exactly."""

from __future__ import annotations

import json
import math
import random
from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

import rankcraft
from rankcraft import FitLimits, Match

DAY = 86400.0


class Tally:
    """A history model whose skill is a time-weighted tally of results: every match
    counts ``100 · (s − ½) · exp(−age / 30 days)`` at the refit's time. A function of
    the whole history, so a refit moves players who did not play."""

    @rankcraft.hookimpl
    def rankcraft_fit_start(self) -> Any:
        return []

    @rankcraft.hookimpl
    def rankcraft_fit(
        self, fit: list[Match], matches: Sequence[Match], now: datetime, limits: FitLimits
    ) -> Mapping[str, tuple[float, ...]]:
        fit.extend(matches)
        if any(m.meta.get("fail") for m in matches):  # (a fit that fails half-way)
            raise ValueError("the tally cannot take this match")
        sums: dict[str, float] = {}
        for m in fit:
            age = (now - m.played_at).total_seconds() / DAY
            if limits.window_days and age > limits.window_days:
                continue
            w = math.exp(-age / 30.0)
            a, b = m.places
            s = 1.0 if a < b else 0.0 if a > b else 0.5
            for side, score in ((0, s), (1, 1 - s)):
                for p in m.teams[side]:
                    sums[p] = sums.get(p, 0.0) + 100.0 * (score - 0.5) * w
        return {p: (1500.0 + v, 1500.0 + v) for p, v in sums.items()}

    @rankcraft.hookimpl
    def rankcraft_fit_curve(self, fit: list[Match], player: str) -> list[tuple[datetime, Any]]:
        return [
            (m.played_at, (float(i), float(i)))
            for i, m in enumerate(fit)
            if any(player in side for side in m.teams)
        ]


RULESET = 'name = "tally"\n[update]\nplugin = "elo"\n[fit]\nplugin = "tally"\n'


@pytest.fixture(scope="module")
def plugins() -> rankcraft.Plugins:
    pm = rankcraft.get_plugin_manager()
    pm.register(Tally(), name="tally")
    return rankcraft.Plugins(pm)


def ruleset(plugins: rankcraft.Plugins, extra: str = "") -> rankcraft.Ruleset:
    return rankcraft.loads_ruleset(RULESET + extra, plugins=plugins)


def history(n: int = 300, seed: int = 3, players: int = 8, a_day: int = 3) -> list[dict[str, Any]]:
    """1-v-1 matches among ``players`` players, ``a_day`` a day (n = 300: 100 days)."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        a, b = rng.sample(range(players), 2)
        day, hour = divmod(i, a_day)
        out.append(
            {
                "id": f"m{i}",
                "played_at": f"2024-{1 + day // 28:02d}-{1 + day % 28:02d}T{8 + hour:02d}:00Z",
                "teams": [[f"p{a}"], [f"p{b}"]],
                "scores": rng.choice([[1, 0], [0, 1], [1, 1]]),
            }
        )
    return out


def test_a_refit_comes_before_each_days_first_match(plugins: rankcraft.Plugins) -> None:
    league = rankcraft.League(ruleset(plugins), plugins=plugins)
    day1 = [
        {"id": "a", "played_at": "2024-03-01T10:00:00Z", "teams": [["x"], ["y"]], "scores": [1, 0]},
        {"id": "b", "played_at": "2024-03-01T12:00:00Z", "teams": [["x"], ["z"]], "scores": [1, 0]},
    ]
    league.record_many(day1)
    # within the day, elo rates forward: x won twice with K = 32
    assert league.player("x").skill.rating == pytest.approx(
        1500 + 16 + 32 * (1 - 1 / (1 + 10 ** (-16 / 400)))
    )
    report = league.record(
        {"id": "c", "played_at": "2024-03-02T09:00:00Z", "teams": [["y"], ["z"]], "scores": [0, 1]}
    )
    # the day's first match met the fit of day 1: y lost 23 hours before, z 21 hours
    w10, w12 = math.exp(-(23 / 24) / 30.0), math.exp(-(21 / 24) / 30.0)
    assert report.changes[0].skill_before.rating == pytest.approx(1500.0 - 50.0 * w10)
    assert report.changes[1].skill_before.rating == pytest.approx(1500.0 - 50.0 * w12)
    # x did not play, and was refitted too (two wins)
    assert league.player("x").skill.rating == pytest.approx(1500.0 + 50.0 * (w10 + w12))


def test_the_fit_of_a_database_is_rebuilt_exactly(
    plugins: rankcraft.Plugins, tmp_path: Path
) -> None:
    matches = history()
    continuous = rankcraft.League(ruleset(plugins), plugins=plugins)
    continuous.record_many(matches)
    path = tmp_path / "t.sqlite"
    for start, stop in ((0, 100), (100, 101), (101, 250), (250, 300)):
        with rankcraft.League.open(path, ruleset(plugins), plugins=plugins) as league:
            for m in matches[start:stop] if stop - start < 5 else ():
                league.record(m)
            if stop - start >= 5:
                league.record_many(matches[start:stop])
    with rankcraft.League.open(path, plugins=plugins) as league:
        assert league.export()["players"] == continuous.export()["players"]


def test_a_failed_batch_puts_the_fit_back(plugins: rankcraft.Plugins) -> None:
    matches = history()
    continuous = rankcraft.League(ruleset(plugins), plugins=plugins)
    continuous.record_many(matches)
    league = rankcraft.League(ruleset(plugins), plugins=plugins)
    league.record_many(matches[:120])
    bad = [*matches[120:200], {**matches[200], "teams": [["p1"], ["p1"]]}]
    with pytest.raises(rankcraft.MatchError):  # (after many refits in the batch)
        league.record_many(bad)
    league.record_many(matches[120:])
    assert league.export()["players"] == continuous.export()["players"]


def test_a_refit_that_fails_half_way_leaves_the_fit_as_it_was(
    plugins: rankcraft.Plugins,
) -> None:
    matches = history()
    continuous = rankcraft.League(ruleset(plugins), plugins=plugins)
    continuous.record_many(matches)
    league = rankcraft.League(ruleset(plugins), plugins=plugins)
    league.record_many(matches[:120])
    day = matches[119]["played_at"][:10]  # the league's latest day: no refit before "x"
    failing = {**matches[119], "id": "x", "played_at": f"{day}T23:59:59Z", "meta": {"fail": 1}}
    same_day = [m for m in matches[120:] if m["played_at"][:10] == day]
    later = next(m for m in matches[120:] if m["played_at"][:10] > day)
    # the transaction's first refit takes "x" in, then fails
    with pytest.raises(rankcraft.PluginError, match="tally"):
        league.record_many([*same_day, failing, later])
    league.record_many(matches[120:])
    assert league.export()["players"] == continuous.export()["players"]


def test_an_edit_rerates_the_fit_as_a_replay(plugins: rankcraft.Plugins) -> None:
    matches = history()
    league = rankcraft.League(ruleset(plugins), plugins=plugins)
    league.record_many(matches)
    league.void("m150", "entered twice")
    league.correct("m40", {"scores": [0, 5]}, "typo")
    edited = [m for m in matches if m["id"] != "m150"]
    edited[40] = {**edited[40], "scores": [0, 5]}
    replayed = rankcraft.League(ruleset(plugins), plugins=plugins)
    replayed.record_many(edited)
    assert league.export()["players"] == replayed.export()["players"]
    # and the next day's refit continues from the edited history
    more = {
        "id": "n",
        "played_at": "2024-06-01T10:00:00Z",
        "teams": [["p0"], ["p1"]],
        "scores": [1, 0],
    }
    assert league.record(more) == replayed.record(more)


def test_matches_come_in_time_order(plugins: rankcraft.Plugins) -> None:
    league = rankcraft.League(ruleset(plugins), plugins=plugins)
    league.record({"id": "a", "played_at": "2024-03-05", "teams": [["x"], ["y"]], "ranks": [1, 2]})
    before = league.export()
    with pytest.raises(rankcraft.MatchError, match=r"'played_at' 2024-03-04.*'b'.*time order"):
        league.record(
            {"id": "b", "played_at": "2024-03-04", "teams": [["u"], ["v"]], "scores": [1, 0]}
        )
    assert league.export() == before


def test_the_curve_and_the_limits_reach_the_plugin(plugins: rankcraft.Plugins) -> None:
    league = rankcraft.League(ruleset(plugins, "[history]\nwindow_days = 5\n"), plugins=plugins)
    league.record_many(history(150))
    curve = league.curve("p3")
    assert [t for t, _ in curve] == sorted(t for t, _ in curve) and len(curve) > 3
    assert curve[0][1].rating == float(curve[0][1].peak)
    windowed = league.player("p3").skill.rating
    unbounded = rankcraft.League(ruleset(plugins), plugins=plugins)
    unbounded.record_many(history(150))
    assert windowed != unbounded.player("p3").skill.rating
    with pytest.raises(rankcraft.UnknownPlayerError):
        league.curve("nobody")


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ('[period]\nmode = "batch"\n', r"\[fit\] slot needs \[period\] mode 'match'"),
        (
            "[history]\ntolerance = 0.0\n",
            r"'tolerance' must be .*: 0.0",
        ),
        ('[history]\nwindow_days = "x"\n', r"window_days"),
    ],
)
def test_bad_fit_tables_are_refused(plugins: rankcraft.Plugins, extra: str, message: str) -> None:
    with pytest.raises(rankcraft.RulesetError, match=message):
        ruleset(plugins, extra)


def test_limits_without_a_fit_are_refused() -> None:
    with pytest.raises(rankcraft.RulesetError, match=r"bound the refits of a \[fit\] slot"):
        rankcraft.loads_ruleset('name = "x"\nextends = "elo"\n[history]\niterations = 5\n')


def test_a_ruleset_with_a_fit_round_trips(plugins: rankcraft.Plugins) -> None:
    loaded = ruleset(plugins, "[history]\ntolerance = 1e-8\n")
    text = rankcraft.dumps_ruleset(loaded)
    assert "[fit]" in text and rankcraft.loads_ruleset(text, plugins=plugins) == loaded


def test_export_import_continue_carries_the_history(plugins: rankcraft.Plugins) -> None:
    matches = history()
    original = rankcraft.League(ruleset(plugins), plugins=plugins)
    original.record_many(matches[:200])
    document = json.loads(json.dumps(original.export()))
    assert [m["id"] for m in document["history"]] == [m["id"] for m in matches[:200]]
    copy = rankcraft.League(ruleset(plugins), plugins=plugins)
    copy.import_state(document)
    original.record_many(matches[200:])
    copy.record_many(matches[200:])
    assert copy.export()["players"] == original.export()["players"]
    # without its history the document cannot feed a fit
    del document["history"]
    with pytest.raises(rankcraft.StateError, match=r"must bring it \('history'"):
        rankcraft.League(ruleset(plugins), plugins=plugins).import_state(document)
    document["history"] = [{"id": "x", "teams": [["a"], ["b"]]}]
    with pytest.raises(rankcraft.StateError, match=r"history\[0\]: .*played_at"):
        rankcraft.League(ruleset(plugins), plugins=plugins).import_state(document)
