"""A store that keeps everything in the process."""

from __future__ import annotations

import marshal
import struct
import zlib
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from datetime import UTC, datetime, timedelta
from types import MappingProxyType
from typing import Any, TypeVar

from ..errors import DuplicateMatchError
from ..io import build_match, parse_match
from ..model import (
    Match,
    PlayerRecord,
    PlayerScope,
    Report,
    fold_ascii,
    id_holds,
    records_counter,
)
from ..rated import Rated, json_at, sized_json
from .base import Codec, Entry, MatchRow

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


BLOCK = 256
"""Matches per compressed block of a :class:`MemoryStore`."""
_LENGTH = struct.Struct("<I")
_FLAT, _PACKED = b"F", b"P"  # a block's first byte: flat tuples (marshal), packed bytes
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)
_Flat = tuple[tuple[Any, ...], tuple[float, ...], tuple[tuple[Any, ...], ...]]


class _NotFlat(Exception):
    """A match a flat block cannot hold (a time without a zone, an entry of another kind)."""


class _Times:
    """Times as whole microseconds since 1970 and back, remembering the last few
    thousand (a history's matches share their days' time objects)."""

    def __init__(self) -> None:
        self._memo: dict[int, tuple[datetime, int]] = {}

    def count(self, moment: datetime) -> int:
        known = self._memo.get(id(moment))
        if known is not None and known[0] is moment:
            return known[1]
        if moment.tzinfo is None:  # (a naive time has no instant: kept packed)
            raise _NotFlat
        count = (moment - _EPOCH) // _MICROSECOND  # (read back in UTC: the same instant)
        if len(self._memo) >= 4096:
            self._memo.clear()
        self._memo[id(moment)] = (moment, count)
        return count


def _flat(entry: Any, times: _Times) -> _Flat:
    """A rated match as a tuple of plain values (``marshal`` writes it, keeping shared
    objects shared: a change's ``skill_used`` stays its ``skill_before`` when it was)."""
    if type(entry) is not Rated:
        raise _NotFlat
    match, expected, changes = entry[0], entry[1], entry[2]
    meta = match.meta
    fields = (
        match.id,
        times.count(match.played_at),
        match.teams,
        match.scores,
        match.ranks,
        match.places,
        match.seconds_played,
        match.quit,
        match.home,
        match.weight,
        dict(meta) if meta else None,
    )
    return fields, expected, changes


def _unflat(flat: _Flat, forms: Any) -> Rated:
    """The rated match of a :func:`_flat` tuple."""
    (match_id, at, teams, scores, ranks, places, seconds, quit, home, weight, meta) = flat[0]
    match = build_match(
        match_id,
        _EPOCH + at * _MICROSECOND,
        teams,
        (scores, ranks, places),
        seconds,
        (quit, home, weight, _NO_META if meta is None else MappingProxyType(meta)),
    )
    return Rated((match, flat[1], flat[2], forms))


_NO_META: Any = MappingProxyType({})


class MemoryStore:
    """Players, matches and reports in dicts; ``rollback`` drops the pending batch.

    Matches are kept as the engine hands them over (compact entries stay compact) and
    turned into :class:`MatchRow` objects when read. Past the first ``pack_after``
    matches (default 10,000; None: never), the older ones go into compressed blocks of
    :data:`BLOCK` (one ``marshal`` text of plain tuples each; see :meth:`_freeze`),
    about a ninth of the memory: a 1,000,000-match Elo replay peaks under 250 MB
    (benchmarks/memory.py), for a few microseconds more per match. A replay that is
    scored and not read back (``evaluate``, ``tune``) never packs.
    """

    def __init__(self, pack_after: int | None = 10_000) -> None:
        self.pack_after = 2**63 if pack_after is None else pack_after
        self._ruleset: tuple[str, str] | None = None
        self._codec: Codec | None = None
        self._players: dict[str, PlayerRecord] = {}
        self._rows: list[Any] = []  # the matches after the frozen ones (entries, mostly)
        self._blocks: list[bytes] = []  # the oldest matches, BLOCK to a compressed block
        self._frozen = 0  # how many matches the blocks hold
        self._opened: tuple[int, list[Any]] = (-1, [])  # the block read last, opened
        self._times = _Times()
        self._forms: Any = None  # the forms of the entries (the league's), once seen
        self._by_id: dict[str, int] = {}
        self._ids: set[str] = set()  # committed ids and those of the pending batch
        self._by_player: dict[str, list[int]] = {}
        self._indexed = 0
        self._pending_players: list[PlayerRecord] = []
        self._committed = 0  # rows past this one belong to the open batch
        self._meta: dict[str, str] = {}
        self._pending_meta: dict[str, str] = {}
        self._tokens: dict[str, tuple[str, str, str, str]] = {}  # name: key, digest, scope, at

    def attach(self, ruleset_name: str, ruleset_toml: str, codec: Codec) -> tuple[str, str] | None:
        self._codec = codec
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
        self._drop_after(self._committed)

    def write(self, players: Iterable[PlayerRecord], matches: Iterable[Entry]) -> None:
        self._pending_players.extend(players)
        rows = self._rows  # (the open batch's matches go straight in: no second list)
        entries = matches if isinstance(matches, list) else list(matches)
        self._ids.update([entry.id for entry in entries])
        rows.extend(entries)
        if self._frozen + len(rows) > self.pack_after:
            self._freeze()

    def commit(self) -> None:
        self._meta.update(self._pending_meta)
        for record in self._pending_players:
            self._players[record.id] = record
        self._committed = self._frozen + len(self._rows)
        self.begin()

    def _freeze(self) -> None:
        """Past ``pack_after`` matches, put the oldest ones into compressed blocks,
        BLOCK at a time (the newest stay as they are): the block's matches as tuples of
        plain values in one ``marshal`` text, or, where a match holds what marshal cannot
        write, each packed as the stores on disk keep it; either compressed with zlib.
        An Elo match then takes about 100 bytes. A read of an old match opens its block
        (about 0.1 ms; the block read last stays open)."""
        rows = self._rows
        done = 0
        while len(rows) - done >= 2 * BLOCK:
            self._blocks.append(self._block(rows[done : done + BLOCK]))
            done += BLOCK
        if done:
            del rows[:done]
            self._frozen += done

    def _block(self, kept: list[Any]) -> bytes:
        """One compressed block of ``kept`` (entries, flat tuples or packed bytes)."""
        try:
            times = self._times
            flats = [k if type(k) is tuple else _flat(k, times) for k in kept]
            if self._forms is None:  # (every entry of a league has its forms)
                self._forms = next(k[3] for k in kept if type(k) is Rated)
            text = _FLAT + marshal.dumps(flats)
        except (_NotFlat, ValueError):  # (ValueError: a value marshal cannot write)
            parts = [self._pack(self._entry(k)) if type(k) is not bytes else k for k in kept]
            text = _PACKED + b"".join(_LENGTH.pack(len(part)) + part for part in parts)
        return zlib.compress(text, 1)

    def _entry(self, kept: Any) -> Any:
        """A kept match as an entry (a flat tuple rebuilt; entries and bytes as they are)."""
        return _unflat(kept, self._forms) if type(kept) is tuple else kept

    def _drop_after(self, count: int) -> None:
        """Forget the matches after the first ``count`` (the open batch's, on rollback),
        reopening the block that holds the last kept ones."""
        if count >= self._frozen:
            del self._rows[count - self._frozen :]
            return
        whole = count // BLOCK
        head = [self._kept(seq) for seq in range(whole * BLOCK + 1, count + 1)]
        del self._blocks[whole:]
        self._frozen = whole * BLOCK
        self._opened = (-1, [])
        self._rows = head

    def _kept(self, seq: int) -> Any:
        """The match of ``seq`` as kept: an entry, or out of a block a flat tuple or its
        packed bytes."""
        at = seq - 1
        if at >= self._frozen:
            return self._rows[at - self._frozen]
        index, parts = self._opened
        if index != at // BLOCK:
            index = at // BLOCK
            data = zlib.decompress(self._blocks[index])
            if data[:1] == _FLAT:
                parts = marshal.loads(data[1:])
            else:
                parts, offset = [], 1
                while offset < len(data):
                    (length,) = _LENGTH.unpack_from(data, offset)
                    parts.append(data[offset + 4 : offset + 4 + length])
                    offset += 4 + length
            self._opened = (index, parts)
        return parts[at % BLOCK]

    def _pack(self, entry: Entry) -> bytes:
        assert self._codec is not None, "attach() first"
        match_text, report = self._codec.entry_row(entry)
        return sized_json(match_text.encode()) + report

    def _unpack(self, kept: Any) -> tuple[Match, Report]:
        if type(kept) is tuple:
            kept = _unflat(kept, self._forms)
        if not isinstance(kept, bytes):
            return kept.match, kept.report
        assert self._codec is not None, "attach() first"
        data, end = json_at(kept, 0)
        match = parse_match(data)
        return match, self._codec.report_of(match, kept[end:])

    @staticmethod
    def _who(kept: Any) -> tuple[str, Any]:
        """A kept match's id and teams (without building its report)."""
        if type(kept) is tuple:
            return kept[0][0], kept[0][2]
        if not isinstance(kept, bytes):
            return kept.id, kept.teams
        data, _ = json_at(kept, 0)
        return data["id"], data["teams"]

    def rollback(self) -> None:
        total = self._frozen + len(self._rows)
        pending = [self._kept(seq) for seq in range(self._committed + 1, total + 1)]
        self._ids.difference_update([self._who(kept)[0] for kept in pending])
        self.begin()

    def _index(self) -> None:
        """Index the matches committed since the last read (a replay never pays for it)."""
        by_id = self._by_id
        by_player = self._by_player
        for seq in range(self._indexed + 1, self._committed + 1):
            match_id, teams = self._who(self._kept(seq))
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
        match, report = self._unpack(self._kept(seq))
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
