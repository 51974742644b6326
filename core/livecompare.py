"""Champion against challenger: two leagues fed the same matches (each its own database,
each its own ruleset), compared on the matches both hold so far (docs/evaluate.md,
"Champion and challenger").

:func:`compare_live` scores exactly as ``rankcraft evaluate`` does: each league's ruleset
is replayed one step ahead over the matches the two leagues have in common (by id, in the
champion's order) with :func:`rankcraft.evaluate.evaluate_ruleset`, and the paired
differences with their 95% intervals are :func:`rankcraft.comparison.differences` of the
two, the champion the baseline (negative: the challenger predicts better).
``rankcraft compare-live`` prints it; ``GET /web/compare-live`` of a service started with
``--challenger`` answers it.

>>> import rankcraft
>>> from rankcraft.livecompare import compare_live
>>> history = [{"id": f"m{i}", "played_at": f"2024-01-{i + 1:02d}", "teams": [["a"], ["b"]],
...             "scores": [1, 0]} for i in range(6)]
>>> champion, challenger = rankcraft.League("elo"), rankcraft.League("glicko1")
>>> _ = champion.record_many(history), challenger.record_many(history[:4])
>>> result = compare_live(champion, challenger, test_from="2024-01-02")
>>> result.common, result.champion_only, result.results["elo"].n
(4, 2, 3)
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import attrs

from .comparison import BLOCK_DAYS, SAMPLES, Difference, differences, report
from .engine import League
from .errors import InputError
from .evaluate import evaluate_ruleset
from .io import parse_time
from .model import Match, format_time

__all__ = ["LiveComparison", "common_matches", "compare_dbs", "compare_live"]


@attrs.frozen(kw_only=True)
class LiveComparison:
    """The champion's and the challenger's scores on the matches both leagues hold.

    Attributes:
        champion, challenger: the labels of the two results (each league's ruleset's
            name; the challenger's followed by `` (challenger)`` when both are the same).
        test_from: the time from which matches are scored (ISO text).
        common: the matches both leagues hold (replayed; those before ``test_from``
            only warm up).
        champion_only, challenger_only: the matches only one of them holds (left out).
        results: each ruleset's :class:`~rankcraft.scores.Evaluation` by its label, the
            champion first, as ``rankcraft evaluate`` gives them.
        differences: the challenger's paired differences from the champion, each score
            with its 95% interval (:func:`rankcraft.comparison.differences`).
    """

    champion: str
    challenger: str
    test_from: str
    common: int
    champion_only: int
    challenger_only: int
    results: dict[str, Any]
    differences: list[Difference]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: the report ``rankcraft evaluate --json`` prints for the two
        rulesets (:func:`rankcraft.comparison.report`, the champion the baseline), with
        the two labels and the counts of matches in common and left out."""
        document = report(self.results, self.champion, self.differences, test_from=self.test_from)
        return {
            "champion": self.champion,
            "challenger": self.challenger,
            "common": self.common,
            "champion_only": self.champion_only,
            "challenger_only": self.challenger_only,
            **document,
        }


def common_matches(champion: League, challenger: League) -> tuple[list[Match], int, int]:
    """The matches both leagues hold (by id), in the champion's order, and the counts of
    those only the champion and only the challenger hold."""
    theirs = {match.id for _, match in challenger.store.history()}
    mine: list[Match] = []
    only_mine = 0
    for _, match in champion.store.history():
        if match.id in theirs:
            mine.append(match)
        else:
            only_mine += 1
    return mine, only_mine, len(theirs) - len(mine)


def _labels(champion: League, challenger: League) -> tuple[str, str]:
    first, second = champion.ruleset.name, challenger.ruleset.name
    return first, second if second != first else f"{second} (challenger)"


def compare_live(
    champion: League,
    challenger: League,
    *,
    test_from: str | datetime | None = None,
    samples: int = SAMPLES,
    seed: int = 0,
    block_days: int = BLOCK_DAYS,
) -> LiveComparison:
    """The champion's and the challenger's rulesets scored one step ahead on the matches
    both leagues hold, and the challenger's paired differences from the champion.

    :param test_from: score the matches played at or after this time (ISO-8601 text, no
        zone meaning UTC, or a datetime); default: the first match in common (every
        match scored, from new players' ratings as both leagues began).
    :param samples, seed, block_days: the bootstrap's settings, as ``rankcraft evaluate``
        takes them.
    :raises InputError: no match in common, none at or after ``test_from``, or a time that
        is not ISO-8601.
    """
    start = None if test_from is None else _moment(test_from)
    matches, only_champion, only_challenger = common_matches(champion, challenger)
    if not matches:
        raise InputError(
            f"the champion and the challenger hold no match in common ({only_champion:,} "
            f"and {only_challenger:,} matches): feed both the same matches"
        )
    if start is None:
        start = min(match.played_at for match in matches)
    labels = _labels(champion, challenger)
    results = {
        label: evaluate_ruleset(league.ruleset, matches, test_from=start)
        for label, league in zip(labels, (champion, challenger), strict=True)
    }
    paired = differences(results, labels[0], samples=samples, seed=seed, block_days=block_days)
    return LiveComparison(
        champion=labels[0],
        challenger=labels[1],
        test_from=format_time(start),
        common=len(matches),
        champion_only=only_champion,
        challenger_only=only_challenger,
        results=results,
        differences=paired,
    )


def _moment(value: str | datetime) -> datetime:
    return value if isinstance(value, datetime) else parse_time(value, field="test_from")


def compare_dbs(
    champion_db: str, challenger_db: str, test_from: str | None = None
) -> dict[str, Any]:
    """:func:`compare_live` of the leagues kept at two databases, opened here (read as
    they are now) and closed, JSON-ready (:meth:`LiveComparison.to_dict`): what a
    service's worker process computes for ``GET /web/compare-live``."""
    with (
        _opened(champion_db, "champion") as champion,
        _opened(challenger_db, "challenger") as challenger,
    ):
        return compare_live(champion, challenger, test_from=test_from).to_dict()


class _opened:
    """A league kept at ``db``, opened without creating it (an error naming ``what``)."""

    def __init__(self, db: str, what: str) -> None:
        self.db, self.what = db, what
        self.league: League | None = None

    def __enter__(self) -> League:
        try:
            self.league = League.open(self.db, create=False)
        except InputError as exc:
            raise InputError(f"the {self.what} league: {exc}") from None
        return self.league

    def __exit__(self, *exc: object) -> None:
        if self.league is not None:
            self.league.close()
