"""The history of a store in memory as a whole, for corrections
(:mod:`rankcraft.corrections`): the matches read from a place on, their reports, where
a match of a given time goes, the matches from a place on removed (back on rollback),
players removed, and the audit of edits. A part of :class:`~.memory.MemoryStore`."""

from __future__ import annotations

import bisect
from collections.abc import Collection, Iterator, Mapping, Sequence
from datetime import datetime
from typing import Any

from ..model import Match, Report
from .blocks import KeptMatches


class MemoryHistory:
    """:class:`~.memory.MemoryStore`'s history reads and edits (its attributes)."""

    _matches: KeptMatches
    _committed: int
    _ids: set[str]
    _by_player: dict[str, list[int]]
    _by_id: dict[str, int]
    _indexed: int
    _edits: list[dict[str, Any]]
    _pending_edits: list[dict[str, Any]]
    _outbox: list[tuple[int, str, str]]
    _pending_outbox: list[tuple[int, str, str]]
    _outbox_upto: int
    _dropped: tuple[int, list[Any]] | None
    _pending_drops: set[str]

    def _index(self) -> None:
        raise NotImplementedError  # (the store's)

    def history(self, start: int = 1) -> Iterator[tuple[int, Match]]:
        """The committed matches from seq ``start`` on, in order, with their seqs."""
        kept = self._matches
        for seq in range(start, self._committed + 1):
            yield seq, kept.match_of(kept.kept(seq))

    def entries_from(self, start: int) -> list[Any]:
        """The matches from seq ``start`` on as kept (entries, in a store that never
        packs): what a correction's scratch league rated, handed to the real store."""
        kept = self._matches
        return [kept.kept(seq) for seq in range(start, kept.frozen + len(kept.rows) + 1)]

    def reports(self, seqs: Collection[int]) -> dict[int, Report]:
        """The reports of the committed matches of these seqs."""
        kept = self._matches
        return {seq: kept.unpack(kept.kept(seq))[1] for seq in seqs}

    def last_before(self, players: Collection[str], seq: int) -> dict[str, datetime]:
        """Each of ``players``' latest match time among the matches before ``seq``."""
        self._index()
        kept, found = self._matches, {}
        for pid in players:
            seqs = self._by_player.get(pid, [])
            at = bisect.bisect_left(seqs, seq)
            if at:
                found[pid] = kept.match_of(kept.kept(seqs[at - 1])).played_at
        return found

    def placement(
        self, items: Sequence[tuple[datetime, Collection[str]]], skip: str | None = None
    ) -> int | None:
        """Where the first of ``items`` (a time, the players) goes (:func:`placed_from`)."""
        self._index()
        kept, found = self._matches, {}
        for pid in {p for _, players in items for p in players}:
            seqs = self._by_player.get(pid, [])
            matches = [(seq, kept.match_of(kept.kept(seq))) for seq in reversed(seqs)]
            found[pid] = [(seq, m.id, m.played_at) for seq, m in matches]
        return placed_from(found, items, skip)

    def drop_matches(self, seqs: Collection[int]) -> None:
        """Remove the matches of these seqs in the open batch (back on rollback); the
        later matches move up (a store in memory numbers its matches by place)."""
        if seqs:
            self._retail(min(seqs), dict.fromkeys(seqs))

    def rewrite_matches(self, items: Sequence[tuple[int, Any]], relink: Collection[str]) -> None:
        """Put each ``(seq, entry)`` in the place of the match of that seq."""
        if items:
            self._retail(min(seq for seq, _ in items), dict(items))

    def _retail(self, start: int, changes: Mapping[int, Any]) -> None:
        """The committed matches from seq ``start`` on again, each seq of ``changes``
        replaced by its entry (None: removed)."""
        kept = self._matches
        tail = [kept.kept(seq) for seq in range(start, self._committed + 1)]
        if self._dropped is None:  # (the first change of the batch: what a rollback restores)
            self._dropped = (start, tail)
        elif self._dropped[0] > start:  # (unchanged until the first change: as committed)
            first, restored = self._dropped
            self._dropped = (start, tail[: first - start] + restored)
        new = [changes.get(seq, old) for seq, old in enumerate(tail, start)]
        new = [item for item in new if item is not None]
        kept.drop_after(start - 1)
        kept.rows.extend(new)
        self._committed = start - 1 + len(new)
        self._ids.difference_update([kept.who(item)[0] for item in tail])
        self._ids.update([kept.who(item)[0] for item in new])
        self._forget_index()

    def drop_history(self, start: int) -> None:
        """Remove the matches from seq ``start`` on in the open batch (back on rollback)."""
        self._retail(start, dict.fromkeys(range(start, self._committed + 1)))

    def _forget_index(self) -> None:
        self._by_id, self._by_player, self._indexed = {}, {}, 0

    def drop_players(self, players: Collection[str]) -> None:
        """Remove these players' records when the batch commits."""
        self._pending_drops.update(players)

    def add_edit(self, edit: Mapping[str, Any]) -> int:
        """Keep one correction's audit row (kept when the batch commits); its ``n``."""
        n = len(self._edits) + len(self._pending_edits) + 1
        self._pending_edits.append({**edit, "n": n})
        if edit.get("kind") == "void":  # (its id stays taken)
            self._ids.add(edit["match_id"])
        return n

    def edit_rows(self) -> list[dict[str, Any]]:
        """Every committed correction's audit row, oldest first."""
        return [dict(row) for row in self._edits]

    def add_outbox(self, events: Sequence[tuple[str, str]]) -> int:
        """Keep events to publish (kept when the batch commits); the number of the last."""
        kept = self._pending_outbox or self._outbox
        last = kept[-1][0] if kept else 0
        self._pending_outbox += [(last + i, eid, t) for i, (eid, t) in enumerate(events, 1)]
        return last + len(events) if events else 0

    def outbox(self, limit: int) -> list[tuple[int, str, str]]:
        """The first ``limit`` committed events to publish."""
        return self._outbox[:limit]

    def drop_outbox(self, upto: int) -> None:
        """Remove the events up to ``upto`` when the batch commits."""
        self._outbox_upto = max(self._outbox_upto, upto)


Played = dict[str, list[tuple[int, str, datetime]]]
"""Each player's matches, newest first: (seq, match id, time)."""


def placed_from(
    played: Played, items: Sequence[tuple[datetime, Collection[str]]], skip: str | None
) -> int | None:
    """The seq from which a history changes when matches ``items`` (each a time and its
    players) are placed in it (:meth:`rankcraft.store.Store.placement`): for each, the
    seq of its players' latest match (in the history's order) played at or before its
    time, else of their first match, else none (it goes at the end); the least of these
    (None: every item goes at the end). ``skip``: a match left out (a corrected one)."""
    places = []
    for at, players in items:
        mine = [(seq, when) for p in players for seq, mid, when in played.get(p, ()) if mid != skip]
        earlier = [seq for seq, when in mine if when <= at]
        if earlier:
            places.append(max(earlier))
        elif mine:
            places.append(min(seq for seq, _ in mine))
    return min(places, default=None)
