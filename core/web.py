"""The web page of ``rankcraft serve``: a league you can see, and a ruleset lab. This
module holds what the page reads (a player's history, the seasons, the ruleset errors) and
the lab's comparison (:func:`compare`); :mod:`rankcraft.serve.page` routes them.

The page (``GET /``) is static HTML, CSS and JavaScript shipped in the package
(``core/page/``, no build step, nothing fetched from another site). Its script reads the
service's JSON API and draws the charts itself (SVG). Besides the service's own
endpoints it reads these, all JSON and open to readers (a ``read`` token with
``serve --auth-reads``):

=======  ===========================  ==================================================
method   path                         answer
=======  ===========================  ==================================================
GET      ``/web/meta``                the ruleset's name and fields, bundled rulesets
GET      ``/web/search?q=TEXT``       up to 10 player ids holding TEXT (suggestions,
                                      :meth:`League.search`)
GET      ``/web/players/{id}``        the player and every match of theirs, oldest first,
                                      with resets between matches marked
GET      ``/web/seasons``             each ended season's tiers, as the rank keeps them
POST     ``/web/lab/check``           ``{"toml"}``: the ruleset, or its error with the
                                      field and the TOML line
POST     ``/web/lab/jobs``            ``{"rulesets", "matches"?, "test_from"?}``: replay a
                                      history with each ruleset and compare them, as a
                                      job (:mod:`rankcraft.lab`)
=======  ===========================  ==================================================

>>> from starlette.testclient import TestClient
>>> from rankcraft.serve import create_app
>>> league = League("elo")
>>> _ = league.record({"id": "m1", "played_at": "2024-05-01", "teams": [["ann"], ["bo"]],
...                    "scores": [1, 0]})
>>> client = TestClient(create_app(league))
>>> client.get("/web/search", params={"q": "an"}).json()
['ann']
>>> [m["skill_after"] for m in client.get("/web/players/ann").json()["matches"]]
[1516.0]
>>> client.post("/web/lab/check", json={"toml": 'name = "x"\\n[update]\\nplugin = "elox"\\n'}
...             ).json()["error"]["field"]
'update.plugin'
"""

from __future__ import annotations

import functools
import heapq
import math
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import attrs

from .engine import League
from .evaluate import evaluate, scratch_league
from .fields import FieldError
from .io import MATCH_KEYS
from .jsontext import finite
from .model import Match, PlayerRecord, field_of_role, format_time
from .processes import can_fork, run_each
from .ruleset import Ruleset, bundled_names, load_ruleset, loads_ruleset  # noqa: F401 (examples)
from .rulesetlines import ruleset_error

LAB_MAX_MATCHES = 200_000
"""The most matches the lab replays (each ruleset replays them all)."""
LAB_MAX_RULESETS = 6
"""The most rulesets the lab compares at once."""
HISTORY_LIMIT = 5000
"""The most matches the player page lists (the latest ones)."""

# -- the league's data for the page --------------------------------------------------------


def _fields(league: League) -> dict[str, str | None]:
    rank = field_of_role(league.rank_class, "location") if league.rank_class else None
    return {
        "location": field_of_role(league.skill_class, "location"),
        "spread": field_of_role(league.skill_class, "spread"),
        "rank": rank,
    }


def _value(state: Any, name: str | None) -> Any:
    if state is None or name is None:
        return None
    value = getattr(state, name, None)
    return value if isinstance(value, int | float | str) else None


def _tier(state: Any) -> str | None:
    tier = getattr(state, "tier", None)
    return tier if isinstance(tier, str) else None


def player_history(league: League, player: str, limit: int = HISTORY_LIMIT) -> dict[str, Any]:
    """A player's matches, oldest first, as the player page draws them: the skill's
    location and spread and the rank points and tier after each match, the win
    probability the league gave the player's side, the factors of the change, and
    ``reset_before`` where the stored state changed between two matches (a season event
    or an imported state)."""
    record = league.player(player)
    fields = _fields(league)
    location, spread, rank = fields["location"], fields["spread"], fields["rank"]
    rows = list(reversed(league.history(player, limit)))
    out = []
    previous: tuple[Any, Any] | None = None
    for row in rows:
        change = row.report.change(player)
        match = row.match
        reset = previous is not None and (
            change.skill_before != previous[0] or change.rank_before != previous[1]
        )
        previous = (change.skill_after, change.rank_after)
        out.append(
            {
                "seq": row.seq,
                "id": match.id,
                "played_at": format_time(match.played_at),
                "side": change.side,
                "teams": [list(side) for side in match.teams],
                "places": list(match.places),
                "result": _result(match, change.side),
                "expected": row.report.expected[change.side],
                "skill_before": _value(change.skill_used, location),
                "skill_after": _value(change.skill_after, location),
                "spread_after": _value(change.skill_after, spread),
                "rank_before": _value(change.rank_before, rank),
                "rank_after": _value(change.rank_after, rank),
                "tier_after": _tier(change.rank_after),
                "factors": dict(change.factors),
                "reset_before": reset,
            }
        )
    return {
        "player": league.codec.record_to_dict(record),
        "standing": league.standings([player]).get(player),
        "fields": fields,
        "ruleset": league.ruleset.name,
        "matches": out,
    }


def _result(match: Match, side: int) -> str:
    places = match.places
    mine = places[side]
    if len(places) == 2:
        other = places[1 - side]
        return "won" if mine < other else "lost" if mine > other else "drew"
    return f"placed {mine} of {len(places)}"


SEASON_TOP = 200
"""How many players of each ended season ``/web/seasons`` gives (the page shows them)."""


def season_archive(league: League, top: int = SEASON_TOP) -> list[dict[str, Any]]:
    """Each ended season's standings, its ``top`` players best first (ties by id), from
    the ``seasons`` archive a rank state keeps (``skyweaver-rp``: ``[end-of-season rank,
    score]`` per season a player played). The archives are aligned from their end: the
    last entry of every player is the latest season ended. Empty when the rank keeps no
    archive. The archive is in each player's rank state: this reads every player's
    (:meth:`League.rank_values`), keeping ``top`` entries a season."""
    if league.rank_class is None or "seasons" not in attrs.fields_dict(league.rank_class):
        return []
    kept: list[list[tuple[float, str, str]]] = []  # (-score, id, rank) a season back
    worst: list[float] = []  # a season's bar once it holds enough: -score of its last kept
    for pid, archive in league.rank_values("seasons"):
        for back in range(1, len(archive or ()) + 1):
            if len(kept) < back:
                kept.append([])
                worst.append(math.inf)
            rank, score = archive[-back]
            if -float(score) > worst[back - 1]:
                continue
            entries = kept[back - 1]
            entries.append((-float(score), pid, str(rank)))
            if len(entries) >= 2 * top + 64:
                entries[:] = heapq.nsmallest(top, entries)
                worst[back - 1] = entries[-1][0] if entries else -math.inf
    return [
        {
            "ago": back,
            "players": [
                {"id": pid, "tier": rank, "score": -negative}
                for negative, pid, rank in heapq.nsmallest(top, entries)
            ],
        }
        for back, entries in enumerate(kept, 1)
    ]


def meta(league: League) -> dict[str, Any]:
    """What the page needs to know of the league."""
    return {
        "ruleset": league.ruleset.name,
        "description": league.ruleset.description,
        "fields": _fields(league),
        "standings": league.has_standings,
        "matches": league.match_count,
        "players": len(league),
        "tiers": league.tiers(),
        "active_days": league.ruleset.display.active_days,
        "bundled": bundled_names(),
        "match_keys": sorted(MATCH_KEYS),  # (the columns of a CSV history: docs/matches.md)
    }


# -- the ruleset lab ---------------------------------------------------------------------


def league_matches(league: League) -> list[Match]:
    """Every match the league has recorded, in the order it recorded them (read through
    each player's history: the store offers no walk over all matches)."""
    seen: dict[int, Match] = {}
    for record in league.players():
        for row in league.history(record.id, None):
            seen.setdefault(row.seq, row.match)
    return [seen[s] for s in sorted(seen)]


def _losses(items: Iterable[tuple[float, float]]) -> list[float]:
    out = []
    for p, s in items:
        p = min(max(p, 1e-12), 1 - 1e-12)
        out.append(-(s * math.log(p) + (1 - s) * math.log(1 - p)))
    return out


def _interval(values: list[float]) -> tuple[float, float]:
    """A 95 % normal-approximation interval of the mean of ``values``."""
    n = len(values)
    mean = math.fsum(values) / n
    if n < 2:
        return mean, mean
    var = math.fsum((v - mean) ** 2 for v in values) / (n - 1)
    half = 1.959964 * math.sqrt(var / n)
    return mean - half, mean + half


def _histogram(
    values: list[float], bins: int = 20, span: tuple[float, float] | None = None
) -> dict[str, Any]:
    """Counts of ``values`` in ``bins`` equal bins from their lowest to their highest
    (or over ``span``, which holds them all: histograms that share their bins)."""
    if not values:
        return {"low": 0.0, "high": 0.0, "counts": []}
    low, high = span if span is not None else (min(values), max(values))
    if high == low:
        return {"low": low, "high": high, "counts": [len(values)]}
    width = (high - low) / bins
    counts = [0] * bins
    for v in values:
        counts[min(int((v - low) / width), bins - 1)] += 1
    return {"low": low, "high": high, "counts": counts}


def season_of(ruleset: Ruleset, first: datetime) -> Callable[[datetime], tuple[datetime, datetime]]:
    """The season a time falls in, as ``time -> (start, end)`` (end excluded). Seasons
    are the periods between the runs of the ruleset's least frequent ``[[resets]]`` event
    (the largest ``every_days``: Skyweaver's four-weekly hard reset), counted as the
    league counts them: from the event's ``start``, else from the first match
    (``first``). Without dated ``[[resets]]`` (none, or only events a season field or
    a gap in the data triggers): calendar years (UTC).

    >>> two_weeks = loads_ruleset(
    ...     'name = "x"\\n[update]\\nplugin = "elo"\\n[reset]\\nplugin = "regress"\\n'
    ...     '[[resets]]\\nkind = "season"\\nevery_days = 14.0\\n')
    >>> season = season_of(two_weeks, datetime(2024, 1, 1, 12, tzinfo=UTC))
    >>> [t.isoformat() for t in season(datetime(2024, 1, 20, tzinfo=UTC))]
    ['2024-01-15T12:00:00+00:00', '2024-01-29T12:00:00+00:00']
    >>> first = datetime(2024, 5, 1, tzinfo=UTC)
    >>> [t.year for t in season_of(load_ruleset("elo"), first)(first)]
    [2024, 2025]
    >>> by_field = loads_ruleset(
    ...     'name = "y"\\n[update]\\nplugin = "elo"\\n[reset]\\nplugin = "regress"\\n'
    ...     '[[resets]]\\nkind = "season"\\nseason_field = "meta.season"\\n')
    >>> [t.year for t in season_of(by_field, first)(first)]
    [2024, 2025]
    """
    dated = [(r.every_days, r) for r in ruleset.resets if r.every_days is not None]
    if not dated:

        def year(at: datetime) -> tuple[datetime, datetime]:
            start = datetime(at.year, 1, 1, tzinfo=UTC)
            return start, _later(start, lambda: datetime(at.year + 1, 1, 1, tzinfo=UTC))

        return year
    days, longest = max(dated, key=lambda item: item[0])
    origin = longest.start_time or first
    step = timedelta(days=days)

    def period(at: datetime) -> tuple[datetime, datetime]:
        start = _later(origin, lambda: origin + step * ((at - origin) // step))
        return start, _later(start, lambda: start + step)

    return period


def _later(moment: datetime, later: Callable[[], datetime]) -> datetime:
    """``later()``, or the last time a date holds where it would pass year 9999."""
    try:
        return later()
    except (OverflowError, ValueError):
        return datetime.max.replace(tzinfo=UTC)


def _replay(
    league: League,
    ordered: list[Match],
    test_from: str,
    replayed: Callable[[], None] = lambda: None,
) -> tuple[Any, list[dict[str, Any]]]:
    """Replay ``ordered`` into ``league`` (``evaluate``'s one-step-ahead scores) and take
    each season's state at its end: the ratings of the players who played in it and
    the tiers of all players (:func:`_season_end`); ``replayed()`` after each match."""
    season = season_of(league.ruleset, ordered[0].played_at)
    seasons: list[dict[str, Any]] = []
    current: list[Any] = [None, 0]  # (the season, its matches)

    def watched() -> Iterator[Match]:
        for match in ordered:
            bounds = season(match.played_at)
            if current[0] is not None and bounds != current[0]:
                seasons.append(_season_end(league, current[0], current[1]))  # all recorded
                current[1] = 0
            current[0] = bounds
            current[1] += 1
            yield match
            replayed()

    evaluation = evaluate(league, watched(), test_from=test_from)
    seasons.append(_season_end(league, current[0], current[1]))  # (after a last period)
    values = [v for s in seasons for v in s["ratings"]]
    span = (min(values), max(values)) if values else None
    for number, s in enumerate(seasons, 1):
        s["season"] = number
        s["ratings"] = _histogram(s["ratings"], span=span)
    return evaluation, seasons


def _season_end(league: League, bounds: tuple[datetime, datetime], matches: int) -> dict[str, Any]:
    """A season's state at its end (before the event that ends it): its bounds, its
    count of matches, the rating (skill location) of each player who played in it, and
    the tiers of the league's players then."""
    start, end = bounds
    location = field_of_role(league.skill_class, "location")
    active = [r for r in league.players() if r.last_played is not None and r.last_played >= start]
    standings = league.standings()
    return {
        "start": format_time(start),
        "end": format_time(end),
        "matches": matches,
        "players": len(active),
        "ratings": sorted(float(_value(r.skill, location) or 0.0) for r in active),
        "tiers": dict(Counter(_tier_group(s) for s in standings.values()).most_common()),
    }


def compare(
    rulesets: list[Ruleset],
    matches: list[Match],
    test_from: str | None = None,
    progress: Callable[[int, int, str], None] | None = None,
    processes: int = 1,
) -> dict[str, Any]:
    """Replay ``matches`` with each ruleset and compare: one-step-ahead log loss (with a
    95 % interval), Brier, accuracy, calibration, the rating and tier distributions at
    the end and at the end of each season (:func:`season_of`; the ratings of a season's
    players, in bins the seasons of a ruleset share), the top 20 (by the value the
    leaderboard sorts by: rank points where the ruleset has them), and how many players
    a ruleset places in another tier than the first one (the baseline) does. Tiers are
    listed best first (``tier_order``). ``test_from`` (ISO) starts the scored part;
    default: the time of the match half-way through. ``progress(done, total, stage)``
    is told of the matches replayed (``total``: matches x rulesets).

    ``processes``: the rulesets are replayed in up to this many forked processes at
    once, each ruleset's replay in one (:func:`rankcraft.processes.run_each`; one after
    another in this process when it may not fork). The result is the same."""
    if len(matches) < 2:
        raise FieldError(f"the lab needs at least 2 matches: {len(matches)}", field="matches")
    ordered = sorted(matches, key=lambda m: m.played_at)
    if test_from is None:
        test_from = ordered[len(ordered) // 2].played_at.isoformat()
    parallel = min(processes, len(rulesets)) if can_fork() else 1
    told = _teller(rulesets, len(ordered) * len(rulesets), parallel, progress)
    one = functools.partial(_replayed_one, rulesets, ordered, test_from)
    pieces = run_each(one, len(rulesets), processes=parallel, progress=told)
    results = _with_tier_changes(pieces)
    out: dict[str, Any] = finite(
        {
            "matches": len(ordered),
            "test_from": test_from,
            "baseline": results[0]["name"],
            "results": results,
        }
    )
    return out


def _teller(
    rulesets: list[Ruleset],
    total: int,
    parallel: int,
    progress: Callable[[int, int, str], None] | None,
) -> Callable[[Sequence[int], int], None]:
    """What :func:`compare` tells ``progress`` as the replays go (``run_each``'s
    ``progress(done, finished)``: the matches each replay has done, the replays done)."""

    def told(done: Sequence[int], finished: int) -> None:
        if progress is None:
            return
        if parallel > 1:
            stage = (
                f"replaying {len(rulesets)} rulesets in {parallel} processes "
                f"({finished} of {len(rulesets)} done)"
            )
        else:
            now = min(finished, len(rulesets) - 1)
            stage = f"replaying with {rulesets[now].name} ({now + 1} of {len(rulesets)})"
        progress(sum(done), total, stage)

    return told


def _replayed_one(
    rulesets: list[Ruleset],
    ordered: list[Match],
    test_from: str,
    index: int,
    tick: Callable[[int], None],
) -> tuple[dict[str, Any], dict[str, str]]:
    """The replay of ``rulesets[index]`` (:func:`_compared`), ``tick(count)`` told of
    the matches it has replayed."""
    count = [0]

    def replayed() -> None:
        count[0] += 1
        tick(count[0])

    return _compared(rulesets[index], ordered, test_from, replayed)


def _with_tier_changes(
    pieces: list[tuple[dict[str, Any], dict[str, str]]],
) -> list[dict[str, Any]]:
    """Each ruleset's result with its ``tier_changes``: how many players it places in
    another tier than the first ruleset (the baseline) does (None without tiers)."""
    results = [result for result, _ in pieces]
    tiers = [mine for _, mine in pieces]
    base = tiers[0]
    for result, mine in zip(results, tiers, strict=True):
        shared = [p for p in mine if p in base]
        result["tier_changes"] = (
            sum(1 for p in shared if mine[p] != base[p]) if base and mine else None
        )
    return results


def _compared(
    ruleset: Ruleset, ordered: list[Match], test_from: str, replayed: Callable[[], None]
) -> tuple[dict[str, Any], dict[str, str]]:
    """One ruleset's part of :func:`compare`: its result, and each player's tier (for
    the tier changes against the baseline)."""
    league = scratch_league(ruleset)
    evaluation, seasons = _replay(league, ordered, test_from, replayed)
    low, high = _interval(_losses(evaluation.predictions))
    location = field_of_role(league.skill_class, "location")
    records = league.leaderboard()
    standings = league.standings()
    tiers = {pid: _tier_group(s) for pid, s in standings.items()}
    order = list(dict.fromkeys(_tier_group(t) for t in league.tiers()))
    counts = Counter(_tier_group(s) for s in standings.values())
    order += [t for t, _ in counts.most_common() if t not in order]
    result = {
        "name": ruleset.name,
        "evaluation": evaluation.to_dict(),
        "log_loss_interval": [low, high],
        "location": location,
        "value": _shown_name(league),
        "ratings": _histogram([float(_value(r.skill, location) or 0.0) for r in records]),
        "tiers": {t: counts[t] for t in order},
        "tier_order": order,
        "top": [_top_row(league, r, standings, location) for r in records[:20]],
        "seasons": seasons,
    }
    return result, tiers


def _tier_group(standing: str) -> str:
    """A standing without its division (``Trainee III`` -> ``Trainee``)."""
    return re.sub(r"\s+[IVX]+$", "", standing)


def _shown_name(league: League) -> str | None:
    """The name of what the league's leaderboard sorts by: the rank's location (such as
    ``points``), ``conservative`` (location less k spreads), else the skill's location."""
    fields = _fields(league)
    if fields["rank"]:
        return fields["rank"]
    if league.ruleset.display.conservative and fields["spread"]:
        return "conservative"
    return fields["location"]


def _top_row(
    league: League, record: PlayerRecord, standings: Mapping[str, str], location: str | None
) -> Any:
    return {
        "id": record.id,
        "standing": standings.get(record.id),
        "rating": _value(record.skill, location),
        "value": league.shown(record).value,
        "matches": record.matches,
    }


__all__ = [
    "compare",
    "league_matches",
    "meta",
    "player_history",
    "ruleset_error",
    "season_archive",
    "season_of",
]
