"""What an edit that keeps the history's order can have changed (:mod:`rankcraft.corrections`).

Where rating a match reads nothing but its players' records (``match`` periods, no season
event, no deferred result), a match after an edit can only rate differently if one of its
players is *touched*: played in the edited match (its old or new version), or in a match
rated again before it. :func:`touched` walks the edited history once and finds those
matches; every other match keeps its report, and every untouched player their record.
:func:`seeds` rebuilds, for each touched player, the record they had just before the
first match rated again for them, from what the history keeps (the state before in that
match's report, their match count, their last match's time), so that a scratch league
rates only the touched matches and ends where a replay of the edited history ends.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from .errors import InputError
from .model import Match, PlayerRecord
from .store import Store

__all__ = ["players_of", "seeds", "touched"]


def players_of(matches: Iterable[Match]) -> set[str]:
    """Every player of ``matches``."""
    return {pid for match in matches for side in match.teams for pid in side}


def touched(
    rows: list[tuple[int, Match]], edited: list[Match], start: int
) -> tuple[list[Match], dict[str, int]]:
    """The matches of ``edited`` (``rows``, the history from seq ``start``, as edited, in
    the same order) to rate again, and each touched player with the seq from which their
    record changes: ``start`` for the edited match's players, else the seq of their first
    match rated again. A match is unchanged where it is the same object in both."""
    seq_of = {match.id: seq for seq, match in rows}
    kept = {id(match) for _, match in rows}
    present = {id(match) for match in edited}
    points: dict[str, int] = {}
    for pid in players_of(m for _, m in rows if id(m) not in present):  # (gone or replaced)
        points[pid] = start
    for pid in players_of(m for m in edited if id(m) not in kept):  # (new versions)
        points[pid] = start
    again = []
    for match in edited:
        named = players_of((match,))
        if id(match) not in kept or not named.isdisjoint(points):
            again.append(match)
            for pid in named:
                points.setdefault(pid, seq_of.get(match.id, start))
    return again, points


def seeds(
    store: Store, start: int | None, rows: list[tuple[int, Match]], points: dict[str, int]
) -> list[PlayerRecord]:
    """The record each player of ``points`` had just before seq ``points[player]`` (the
    history from seq ``start`` is ``rows``): as the report of their first match from there
    says they stood, their matches counted and their last match's time read back; a
    player without a match from there on, as the store has them now; a player without
    any match before it, none (a new player)."""
    mine: dict[str, list[tuple[int, datetime]]] = {}
    for seq, match in rows:
        for pid in players_of((match,)):
            mine.setdefault(pid, []).append((seq, match.played_at))
    now = store.load_many(points)
    found: list[PlayerRecord] = []
    rebuilt: dict[str, tuple[int, int, datetime | None]] = {}  # first seq, matches, last
    for pid, point in points.items():
        record = now.get(pid)
        own = mine.get(pid, [])
        later = [seq for seq, _ in own if seq >= point]
        if record is None or record.matches - len(later) <= 0:
            continue
        if not later:
            found.append(record)
            continue
        before = [at for seq, at in own if seq < point]
        rebuilt[pid] = (later[0], record.matches - len(later), before[-1] if before else None)
    lasts = store.last_before([p for p, r in rebuilt.items() if r[2] is None], start or 0)
    unknown = sorted(p for p, r in rebuilt.items() if r[2] is None and p not in lasts)
    if unknown:  # (their record before came from an import, whose times it did not keep)
        raise InputError(
            f"player {unknown[0]!r}'s record before this edit came from an import, not from "
            "a match the league holds: the edit cannot rebuild it"
        )
    reports = store.reports({first for first, _, _ in rebuilt.values()})
    for pid, (first, matches, last) in rebuilt.items():
        change = reports[first].change(pid)
        found.append(
            PlayerRecord(
                id=pid,
                skill=change.skill_before,
                rank=change.rank_before,
                matches=matches,
                last_played=last if last is not None else lasts[pid],
            )
        )
    return found
