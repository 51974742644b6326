"""Corrections to a league's history: void a match, correct one, place a late one, and
rate every later match again, exactly (docs/corrections.md).

An edit is one league-wide transaction. It reads the recorded matches in order, makes
the edited list, and finds the first place where the two differ: nothing before it can
change. A scratch league in memory (same ruleset, same plugins) then rates the edited
list from the start: the matches before that place without keeping anything (the
rating loop's streaming mode), the rest with their reports, closing the period at the
end as a replay does. What the scratch league ends with is, by construction, what a
replay of the edited history from scratch ends with. The real store then drops its
matches from that place on, takes the scratch league's in their place, and every
player record that differs (a player whom only a voided match made is removed); the
season schedule becomes the scratch league's. An audit row keeps what was done, when,
why, by which token, and the change report: every player whose shown value, skill,
tier or match count moved, from what to what.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, Self

import attrs

from .documents import IMPORTED
from .errors import DuplicateMatchError, InputError, MatchError
from .io import parse_match, parse_time
from .model import Match, PlayerRecord, format_time
from .rated import compact_json, match_text
from .rulesetschema import Display, Ruleset
from .seasons import Seasons
from .store import Store
from .store.base import Codec, MatchRow
from .touched import players_of, seeds, touched
from .unit import UnitOfWork
from .writing import RecordSummary, parsed_item

__all__ = ["Corrections", "Edit", "Moved", "Scratch"]

KINDS = ("void", "correct", "late")
"""The edits a league takes (``reset``: a season event run by hand, kept in the same
audit so that an edit never re-rates across it)."""
FIELDS: tuple[str, ...] = (
    "played_at",
    "teams",
    "scores",
    "ranks",
    "seconds_played",
    "quit",
    "weight",
)
FIELDS += ("meta", "home")
"""The fields of a match a correction may change (its id stays)."""


Scratch = Callable[[Iterable[PlayerRecord]], tuple[Any, Seasons]]
"""Makes a league in memory with the real league's ruleset and plugins, holding these
player records and no match, with its season schedule."""


@attrs.frozen(kw_only=True)
class Moved:
    """One player moved by an edit. ``before`` / ``after``: what the player showed
    (``value``: the leaderboard's value; ``skill``: the skill as players see it;
    ``tier``; ``matches``), None for a player the league did not have then."""

    player: str
    before: dict[str, Any] | None
    after: dict[str, Any] | None

    def to_dict(self) -> dict[str, Any]:
        return {"player": self.player, "before": self.before, "after": self.after}


@attrs.frozen(kw_only=True)
class Edit:
    """A correction, as the audit keeps it.

    Attributes:
        n: its number in the league's audit (1 first). kind: ``"void"``, ``"correct"``
        or ``"late"``. match_id: the match. reason: why (free text). by: the API token's
        name, or None. made_at: when (UTC). old / new: the match before and after (None:
        a late match had no old version, a voided one has no new). rerated: how many
        matches were rated again. changes: the players it moved.
    """

    n: int
    kind: str
    match_id: str
    reason: str
    by: str | None
    made_at: datetime
    old: Match | None
    new: Match | None
    rerated: int
    changes: tuple[Moved, ...]

    def to_dict(self) -> dict[str, Any]:
        """The edit as JSON-ready data (what ``--json`` and the HTTP answer carry)."""
        return {
            "n": self.n,
            "kind": self.kind,
            "match_id": self.match_id,
            "reason": self.reason,
            "by": self.by,
            "made_at": format_time(self.made_at),
            "old": None if self.old is None else self.old.to_dict(),
            "new": None if self.new is None else self.new.to_dict(),
            "rerated": self.rerated,
            "changes": [c.to_dict() for c in self.changes],
        }

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> Edit:
        """An edit from its audit row (:meth:`rankcraft.store.Store.edit_rows`)."""
        said = json.loads(row["changes"])
        old, new = (
            None if t is None else parse_match(json.loads(t)) for t in (row["old"], row["new"])
        )
        return cls(
            n=int(row["n"]),
            kind=row["kind"],
            match_id=row["match_id"],
            reason=row["reason"],
            by=row["by_token"],
            made_at=parse_time(row["made_at"], field="made_at"),
            old=old,
            new=new,
            rerated=said["rerated"],
            changes=tuple(Moved(**c) for c in said["players"]),
        )

    def names(self, player: str) -> bool:
        """Whether ``player`` played in the match's old or new version."""
        return any(player in side for m in (self.old, self.new) if m for side in m.teams)


Edited = tuple[list[Match], Match | None, Match | None]
"""An edit of the history from some place on: the matches from there as edited, the old
version of the match, the new one."""
Plan = tuple[int | None, Callable[[list[Match]], Edited], bool]
"""Where an edit starts (the seq of the first match it can change; None: after the last),
what it makes of the matches from there on, and whether it keeps their order (a void, a
correction at the same time)."""


class Corrections:
    """The corrections of one league (:meth:`rankcraft.League.void`, ``correct``, late
    matches under ``[history] late = "rerate"``, ``edits`` and ``as_of``).

    :param ruleset: the league's ruleset. :param store: its store. :param unit: its unit
        of work. :param seasons: its schedule. :param codec: its codec (tiers).
        :param display: how players are shown. :param scratch: makes a scratch league.
    """

    def __init__(
        self,
        ruleset: Ruleset,
        store: Store,
        unit: UnitOfWork,
        seasons: Seasons,
        codec: Codec,
        display: Display,
        scratch: Scratch,
    ) -> None:
        self.ruleset = ruleset
        self.store = store
        self.unit = unit
        self.seasons = seasons
        self.codec = codec
        self.display = display
        self.scratch = scratch
        self._earlier: list[Edit] = []  # (the audit rows of a late edit's first matches)
        quits = ruleset.quits.quitter != "deferred-loss"
        self.narrow = (
            not seasons.events and ruleset.period.mode == "match" and quits and not ruleset.fit
        )
        # (where narrow, an edit that keeps the order rates only its touched players'
        # matches; benchmarks/corrections.py switches the two off to measure them)
        self.touched_only = self.narrow

    # -- the three edits ----------------------------------------------------------------

    def void(self, match_id: str, reason: str, by: str | None = None) -> Edit:
        """Void a recorded match: it counts for nothing, and every later match is rated
        again. :raises InputError: an unknown or already void match, an empty reason."""

        def plan() -> Plan:
            row = self._target(match_id)
            return row.seq, lambda after: (after[1:], after[0], None), True

        return self._edit("void", match_id, reason, by, plan)

    def correct(
        self, match_id: str, fields: Mapping[str, Any], reason: str, by: str | None = None
    ) -> Edit:
        """Correct a recorded match: ``fields`` (any of :data:`FIELDS`, as in the match
        format) replace the old ones; a new ``played_at`` moves the match to its time.
        The old version stays in the audit. :raises InputError: an unknown or void
        match, an unknown field or an id change, a match the new fields make invalid."""
        unknown = sorted(set(fields) - {*FIELDS, "id"})
        if unknown:
            raise InputError(
                f"a correction cannot change {unknown[0]!r}; it may change {', '.join(FIELDS)}"
            )
        if fields.get("id", match_id) != match_id:
            raise InputError(
                f"a correction keeps the match's id ({match_id!r}), not {fields['id']!r}"
            )

        def plan() -> Plan:
            row = self._target(match_id)
            old, new = row.match, _corrected(row.match, fields)
            if new.played_at == old.played_at:
                return row.seq, lambda after: ([new, *after[1:]], old, new), True
            place = self.store.placement([(new.played_at, players_of((new,)))], skip=match_id)
            start = row.seq if place is None else min(row.seq, place)
            return start, lambda after: (_placed(_without(after, match_id), new), old, new), False

        return self._edit("correct", match_id, reason, by, plan)

    def late(
        self, matches: Sequence[Match], reason: str = "late", by: str | None = None
    ) -> list[Edit]:
        """Place matches (some earlier than their players' latest) at their times, and
        rate every later match again: one transaction, one audit row per late match (the
        re-rate's changes on the last). :raises MatchError: a repeated or voided id."""
        if not matches:
            return []
        seen: set[str] = set()
        voided = self._voided()
        for match in matches:
            if match.id in voided:
                raise MatchError(
                    f"match id {match.id!r} was voided; it cannot be recorded again",
                    match_id=match.id,
                )
            if match.id in seen:
                raise MatchError(f"match id {match.id!r} is given twice", match_id=match.id)
            seen.add(match.id)

        def plan() -> Plan:
            for mid in self.store.recorded(seen):
                raise MatchError(f"match id {mid!r} is already recorded", match_id=mid)

            def edit(after: list[Match]) -> Edited:
                for match in matches:
                    after = _placed(after, match)
                return after, None, late[-1]

            items = [(m.played_at, players_of((m,))) for m in matches]
            return self.store.placement(items), edit, False

        late = _late_ones(self.store, matches) or list(matches)
        edit_of = self._edit("late", late[-1].id, reason, by, plan, also=late[:-1])
        return [*self._earlier, edit_of]

    def record_late(
        self, items: list[Any], skip_seen: bool, commit_every: int, by: str | None = None
    ) -> RecordSummary:
        """What ``record_many`` (and ``record``) do when a match is late under ``[history]
        late = "rerate"``: every match of the call placed at its time (:meth:`late`), ids
        already recorded passed over with ``skip_seen`` or when an earlier
        ``commit_every`` transaction of the call kept them, else refused."""
        parsed = [parsed_item(item, at) for at, item in enumerate(items)]
        have = self.store.recorded([m.id for m in parsed])
        if have and not skip_seen and commit_every <= 0:
            first = next(m.id for m in parsed if m.id in have)
            raise DuplicateMatchError(f"match id {first!r} is already recorded", match_id=first)
        fresh = [m for m in parsed if m.id not in have]
        self.late(fresh, by=by)
        row = self.store.match(fresh[-1].id) if fresh else None
        last = None if row is None else row.report
        return RecordSummary(recorded=len(fresh), skipped=len(parsed) - len(fresh), last=last)

    # -- reads ----------------------------------------------------------------------------

    def edits(self, match_id: str | None = None, player: str | None = None) -> list[Edit]:
        """The league's edits, oldest first (of one match, or naming one player)."""
        found = [Edit.from_row(r) for r in self.store.edit_rows() if r["kind"] in KINDS]
        if match_id is not None:
            found = [e for e in found if e.match_id == match_id]
        if player is not None:
            found = [e for e in found if e.names(player)]
        return found

    def as_of(self, at: datetime) -> Any:
        """A league in memory as this one stood at ``at``: its matches played at or
        before ``at``, rated as a replay of them (no history kept)."""
        league, _ = self.scratch(())
        league.stream([m for _, m in self.store.history() if m.played_at <= at], close=False)
        return league

    def note_reset(self, kind: str, when: datetime | None) -> None:
        """Keep a season event run by hand in the audit (inside its transaction), with
        the time of the league's latest match then: an edit of a match played by then
        would re-rate without the event, so it is refused."""
        latest = self.store.latest_played()
        row = {"made_at": _now(), "kind": "reset", "match_id": "", "reason": kind}
        self.store.add_edit({**row, "new": latest and format_time(latest), "changes": "{}"})

    # -- the re-rate ----------------------------------------------------------------------

    def _voided(self) -> set[str]:
        return {r["match_id"] for r in self.store.edit_rows() if r["kind"] == "void"}

    def _target(self, match_id: str) -> MatchRow:
        """The recorded match ``match_id``. :raises InputError: unknown or void."""
        row = self.store.match(match_id)
        if row is not None:
            return row
        if match_id in self._voided():
            raise InputError(f"match {match_id!r} is void already")
        raise InputError(f"unknown match {match_id!r}")

    def _edit(
        self,
        kind: str,
        match_id: str,
        reason: str,
        by: str | None,
        plan: Callable[[], Plan],
        also: Sequence[Match] = (),
    ) -> Edit:
        """Plan the edit (where it starts; what it makes of the matches from there),
        re-rate from there, and keep its audit row, in one transaction (see the module's
        docstring)."""
        if not isinstance(reason, str) or not reason.strip():
            raise InputError(f"an edit needs a reason: got {reason!r}")
        if self.unit.in_transaction:
            raise InputError("an edit is a transaction of its own: not inside League.batch()")
        self._earlier = []
        with self.unit.transaction():
            start, edit, in_place = plan()
            rows = [] if start is None else list(self.store.history(start))
            edited, old, new = edit([m for _, m in rows])
            _refuse_across_resets(self.store, [m for _, m in rows[:1]] + edited[:1])
            if self.touched_only and in_place and start is not None:
                changes, rerated = self._rerate_touched(start, rows, edited)
            else:
                changes, rerated = self._rerate(start, rows, edited)
            for match in also:  # (several late matches: one row each)
                self._earlier.append(self._audit(kind, match.id, reason, by, None, match, 0, ()))
            made = self._audit(kind, match_id, reason, by, old, new, rerated, changes)
        self.unit.load()  # (the rows as the store now has them)
        return made

    def _rerate(
        self, start: int | None, rows: list[tuple[int, Match]], edited: list[Match]
    ) -> tuple[tuple[Moved, ...], int]:
        """Rate ``edited`` (what the matches from seq ``start`` on become) in a scratch
        league and hand the store what changed. Where each player's record is all that
        rating a match reads (match periods, no season event, no deferred result), the
        scratch league starts from the records the players had at ``start`` (rebuilt
        from the reports kept with their next matches) and rates only ``edited``; else
        it replays the history before ``start`` too, and every player is compared."""
        named = players_of(m for _, m in rows) | players_of(edited)
        if not self.narrow and self.store.get_meta(IMPORTED):
            raise InputError(
                f"this league's players were imported and ruleset {self.ruleset.name!r} "
                "re-rates an edit by replaying the whole history (season events or rating "
                "periods), which does not hold what was imported: no edit can be made"
            )
        stored = None  # (where every player may move: every record, read once)
        if self.narrow:
            points = dict.fromkeys(named, start or 0)
            league, schedule = self.scratch(seeds(self.store, start, rows, points))
        else:
            league, schedule = self.scratch(())
            league.stream([m for seq, m in self.store.history() if start is None or seq < start])
            stored = self.store.load_players()
            named |= set(stored)
        league.record_many(edited)
        entries = league.store.entries_from(1)
        if start is not None:
            self.store.drop_history(start)
        self.store.write((), entries)
        if not self.narrow:
            self.seasons.restore(schedule.snapshot())
            self.seasons.dirty = True
        return self._settle(named, league, stored), len(entries)

    def _rerate_touched(
        self, start: int, rows: list[tuple[int, Match]], edited: list[Match]
    ) -> tuple[tuple[Moved, ...], int]:
        """An edit that keeps the order, where a player's record is all a match reads:
        only the matches its touched players play (:func:`rankcraft.touched.touched`) are
        rated again, from the records those players had just before them; the store
        drops the removed matches and rewrites the others in their places."""
        again, points = touched(rows, edited, start)
        league, _ = self.scratch(seeds(self.store, start, rows, points))
        league.record_many(again)
        entries = league.store.entries_from(1)
        seq_of = {match.id: seq for seq, match in rows}
        kept = {match.id for match in edited}
        changed = {id(m) for m in edited} - {id(m) for _, m in rows}
        relink = {m.id for m in edited if id(m) in changed}
        self.store.rewrite_matches([(seq_of[e.id], e) for e in entries], relink)
        self.store.drop_matches([seq for seq, match in rows if match.id not in kept])
        return self._settle(set(points), league), len(entries)

    def _settle(
        self, named: set[str], league: Any, stored: dict[str, PlayerRecord] | None = None
    ) -> tuple[Moved, ...]:
        """Hand the store ``named``'s records as the scratch league has them (removing
        those it has not; ``stored``: the records before, if read), and say how each moved."""
        before = self.store.load_many(named) if stored is None else stored
        after = {r.id: r for r in league.players() if r.id in named}
        self.store.drop_players([p for p in before if p not in after])
        self.store.write([r for p, r in after.items() if before.get(p) != r], ())
        shown, codec = self.display, self.codec
        moved = (_moved(shown, codec, p, before.get(p), after.get(p)) for p in sorted(named))
        return tuple(c for c in moved if c is not None)

    def _audit(
        self,
        kind: str,
        match_id: str,
        reason: str,
        by: str | None,
        old: Match | None,
        new: Match | None,
        rerated: int,
        changes: tuple[Moved, ...],
    ) -> Edit:
        made_at = _now()
        said = {"rerated": rerated, "players": [c.to_dict() for c in changes]}
        row = {
            "made_at": made_at,
            "kind": kind,
            "match_id": match_id,
            "reason": reason,
            "by_token": by,
            "old": None if old is None else match_text(old),
            "new": None if new is None else match_text(new),
            "changes": compact_json(said),
        }
        n = self.store.add_edit(row)
        return Edit.from_row({**row, "n": n})


def _late_ones(store: Store, matches: Sequence[Match]) -> list[Match]:
    """Those of ``matches`` (in order) earlier than a player's latest match, the
    league's or an earlier one of ``matches``: the audit's late matches (the others
    of a call are recorded as any match is)."""
    lasts = {p: r.last_played for p, r in store.load_many(players_of(matches)).items()}
    late = []
    for match in matches:
        named = players_of((match,))
        if any((lasts.get(p) or match.played_at) > match.played_at for p in named):
            late.append(match)
        for pid in named:
            last = lasts.get(pid)
            lasts[pid] = match.played_at if last is None else max(last, match.played_at)
    return late


def _refuse_across_resets(store: Store, first: list[Match]) -> None:
    """Refuse an edit from a match played before a season event run by hand (the
    history does not hold the event, so a re-rate could not run it in its place)."""
    for row in store.edit_rows():
        late = row["kind"] == "reset" and row["new"] and first
        if late and min(m.played_at for m in first) <= parse_time(row["new"], field="new"):
            raise InputError(
                f"a {row['reason']!r} season event was run by hand after this match's "
                "time; the history does not hold it, so no edit can re-rate across it"
            )


def _now() -> str:
    return format_time(datetime.now(UTC))


def _corrected(old: Match, fields: Mapping[str, Any]) -> Match:
    """``old`` with ``fields`` in place of its own, validated as a new match is."""
    data = old.to_dict()
    if "ranks" in fields:
        data.pop("scores", None)
    if "scores" in fields:
        data.pop("ranks", None)
    if "teams" in fields and "seconds_played" not in fields:
        data.pop("seconds_played", None)
    return parse_match({**data, **fields})


def _without(history: list[Match], match_id: str) -> list[Match]:
    return [match for match in history if match.id != match_id]


def _placed(history: list[Match], match: Match) -> list[Match]:
    """``history`` with ``match`` right after the latest match (in the history's order)
    of one of its players played at or before its time; without one, right before the
    first match of one of its players; without any, at the end."""
    named = players_of((match,))
    first = None
    for at in range(len(history) - 1, -1, -1):
        other = history[at]
        if not named.isdisjoint(players_of((other,))):
            if other.played_at <= match.played_at:
                return [*history[: at + 1], match, *history[at + 1 :]]
            first = at
    at = len(history) if first is None else first
    return [*history[:at], match, *history[at:]]


def _moved(
    display: Display,
    codec: Codec,
    player: str,
    before: PlayerRecord | None,
    after: PlayerRecord | None,
) -> Moved | None:
    """How ``player`` moved (what they show: :class:`Moved`), or None: not at all."""
    shown_before, shown_after = _shown(display, codec, before), _shown(display, codec, after)
    if shown_before == shown_after:
        return None
    return Moved(player=player, before=shown_before, after=shown_after)


def _shown(display: Display, codec: Codec, record: PlayerRecord | None) -> dict[str, Any] | None:
    if record is None:
        return None
    return {
        "value": display.value(record.skill, record.rank),
        "skill": display.skill(record.skill),
        "tier": codec.tier(record),
        "matches": record.matches,
    }


class Corrected:
    """The corrections' methods of :class:`rankcraft.League` (docs/corrections.md)."""

    _corrections: Corrections

    def void(self, match_id: str, reason: str, *, by: str | None = None) -> Edit:
        """Void a match and re-rate every later one (:meth:`Corrections.void`)."""
        return self._corrections.void(match_id, reason, by)

    def correct(
        self, match_id: str, fields: Mapping[str, Any], reason: str, *, by: str | None = None
    ) -> Edit:
        """Correct a match and re-rate from it (:meth:`Corrections.correct`)."""
        return self._corrections.correct(match_id, fields, reason, by)

    def edits(self, match_id: str | None = None, *, player: str | None = None) -> list[Edit]:
        """The league's edits, oldest first (:meth:`Corrections.edits`)."""
        return self._corrections.edits(match_id, player)

    def as_of(self, at: datetime | str | None) -> Self:
        """The league as it stood at ``at`` (None: now), in memory
        (:meth:`Corrections.as_of`)."""
        when = parse_time(at, field="at") if isinstance(at, str) else at or datetime.now(UTC)
        league: Self = self._corrections.as_of(when)
        return league
