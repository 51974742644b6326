"""Accuracy of every bundled ruleset, and of one tuned ruleset, on each shared history.

Protocol of ``shared/data/splits.json``: replay every match in file order; for matches with
``played_at >= test_from`` score the pre-match probability first, then update (free-for-all
races are scored on every pair of drivers). Each match's home side is taken from
``meta.home_team_index`` where the file has it (NFL, international football). The tuned
ruleset of each file is searched on the warm-up part only (``rankcraft tune``: a seeded
random search scored on the last 20% of warm-up matches); the test part is used once, to
score the chosen ruleset. Prints the Markdown table of docs/accuracy.md.

    python benchmarks/accuracy.py [--files NAME ...] [--trials 24] [--out docs/accuracy-table.md]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import rankcraft
from rankcraft.errors import RankcraftError
from rankcraft.evaluate import evaluate, with_home
from rankcraft.io import read_match_dicts
from rankcraft.ruleset import bundled_names
from rankcraft.tune import parse_param, tune

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
HOME = "meta.home_team_index"

# The shared README's reference log loss of Elo K = 32 (and FiveThirtyEight on NFL).
REFERENCE = {
    "atp_singles_2000_2024.jsonl.gz": ("Elo K=32", 0.6266),
    "nfl_538_elo_1920_2021.jsonl.gz": ("FiveThirtyEight's published forecasts", 0.6291),
    "atp_doubles_2000_2020.jsonl.gz": ("Elo K=32", 0.6401),
    "intl_football_1872_2026.jsonl.gz": ("Elo K=32", 0.5600),
    "worldcup_lineups_1970_2022.jsonl.gz": ("Elo K=32", 0.6667),
    "f1_races_1950_2026.jsonl.gz": (None, None),
}

# What each file's tuned ruleset starts from, and the box searched.
FOOTBALL = """name = "football"
description = "Elo with home advantage and a margin-of-victory multiplier"
[update]
plugin = "elo"
[update.params]
k_factor = 40.0
home_advantage = 80.0
margin = "fivethirtyeight"
"""
GLICKO_DAYS = """name = "glicko-days"
description = "Glicko-1 with one-day rating periods"
[period]
length_days = 1.0
[update]
plugin = "glicko1"
[update.params]
c = 5.0
"""
TUNED = {
    "atp_singles_2000_2024.jsonl.gz": ("elo", ["update.k_factor=10:60"]),
    "nfl_538_elo_1920_2021.jsonl.gz": (
        "elo-538",
        ["update.k_factor=10:40", "update.home_advantage=0:100", "reset.fraction=0:0.6"],
    ),
    "atp_doubles_2000_2020.jsonl.gz": ("elo", ["update.k_factor=10:60"]),
    "intl_football_1872_2026.jsonl.gz": (
        FOOTBALL,
        ["update.k_factor=10:80", "update.home_advantage=0:200"],
    ),
    "worldcup_lineups_1970_2022.jsonl.gz": (
        GLICKO_DAYS,
        ["update.c=0:30", "update.initial_deviation=100:350"],
    ),
    "f1_races_1950_2026.jsonl.gz": ("elo", ["update.k_factor=1:32"]),
}


def load(spec: str, folder: Path) -> rankcraft.Ruleset:
    if "\n" not in spec:
        return rankcraft.load_ruleset(spec)
    path = folder / "base.toml"
    path.write_text(spec)
    return rankcraft.load_ruleset(path)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--files", nargs="*", default=None)
    parser.add_argument("--trials", type=int, default=24)
    args = parser.parse_args()
    splits = json.loads((args.data / "splits.json").read_text())["files"]
    files = args.files or list(splits)
    print("| file (test from) | ruleset | scored | log loss | Brier | accuracy |")
    print("|---|---|---|---|---|---|")
    summary = []
    for name in files:
        test_from = splits[name]["test_from"]
        path = args.data / name
        dicts = list(with_home((d for _, d in read_match_dicts(path)), HOME))
        best: tuple[float, str] | None = None
        for ruleset in bundled_names():
            started = time.perf_counter()
            try:
                result = evaluate(rankcraft.League(ruleset), dicts, test_from=test_from)
            except RankcraftError as exc:
                print(f"| {name} ({test_from}) | {ruleset} | – | – | – | – | <!-- {exc} -->")
                continue
            seconds = time.perf_counter() - started
            print(
                f"| {name} ({test_from}) | {ruleset} | {result.n:,} | {result.log_loss:.4f} "
                f"| {result.brier:.4f} | {result.accuracy:.4f} | <!-- {seconds:.0f} s -->",
                flush=True,
            )
            if best is None or result.log_loss < best[0]:
                best = (result.log_loss, ruleset)
        spec, ranges = TUNED[name]
        with tempfile.TemporaryDirectory() as folder:
            base = load(spec, Path(folder))
            params = [parse_param(text, base) for text in ranges]
            tuned = tune(
                path, base, params, test_from=test_from, trials=args.trials, seed=0, home_from=HOME
            )
        chosen = ", ".join(
            f"{p.path[-1]} {round(v) if p.integer else round(v, 3)}"
            for p, v in zip(tuned.params, tuned.best, strict=True)
        )
        t = tuned.test
        label = f"**{base.name} tuned** ({chosen})"
        print(
            f"| {name} ({test_from}) | {label} | {t.n:,} | **{t.log_loss:.4f}** | "
            f"{t.brier:.4f} | {t.accuracy:.4f} |",
            flush=True,
        )
        if best is None or t.log_loss < best[0]:
            best = (t.log_loss, f"{base.name} tuned")
        summary.append((name, best))
    print()
    print(
        "| file | best rankcraft ruleset | its log loss | reference | reference log loss | beaten |"
    )
    print("|---|---|---|---|---|---|")
    for name, best_pair in summary:
        assert best_pair is not None
        reference, value = REFERENCE[name]
        beaten = "–" if value is None else ("yes" if best_pair[0] < value else "**no**")
        print(
            f"| {name} | {best_pair[1]} | {best_pair[0]:.4f} | {reference or '–'} | "
            f"{'–' if value is None else f'{value:.4f}'} | {beaten} |"
        )


if __name__ == "__main__":
    main()
