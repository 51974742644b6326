"""A store that keeps everything in the process."""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from datetime import datetime
from typing import Any, TypeVar

from ..errors import DuplicateMatchError
from ..model import PlayerRecord, PlayerScope, fold_ascii, id_holds, records_counter
from .base import Codec, Entry, MatchRow
from .blocks import KeptMatches
from .memory_history import MemoryHistory

T = TypeVar("T")


def _last_played(record: PlayerRecord) -> datetime | None:
    return record.last_played


def leaderboard_page(
    records: Iterable[PlayerRecord],
    codec: Codec,
    limit: int | None,
    offset: int = 0,
    since: datetime | None = None,
    tier: str | None = None,
    holding: str | None = None,
) -> list[PlayerRecord]:
    """A page of ``records`` best first (descending ``codec.sort_key``, then id), as
    :meth:`Store.leaderboard` defines it, sorted here in memory."""
    return [r for _, r in placed_page(records, codec, limit, offset, since, tier, holding)]


def placed_page(
    records: Iterable[PlayerRecord],
    codec: Codec,
    limit: int | None,
    offset: int = 0,
    since: datetime | None = None,
    tier: str | None = None,
    holding: str | None = None,
) -> list[tuple[int, PlayerRecord]]:
    """:func:`leaderboard_page`, each record with its place (1 first) on the board of
    ``since`` and ``tier``, which ``holding`` searches without changing."""
    found = [
        (place, r)
        for place, r in enumerate(on_board(records, codec, since, tier), 1)
        if not holding or id_holds(r.id, holding)
    ]
    return found[offset:] if limit is None else found[offset : offset + limit]


def board_tiers(records: Iterable[PlayerRecord], codec: Codec) -> list[str]:
    """The tiers ``records`` hold, in the order of each tier's best player on the board."""
    seen = (codec.tier(r) for r in on_board(records, codec))
    return list(dict.fromkeys(t for t in seen if t is not None))


def on_board(
    records: Iterable[PlayerRecord],
    codec: Codec,
    since: datetime | None = None,
    tier: str | None = None,
) -> list[PlayerRecord]:
    """``records`` on the board of ``since`` and ``tier``, in board order."""
    key, tier_of = codec.sort_key, codec.tier
    chosen = [
        r
        for r in records
        if (since is None or (r.last_played is not None and r.last_played >= since))
        and (tier is None or tier_of(r) == tier)
    ]
    chosen.sort(key=lambda r: (-key(r), r.id))
    return chosen


def search_ids(ids: Iterable[str], text: str, limit: int) -> list[str]:
    """Up to ``limit`` of ``ids`` that start with ``text``, then those that hold it,
    each in id order (ASCII letters in either case, :func:`rankcraft.model.id_holds`)."""
    needle = fold_ascii(text)
    held = sorted(i for i in ids if needle in fold_ascii(i))
    held.sort(key=lambda i: not fold_ascii(i).startswith(needle))  # (stable: id order kept)
    return held[:limit]


def in_scope(
    scope: PlayerScope,
    last: Callable[[T], datetime | None],
    key: Callable[[T], float],
    tier: Callable[[T], str | None],
) -> Callable[[T], bool]:
    """``item -> bool``: whether an item (a record, or the engine's row) is in ``scope``
    (any of its conditions, as :meth:`Store.load_where` reads them), read through
    ``last`` (its latest match), ``key`` (its sort key) and ``tier``; the latest match
    first: it costs least."""
    played_since, sort_key_from = scope.played_since, scope.sort_key_from
    wanted = frozenset(scope.tiers)

    def chosen(item: T) -> bool:
        if played_since is not None:
            moment = last(item)
            if moment is not None and moment >= played_since:
                return True
        if sort_key_from is not None and key(item) >= sort_key_from:
            return True
        return bool(wanted) and tier(item) in wanted

    return chosen


class MemoryStore(MemoryHistory):
    """Players, matches and reports in dicts; ``rollback`` drops the pending batch.

    Matches are kept as the engine hands them over (compact entries stay compact) and
    turned into :class:`MatchRow` objects when read. Past the first ``pack_after``
    matches (default 10,000; None: never), the older ones go into compressed blocks of
    :data:`~rankcraft.store.blocks.BLOCK` (one ``marshal`` text of plain tuples each; see
    :mod:`rankcraft.store.blocks`), about a ninth of the memory: a 1,000,000-match Elo
    replay peaks under 250 MB (benchmarks/memory.py), for a few microseconds more per
    match. A replay that is scored and not read back (``evaluate``, ``tune``) never packs.
    """

    def __init__(self, pack_after: int | None = 10_000) -> None:
        self.pack_after = 2**63 if pack_after is None else pack_after
        self._ruleset: tuple[str, str] | None = None
        self._codec: Codec | None = None
        self._players: dict[str, PlayerRecord] = {}
        self._matches = KeptMatches()  # every match, the oldest packed in blocks
        self._by_id: dict[str, int] = {}
        self._ids: set[str] = set()  # committed ids and those of the pending batch
        self._by_player: dict[str, list[int]] = {}
        self._indexed = 0
        self._pending_players: list[PlayerRecord] = []
        self._committed = 0  # rows past this one belong to the open batch
        self._meta: dict[str, str] = {}
        self._pending_meta: dict[str, str] = {}
        self._tokens: dict[str, tuple[str, str, str, str]] = {}  # name: key, digest, scope, at
        self._edits: list[dict[str, Any]] = []  # the corrections' audit, committed
        self._pending_edits: list[dict[str, Any]] = []
        self._outbox: list[tuple[int, str, str]] = []  # events to publish, committed
        self._pending_outbox: list[tuple[int, str, str]] = []
        self._outbox_upto = 0  # the open batch removes the events up to this one
        self._dropped: tuple[int, list[Any]] | None = None  # the history a batch removed
        self._pending_drops: set[str] = set()  # players a batch removed

    def attach(self, ruleset_name: str, ruleset_toml: str, codec: Codec) -> tuple[str, str] | None:
        self._codec = self._matches.codec = codec
        if self._ruleset is None:
            self._ruleset = (ruleset_name, ruleset_toml)
            return None
        return self._ruleset

    parallel_writers = False
    shared = False

    def stored_ruleset(self) -> tuple[str, str] | None:
        return self._ruleset

    def load_players(self) -> dict[str, PlayerRecord]:
        return dict(self._players)

    def load_player(self, player: str) -> PlayerRecord | None:
        return self._players.get(player)

    def load_many(self, players: Collection[str]) -> dict[str, PlayerRecord]:
        known = self._players
        return {p: r for p in players if (r := known.get(p)) is not None}

    def count_players(self) -> int:
        return len(self._players)

    def load_where(self, scope: PlayerScope) -> dict[str, PlayerRecord]:
        codec = self._codec
        assert codec is not None, "attach() first"
        chosen = in_scope(scope, _last_played, codec.sort_key, codec.tier)
        return {pid: r for pid, r in self._players.items() if chosen(r)}

    def leaderboard(
        self,
        limit: int | None,
        offset: int = 0,
        since: datetime | None = None,
        tier: str | None = None,
        holding: str | None = None,
    ) -> list[PlayerRecord]:
        """The committed players, sorted on each call (a league in memory sorts its own
        rows instead: see :meth:`rankcraft.League.leaderboard`)."""
        assert self._codec is not None, "attach() first"
        players = self._players.values()
        return leaderboard_page(players, self._codec, limit, offset, since, tier, holding)

    def latest_played(self) -> datetime | None:
        lasts = [r.last_played for r in self._players.values() if r.last_played is not None]
        return max(lasts, default=None)

    def places(
        self,
        records: Sequence[PlayerRecord],
        since: datetime | None = None,
        tier: str | None = None,
    ) -> list[int]:
        assert self._codec is not None, "attach() first"
        place = {
            r.id: i
            for i, r in enumerate(on_board(self._players.values(), self._codec, since, tier))
        }
        return [place[r.id] for r in records]

    def count_below(
        self, keys: Sequence[float], since: datetime | None, matches_from: int
    ) -> tuple[int, list[int]]:
        assert self._codec is not None, "attach() first"
        count = records_counter(list(self._players.values()), self._codec.sort_key)
        return count(keys, since, matches_from)

    def active_keys(self, since: datetime, until: datetime) -> list[tuple[str, float]]:
        assert self._codec is not None, "attach() first"
        key = self._codec.sort_key
        return [
            (pid, key(r))
            for pid, r in self._players.items()
            if r.last_played is not None and since <= r.last_played <= until
        ]

    def rank_documents(self) -> Iterator[tuple[str, Any]]:
        assert self._codec is not None, "attach() first"
        to_dict = self._codec.record_to_dict
        for pid, record in self._players.items():
            if record.rank is not None:
                yield pid, to_dict(record)["rank"]

    def tiers(self) -> list[str]:
        assert self._codec is not None, "attach() first"
        return board_tiers(self._players.values(), self._codec)

    def search(self, text: str, limit: int) -> list[str]:
        return search_ids(self._players, text, limit)

    def begin_shared(self) -> None:
        self.begin()

    def lock_players(
        self, players: list[str], match_id: str | None = None
    ) -> dict[str, PlayerRecord]:
        if match_id is not None and match_id in self._ids:
            raise DuplicateMatchError(
                f"match id {match_id!r} is already recorded", match_id=match_id
            )
        return {p: r for p in players if (r := self._players.get(p)) is not None}

    def recorded(self, ids: Collection[str]) -> set[str]:
        known = self._ids
        return {i for i in ids if i in known}

    def begin(self) -> None:
        self._pending_players = []
        self._pending_meta = {}
        self._pending_edits = []
        self._pending_outbox, self._outbox_upto = [], 0
        self._pending_drops = set()
        self._dropped = None
        self._matches.drop_after(self._committed)

    def write(self, players: Iterable[PlayerRecord], matches: Iterable[Entry]) -> None:
        self._pending_players.extend(players)
        kept = self._matches
        rows = kept.rows  # (the open batch's matches go straight in: no second list)
        entries = matches if isinstance(matches, list) else list(matches)
        self._ids.update([entry.id for entry in entries])
        rows.extend(entries)
        if kept.frozen + len(rows) > self.pack_after:
            kept.freeze()

    def commit(self) -> None:
        self._meta.update(self._pending_meta)
        self._edits += self._pending_edits
        self._outbox = [e for e in self._outbox + self._pending_outbox if e[0] > self._outbox_upto]
        self._pending_outbox, self._outbox_upto = [], 0
        for pid in self._pending_drops:
            self._players.pop(pid, None)
        for record in self._pending_players:
            self._players[record.id] = record
        kept = self._matches
        self._committed = kept.frozen + len(kept.rows)
        self.begin()

    def rollback(self) -> None:
        kept = self._matches
        total = kept.frozen + len(kept.rows)
        pending = [kept.kept(seq) for seq in range(self._committed + 1, total + 1)]
        self._ids.difference_update([kept.who(match)[0] for match in pending])
        dropped = self._dropped
        self.begin()
        if dropped is not None:  # (the history a correction removed comes back)
            start, tail = dropped
            kept.rows.extend(tail)
            self._committed = start - 1 + len(tail)
            self._ids.update([kept.who(match)[0] for match in tail])
            self._forget_index()

    def _index(self) -> None:
        """Index the matches committed since the last read (a replay never pays for it)."""
        by_id = self._by_id
        by_player = self._by_player
        kept, who = self._matches.kept, self._matches.who
        for seq in range(self._indexed + 1, self._committed + 1):
            match_id, teams = who(kept(seq))
            by_id[match_id] = seq
            for side in teams:
                for player in side:
                    seqs = by_player.get(player)
                    if seqs is None:
                        by_player[player] = [seq]
                    else:
                        seqs.append(seq)
        self._indexed = self._committed

    def _row(self, seq: int) -> MatchRow:
        kept = self._matches
        match, report = kept.unpack(kept.kept(seq))
        return MatchRow(seq=seq, match=match, report=report)

    def player_matches(self, player: str, limit: int | None) -> list[MatchRow]:
        self._index()
        seqs = self._by_player.get(player, [])[::-1]
        return [self._row(seq) for seq in (seqs if limit is None else seqs[:limit])]

    def match(self, match_id: str) -> MatchRow | None:
        self._index()
        seq = self._by_id.get(match_id)
        return None if seq is None else self._row(seq)

    def count_matches(self) -> int:
        return self._committed

    def generation(self) -> int:
        return int(self._meta.get("generation", "0"))

    def bump_generation(self) -> int:
        new = int(self._pending_meta.get("generation", str(self.generation()))) + 1
        self._pending_meta["generation"] = str(new)
        return new

    def get_meta(self, key: str) -> str | None:
        return self._meta.get(key)

    def set_meta(self, key: str, value: str) -> None:
        self._pending_meta[key] = value

    def close(self) -> None:
        pass

    # -- API tokens (rankcraft.tokens) -----------------------------------------------------

    def add_token(self, name: str, key: str, digest: str, scope: str, created_at: str) -> bool:
        if name in self._tokens:
            return False
        self._tokens[name] = (key, digest, scope, created_at)
        return True

    def token_rows(self) -> list[tuple[str, str, str, str]]:
        return [(n, k, s, at) for n, (k, _, s, at) in sorted(self._tokens.items())]

    def token_by_key(self, key: str) -> tuple[str, str, str, str] | None:
        for name, (k, digest, scope, at) in self._tokens.items():
            if k == key:
                return (name, digest, scope, at)
        return None

    def remove_token(self, name: str) -> bool:
        return self._tokens.pop(name, None) is not None
