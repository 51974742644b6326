"""The repository stands alone: no page, docstring or comment sends the reader to a file
the repository does not have.

rankcraft was first specified from notes kept outside the repository (design notes cited
by section, errata cited by id, source documents cited by number, a folder beside the
repository). Their content now lives in docs/design.md and docs/decisions.md, and the
sources are cited by title. The test histories are the one outside thing the suite may
use, and only through the path logic of tests/conftest.py (``SHARED_DATA``, set by
``RANKCRAFT_SHARED_DATA``), which names no outside file and so needs no exemption.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

pytestmark = pytest.mark.source_tree  # reads core/ and plugins/, which the wheel test lacks

ROOT = Path(__file__).resolve().parents[1]

OUTSIDE = {
    "a section of the outside design notes": re.compile(r"\bDESIGN\b|§"),
    "the outside errata": re.compile(r"(?i)errata|\bE-\d{3}-\d+"),
    "a numbered outside source document": re.compile(r"(?i)seeds?[ _-]?\d{3}|\bseeds/"),
    "the folder beside the repository": re.compile(r"(?i)shared/|shared (data )?readme"),
}
"""What an outside reference looks like, by what it points to."""

TEXT = {".py", ".md", ".toml", ".json", ".txt", ".cfg", ".ini"}
SELF = Path(__file__).resolve()  # this file's examples of outside references are not scanned


def scanned_files() -> list[Path]:
    """README.md, docs/*.md, and the text files of core/, plugins/, rulesets/ and tests/."""
    files = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    for folder in ("core", "plugins", "rulesets", "tests"):
        files += sorted(
            p
            for p in (ROOT / folder).rglob("*")
            if p.is_file() and p.suffix in TEXT and "__pycache__" not in p.parts and p != SELF
        )
    return files


def outside_references(path: Path) -> list[str]:
    """``file:line: what it points to: the line`` for each outside reference in ``path``."""
    found = []
    name = path.relative_to(ROOT).as_posix()
    for number, line in enumerate(path.read_text("utf-8").splitlines(), 1):
        for what, pattern in OUTSIDE.items():
            if pattern.search(line):
                found.append(f"{name}:{number}: {what}: {line.strip()}")
    return found


def test_the_scan_covers_the_repository() -> None:
    names = {p.relative_to(ROOT).as_posix() for p in scanned_files()}
    for expected in (
        "README.md",
        "docs/design.md",
        "docs/decisions.md",
        "core/cli/__init__.py",
        "core/store/sql.py",
        "plugins/skyweaver.py",
        "rulesets/inversus.toml",
        "tests/conftest.py",
        "tests/test_docs.py",
        "tests/golden/make_golden.py",
    ):
        assert expected in names


@pytest.mark.parametrize(
    ("line", "what"),
    [
        ("the match format (DESIGN §2)", "a section of the outside design notes"),
        ("see ERRATA.md", "the outside errata"),
        ("the bonus after the cap (E-000-9)", "the outside errata"),
        ("def test_rounding_errata_e003_9():", "the outside errata"),
        ("Seed 002's worked example", "a numbered outside source document"),
        ("def test_bob_and_alice_seed_004():", "a numbered outside source document"),
        ("python make_golden.py --data ../shared/data", "the folder beside the repository"),
        ("the figures of the shared README", "the folder beside the repository"),
    ],
)
def test_outside_references_are_recognised(line: str, what: str) -> None:
    assert [w for w, pattern in OUTSIDE.items() if pattern.search(line)] == [what]


@pytest.mark.parametrize(
    "line",
    [
        'os.environ.get("RANKCRAFT_SHARED_DATA")',
        'Path(__file__).resolve().parents[1].parent / "shared" / "data"',
        "report factors are kept as a shared tuple of names",
        "takes the advisory lock *shared*",
        "rankcraft tune matches.jsonl --ruleset elo --seed 7 --trials 24",
        "a ranked-ladder design, not a forecaster",
        "[design](design.md#the-match-document)",
    ],
)
def test_ordinary_words_are_not_outside_references(line: str) -> None:
    assert not any(pattern.search(line) for pattern in OUTSIDE.values())


def test_nothing_points_outside_the_repository() -> None:
    found = [hit for path in scanned_files() for hit in outside_references(path)]
    assert not found, "outside references (write the statement, or link docs/):\n" + "\n".join(
        found
    )
