"""The checks of plugin answers (rankcraft.answers, issue 43 items 4 and 6): every number a
plugin hands the core is finite, every answer of the right type, and whatever a hook
raises is a PluginError naming the plugin, the hook and the match."""

from __future__ import annotations

import gzip
import io
import json
import math
import re
from pathlib import Path
from typing import Any

import pytest

import rankcraft
from rankcraft.cli import main

MATCH = {"id": "m1", "played_at": "2024-01-01", "teams": [["ann"], ["bo"]], "scores": [1, 0]}


def _plugins(plugin: object, name: str) -> rankcraft.Plugins:
    pm = rankcraft.get_plugin_manager()
    pm.register(plugin, name=name)
    return rankcraft.Plugins(pm)


def _ruleset(plugins: rankcraft.Plugins, text: str) -> rankcraft.Ruleset:
    return rankcraft.loads_ruleset('name = "t"\n' + text, plugins=plugins)


class NanWeight:
    """A team plugin whose pairing weight is NaN (a rating of -1,000,000 was stored)."""

    @rankcraft.hookimpl
    def rankcraft_aggregate(self, members: Any) -> Any:
        return members[0]

    @rankcraft.hookimpl
    def rankcraft_team(self, sides: Any, places: Any) -> Any:
        return [
            [[(sides[1 - i][0], float(places[i] < places[1 - i]), math.nan)] for _ in side]
            for i, side in enumerate(sides)
        ]


class NanOpponent(NanWeight):
    """A team plugin whose virtual opponent's rating is NaN (it gave a full K)."""

    @rankcraft.hookimpl
    def rankcraft_team(self, sides: Any, places: Any) -> Any:
        return [
            [[((math.nan, 1500.0), float(places[i] < places[1 - i]), 1.0)] for _ in side]
            for i, side in enumerate(sides)
        ]


@pytest.mark.parametrize(
    ("plugin", "said"),
    [
        (NanWeight(), r"\(\(1500\.0, 1500\.0\), 1\.0, nan\), whose weight is not a finite"),
        (NanOpponent(), r"\(\(nan, 1500\.0\), 1\.0, 1\.0\), whose opponent has a number that"),
    ],
    ids=["nan-weight", "nan-opponent"],
)
def test_a_nan_in_a_team_plugins_pairings_is_refused_and_nothing_is_kept(
    db_url: str, plugin: object, said: str
) -> None:
    plugins = _plugins(plugin, "odd")
    ruleset = _ruleset(plugins, '[update]\nplugin = "elo"\n[team]\nplugin = "odd"\n')
    with rankcraft.League.open(db_url, ruleset, plugins=plugins) as league:
        with pytest.raises(rankcraft.PluginError) as caught:
            league.record(MATCH)
        assert str(caught.value).startswith("plugin 'odd': rankcraft_team returned ")
        assert str(caught.value).endswith("(rating match 'm1')")
        assert re.search(said, str(caught.value))
        assert league.match_count == 0
        assert league.export()["players"] == []


class Raises:
    """An update (and every other per-match hook) that raises what it is told to."""

    RANKCRAFT_CONTRACT = 2
    armed = False  # (raises from the second match on)

    def __init__(self, hook: str, exc: BaseException) -> None:
        self.hook, self.exc = hook, exc

    def _maybe(self, hook: str) -> None:
        if hook == self.hook and self.armed:
            raise self.exc

    @rankcraft.hookimpl
    def rankcraft_initial(self) -> Any:
        return _elo_initial()

    @rankcraft.hookimpl
    def rankcraft_expectation(self, side_states: Any) -> list[float]:
        self._maybe("rankcraft_expectation")
        return [0.5, 0.5]

    @rankcraft.hookimpl
    def rankcraft_update(self, state: Any, score: float) -> Any:
        self._maybe("rankcraft_update")
        return (state[0] + score, state[1])

    @rankcraft.hookimpl
    def rankcraft_explain(self) -> Any:
        self._maybe("rankcraft_explain")
        return {"k": 1.0}

    @rankcraft.hookimpl
    def rankcraft_decay(self, state: Any) -> Any:
        self._maybe("rankcraft_decay")
        return state


def _elo_initial() -> Any:
    from rankcraft.plugins.elo import EloSkill

    return EloSkill(1500.0, 1500.0)


HOOKS = ["rankcraft_update", "rankcraft_expectation", "rankcraft_explain", "rankcraft_decay"]
RAISED = [
    KeyboardInterrupt(),
    SystemExit(0),
    GeneratorExit(),
    TypeError("unsupported operand"),
    ZeroDivisionError("float division by zero"),
]


@pytest.mark.parametrize("exc", RAISED, ids=lambda e: type(e).__name__)
@pytest.mark.parametrize("hook", HOOKS)
def test_whatever_a_hook_raises_is_a_plugin_error_naming_plugin_hook_and_match(
    hook: str, exc: BaseException
) -> None:
    plugin = Raises(hook, exc)
    plugins = _plugins(plugin, "raiser")
    ruleset = _ruleset(plugins, '[update]\nplugin = "raiser"\n')
    league = rankcraft.League(ruleset)
    league.record(dict(MATCH, id="m0", played_at="2023-12-01"))  # (idle time: decay is called)
    plugin.armed = True
    before = league.export()
    text = str(exc)
    reason = f"{type(exc).__name__}: {text}" if text else type(exc).__name__
    with pytest.raises(rankcraft.PluginError) as caught:
        league.record(MATCH)
    assert str(caught.value) == f"plugin 'raiser': {hook} raised {reason} (rating match 'm1')"
    assert league.export() == before


class Answers:
    """Hooks that answer with the wrong type."""

    RANKCRAFT_CONTRACT = 2
    armed = False  # (answers wrongly from the second match on)

    def __init__(self, hook: str, answer: Any) -> None:
        self.hook, self.answer = hook, answer

    def _or(self, hook: str, good: Any) -> Any:
        return self.answer if hook == self.hook and self.armed else good

    @rankcraft.hookimpl
    def rankcraft_initial(self) -> Any:
        return _elo_initial()

    @rankcraft.hookimpl
    def rankcraft_expectation(self, side_states: Any) -> Any:
        return self._or("rankcraft_expectation", [0.5, 0.5])

    @rankcraft.hookimpl
    def rankcraft_update(self, state: Any, score: float) -> Any:
        return self._or("rankcraft_update", (state[0] + score, state[1]))

    @rankcraft.hookimpl
    def rankcraft_explain(self) -> Any:
        return self._or("rankcraft_explain", {"k": 1.0})

    @rankcraft.hookimpl
    def rankcraft_decay(self, state: Any) -> Any:
        return self._or("rankcraft_decay", state)


@pytest.mark.parametrize(
    ("hook", "answer", "why"),
    [
        ("rankcraft_update", [1501.0, 1501.0], "not a tuple of 2 fields"),
        ("rankcraft_update", (1501.0, math.inf), "whose field 1 is not a finite number"),
        ("rankcraft_expectation", 0.5, "not a sequence of probabilities"),
        ("rankcraft_expectation", "ab", "with a probability outside [0, 1]"),
        ("rankcraft_expectation", [math.nan, 0.5], "with a probability outside [0, 1]"),
        ("rankcraft_explain", 3, "not a mapping of factor names to numbers (or None)"),
        ("rankcraft_explain", {"k": math.nan}, "whose factor 'k' is not a finite number"),
        ("rankcraft_decay", None, "not a tuple of 2 fields"),
        ("rankcraft_decay", (math.nan, 1500.0), "whose field 0 is not a finite number"),
    ],
)
def test_an_answer_of_the_wrong_type_or_not_finite_is_a_plugin_error(
    hook: str, answer: Any, why: str
) -> None:
    plugin = Answers(hook, answer)
    plugins = _plugins(plugin, "answers")
    ruleset = _ruleset(plugins, '[update]\nplugin = "answers"\n')
    league = rankcraft.League(ruleset)
    league.record(dict(MATCH, id="m0", played_at="2023-12-01"))  # (idle time: decay is called)
    plugin.armed = True
    with pytest.raises(rankcraft.PluginError) as caught:
        league.record(MATCH)
    message = str(caught.value)
    assert message.startswith(f"plugin 'answers': {hook} returned {answer!r}"[:40])
    assert why in message and message.endswith("(rating match 'm1')")
    assert league.match_count == 1


def test_a_standings_answer_that_is_no_mapping_is_a_plugin_error() -> None:
    class Labels:
        @rankcraft.hookimpl
        def rankcraft_standings(self) -> Any:
            return ["Gold"]

        @rankcraft.hookimpl
        def rankcraft_rank(self, rank_state: Any) -> Any:
            return rank_state

        @rankcraft.hookimpl
        def rankcraft_initial(self) -> Any:
            from rankcraft.plugins.skyweaver import SkyweaverRp

            return SkyweaverRp(0.0, "Bronze", 0.0)

    plugins = _plugins(Labels(), "labels")
    ruleset = _ruleset(plugins, '[update]\nplugin = "elo"\n[rank]\nplugin = "labels"\n')
    league = rankcraft.League(ruleset)
    league.record(MATCH)
    with pytest.raises(
        rankcraft.PluginError,
        match=r"plugin 'labels': rankcraft_standings "
        r"returned \['Gold'\], not a mapping of player ids to labels",
    ):
        league.standings()


def test_a_needs_answer_that_is_no_needs_and_a_contract_of_true_are_refused() -> None:
    class Needy:
        @rankcraft.hookimpl
        def rankcraft_needs(self) -> Any:
            return {"fields": ["mu"]}

        @rankcraft.hookimpl
        def rankcraft_decay(self, state: Any) -> Any:
            return state

    plugins = _plugins(Needy(), "needy")
    with pytest.raises(
        rankcraft.PluginError,
        match=r"plugin 'needy': rankcraft_needs returned \{'fields': \['mu'\]\}, not a "
        r"rankcraft.Needs \(or None\)",
    ):
        _ruleset(plugins, '[update]\nplugin = "elo"\n[decay]\nplugin = "needy"\n')

    class Contract:
        RANKCRAFT_CONTRACT = True  # (True == 1: it was taken for contract 1)

    plugins = _plugins(Contract(), "contract")
    with pytest.raises(rankcraft.PluginError, match="RANKCRAFT_CONTRACT = True"):
        plugins.contract("contract")


def test_a_plugin_that_exits_ends_the_command_with_status_2_naming_it(tmp_path: Path) -> None:
    # a hook's sys.exit(0) ended `rankcraft replay` with status 0, nothing recorded
    folder = tmp_path / "plugins"
    folder.mkdir()
    (folder / "quitter.py").write_text(
        "import sys\n"
        "from rankcraft import hookimpl\n"
        "from rankcraft.plugins.elo import rankcraft_initial, rankcraft_params, "
        "rankcraft_expectation\n"
        "RANKCRAFT_CONTRACT = 2\n"
        "@hookimpl\n"
        "def rankcraft_update(state):\n"
        "    sys.exit(0)\n"
    )
    ruleset = tmp_path / "q.toml"
    ruleset.write_text('name = "q"\n[update]\nplugin = "quitter"\n')
    matches = tmp_path / "m.jsonl"
    matches.write_text(json.dumps(MATCH) + "\n")
    out, err = io.StringIO(), io.StringIO()
    argv = ["--plugins-dir", str(folder), "replay", str(matches), "--ruleset", str(ruleset)]
    code = main([*argv, "--db", str(tmp_path / "q.sqlite"), "--json"], out=out, err=err)
    assert code == 2
    assert (
        "error: plugin 'quitter': rankcraft_update raised SystemExit: 0 (rating match 'm1')"
        in err.getvalue()
    )
    assert json.loads(out.getvalue())["error"]["type"] == "PluginError"


def test_openskill_thurstone_mosteller_with_the_mean_team_is_refused_naming_the_match(
    shared_data: Path,
) -> None:
    # issue 43 item 4: sigma overflowed to infinity on the F1 history
    with gzip.open(shared_data / "f1_races_1950_2026.jsonl.gz", "rt") as lines:
        races = [json.loads(line) for line in lines]
    text = (
        'name = "o"\nextends = "openskill"\n[update.params]\nmodel = "thurstone-mosteller-full"'
        '\n[team]\nplugin = "mean"\n'
    )
    league = rankcraft.League(rankcraft.loads_ruleset(text))
    with pytest.raises(rankcraft.PluginError) as caught:
        league.record_many(races)
    assert str(caught.value) == (
        "plugin 'wenglin': rankcraft_update returned (17797.481424112815, inf), whose field 1 "
        "is not a finite number (rating match 'f1-44')"
    )
    assert league.match_count == 0


class Forecasts(Answers):
    """An expectation plugin whose outcomes hook answers what it is told to."""

    @rankcraft.hookimpl
    def rankcraft_outcomes(self) -> Any:
        return self._or("rankcraft_outcomes", (0.4, 0.2, 0.4))


@pytest.mark.parametrize(
    ("hook", "answer", "why"),
    [
        ("rankcraft_outcomes", 7, "not a sequence of probabilities"),
        ("rankcraft_outcomes", (math.nan, 0.5, 0.5), "with a probability outside [0, 1]"),
        ("rankcraft_expectation", {"a": 1}, "with a probability outside [0, 1]"),
        ("rankcraft_expectation", [0.2, 0.2], "not 2 probabilities (one per side) summing to 1"),
    ],
)
def test_a_forecast_refuses_a_bad_answer_naming_plugin_and_hook(
    hook: str, answer: Any, why: str
) -> None:
    plugin = Forecasts(hook, answer)
    league = rankcraft.League(
        _ruleset(_plugins(plugin, "forecasts"), '[update]\nplugin = "forecasts"\n')
    )
    league.record(MATCH)
    plugin.armed = True
    with pytest.raises(rankcraft.PluginError) as caught:
        league.forecast([["ann"], ["bo"]])
    assert str(caught.value).startswith(f"plugin 'forecasts': {hook} returned ")
    assert why in str(caught.value)
    if hook == "rankcraft_expectation":
        with pytest.raises(rankcraft.PluginError, match=re.escape(why)):
            league.predict([["ann"], ["bo"]])


def test_a_season_or_load_hook_that_raises_is_a_plugin_error_naming_it() -> None:
    class Seasons:
        @rankcraft.hookimpl
        def rankcraft_reset(self) -> Any:
            raise GeneratorExit

    plugins = _plugins(Seasons(), "seasons")
    league = rankcraft.League(
        _ruleset(plugins, '[update]\nplugin = "elo"\n[reset]\nplugin = "seasons"\n')
    )
    league.record(MATCH)
    before = league.export()
    with pytest.raises(
        rankcraft.PluginError, match=r"^plugin 'seasons': rankcraft_reset raised GeneratorExit$"
    ):
        league.reset("soft")
    assert league.export() == before

    class Needs:
        @rankcraft.hookimpl
        def rankcraft_needs(self) -> Any:
            raise KeyError("slot")

        @rankcraft.hookimpl
        def rankcraft_decay(self, state: Any) -> Any:
            return state

    plugins = _plugins(Needs(), "needs")
    with pytest.raises(
        rankcraft.PluginError, match=r"^plugin 'needs': rankcraft_needs raised KeyError: 'slot'$"
    ):
        _ruleset(plugins, '[update]\nplugin = "elo"\n[decay]\nplugin = "needs"\n')
