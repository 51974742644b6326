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
                                      with resets between matches marked, and the
                                      edits of their matches (``corrections``)
GET      ``/web/seasons``             each ended season's tiers, as the rank keeps them
GET      ``/web/played-at?at=TIME``   what recording a match played then would set off:
                                      the season events that would run first, and
                                      whether it is far past the latest match
                                      (:func:`played_at_check`; the page asks first)
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
from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import datetime
from typing import Any

import attrs

from .comparison import report
from .drawfit import fit_draws, wants_fit
from .engine import League
from .evaluate import Evaluation, differences, evaluate, scratch_league
from .fields import FieldError
from .io import MATCH_KEYS
from .jsontext import finite
from .model import Match, PlayerRecord, field_of_role, format_time
from .processes import can_fork, run_each
from .ruleset import (  # noqa: F401 (load_ruleset, loads_ruleset: the examples')
    Ruleset,
    bundled_names,
    load_ruleset,
    loads_ruleset,
    to_dict,
)
from .rulesetlines import ruleset_error
from .seasons import Seasons, coming, season_of

LAB_MAX_MATCHES = 200_000
"""The most matches the lab replays (each ruleset replays them all)."""
LAB_MAX_RULESETS = 6
"""The most rulesets the lab compares at once."""
HISTORY_LIMIT = 5000
"""The most matches the player page lists (the latest ones)."""

# -- the league's data for the page --------------------------------------------------------


def _fields(league: League) -> dict[str, str | None]:
    """The names players see the skill's location and spread as, and the rank's field."""
    rank = field_of_role(league.rank_class, "location") if league.rank_class else None
    location, spread = league.display.names
    return {"location": location, "spread": spread, "rank": rank}


def _shown(league: League, skill: Any, name: str | None) -> float | None:
    """The skill's location or spread (``name`` as :func:`_fields` gives it) on the scale
    players see, or None."""
    return None if skill is None or name is None else league.display.skill(skill).get(name)


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
    # (a whole-history model's refits move states between matches: not season events)
    previous: tuple[Any, Any] | None = None
    refitted = league.ruleset.fit is not None
    for row in rows:
        change = row.report.change(player)
        match = row.match
        reset = previous is not None and (
            (change.skill_before != previous[0] and not refitted)
            or change.rank_before != previous[1]
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
                "skill_before": _shown(league, change.skill_used, location),
                "skill_after": _shown(league, change.skill_after, location),
                "spread_after": _shown(league, change.skill_after, spread),
                "rank_before": _value(change.rank_before, rank),
                "rank_after": _value(change.rank_after, rank),
                "tier_after": _tier(change.rank_after),
                "factors": dict(change.factors),
                "reset_before": reset,
            }
        )
    return {
        "player": league.codec.record_to_dict(record),
        "display": league.shown(record).to_dict(),
        "standing": league.standings([player]).get(player),
        "fields": fields,
        "ruleset": league.ruleset.name,
        "matches": out,
        # the smoothed skill of a whole-history model: [time, location, spread] per day played
        "curve": [
            [format_time(at), _shown(league, state, location), _shown(league, state, spread)]
            for at, state in league.curve(player)
        ],
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
        "scales": league.display.scales(),
        "standings": league.has_standings,
        "matches": league.match_count,
        "players": len(league),
        "tiers": league.tiers(),
        "active_days": league.ruleset.display.active_days,
        "bundled": bundled_names(),
        "match_keys": sorted(MATCH_KEYS),  # (the columns of a CSV history: docs/matches.md)
    }


FAR_DAYS = 30.0
"""How many days after the league's latest match a match recorded from the page may be
played before the page asks to confirm (:func:`played_at_check`)."""


def played_at_check(league: League, at: datetime) -> dict[str, Any]:
    """What recording a match played at ``at`` would set off, for the page to ask before
    it records one: the league's latest match, the days from it, ``far`` (more than
    :data:`FAR_DAYS`: the page asks to confirm), and the season events that would run
    first (:func:`rankcraft.seasons.coming`: each with its runs, first and last)."""
    schedule = Seasons(league.ruleset)
    schedule.load(league.store)
    latest = league.latest_played()
    days = None if latest is None else (at - latest).total_seconds() / 86400.0
    return {
        "at": format_time(at),
        "latest": None if latest is None else format_time(latest),
        "days_after_latest": days,
        "far": days is not None and days > FAR_DAYS,
        "events": [c.to_dict() for c in coming(schedule, at)],
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
    location = _fields(league)["location"]
    active = [r for r in league.players() if r.last_played is not None and r.last_played >= start]
    standings = league.standings()
    return {
        "start": format_time(start),
        "end": format_time(end),
        "matches": matches,
        "players": len(active),
        "ratings": sorted(float(_shown(league, r.skill, location) or 0.0) for r in active),
        "tiers": dict(Counter(_tier_group(s) for s in standings.values()).most_common()),
    }


def compare(
    rulesets: list[Ruleset],
    matches: list[Match],
    test_from: str | None = None,
    progress: Callable[[int, int, str], None] | None = None,
    processes: int = 1,
) -> dict[str, Any]:
    """Replay ``matches`` with each ruleset and compare: ``rankcraft evaluate``'s report
    (:func:`rankcraft.comparison.report`: each ruleset's one-step-ahead scores, three-way
    ones where it forecasts draws, and the paired differences against the first ruleset,
    with their 95 % intervals), the rating and tier distributions at
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
    results = _with_tier_changes([(result, tiers) for result, tiers, _ in pieces])
    labels = _labels([r["name"] for r in results])
    evaluations = {label: e for label, (_, _, e) in zip(labels, pieces, strict=True)}
    paired = differences(evaluations, labels[0])
    evaluated = report(evaluations, labels[0], paired, test_from=test_from)
    for label, result in zip(labels, results, strict=True):
        result["label"] = label
        result["evaluation"] = evaluated["results"][label]
    out: dict[str, Any] = finite(
        {
            "matches": len(ordered),
            "test_from": test_from,
            "baseline": labels[0],
            "results": results,
            "differences": evaluated.get("differences", []),
        }
    )
    return out


def _labels(names: list[str]) -> list[str]:
    """Each ruleset's label in the report: its name, numbered where names repeat
    (``glicko1``, ``glicko1 (2)``)."""
    seen: Counter[str] = Counter()
    out = []
    for name in names:
        seen[name] += 1
        out.append(name if seen[name] == 1 else f"{name} ({seen[name]})")
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
) -> tuple[dict[str, Any], dict[str, str], Evaluation]:
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
) -> tuple[dict[str, Any], dict[str, str], Evaluation]:
    """One ruleset's part of :func:`compare`: its result, each player's tier (for the
    tier changes against the baseline), and its evaluation (for the report). Draw
    parameters are fitted on the warm-up first where the ruleset asks, as ``evaluate``
    fits them (:func:`rankcraft.drawfit.fit_draws`)."""
    fit = None
    if wants_fit(ruleset):
        ruleset, fit = fit_draws(ruleset, ordered, before=test_from)
    league = scratch_league(ruleset)
    evaluation, seasons = _replay(league, ordered, test_from, replayed)
    if fit is not None:
        evaluation = attrs.evolve(evaluation, draw_fit=fit)
    location = _fields(league)["location"]
    records = league.leaderboard()
    standings = league.standings()
    tiers = {pid: _tier_group(s) for pid, s in standings.items()}
    order = list(dict.fromkeys(_tier_group(t) for t in league.tiers()))
    counts = Counter(_tier_group(s) for s in standings.values())
    order += [t for t, _ in counts.most_common() if t not in order]
    result = {
        "name": ruleset.name,
        "location": location,
        "value": _shown_name(league),
        "ratings": _histogram([float(_shown(league, r.skill, location) or 0.0) for r in records]),
        "tiers": {t: counts[t] for t in order},
        "tier_order": order,
        "tier_system": _tier_system(ruleset) if order else None,
        "top": [_top_row(league, r, standings, location) for r in records[:20]],
        "seasons": seasons,
    }
    return result, tiers, evaluation


def _tier_system(ruleset: Ruleset) -> str:
    """What a ruleset's tiers come from: its rank plugin (``skyweaver-rp``), else the
    plugin that gives its standings (``wager``); the lab shows one tier table for each."""
    table = to_dict(ruleset)
    slot = table.get("rank") or table["update"]
    return str(slot["plugin"])


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
        "rating": _shown(league, record.skill, location),
        "value": league.shown(record).value,
        "matches": record.matches,
    }


__all__ = [
    "compare",
    "league_matches",
    "meta",
    "played_at_check",
    "player_history",
    "ruleset_error",
    "season_archive",
    "season_of",
]
