"""Hook contract 2 (docs/hooks.md, docs/plugins.md#migrating-to-hook-contract-2): states
are tuples in the per-match hooks; a plugin written for the first contract still runs,
adapted, and says so; every bundled plugin is on the second."""

from __future__ import annotations

import importlib
import warnings
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import attrs
import pytest

import rankcraft
from rankcraft import contract1
from rankcraft.forms import Form, layout

EXAMPLES = Path(__file__).resolve().parents[1] / "docs" / "examples" / "plugins"


@attrs.frozen
class Rating:
    rating: float = rankcraft.state_field(role="location")


class FirstContractElo:
    """The example hooks_elo as it was written for the first contract."""

    @rankcraft.hookimpl
    def rankcraft_initial(self) -> Rating:
        return Rating(1500.0)

    @rankcraft.hookimpl
    def rankcraft_expectation(self, side_states: Any) -> list[float]:
        a, b = side_states[0].rating, side_states[1].rating
        p = 1.0 / (1.0 + 10.0 ** ((b - a) / 400.0))
        return [p, 1.0 - p]

    @rankcraft.hookimpl
    def rankcraft_update(self, state: Any, pairings: Any, context: Any) -> Rating:
        surprise = 0.0
        for opponent, score, weight in pairings:
            gap = opponent.rating - state.rating
            surprise += weight * (score - 1.0 / (1.0 + 10.0 ** (gap / 400.0)))
        context.explain("k", 32.0)
        return Rating(state.rating + 32.0 * surprise)


MATCHES = [
    {
        "id": f"g{i}",
        "played_at": f"2024-01-{1 + i // 3:02d}",
        "teams": [[a], [b]] if i % 4 else [[a, c], [b]],
        "scores": [i % 3, 1],
    }
    for i, (a, b, c) in enumerate(
        [("ann", "bo", "cy"), ("bo", "cy", "di"), ("cy", "di", "ann"), ("di", "ann", "bo")] * 6
    )
]


def test_a_first_contract_plugin_is_adapted_warns_and_rates_as_its_migrated_twin() -> None:
    contract1._warned.discard("first-elo")
    pm = rankcraft.get_plugin_manager(plugin_dirs=[EXAMPLES])
    pm.register(FirstContractElo(), name="first-elo")
    plugins = rankcraft.Plugins(pm)
    assert plugins.contract("first-elo") == 1 and plugins.contract("hooks_elo") == 2
    old = rankcraft.loads_ruleset('name = "old"\n[update]\nplugin = "first-elo"\n', plugins=plugins)
    new = rankcraft.loads_ruleset('name = "new"\n[update]\nplugin = "hooks_elo"\n', plugins=plugins)
    with pytest.warns(
        contract1.FirstContractWarning, match="'first-elo' is written for rankcraft's first"
    ):
        adapted = rankcraft.League(old)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the migrated one warns of nothing
        migrated = rankcraft.League(new)
    adapted.record_many(MATCHES)
    migrated.record_many(MATCHES)
    assert adapted.export()["players"] == migrated.export()["players"]
    assert adapted.player("ann").skill == Rating(adapted.player("ann").skill.rating)
    for m in MATCHES:
        a, b = adapted.report(m["id"]), migrated.report(m["id"])
        assert a.expected == b.expected
        assert [(c.player, c.factors) for c in a.changes] == [
            (c.player, c.factors) for c in b.changes
        ]


def test_every_bundled_plugin_is_on_the_second_contract() -> None:
    plugins = rankcraft.Plugins(rankcraft.get_plugin_manager(plugin_dirs=[]))
    bundled = [i for i in plugins.info() if i.distribution == "rankcraft"]
    assert len(bundled) >= 14
    assert {i.name: plugins.contract(i.name) for i in bundled} == {i.name: 2 for i in bundled}


def test_a_contract_other_than_1_or_2_is_refused() -> None:
    pm = rankcraft.get_plugin_manager(entry_points=False)
    pm.register(SimpleNamespace(RANKCRAFT_CONTRACT=3), name="odd")
    with pytest.raises(rankcraft.PluginError, match="RANKCRAFT_CONTRACT = 3"):
        rankcraft.Plugins(pm).contract("odd")


def test_the_two_forms_of_a_state() -> None:
    form = Form(Rating)
    assert form.to_tuple(Rating(1.5)) == (1.5,) and form.to_object((1.5,)) == Rating(1.5)
    assert form.to_tuple((2.0,)) == (2.0,)  # a tuple is already the tuple form
    assert layout(Rating) == {"rating": 0, "location": 0}

    @attrs.frozen
    class Bounded:
        value: float = attrs.field(validator=attrs.validators.le(1.0))

    with pytest.raises(rankcraft.PluginError, match=r"a plugin returned \(2\.0,\), not a valid"):
        Form(Bounded).to_object((2.0,))
    assert Form(Bounded).to_object_unchecked((2.0,)).value == 2.0  # (a virtual opponent)

    @attrs.frozen
    class Keyword:
        value: float = attrs.field(kw_only=True)

    with pytest.raises(rankcraft.StateError, match="positional"):
        Form(Keyword)


def test_bundled_hooks_build_no_state_instance_per_match(monkeypatch: pytest.MonkeyPatch) -> None:
    """The point of the contract: rating a match builds tuples, not attrs instances (the
    public form is built once per player when the transaction hands them to the store)."""
    elo = importlib.import_module("rankcraft.plugins.elo")
    built = []
    real = elo.EloSkill.__init__

    def counting(self: Any, *args: Any, **kwargs: Any) -> None:
        built.append(args)
        real(self, *args, **kwargs)

    league = rankcraft.League("elo")
    monkeypatch.setattr(elo.EloSkill, "__init__", counting)
    league.record_many(MATCHES)
    assert len(MATCHES) == 24 and len(built) == 4  # ann, bo, cy, di: once each


def test_the_plugins_command_marks_a_first_contract_plugin(tmp_path: Path) -> None:
    import io
    import json

    from rankcraft.cli import main

    (tmp_path / "oldstyle.py").write_text(
        "import attrs, rankcraft\n"
        "@attrs.frozen\n"
        "class S:\n"
        "    rating: float = rankcraft.state_field(role='location')\n"
        "@rankcraft.hookimpl\n"
        "def rankcraft_initial():\n"
        "    return S(1500.0)\n"
    )
    out = io.StringIO()
    assert main(["--plugins-dir", str(tmp_path), "plugins"], out=out, err=io.StringIO()) == 0
    lines = out.getvalue().splitlines()
    assert any(line.startswith("oldstyle *") for line in lines)
    assert not any(line.startswith("elo *") for line in lines)
    assert lines[-1].startswith("* written for the first hook contract: adapted")
    out = io.StringIO()
    main(["--plugins-dir", str(tmp_path), "plugins", "--json"], out=out, err=io.StringIO())
    contracts = {p["name"]: p["contract"] for p in json.loads(out.getvalue())}
    assert contracts["oldstyle"] == 1 and contracts["elo"] == 2


def test_an_update_that_returns_an_instance_is_told_so() -> None:
    # a contract-2 plugin whose update still builds the attrs instance
    plugins = _plugin("return Rating(state[0] + score)")
    league = rankcraft.League(
        rankcraft.loads_ruleset('name = "f"\n[update]\nplugin = "made"\n', plugins=plugins)
    )
    with pytest.raises(
        rankcraft.PluginError,
        match=r"plugin 'made': rankcraft_update returned Rating\(rating=1500\.5\), not a tuple",
    ) as caught:
        league.record(MATCHES[1])
    assert str(caught.value).endswith("(rating match 'g1')")  # (which match, too)
    assert league.match_count == 0


def test_the_command_line_says_the_first_contract_warning_and_check_binds_the_hooks(
    tmp_path: Path,
) -> None:
    import io

    from rankcraft.cli import main

    (tmp_path / "oldstyle.py").write_text(
        "import attrs, rankcraft\n"
        "@attrs.frozen\n"
        "class S:\n"
        "    rating: float = rankcraft.state_field(role='location')\n"
        "@rankcraft.hookimpl\n"
        "def rankcraft_initial():\n"
        "    return S(1500.0)\n"
        "@rankcraft.hookimpl\n"
        "def rankcraft_expectation(side_states):\n"
        "    return [0.5, 0.5]\n"
        "@rankcraft.hookimpl\n"
        "def rankcraft_update(state, score):\n"
        "    return S(state.rating + score)\n"
    )
    ruleset = tmp_path / "old.toml"
    ruleset.write_text('name = "old"\n[update]\nplugin = "oldstyle"\n')
    contract1._warned.discard("oldstyle")
    out, err = io.StringIO(), io.StringIO()
    assert main(["--plugins-dir", str(tmp_path), "check", str(ruleset)], out=out, err=err) == 0
    assert err.getvalue().startswith(
        "rankcraft check: warning: plugin 'oldstyle' is written for rankcraft's first hook"
    )
    (tmp_path / "keyword.py").write_text(
        "import attrs, rankcraft\n"
        "RANKCRAFT_CONTRACT = 2\n"
        "@attrs.frozen(kw_only=True)\n"
        "class K:\n"
        "    rating: float = rankcraft.state_field(role='location', default=0.0)\n"
        "@rankcraft.hookimpl\n"
        "def rankcraft_initial():\n"
        "    return K()\n"
        "@rankcraft.hookimpl\n"
        "def rankcraft_update(state):\n"
        "    return state\n"
    )
    ruleset.write_text('name = "kw"\n[update]\nplugin = "keyword"\n')
    err = io.StringIO()
    assert main(["--plugins-dir", str(tmp_path), "check", str(ruleset)], out=out, err=err) == 2
    assert "K.rating: a state class's fields must all be positional" in err.getvalue()


def _plugin(update_body: str, explain: str | None = None) -> rankcraft.Plugins:
    namespace: dict[str, Any] = {"Rating": Rating, "math": __import__("math")}

    class Made:
        RANKCRAFT_CONTRACT = 2

        @rankcraft.hookimpl
        def rankcraft_initial(self) -> Rating:
            return Rating(1500.0)

        @rankcraft.hookimpl
        def rankcraft_expectation(self, side_states: Any) -> list[float]:
            return [0.5, 0.5]

    exec(f"def rankcraft_update(self, state, score):\n    {update_body}", namespace)
    Made.rankcraft_update = rankcraft.hookimpl(namespace["rankcraft_update"])  # type: ignore[attr-defined]
    if explain is not None:
        exec(f"def rankcraft_explain(self):\n    return {explain}", namespace)
        Made.rankcraft_explain = rankcraft.hookimpl(namespace["rankcraft_explain"])  # type: ignore[attr-defined]
    pm = rankcraft.get_plugin_manager()
    pm.register(Made(), name="made")
    return rankcraft.Plugins(pm)


def test_an_explain_that_is_no_mapping_and_a_state_that_is_no_number_are_told_so(
    tmp_path: Path,
) -> None:
    plugins = _plugin("return (state[0] + score,)", explain="[('k', 1.0)]")
    ruleset = rankcraft.loads_ruleset('name = "m"\n[update]\nplugin = "made"\n', plugins=plugins)
    with pytest.raises(
        rankcraft.PluginError, match=r"rankcraft_explain returned \[\('k', 1\.0\)\]"
    ):
        rankcraft.League(ruleset).record(MATCHES[1])
    plugins = _plugin("return (math.nan,)")
    ruleset = rankcraft.loads_ruleset('name = "m"\n[update]\nplugin = "made"\n', plugins=plugins)
    league = rankcraft.League.open(tmp_path / "nan.sqlite", ruleset)
    with pytest.raises(
        rankcraft.PluginError,
        match=r"plugin 'made': rankcraft_update returned \(nan,\), whose field 0 is not a finite "
        r"number \(rating match 'g1'\)",
    ):
        league.record(MATCHES[1])
    assert league.match_count == 0
    league.close()


def test_an_update_that_returns_a_tuple_of_another_length_is_told_so() -> None:
    plugins = _plugin("return (state[0] + score, 0.0)")
    ruleset = rankcraft.loads_ruleset('name = "m"\n[update]\nplugin = "made"\n', plugins=plugins)
    with pytest.raises(
        rankcraft.PluginError,
        match=r"rankcraft_update returned \(1500\.5, 0\.0\), not a tuple of 1 fields",
    ):
        rankcraft.League(ruleset).record(MATCHES[1])
