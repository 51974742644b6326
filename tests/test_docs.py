"""The documentation keeps up with the code: every hook, command and ruleset is on its page.

(The examples in docs/*.md and README.md run as doctests through ``--doctest-glob``.)
"""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest

import rankcraft
from rankcraft import hookspecs
from rankcraft.cli import build_parser
from rankcraft.ruleset import bundled_names

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
HOOKS = [
    name
    for name, obj in vars(hookspecs).items()
    if name.startswith("rankcraft_") and inspect.isfunction(obj)
]


def test_there_are_hooks() -> None:
    assert len(HOOKS) >= 10


@pytest.mark.parametrize("hook", HOOKS)
def test_every_hook_is_documented_with_its_signature(hook: str) -> None:
    page = (DOCS / "hooks.md").read_text("utf-8")
    args = ", ".join(inspect.signature(getattr(hookspecs, hook)).parameters)
    assert f"\n## {hook}({args})\n" in page, f"docs/hooks.md lacks '## {hook}({args})'"
    spec = getattr(rankcraft.get_plugin_manager(entry_points=False).hook, hook).spec
    assert spec is not None and tuple(spec.argnames) == tuple(args.split(", "))


def test_hooks_page_documents_no_other_hooks() -> None:
    page = (DOCS / "hooks.md").read_text("utf-8")
    documented = re.findall(r"^## (rankcraft_\w+)\(", page, flags=re.M)
    assert sorted(documented) == sorted(HOOKS)


@pytest.mark.parametrize("hook", HOOKS)
def test_hookspec_docstrings_are_reference_material(hook: str) -> None:
    doc = inspect.getdoc(getattr(hookspecs, hook)) or ""
    for arg in inspect.signature(getattr(hookspecs, hook)).parameters:
        assert f":param {arg}:" in doc, f"{hook} does not document {arg}"
    assert ":returns:" in doc and ".. versionadded::" in doc


def _commands() -> list[str]:
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    return sorted(sub.choices)  # type: ignore[arg-type]


@pytest.mark.parametrize("command", _commands())
def test_every_command_is_documented(command: str) -> None:
    assert re.search(
        rf"^rankcraft {command}\b", (DOCS / "cli.md").read_text("utf-8"), flags=re.M
    ), command


@pytest.mark.parametrize("name", bundled_names())
def test_every_bundled_ruleset_is_documented(name: str) -> None:
    assert f"| `{name}` |" in (DOCS / "rulesets.md").read_text("utf-8")


def test_readme_opens_with_the_two_commands() -> None:
    readme = (ROOT / "README.md").read_text("utf-8")
    blocks = re.findall(r"```bash\n(.*?)```", readme, flags=re.S)
    first, second = blocks[0].strip(), blocks[1].strip()
    assert first.startswith("python3 -m venv .venv") and first.endswith("rankcraft demo")
    assert "pip install -e '.[test]'" in second and second.endswith("python -m pytest -n auto")
    ci = (ROOT / ".ci" / "run").read_text("utf-8")
    assert "grep -m1 -E '^python3 -m venv .*pytest' README.md" in ci
    assert re.search(r"^python3 -m venv .*pytest.*$", readme, flags=re.M).group(0) == second


def test_pages_link_to_existing_pages() -> None:
    for page in [ROOT / "README.md", *DOCS.glob("*.md")]:
        for target in re.findall(r"\]\(([\w/.-]+\.md)\)", page.read_text("utf-8")):
            assert (page.parent / target).exists(), f"{page.name} links to missing {target}"


def _anchors(page: Path) -> set[str]:
    """GitHub's anchors of a page's headings: lower case, punctuation dropped, spaces to -."""
    headings = re.findall(r"^#+ (.+)$", page.read_text("utf-8"), flags=re.M)
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in headings}


def test_links_to_sections_find_their_heading() -> None:
    checked = 0
    for page in [ROOT / "README.md", *DOCS.glob("*.md")]:
        text = page.read_text("utf-8")
        for target, anchor in re.findall(r"\]\(([\w/.-]*\.md)?#([\w-]+)\)", text):
            linked = page.parent / target if target else page
            assert anchor in _anchors(linked), f"{page.name} links to missing {target}#{anchor}"
            checked += 1
    assert checked >= 10  # (the pages do link sections: the check ran)


def test_the_plugin_page_shows_the_module_it_runs() -> None:
    page = (DOCS / "plugins.md").read_text("utf-8")
    shown = re.search(r"```python\n(.*?)```", page, flags=re.S)
    assert shown is not None
    module = (DOCS / "examples" / "plugins" / "streak.py").read_text("utf-8")
    assert shown.group(1) == module
    assert "exec(" not in page


def test_every_bundled_ruleset_is_named_in_the_readme() -> None:
    readme = (ROOT / "README.md").read_text("utf-8")
    listed = re.search(r"Bundled \(`rankcraft rulesets`.*?\.\s", readme, flags=re.S)
    assert listed is not None
    for name in bundled_names():
        assert f"`{name}`" in listed.group(0), name


_TOP = [
    *(p.name for p in ROOT.iterdir() if p.is_dir() and not p.name.startswith((".git", ".venv"))),
    ".ci",
]
_REPO_PATH = re.compile(r"(?<![\w./-])((?:" + "|".join(map(re.escape, _TOP)) + r")/[\w./-]*[\w/])")


def _missing_paths(page: Path) -> list[str]:
    """The repository paths (``core/io.py``, ``tests/test_x.py``, ``docs/examples/...``)
    a page names that are neither in the repository nor beside the page."""
    return [
        path
        for path in _REPO_PATH.findall(page.read_text("utf-8"))
        if not (ROOT / path).exists() and not (page.parent / path).exists()
    ]


@pytest.mark.source_tree  # (the paths are the source tree's)
def test_the_docs_name_no_missing_repository_paths(tmp_path: Path) -> None:
    assert {"core", "docs", "tests", "plugins", "rulesets", "benchmarks"} <= set(_TOP)
    missing = {
        page.name: found
        for page in [ROOT / "README.md", *DOCS.glob("*.md")]
        if (found := _missing_paths(page))
    }
    assert missing == {}
    # the check finds them: a page naming a file that is gone
    page = tmp_path / "page.md"
    page.write_text("see core/io.py, core/fast.py and tests/test_gone.py (docs/cli.md)\n")
    assert _missing_paths(page) == ["core/fast.py", "tests/test_gone.py"]
