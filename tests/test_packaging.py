"""Packaging: plugins and entry points match, and the built wheel works on its own."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
import venv
import zipfile
from importlib import metadata
from pathlib import Path

import pytest

import rankcraft

from .conftest import SHARED_DATA

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))


SMOKE = [
    "README.md",
    "docs/quickstart.md",
    "tests/test_engine.py",
    "tests/test_manager.py",
    "tests/test_sqlite.py",
    "tests/test_one_path.py",
    "tests/test_packaging.py",
]
"""What the installed wheel runs: enough to show that its plugins, engine and stores work
from the wheel alone (its command line runs ``rankcraft demo`` first; the CLI's own tests,
a fifth of this test's time, run from the source tree only)."""
SMOKE_NEEDS = ["pytest>=9", "pytest-xdist>=3.6", "hypothesis>=6.100"]
"""What the smoke subset imports beside the wheel (a subset of the ``test`` extra; xdist
and hypothesis are the pytest plugins pyproject.toml's ``addopts`` names)."""


def _declared() -> dict[str, str]:
    return dict(PYPROJECT["project"]["entry-points"]["rankcraft"])


@pytest.mark.source_tree
def test_plugin_modules_and_entry_points_match_one_to_one() -> None:
    modules = {
        f"rankcraft.plugins.{p.stem}"
        for p in (ROOT / "plugins").glob("*.py")
        if not p.stem.startswith("_")
    }
    assert sorted(_declared().values()) == sorted(modules)
    assert len(set(_declared().values())) == len(_declared())


def test_installed_entry_points_are_the_declared_ones() -> None:
    installed = {
        ep.name: ep.value
        for ep in metadata.entry_points(group="rankcraft")
        if ep.dist is not None and ep.dist.name == "rankcraft"
    }
    assert installed == _declared()


@pytest.mark.source_tree
def test_every_subpackage_is_listed() -> None:
    packages = set(PYPROJECT["tool"]["setuptools"]["packages"])
    mapping = PYPROJECT["tool"]["setuptools"]["package-dir"]
    for name, folder in mapping.items():
        assert name in packages
        assert (ROOT / folder / "__init__.py").exists(), folder
    for init in (ROOT / "core").rglob("__init__.py"):
        rel = init.parent.relative_to(ROOT / "core")
        name = ".".join(("rankcraft", *rel.parts)) if rel.parts else "rankcraft"
        assert name in packages, f"{name} is missing from [tool.setuptools] packages"


def test_runtime_dependencies_are_the_documented_five() -> None:
    deps = {d.split(">")[0].split("=")[0] for d in PYPROJECT["project"]["dependencies"]}
    assert deps == {"pluggy", "attrs", "cattrs", "tomli-w", "rich"}  # rich: the CLI's bars


@pytest.mark.slow(seconds=40)
@pytest.mark.source_tree
def test_wheel_installs_runs_the_demo_and_a_smoke_subset(tmp_path: Path) -> None:
    """Build the wheel, install it in a fresh venv, run ``rankcraft demo`` and a smoke
    subset of the suite against it (the whole suite runs once, from the source tree)."""
    dist = tmp_path / "dist"
    # built from a copy: building in the tree rewrites its rankcraft.egg-info, which the
    # other test workers (the tree is on their path) would meanwhile read without its
    # entry points, and find no plugins
    source = tmp_path / "source"
    shutil.copytree(
        ROOT,
        source,
        ignore=shutil.ignore_patterns(
            ".git", ".venv", "build", "*.egg-info", "__pycache__", ".*_cache", ".hypothesis"
        ),
    )
    subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--outdir", str(dist), str(source)],
        check=True,
        capture_output=True,
        text=True,
    )
    (wheel,) = dist.glob("rankcraft-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "rankcraft/py.typed" in names
    assert "rankcraft/docs.html" in names  # the service's /docs page ships in the package
    for page in ("index.html", "app.js", "app.css"):  # and its web page (no CDN)
        assert f"rankcraft/page/{page}" in names
    assert "rankcraft/data/sample-matches.jsonl.gz" in names  # `rankcraft sample`
    assert "rankcraft/rulesets/elo.toml" in names
    assert "rankcraft/data/intl_football_1872_2026.jsonl.gz" in names
    assert "rankcraft/plugins/elo.py" in names
    shipped = [n for n in names if n.endswith((".jsonl", ".jsonl.gz", ".csv"))]
    assert not [n for n in shipped if "atp" in n or "nfl" in n or "worldcup" in n or "f1_" in n]
    assert not [n for n in names if n.startswith("tests/")]

    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=False)
    python = env_dir / "bin" / "python"
    subprocess.run(
        # the wheel and what the smoke subset imports (the whole test extra builds
        # packages the subset never uses and took a minute of the suite), installed by
        # this interpreter's pip into the new environment (--python): a pip of its own
        # and compiled files took 16.5 s of this test's 33 s, against 7 s now
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(python),
            "install",
            "-q",
            "--no-compile",
            f"{wheel}[serve]",
            *SMOKE_NEEDS,
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    work = tmp_path / "work"
    work.mkdir()
    for item in ("tests", "docs", "README.md", "pyproject.toml", ".ci"):
        src = ROOT / item
        if src.is_dir():
            shutil.copytree(src, work / item, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy(src, work / item)
    env = {
        **os.environ,
        "RANKCRAFT_SHARED_DATA": str(SHARED_DATA),
    }
    where = subprocess.run(
        [str(python), "-c", "import rankcraft; print(rankcraft.__file__)"],
        check=True,
        capture_output=True,
        text=True,
        cwd=work,
        env=env,
    )
    assert str(env_dir) in where.stdout, where.stdout
    demo = subprocess.run(
        [str(env_dir / "bin" / "rankcraft"), "demo", "--top", "3", "--json"],
        capture_output=True,
        text=True,
        cwd=work,
        env=env,
        check=False,
    )
    assert demo.returncode == 0, demo.stderr
    assert '"matches": 49520' in demo.stdout
    result = subprocess.run(
        # the installed package's plugins, engine, store, command line and the README
        [
            str(python),
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-m",
            "not source_tree",
            *SMOKE,
        ],
        capture_output=True,
        text=True,
        cwd=work,
        env=env,
        check=False,
    )
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert " passed" in result.stdout and "skipped" not in result.stdout


def test_version_comes_from_metadata() -> None:
    assert rankcraft.__version__ == PYPROJECT["project"]["version"]
