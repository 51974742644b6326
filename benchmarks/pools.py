"""Pool offsets on international football: the bundled ``football`` ruleset with and
without ``pool_field``, each side's pool being its confederation.

The history names no confederation, so one is read from the continental competitions a
team played before the test part (warm-up matches only): each match of a competition of
one confederation (e.g. "UEFA Euro qualification", "Copa América") is a vote for both
sides, and a team takes the confederation with the most votes (teams without a vote have
no pool, so their matches have no offset). ``pool_k`` is chosen on the validation slice
(the last 20% of the warm-up, as ``rankcraft tune`` scores); the test part is scored
once, with the paired difference against ``football`` and against Elo K = 32
(``evaluate.compare``: weeks, 2,000 resamples, seed 0).

    python benchmarks/pools.py [--data DIR] [--pool-k 5 10 20 40]
"""

from __future__ import annotations

import argparse
import json
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import rankcraft
from rankcraft.evaluate import compare, evaluate, with_home
from rankcraft.io import read_match_dicts

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
FILE = "intl_football_1872_2026.jsonl.gz"
# Text found in the names of each confederation's own competitions.
CONFEDERATIONS = {
    "UEFA": ("UEFA Euro",),
    "CAF": ("African Cup of Nations", "COSAFA", "CECAFA", "Amílcar Cabral"),
    "AFC": ("AFC ", "AFC Asian", "Gulf Cup", "AFF Championship", "SAFF", "EAFF", "WAFF"),
    "CONMEBOL": ("Copa América",),
    "CONCACAF": ("Gold Cup", "CONCACAF", "CFU Caribbean", "UNCAF"),
    "OFC": ("Oceania Nations", "OFC"),
}


def confederations(dicts: list[dict[str, Any]], test_from: str) -> dict[str, str]:
    """Each team's confederation, from the competitions it played before ``test_from``."""
    votes: dict[str, Counter[str]] = defaultdict(Counter)
    for d in dicts:
        if d["played_at"] >= test_from:
            break
        tournament = d["meta"]["tournament"]
        for name, keys in CONFEDERATIONS.items():
            if any(key in tournament for key in keys):
                for side in d["teams"]:
                    votes[side[0]][name] += 1
                break
    return {team: counts.most_common(1)[0][0] for team, counts in votes.items()}


def with_pools(text: str, pool_k: float | None) -> rankcraft.Ruleset:
    """The ruleset of ``text`` with ``pool_field = "confederation"`` and ``pool_k`` (None:
    unchanged)."""
    if pool_k is not None:
        text = text.replace(
            "\npool_k = 10.0\n", f'\npool_field = "confederation"\npool_k = {pool_k!r}\n', 1
        )
    return rankcraft.loads_ruleset(text)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--pool-k", type=float, nargs="*", default=[5.0, 10.0, 20.0, 40.0])
    args = parser.parse_args()
    test_from = json.loads((args.data / "splits.json").read_text())["files"][FILE]["test_from"]
    home = "meta.home_team_index"
    dicts = list(with_home((d for _, d in read_match_dicts(args.data / FILE)), home))
    teams = confederations(dicts, test_from)
    for d in dicts:
        d["meta"] = {**d["meta"], "confederation": [teams.get(s[0]) for s in d["teams"]]}
    print(f"teams with a confederation: {len(teams)} {dict(Counter(teams.values()))}")
    warm = [d["played_at"] for d in dicts if d["played_at"] < test_from]
    validation_from = warm[int(len(warm) * 0.8)]
    text = rankcraft.dumps_ruleset(rankcraft.load_ruleset("football"))
    scores = {}
    for pool_k in [None, *args.pool_k]:
        league = rankcraft.League(with_pools(text, pool_k))
        result = evaluate(
            league, dicts, test_from=test_from, score_from=validation_from, stop_at=test_from
        )
        scores[pool_k] = result.log_loss
        print(f"validation from {validation_from}, pool_k {pool_k}: {result.log_loss:.5f}")
    chosen = min(args.pool_k, key=lambda k: scores[k])
    plain = evaluate(rankcraft.League(with_pools(text, None)), dicts, test_from=test_from)
    pooled = evaluate(rankcraft.League(with_pools(text, chosen)), dicts, test_from=test_from)
    elo = evaluate(rankcraft.League("elo"), dicts, test_from=test_from)
    print("| ruleset | log loss | three-way log loss | RPS | vs football | vs Elo K=32 |")
    print("|---|---|---|---|---|---|")
    for label, result in (("football", plain), (f"football, pool_k {chosen:g}", pooled)):
        three = result.three_way
        cells = [
            compare(base, result, names=(label, name))
            for base, name in ((plain, "football"), (elo, "elo"))
        ]
        shown = [f"{c.log_loss:+.4f} [{c.low:+.4f}, {c.high:+.4f}]" for c in cells]
        print(
            f"| {label} | {result.log_loss:.4f} | "
            f"{'–' if three is None else f'{three.log_loss:.4f} | {three.rps:.4f}'} | "
            f"{shown[0]} | {shown[1]} |"
        )


if __name__ == "__main__":
    main()
