"""Digests of what every bundled ruleset gives on the real match histories (tests/test_golden.py).

The histories are the project's test data (ATP singles and doubles, NFL, international
football, World Cup line-ups, F1), kept outside the package. Run from the repository root
to (re)write tests/golden/exports.json; only do so when a change of results is intended
and explained in docs/decisions.md:

    python tests/golden/make_golden.py --data DIR    (or with RANKCRAFT_SHARED_DATA=DIR)
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import itertools
import json
import os
import sys
from pathlib import Path
from typing import Any

import rankcraft

RULESETS = ("elo", "elo-fide", "elo-538", "glicko1", "inversus", "skyweaver", "team-wager")
HISTORIES = {  # file -> matches replayed (a prefix keeps the test short)
    "atp_singles_2000_2024.jsonl.gz": 2500,
    "atp_doubles_2000_2020.jsonl.gz": 1500,
    "nfl_538_elo_1920_2021.jsonl.gz": 2500,
    "intl_football_1872_2026.jsonl.gz": 2500,
    "worldcup_lineups_1970_2022.jsonl.gz": 120,
    "f1_races_1950_2026.jsonl.gz": 300,
}
LEFT_OUT = {
    ("skyweaver", "nfl_538_elo_1920_2021.jsonl.gz"),
    ("skyweaver", "intl_football_1872_2026.jsonl.gz"),
    ("skyweaver", "f1_races_1950_2026.jsonl.gz"),
}
"""Pairs left out to keep the test short: Skyweaver runs a season event every week for
every player, and these prefixes span decades (its results are held on the other files)."""
OUT = Path(__file__).with_name("exports.json")


def read(path: Path, limit: int) -> list[dict[str, Any]]:
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in itertools.islice(f, limit)]


def digest(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def replay(ruleset: str, matches: list[dict[str, Any]]) -> dict[str, str]:
    """The export's digest and the digest of every report, in match order."""
    league = rankcraft.League(ruleset)
    league.record_many(matches)
    reports = [league.codec.report_to_dict(league.report(m["id"])) for m in matches]
    return {"export": digest(league.export()["players"]), "reports": digest(reports)}


def main() -> int:
    parser = argparse.ArgumentParser()
    default = os.environ.get("RANKCRAFT_SHARED_DATA")
    parser.add_argument(
        "--data",
        type=Path,
        default=None if default is None else Path(default),
        required=default is None,
        help="the directory of the match histories (default: $RANKCRAFT_SHARED_DATA)",
    )
    args = parser.parse_args()
    out: dict[str, dict[str, str]] = {}
    for name, limit in HISTORIES.items():
        matches = read(args.data / name, limit)
        for ruleset in RULESETS:
            if (ruleset, name) in LEFT_OUT:
                continue
            try:
                out[f"{ruleset} {name}"] = replay(ruleset, matches)
            except rankcraft.InputError as exc:  # e.g. the wager rates two sides only
                out[f"{ruleset} {name}"] = {"error": str(exc)}
            print(ruleset, name, file=sys.stderr)
    OUT.write_text(json.dumps(out, indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
