"""What opening a whole-history model's league costs: the first match recorded after
``League.open`` with the fit kept at the last close (``rankcraft_fit_dump``/``_load``: the
kept fit loaded, the history read once to check its digest) against the same with the
kept fit removed (the fit rebuilt by handing it the whole stored history again).

    python benchmarks/reopen.py [--ruleset football-goals-fit] [--matches 12000]
        [--file intl_football_1872_2026.jsonl.gz] [--home-from meta.home_team_index]

Prints seconds and their ratio (same process, same file).
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

import rankcraft
from rankcraft.evaluate import with_home
from rankcraft.io import read_match_dicts
from rankcraft.refits import FIT_KEPT

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def first_record(db: Path, match: dict[str, Any]) -> float:
    """Seconds to open a copy of ``db`` and record ``match``."""
    copy = db.with_name(f"copy-{time.monotonic_ns()}.sqlite")
    shutil.copyfile(db, copy)
    started = time.perf_counter()
    with rankcraft.League.open(copy) as league:
        league.record(match)
    return time.perf_counter() - started  # (the close, which keeps the fit again, counted)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ruleset", default="football-goals-fit")
    parser.add_argument("--file", default="intl_football_1872_2026.jsonl.gz")
    parser.add_argument("--matches", type=int, default=12_000)
    parser.add_argument("--home-from", default="meta.home_team_index")
    parser.add_argument("--data", type=Path, default=DATA)
    args = parser.parse_args()
    dicts = [d for _, d in read_match_dicts(args.data / args.file)][: args.matches + 1]
    dicts = list(with_home(dicts, args.home_from)) if args.home_from else dicts
    *history, extra = dicts
    with tempfile.TemporaryDirectory() as folder:
        db = Path(folder) / "league.sqlite"
        started = time.perf_counter()
        with rankcraft.League.open(db, args.ruleset) as league:
            league.record_many(history)
        replay = time.perf_counter() - started
        size = 0
        with rankcraft.League.open(db) as league:
            size = len(league.store.get_meta(FIT_KEPT) or "")
        print(f"{args.ruleset}, {len(history):,} matches of {args.file}: replay {replay:.1f} s,"
              f" kept fit {size / 2**20:.1f} MiB of JSON")  # fmt: skip
        kept = first_record(db, extra)
        with rankcraft.League.open(db) as league, league.batch():
            league.store.set_meta(FIT_KEPT, "{}")
        rebuilt = first_record(db, extra)
        print(f"first match after opening: {kept:.2f} s from the kept fit, {rebuilt:.2f} s"
              f" rebuilt from the history ({rebuilt / kept:.0f}x)")  # fmt: skip


if __name__ == "__main__":
    main()
