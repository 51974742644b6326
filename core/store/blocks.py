"""The block packing of a :class:`~rankcraft.store.memory.MemoryStore`'s matches: the
newest kept as the engine hands them over, the oldest put into zlib-compressed blocks of
:data:`BLOCK` matches each (one ``marshal`` text of plain tuples, or, where a match holds
what marshal cannot write, each packed as the stores on disk keep it), and read back.
"""

from __future__ import annotations

import marshal
import struct
import zlib
from datetime import UTC, datetime, timedelta
from types import MappingProxyType
from typing import Any

from ..io import build_match, parse_match
from ..model import Match, Report
from ..rated import Rated, json_at, sized_json
from .base import Codec, Entry

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


class KeptMatches:
    """A memory store's matches in commit order (seq 1 first): :attr:`rows` as kept
    (entries, mostly), after the :attr:`frozen` oldest, which :attr:`blocks` hold."""

    def __init__(self) -> None:
        self.codec: Codec | None = None  # the league's, once attached
        self.rows: list[Any] = []  # the matches after the frozen ones (entries, mostly)
        self.blocks: list[bytes] = []  # the oldest matches, BLOCK to a compressed block
        self.frozen = 0  # how many matches the blocks hold
        self._opened: tuple[int, list[Any]] = (-1, [])  # the block read last, opened
        self._times = _Times()
        self._forms: Any = None  # the forms of the entries (the league's), once seen

    def freeze(self) -> None:
        """Put the oldest matches into compressed blocks (the store calls this past its
        ``pack_after`` matches), BLOCK at a time (the newest stay as they are): the
        block's matches as tuples of plain values in one ``marshal`` text, or, where a
        match holds what marshal cannot write, each packed as the stores on disk keep
        it; either compressed with zlib.
        An Elo match then takes about 100 bytes. A read of an old match opens its block
        (about 0.1 ms; the block read last stays open)."""
        rows = self.rows
        done = 0
        while len(rows) - done >= 2 * BLOCK:
            self.blocks.append(self._block(rows[done : done + BLOCK]))
            done += BLOCK
        if done:
            del rows[:done]
            self.frozen += done

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

    def drop_after(self, count: int) -> None:
        """Forget the matches after the first ``count`` (the open batch's, on rollback),
        reopening the block that holds the last kept ones."""
        if count >= self.frozen:
            del self.rows[count - self.frozen :]
            return
        whole = count // BLOCK
        head = [self.kept(seq) for seq in range(whole * BLOCK + 1, count + 1)]
        del self.blocks[whole:]
        self.frozen = whole * BLOCK
        self._opened = (-1, [])
        self.rows = head

    def kept(self, seq: int) -> Any:
        """The match of ``seq`` as kept: an entry, or out of a block a flat tuple or its
        packed bytes."""
        at = seq - 1
        if at >= self.frozen:
            return self.rows[at - self.frozen]
        index, parts = self._opened
        if index != at // BLOCK:
            index = at // BLOCK
            data = zlib.decompress(self.blocks[index])
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
        """``entry`` packed as the stores on disk keep it: its match's text, its report."""
        assert self.codec is not None, "attach() first"
        match_text, report = self.codec.entry_row(entry)
        return sized_json(match_text.encode()) + report

    def unpack(self, kept: Any) -> tuple[Match, Report]:
        """A kept match's match and report (a flat tuple rebuilt, packed bytes read)."""
        if type(kept) is tuple:
            kept = _unflat(kept, self._forms)
        if not isinstance(kept, bytes):
            return kept.match, kept.report
        assert self.codec is not None, "attach() first"
        data, end = json_at(kept, 0)
        match = parse_match(data)
        return match, self.codec.report_of(match, kept[end:])

    def match_of(self, kept: Any) -> Match:
        """A kept match's match (its report not built)."""
        if type(kept) is tuple:
            kept = _unflat(kept, self._forms)
        if not isinstance(kept, bytes):
            match: Match = kept[0]
            return match
        return parse_match(json_at(kept, 0)[0], stored=True)

    @staticmethod
    def who(kept: Any) -> tuple[str, Any]:
        """A kept match's id and teams (without building its report)."""
        if type(kept) is tuple:
            return kept[0][0], kept[0][2]
        if not isinstance(kept, bytes):
            return kept.id, kept.teams
        data, _ = json_at(kept, 0)
        return data["id"], data["teams"]
