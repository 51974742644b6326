"""Every bundled ruleset gives, bit for bit, the results recorded in tests/golden/exports.json
(through a league, and its ratings through the streaming Rater too).

The digests were written by tests/golden/make_golden.py before the engine's one-path
rewrite: the export (every player's state) and every match report, on a prefix of each
shared history (the prefixes were cut to 2,500 matches or fewer on 2026-11-28 to keep
the suite within its time: the digests of the shorter prefixes were written by the code
that still gave every digest of the longer ones). A change that alters any number fails
here; intended changes are
recorded in docs/decisions.md and the digests rewritten with that script.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

import rankcraft

from .conftest import SHARED_DATA, SHARED_DATA_MISSING

GOLDEN = Path(__file__).parent / "golden"
_spec = importlib.util.spec_from_file_location("make_golden", GOLDEN / "make_golden.py")
assert _spec is not None and _spec.loader is not None
make_golden = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(make_golden)

EXPECTED: dict[str, dict[str, str]] = json.loads((GOLDEN / "exports.json").read_text())

pytestmark = pytest.mark.skipif(not SHARED_DATA.is_dir(), reason=SHARED_DATA_MISSING)


@pytest.mark.slow(seconds=15)
@pytest.mark.parametrize("history", sorted(make_golden.HISTORIES))
def test_bundled_rulesets_give_the_recorded_results(history: str) -> None:
    matches = make_golden.read(SHARED_DATA / history, make_golden.HISTORIES[history])
    for ruleset in make_golden.RULESETS:
        if (ruleset, history) in make_golden.LEFT_OUT:
            continue
        expected = EXPECTED[f"{ruleset} {history}"]
        if "error" in expected:
            with pytest.raises(rankcraft.InputError) as caught:
                make_golden.replay(ruleset, matches)
            assert str(caught.value) == expected["error"]
            continue
        assert make_golden.replay(ruleset, matches) == expected, ruleset
        # the same ratings through the streaming entry point (the one loop, no history)
        rater = rankcraft.Rater(ruleset)
        rater.rate(matches)
        assert make_golden.digest(rater.league.export()["players"]) == expected["export"]
