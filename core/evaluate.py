"""One-step-ahead scoring of a ruleset on a match history (``shared/data/splits.json``).

Every match is replayed in order; for a *test* match (``played_at`` ≥ ``test_from``,
compared as ISO text) the league's pre-match probability that side 0 wins is scored
before the match updates the ratings. Warm-up matches only train.

>>> import rankcraft
>>> from rankcraft.evaluate import evaluate
>>> history = [{"id": f"m{i}", "played_at": f"2024-01-{i + 1:02d}", "teams": [["a"], ["b"]],
...             "scores": [1, 0]} for i in range(6)]
>>> result = evaluate(rankcraft.League("elo"), history, test_from="2024-01-04")
>>> result.n, round(result.log_loss, 4), result.accuracy
(3, 0.4253, 1.0)
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

import attrs

from .engine import League
from .io import parse_match
from .model import Match

_CLIP = 1e-12


@attrs.frozen(kw_only=True)
class Evaluation:
    """Scores of the test matches.

    Attributes:
        n: test matches scored (two sides). warmup: matches before ``test_from``.
        log_loss: mean of -(s ln p + (1-s) ln(1-p)), natural log, p clipped to
            [1e-12, 1 - 1e-12]; a draw counts as s = 0.5.
        brier: mean of (p - s)².
        accuracy: over decisive matches: 1 when the favourite won, 0.5 when p = 0.5.
        decisive: decisive test matches (the accuracy's denominator).
        skipped: test matches with more than two sides (not scored here).
    """

    n: int
    warmup: int
    log_loss: float
    brier: float
    accuracy: float
    decisive: int
    skipped: int = 0


def evaluate(
    league: League,
    matches: Iterable[Match | Mapping[str, Any]],
    *,
    test_from: str,
) -> Evaluation:
    """Replay ``matches`` into ``league`` and score the test part one step ahead."""
    n = warmup = decisive = skipped = 0
    log_loss = brier = hits = 0.0
    with league.batch():
        for item in matches:
            if isinstance(item, Match):
                match, text = item, item.played_at.isoformat()
            else:
                match, text = parse_match(item), str(item.get("played_at", ""))
            report = league.record(match)
            if text < test_from:
                warmup += 1
                continue
            if len(match.teams) != 2:
                skipped += 1
                continue
            p = min(max(report.expected[0], _CLIP), 1.0 - _CLIP)
            places = match.places
            s = 1.0 if places[0] < places[1] else 0.0 if places[0] > places[1] else 0.5
            n += 1
            log_loss -= s * math.log(p) + (1.0 - s) * math.log(1.0 - p)
            brier += (p - s) ** 2
            if s != 0.5:
                decisive += 1
                if p == 0.5:
                    hits += 0.5
                elif (p > 0.5) == (s == 1.0):
                    hits += 1.0
        if league.ruleset.period.mode == "batch":
            league.close_period()
    return Evaluation(
        n=n,
        warmup=warmup,
        log_loss=log_loss / n if n else math.nan,
        brier=brier / n if n else math.nan,
        accuracy=hits / decisive if decisive else math.nan,
        decisive=decisive,
        skipped=skipped,
    )
