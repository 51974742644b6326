"""Rulesets: loading, validation messages, extends, round trips."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import rankcraft
from rankcraft.ruleset import bundled_names, dumps, to_dict


@pytest.mark.parametrize("name", bundled_names())
def test_bundled_rulesets_round_trip(name: str) -> None:
    ruleset = rankcraft.load_ruleset(name)
    text = dumps(ruleset)
    again = rankcraft.loads_ruleset(text)
    assert again == ruleset
    assert dumps(again) == text
    assert to_dict(again) == to_dict(ruleset)


def test_bundled_elo() -> None:
    ruleset = rankcraft.load_ruleset("elo")
    assert ruleset.update.plugin == "elo"
    assert ruleset.update.params.initial_rating == 1500.0
    assert ruleset.update.params.k_factor == 32.0
    assert ruleset.team.plugin == "mean"
    assert ruleset.slot("initial") is ruleset.update
    assert ruleset.slot("rank") is None


def test_load_by_path(tmp_path: Path) -> None:
    path = tmp_path / "mine.toml"
    path.write_text('name = "mine"\n[update]\nplugin = "elo"\n[update.params]\nk_factor = 24\n')
    assert rankcraft.load_ruleset(path).update.params.k_factor == 24.0
    assert rankcraft.load_ruleset(str(path)).name == "mine"


def test_extends_overrides_only_what_it_gives(tmp_path: Path) -> None:
    path = tmp_path / "k16.toml"
    path.write_text('extends = "elo"\nname = "elo-k16"\n[update.params]\nk_factor = 16.0\n')
    ruleset = rankcraft.load_ruleset(path)
    assert ruleset.name == "elo-k16"
    assert ruleset.update.params.k_factor == 16.0
    assert ruleset.update.params.initial_rating == 1500.0
    assert ruleset.team.plugin == "mean"
    child = tmp_path / "child.toml"
    child.write_text('extends = "k16.toml"\nname = "child"\n[team]\nplugin = "individual"\n')
    grandchild = rankcraft.load_ruleset(child)
    assert grandchild.update.params.k_factor == 16.0
    assert grandchild.team.plugin == "individual"


def test_extends_loop_is_refused(tmp_path: Path) -> None:
    (tmp_path / "a.toml").write_text('extends = "b.toml"\nname = "a"\n')
    (tmp_path / "b.toml").write_text('extends = "a.toml"\nname = "b"\n')
    with pytest.raises(rankcraft.RulesetError, match="loops"):
        rankcraft.load_ruleset(tmp_path / "a.toml")


BAD = [
    ("malformed", 'name = "x"\n[update\nplugin = "elo"\n', r"malformed TOML: .*line 2"),
    ("no-update", 'name = "x"\n', r"\[update\] slot is required"),
    ("no-name", '[update]\nplugin = "elo"\n', r"'name' must be a non-empty string"),
    (
        "unknown-top",
        'name = "x"\nnmae = 1\n[update]\nplugin = "elo"\n',
        r"unknown key\(s\) 'nmae' \(did you mean 'name'\?\) @ ruleset",
    ),
    (
        "unknown-plugin",
        'name = "x"\n[update]\nplugin = "elo2"\n',
        r"unknown plugin 'elo2' \(did you mean 'elo'\?\) @ ruleset.update.plugin "
        r"\(installed: .*elo.*mean",
    ),
    (
        "code-is-not-a-plugin",
        'name = "x"\n[update]\nplugin = "os:system"\n',
        r"unknown plugin 'os:system'",
    ),
    (
        "missing-plugin",
        'name = "x"\n[update]\n[update.params]\nk_factor = 1.0\n',
        r"'plugin' must name a plugin: None @ ruleset.update",
    ),
    (
        "slot-key",
        'name = "x"\n[update]\nplugin = "elo"\nk_factor = 3\n',
        r"unknown key\(s\) 'k_factor' @ ruleset.update \(a slot has",
    ),
    (
        "unknown-param",
        'name = "x"\n[update]\nplugin = "elo"\n[update.params]\nkfactor = 3\n',
        r"unknown key\(s\) 'kfactor' \(did you mean 'k_factor'\?\) @ ruleset.update.params",
    ),
    (
        # a field derived when the params are built (init=False) is no key of the table
        "derived-param",
        'name = "x"\n[update]\nplugin = "elo"\n[update.params]\n_plain = true\n',
        r"unknown key\(s\) '_plain' @ ruleset.update.params$",
    ),
    (
        "negative",
        'name = "x"\n[update]\nplugin = "elo"\n[update.params]\nk_factor = -1.0\n',
        r"'k_factor' must be a finite number in \[1e-06, 10000.0\]: -1.0 @ ruleset.update.params",
    ),
    (
        "nan",
        'name = "x"\n[update]\nplugin = "elo"\n[update.params]\nk_factor = nan\n',
        r"'k_factor' must be a finite number in \[1e-06, 10000.0\]: nan",
    ),
    (
        "inf",
        'name = "x"\n[update]\nplugin = "elo"\n[update.params]\ninitial_rating = inf\n',
        r"'initial_rating' must be a finite number in \[-1000000.0, 1000000.0\]: inf",
    ),
    (
        "type",
        'name = "x"\n[update]\nplugin = "elo"\n[update.params]\nk_factor = "32"\n',
        r"expected a number, got '32' @ ruleset.update.params.k_factor",
    ),
    (
        "bool",
        'name = "x"\n[update]\nplugin = "elo"\n[update.params]\nk_factor = true\n',
        r"expected a number, got True",
    ),
    (
        "missing-nested",
        'name = "x"\n[update]\nplugin = "elo"\n[update.params]\n'
        "k_by_games = [{ games_below = 30 }]\n",
        r"ruleset.update.params.k_by_games\[0\]",
    ),
    (
        "nested-range",
        'name = "x"\n[update]\nplugin = "elo"\n[update.params]\n'
        "k_by_games = [{ games_below = 0, k = 40.0 }]\n",
        r"'games_below' must be >= 1: 0 @ ruleset.update.params.k_by_games\[0\]",
    ),
    (
        "period",
        'name = "x"\n[period]\nlength_days = 0\n[update]\nplugin = "elo"\n',
        r"'length_days' must be a finite number in \[1.15\d*e-05, 1000000.0\]: 0.0 "
        r"@ ruleset.period",
    ),
    (
        "mode",
        'name = "x"\n[period]\nmode = "weekly"\n[update]\nplugin = "elo"\n',
        r"'mode' must be in .*'weekly'\) @ ruleset.period",
    ),
    (
        "wrong-slot",
        'name = "x"\n[update]\nplugin = "mean"\n',
        r"plugin 'mean' cannot fill slot 'update'.*it fills: team",
    ),
    (
        "team-param",
        'name = "x"\n[update]\nplugin = "elo"\n[team]\nplugin = "mean"\n'
        '[team.params]\ndeviation = "median"\n',
        r"'deviation' must be in",
    ),
    ("extends-unknown", 'extends = "nope"\nname = "x"\n', r"unknown ruleset 'nope'"),
]


@pytest.mark.parametrize(
    ("text", "message"), [(t, m) for _, t, m in BAD], ids=[i for i, _, _ in BAD]
)
def test_bad_rulesets_name_field_and_value(text: str, message: str) -> None:
    with pytest.raises(rankcraft.RulesetError, match=message):
        rankcraft.loads_ruleset(text, source="bad.toml")


def test_unknown_ruleset_name_lists_bundled() -> None:
    with pytest.raises(rankcraft.RulesetError, match=r"unknown ruleset 'nope'.*bundled: .*elo"):
        rankcraft.load_ruleset("nope")


class _RankNeeding:
    """A rank plugin that changes nothing and needs the fields ``NEEDS`` names."""

    NEEDS: tuple[str, ...] = ()

    @rankcraft.hookimpl
    def rankcraft_needs(self, slot: str) -> rankcraft.Needs:
        return rankcraft.Needs(fields=self.NEEDS)

    @rankcraft.hookimpl
    def rankcraft_rank(self, rank_state: object) -> object:
        return rank_state

    @rankcraft.hookimpl
    def rankcraft_initial(self, slot: str) -> object:
        return None


def test_plugins_that_do_not_fit_are_refused(installed_pm) -> None:
    class NeedsMu(_RankNeeding):
        NEEDS = ("mu", "phi")

    installed_pm.register(NeedsMu(), name="needs-mu")
    with pytest.raises(
        rankcraft.RulesetError,
        match=r"'needs-mu' in slot 'rank' does not fit skill plugin 'elo': it "
        r"needs mu, phi, but 'elo' keeps peak, rating",
    ):
        rankcraft.loads_ruleset(
            'name = "x"\n[update]\nplugin = "elo"\n[rank]\nplugin = "needs-mu"\n',
            plugins=rankcraft.Plugins(installed_pm),
        )


@pytest.mark.parametrize(
    ("skill", "lacks", "keeps", "instead"),
    [
        ("elo", "deviation", "peak, rating", "ladder"),
        ("glicko2", "rating, deviation", "mu, phi, sigma", "inversus-rp, ladder"),
    ],
)
def test_a_rank_plugin_that_does_not_fit_says_what_would(
    skill: str, lacks: str, keeps: str, instead: str
) -> None:
    # issue 39, item 14: which skill plugins skyweaver-rp fits, and which rank plugins
    # run over the skill plugin the ruleset names
    text = f'extends = "skyweaver"\nname = "x"\n[update]\nplugin = "{skill}"\n[update.params]\n'
    with pytest.raises(rankcraft.RulesetError) as caught:
        rankcraft.loads_ruleset(text)
    assert str(caught.value) == (
        f"<string>: plugin 'skyweaver-rp' in slot 'rank' does not fit skill plugin "
        f"'{skill}': it needs {lacks}, but '{skill}' keeps {keeps}. 'skyweaver-rp' fits the "
        f"skill plugins glicko1; the rank plugins that fit '{skill}': {instead}"
    )
    for other in instead.split(", "):  # and what it offers does load
        fits = f'name = "y"\n[update]\nplugin = "{skill}"\n[rank]\nplugin = "{other}"\n'
        assert rankcraft.loads_ruleset(fits).slot("rank").plugin == other


def test_a_plugin_that_fits_no_skill_plugin_says_so(installed_pm: Any) -> None:
    class NeedsNothingKept(_RankNeeding):
        NEEDS = ("elo_and_glicko",)

    installed_pm.register(NeedsNothingKept(), name="needs-more")
    with pytest.raises(rankcraft.RulesetError) as caught:
        rankcraft.loads_ruleset(
            'name = "x"\n[update]\nplugin = "trueskill"\n[rank]\nplugin = "needs-more"\n',
            plugins=rankcraft.Plugins(installed_pm),
        )
    assert str(caught.value).endswith(
        "no installed skill plugin fits 'needs-more'; the rank plugins that fit 'trueskill': ladder"
    )


def test_rulesets_never_import_code(tmp_path: Path, monkeypatch) -> None:
    # A module on the path is not a plugin unless an installed distribution declares it.
    (tmp_path / "evil.py").write_text("raise SystemExit('imported!')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(rankcraft.RulesetError, match="unknown plugin 'evil'"):
        rankcraft.loads_ruleset('name = "x"\n[update]\nplugin = "evil"\n')


def test_toml_nested_too_deeply_is_a_ruleset_error() -> None:
    text = 'name = "x"\na = ' + "[" * 3000 + "]" * 3000 + "\n"
    with pytest.raises(rankcraft.RulesetError, match="arrays or tables nest too deeply"):
        rankcraft.loads_ruleset(text)
