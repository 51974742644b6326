"""Where ``ttt-ranked``'s evidence line comes from (docs/accuracy.md, docs/ttt.md): the
whole-history fit of the ATP singles matches before ``--before`` (sigma 1, gamma 0.018, beta 1, the
plain ``ttt-atp`` params), then the least-squares line of each player's smoothed skill at
a match on the natural log of their ranking at it, over the matches from ``--since``
(both parts of the warm-up). Prints the line's value at rank 1 (``evidence_at_one``), its
slope per ln rank (``evidence_per_log``) and the residual deviation (the least
``evidence_sd`` could be; a ranking re-read every week is not that many independent
measurements, so the ruleset takes a wider one, chosen on 2019-2021).

    python benchmarks/ttt_ranking.py [--data DIR] [--before 2019-01-01] [--since 2010-01-01]
"""

from __future__ import annotations

import argparse
import datetime
import gzip
import json
import math
from pathlib import Path
from typing import Any

from rankcraft.plugins._ttt import Game, ThroughTime

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--before", default="2019-01-01")
    parser.add_argument("--since", default="2010-01-01")
    args = parser.parse_args()
    with gzip.open(args.data / "atp_singles_2000_2024.jsonl.gz", "rt") as lines:
        rows = [r for r in map(json.loads, lines) if r["played_at"] < args.before]
    days: dict[int, list[dict[str, Any]]] = {}
    for row in rows:
        day = datetime.date.fromisoformat(row["played_at"][:10]).toordinal()
        days.setdefault(day, []).append(row)
    fit = ThroughTime(0.0, 1.0, 1.0, 0.018, 0.0)
    for day in sorted(days):
        fit.add(float(day), [Game(r["teams"], r["scores"]) for r in days[day]])
    print(fit.converge(1e-3, 30))
    smoothed = {p: {t: mu for t, mu, _ in fit.curve(p)} for p in fit.ids}
    since = datetime.date.fromisoformat(args.since).toordinal()
    xs, ys = [], []
    for day in (d for d in sorted(days) if d >= since):
        for row in days[day]:
            for side, rank in zip(row["teams"], row["meta"].get("atp_rank") or [], strict=False):
                if rank:
                    xs.append(math.log(rank))
                    ys.append(smoothed[side[0]][float(day)])
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sum(
        (x - mx) ** 2 for x in xs
    )
    at_one = my - slope * mx
    squares = sum((y - at_one - slope * x) ** 2 for x, y in zip(xs, ys, strict=True))
    residual = math.sqrt(squares / n)
    print(
        f"{n:,} ranked appearances: evidence_at_one {at_one:.3f}, evidence_per_log "
        f"{-slope:.3f}, residual deviation {residual:.3f}"
    )


if __name__ == "__main__":
    main()
