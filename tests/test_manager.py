"""The plugin manager: entry points (first- and third-party), conflicts, blocking."""

from __future__ import annotations

import io
import textwrap
from pathlib import Path

import pytest

import rankcraft
from rankcraft.cli import main
from rankcraft.manager import DISABLE_ENV, PLUGINS_DIR_ENV, get_plugin_manager

FIRST_PARTY = {"elo", "mean", "individual"}


def _dist(
    root: Path, name: str, version: str, entry_points: dict[str, str], modules: dict[str, str]
) -> None:
    """Write a minimal installed distribution (a .dist-info) and its modules under root."""
    info = root / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    lines = "\n".join(f"{k} = {v}" for k, v in entry_points.items())
    (info / "entry_points.txt").write_text(f"[rankcraft]\n{lines}\n")
    for module, source in modules.items():
        (root / f"{module}.py").write_text(textwrap.dedent(source))


THIRD_PARTY = '''
    """A third-party rating system: a step of fixed size towards the result."""
    import attrs
    import rankcraft

    @attrs.frozen
    class StepSkill:
        level: float = rankcraft.state_field(role="location")

    @attrs.frozen(kw_only=True)
    class StepParams:
        step: float = attrs.field(default=10.0, validator=attrs.validators.gt(0))

    @rankcraft.hookimpl
    def rankcraft_params(slot):
        return StepParams if slot in ("initial", "expectation", "update") else None

    @rankcraft.hookimpl
    def rankcraft_initial(slot, params):
        return StepSkill(0.0)

    @rankcraft.hookimpl
    def rankcraft_expectation(side_states):
        a, b = side_states[0].level, side_states[1].level
        p = 0.5 if a == b else (0.75 if a > b else 0.25)
        return [p, 1 - p]

    @rankcraft.hookimpl
    def rankcraft_update(params, state, pairings):
        score = sum(p.score for p in pairings) / len(pairings)
        return StepSkill(state.level + params.step * (2 * score - 1))
'''


def test_first_party_plugins_come_through_entry_points() -> None:
    plugins = rankcraft.Plugins()
    assert set(plugins.names()) >= FIRST_PARTY
    info = {i.name: i for i in plugins.info()}
    assert info["elo"].distribution == "rankcraft"
    assert info["elo"].version == rankcraft.__version__
    assert info["elo"].module == "rankcraft.plugins.elo"
    assert info["elo"].slots == ("initial", "expectation", "update")
    assert info["mean"].slots == ("team",)


def test_no_global_manager() -> None:
    a, b = get_plugin_manager(), get_plugin_manager()
    assert a is not b
    a.set_blocked("elo")
    assert b.get_plugin("elo") is not None


def test_third_party_plugin_found_only_through_its_entry_point(
    tmp_path, monkeypatch, match
) -> None:
    _dist(
        tmp_path,
        "rankcraft-step",
        "2.3.0",
        {"step": "rankcraft_step"},
        {"rankcraft_step": THIRD_PARTY},
    )
    assert "step" not in rankcraft.Plugins().names()
    monkeypatch.syspath_prepend(str(tmp_path))
    plugins = rankcraft.Plugins()
    info = {i.name: i for i in plugins.info()}
    assert info["step"].distribution == "rankcraft-step"
    assert info["step"].version == "2.3.0"
    assert info["step"].slots == ("initial", "expectation", "update")
    ruleset_file = tmp_path / "step.toml"
    ruleset_file.write_text(
        'name = "step"\n[update]\nplugin = "step"\n[update.params]\nstep = 4.0\n'
    )
    league = rankcraft.League(rankcraft.load_ruleset(ruleset_file, plugins=plugins))
    league.record_many([match("m1", "a", "b", scores=[1, 0]), match("m2", "a", "c", scores=[1, 1])])
    assert league.player("a").skill.level == 4.0
    assert league.player("b").skill.level == -4.0
    assert league.predict([["a"], ["b"]]) == [0.75, 0.25]
    with pytest.raises(rankcraft.RulesetError, match="'step' must be > 0: -1"):
        rankcraft.loads_ruleset(
            'name = "s"\n[update]\nplugin = "step"\n[update.params]\nstep = -1.0\n', plugins=plugins
        )


def test_same_name_from_two_distributions_is_an_error(tmp_path, monkeypatch) -> None:
    _dist(tmp_path, "rankcraft-one", "1.0", {"dup": "dup_one"}, {"dup_one": ""})
    _dist(tmp_path, "rankcraft-two", "1.0", {"dup": "dup_two"}, {"dup_two": ""})
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(
        rankcraft.PluginConflictError,
        match=r"'dup' is provided by more than one distribution: "
        r"rankcraft-one \(dup_one\) and rankcraft-two \(dup_two\)",
    ):
        get_plugin_manager()
    # The block list settles it: one provider blocked, the other is used ...
    monkeypatch.setenv(DISABLE_ENV, "dup@rankcraft-one")
    pm = get_plugin_manager()
    assert pm.get_plugin("dup").__name__ == "dup_two"
    assert pm.origins["dup"] == ("rankcraft-two", "1.0")
    # ... or the name blocked, neither is.
    monkeypatch.setenv(DISABLE_ENV, "dup")
    assert get_plugin_manager().get_plugin("dup") is None


def test_a_plugins_folder_loads_every_module_as_a_plugin(tmp_path, monkeypatch, match) -> None:
    folder = tmp_path / "plugins"
    folder.mkdir()
    (folder / "step.py").write_text(textwrap.dedent(THIRD_PARTY))
    (folder / "_helper.py").write_text("raise RuntimeError('never imported')\n")
    monkeypatch.setenv(PLUGINS_DIR_ENV, str(folder))
    plugins = rankcraft.Plugins()
    info = {i.name: i for i in plugins.info()}
    assert info["step"].distribution == "plugins-dir"
    assert info["step"].version == str(folder / "step.py")
    assert info["step"].slots == ("initial", "expectation", "update")
    ruleset = rankcraft.loads_ruleset(
        'name = "s"\n[update]\nplugin = "step"\n[update.params]\nstep = 4.0\n', plugins=plugins
    )
    league = rankcraft.League(ruleset)
    league.record(match("m1", "a", "b", scores=[1, 0]))
    assert league.player("a").skill.level == 4.0
    # the same folder given as an argument instead of the environment
    monkeypatch.delenv(PLUGINS_DIR_ENV)
    assert "step" not in rankcraft.Plugins().names()
    assert get_plugin_manager(plugin_dirs=[folder]).get_plugin("step") is not None


def test_plugins_folder_errors_name_the_folder_and_the_file(tmp_path, monkeypatch) -> None:
    missing = tmp_path / "nowhere"
    with pytest.raises(rankcraft.PluginError, match=r"plugins folder '.*nowhere' does not exist"):
        get_plugin_manager(plugin_dirs=[missing])
    folder = tmp_path / "plugins"
    folder.mkdir()
    (folder / "broken.py").write_text("import no_such_module_here\n")
    pm = get_plugin_manager(plugin_dirs=[folder])
    assert pm.get_plugin("broken") is None
    assert pm.failed["broken"][2].startswith(
        "plugin 'broken' from plugins-dir failed to load: ModuleNotFoundError: No module named"
    )


def test_a_plugins_folder_obeys_the_conflict_and_block_rules(tmp_path, monkeypatch) -> None:
    folder = tmp_path / "plugins"
    folder.mkdir()
    (folder / "elo.py").write_text(textwrap.dedent(THIRD_PARTY))
    with pytest.raises(
        rankcraft.PluginConflictError,
        match=r"'elo' is provided by more than one distribution: plugins-dir \(.*elo.py\) and "
        r"rankcraft \(rankcraft.plugins.elo\); .*elo@plugins-dir or elo@rankcraft",
    ):
        get_plugin_manager(plugin_dirs=[folder])
    pm = get_plugin_manager(plugin_dirs=[folder], block=["elo@rankcraft"])
    assert pm.origins["elo"][0] == "plugins-dir"
    assert pm.get_plugin("elo").rankcraft_initial("initial", None).__class__.__name__ == "StepSkill"
    pm = get_plugin_manager(plugin_dirs=[folder], block=["elo@plugins-dir"])
    assert pm.origins["elo"][0] == "rankcraft"
    other = tmp_path / "more"
    other.mkdir()
    (other / "elo.py").write_text(textwrap.dedent(THIRD_PARTY))
    with pytest.raises(rankcraft.PluginConflictError, match="two plugin files"):
        get_plugin_manager(plugin_dirs=[folder, other], block=["elo@rankcraft"])


def test_first_party_name_taken_by_a_third_party_is_a_conflict(tmp_path, monkeypatch) -> None:
    _dist(tmp_path, "elo-clone", "0.1", {"elo": "elo_clone"}, {"elo_clone": ""})
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(rankcraft.PluginConflictError, match=r"elo-clone .* and rankcraft "):
        get_plugin_manager()


def test_one_distribution_listing_a_name_twice_is_one_plugin(tmp_path, monkeypatch) -> None:
    # A stale egg-info beside an install lists the same names for the same distribution.
    _dist(tmp_path, "rankcraft", "0.0.1", {"elo": "rankcraft.plugins.elo"}, {})
    monkeypatch.syspath_prepend(str(tmp_path))
    assert "elo" in rankcraft.Plugins().names()


def test_disable_plugins_env_blocks_names(monkeypatch) -> None:
    monkeypatch.setenv(DISABLE_ENV, "individual, mean")
    plugins = rankcraft.Plugins()
    assert "mean" not in plugins.names() and "individual" not in plugins.names()
    assert "elo" in plugins.names()
    with pytest.raises(rankcraft.RulesetError, match="unknown plugin 'mean'"):
        rankcraft.load_ruleset("elo", plugins=plugins)


def test_block_argument() -> None:
    assert "elo" not in rankcraft.Plugins(get_plugin_manager(block=["elo"])).names()


def test_misspelt_hook_is_a_load_error(pm) -> None:
    class Typo:
        @rankcraft.hookimpl
        def rankcraft_updte(self, state: object) -> object:
            return state

    pm.register(Typo(), name="typo")
    with pytest.raises(Exception, match="unknown hook 'rankcraft_updte'"):
        rankcraft.Plugins(pm)


def test_broken_third_party_plugin_names_itself(tmp_path, monkeypatch) -> None:
    _dist(
        tmp_path,
        "rankcraft-broken",
        "1.0",
        {"broken": "broken_mod"},
        {"broken_mod": "raise ImportError('no numpy here')\n"},
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    # it breaks nothing else: the plugin list shows it with its error, other rulesets load
    plugins = rankcraft.Plugins()
    (info,) = [i for i in plugins.info() if i.name == "broken"]
    assert info.distribution == "rankcraft-broken" and info.slots == ()
    assert info.error == (
        "plugin 'broken' from rankcraft-broken failed to load: ImportError: no numpy here"
    )
    assert rankcraft.load_ruleset("elo", plugins=plugins).name == "elo"
    with pytest.raises(
        rankcraft.RulesetError,
        match=r"plugin 'broken' from rankcraft-broken failed to load: ImportError: no numpy "
        r"here @ ruleset.update.plugin",
    ):
        rankcraft.loads_ruleset('name = "b"\n[update]\nplugin = "broken"\n', plugins=plugins)
    code = main(["plugins"], out=(out := io.StringIO()), err=io.StringIO())
    text = out.getvalue()
    assert code == 0 and "plugin 'broken' from rankcraft-broken failed to load" in text
    assert "failed to load: plugin" not in text  # (said once, not twice)


def test_impl_may_take_fewer_arguments(pm, match) -> None:
    installed = get_plugin_manager()

    # The third-party update above omits `context`; here an expectation omits `params`.
    class Even:
        @rankcraft.hookimpl
        def rankcraft_expectation(self, side_states: list[object]) -> list[float]:
            return [1 / len(side_states)] * len(side_states)

    installed.register(Even(), name="even")
    ruleset = rankcraft.loads_ruleset(
        'name = "x"\n[update]\nplugin = "elo"\n[expectation]\nplugin = "even"\n',
        plugins=rankcraft.Plugins(installed),
    )
    league = rankcraft.League(ruleset)
    report = league.record(match("m1", "a", "b", "c", ranks=[1, 2, 3]))
    assert report.expected == pytest.approx((1 / 3, 1 / 3, 1 / 3))


def test_a_plugin_that_still_offers_kernels_is_refused_with_the_hook_named(tmp_path) -> None:
    # the kernel hook is gone (one path): such a plugin fails to load, naming the hook
    folder = tmp_path / "plugins"
    folder.mkdir()
    (folder / "old_elo.py").write_text(
        textwrap.dedent(THIRD_PARTY)
        + "\n@rankcraft.hookimpl\ndef rankcraft_kernel(slot):\n    return None\n"
    )
    plugins = rankcraft.Plugins(get_plugin_manager(plugin_dirs=[folder]))
    assert not plugins.has("old_elo")
    with pytest.raises(rankcraft.RulesetError, match="unknown hook 'rankcraft_kernel'"):
        rankcraft.loads_ruleset('name = "o"\n[update]\nplugin = "old_elo"\n', plugins=plugins)
