"""Log loss, Brier and accuracy of the bundled rulesets on the shared histories.

Protocol of ``shared/data/splits.json``: replay every match in order; for matches with
``played_at >= test_from`` score the pre-match probability first, then update. Prints a
Markdown table (the figures quoted in docs/accuracy.md and the issue notes).

    python benchmarks/accuracy.py [--files atp_singles_2000_2024.jsonl.gz ...]
        [--rulesets elo glicko1 ...]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import rankcraft
from rankcraft.evaluate import evaluate
from rankcraft.io import read_matches

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--files", nargs="*", default=None)
    parser.add_argument("--rulesets", nargs="*", default=None)
    args = parser.parse_args()
    splits = json.loads((args.data / "splits.json").read_text())["files"]
    files = args.files or list(splits)
    rulesets = args.rulesets or rankcraft.ruleset.bundled_names()
    print("| file | ruleset | n | log loss | Brier | accuracy |")
    print("|---|---|---|---|---|---|")
    for name in files:
        test_from = splits[name]["test_from"]
        for ruleset in rulesets:
            result = evaluate(
                rankcraft.League(ruleset), read_matches(args.data / name), test_from=test_from
            )
            skipped = f" (+{result.skipped} free-for-all not scored)" if result.skipped else ""
            print(
                f"| {name} | {ruleset} | {result.n:,}{skipped} | {result.log_loss:.4f} | "
                f"{result.brier:.4f} | {result.accuracy:.4f} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
