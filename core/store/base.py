"""The store interface and the codec that turns states into JSON-ready dicts."""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from datetime import datetime
from typing import Any, Protocol

import attrs

from ..model import Match, PlayerRecord, PlayerScope, Report
from ..rated import compact_json
from .migrations import SCHEMA_VERSION

__all__ = [
    "CONSUMED",
    "FED_BY",
    "SCHEMA_VERSION",
    "Codec",
    "Entry",
    "MatchRow",
    "Store",
    "compact_json",
]

CONSUMED = "consumed"
"""meta key: what the consumer of a log said after its last batch, a JSON object (its
lag, throughput, last batch time): ``GET /health`` shows it."""
FED_BY = "fed_by"
"""meta key: the log a consumer feeds the league from (``rankcraft consume`` keeps
``nats://host:port stream subject`` there); the HTTP service then refuses writes."""


@attrs.frozen(kw_only=True)
class MatchRow:
    """A recorded match with its report, as a store returns it.

    Attributes:
        seq: commit order, from 1. match: the match. report: its report.
    """

    seq: int
    match: Match
    report: Report


class Entry(Protocol):
    """A rated match on its way to a store (:class:`rankcraft.rated.Rated`): it builds
    the public match and report objects only when they are read."""

    @property
    def id(self) -> str: ...

    @property
    def played_at(self) -> datetime: ...

    @property
    def teams(self) -> tuple[tuple[str, ...], ...]: ...

    @property
    def match(self) -> Match: ...

    @property
    def report(self) -> Report: ...


@attrs.frozen(kw_only=True)
class Codec:
    """Turns records and reports into JSON-ready dicts and back (for stores on disk).

    Built by the league from its ruleset; a store never needs to know a plugin.
    """

    record_to_dict: Callable[[PlayerRecord], dict[str, Any]]
    record_from_dict: Callable[[Mapping[str, Any]], PlayerRecord]
    report_to_dict: Callable[[Report], dict[str, Any]]
    report_from_dict: Callable[[Mapping[str, Any]], Report]
    entry_row: Callable[[Any], tuple[str, bytes]]
    """``(entry) -> (match text, packed report)``: what a store on disk writes per match
    (the report packed by :class:`rankcraft.rated.ReportPacker`)."""
    report_row: Callable[[Any], bytes] = attrs.field(
        default=attrs.Factory(lambda codec: lambda e: codec.entry_row(e)[1], takes_self=True)
    )
    """``(entry) -> packed report``: :attr:`entry_row`'s report alone (a correction
    rewrites the reports of matches it leaves as they were)."""
    record_texts: Callable[[PlayerRecord], tuple[str, str | None, str | None, str | None]] = (
        attrs.field(default=attrs.Factory(lambda codec: _texts_of_dicts(codec), takes_self=True))
    )
    """``(record) -> (skill, rank, last_played, open)``: what a store on disk keeps of a
    record beside its id and match count: the states and the open period as JSON texts
    (exactly the compact JSON of :attr:`record_to_dict`'s values; a league's codec writes
    the states from the report writer's memoized texts), the time; None where the
    record has none. Default: :attr:`record_to_dict`'s values through ``compact_json``."""
    report_of: Callable[[Match, str | bytes], Report]
    """``(match, kept report) -> report``: a report a store kept, packed or (written by
    rankcraft before schema 6) JSON text."""
    parse_record: Callable[[Any, str], PlayerRecord]
    """``(data, path) -> record``: a record document validated, errors naming ``path``."""
    sort_key: Callable[[PlayerRecord], float] = lambda record: 0.0
    """``(record) -> key``: the leaderboard's order, best first by descending key then by
    id (:func:`rankcraft.engine.leaderboard_key`); a store on disk keeps it in an indexed
    column."""
    sort_key_name: str = "id"
    """Names what :attr:`sort_key` computes (e.g. ``"skill.rating"``); a store whose kept
    keys were computed under another name computes them again when opened."""
    tier: Callable[[PlayerRecord], str | None] = lambda record: None
    """``(record) -> tier``: the rank state's ``tier`` field, or None (a filter of the
    leaderboard)."""


def _texts_of_dicts(
    codec: Codec,
) -> Callable[[PlayerRecord], tuple[str, str | None, str | None, str | None]]:
    """:attr:`Codec.record_texts` from the codec's ``record_to_dict``."""
    to_dict = codec.record_to_dict

    def texts(record: PlayerRecord) -> tuple[str, str | None, str | None, str | None]:
        data = to_dict(record)
        rank, open_ = data["rank"], data.get("open")
        return (
            compact_json(data["skill"]),
            None if rank is None else compact_json(rank),
            data["last_played"],
            None if open_ is None else compact_json(open_),
        )

    return texts


class Store(Protocol):
    """What the engine needs from a store.

    ``begin``/``commit``/``rollback`` bracket one batch; ``write`` is only called inside
    one. A failed batch is rolled back whole.
    """

    parallel_writers: bool
    """Whether matches on different players commit in parallel (PostgreSQL): the league
    then records one match with :meth:`begin_shared` and :meth:`lock_players`."""

    shared: bool
    """Whether other processes may write to the same league (a database, not memory)."""

    def attach(self, ruleset_name: str, ruleset_toml: str, codec: Codec) -> tuple[str, str] | None:
        """Remember the ruleset of a new store, or return the stored (name, toml)."""
        ...

    def stored_ruleset(self) -> tuple[str, str] | None:
        """(name, toml) of the ruleset the store was created with, or None if new."""
        ...

    def load_players(self) -> dict[str, PlayerRecord]:
        """Every player's record."""
        ...

    def load_player(self, player: str) -> PlayerRecord | None:
        """One player's record as committed, or None."""
        ...

    def load_many(self, players: Collection[str]) -> dict[str, PlayerRecord]:
        """The records of those of ``players`` the store has (one query)."""
        ...

    def count_players(self) -> int:
        """How many players the store has (those written in the open batch included)."""
        ...

    def load_where(self, scope: PlayerScope) -> dict[str, PlayerRecord]:
        """The records of the players in ``scope``: who played at or after its
        ``played_since``, or whose :attr:`Codec.sort_key` is at least its
        ``sort_key_from``, or whose tier is one of its ``tiers`` (any condition given;
        none: no player), in one query along the indexed columns (a season event's or the
        standings' scope)."""
        ...

    def leaderboard(
        self,
        limit: int | None,
        offset: int = 0,
        since: datetime | None = None,
        tier: str | None = None,
        holding: str | None = None,
    ) -> list[PlayerRecord]:
        """Players best first (descending :attr:`Codec.sort_key`, then id), from the
        ``offset``-th (0-based), at most ``limit``; only those who played at or after
        ``since``, whose tier is ``tier`` and whose id holds ``holding`` (ASCII letters in
        either case, :func:`rankcraft.model.id_holds`), when given."""
        ...

    def latest_played(self) -> datetime | None:
        """The latest ``last_played`` of any player, or None."""
        ...

    def places(
        self,
        records: Sequence[PlayerRecord],
        since: datetime | None = None,
        tier: str | None = None,
    ) -> list[int]:
        """How many players the board of ``since`` and ``tier`` (:meth:`leaderboard`'s
        filters) puts before each of ``records`` (each its place - 1); ``records`` are on
        that board, in its order."""
        ...

    def count_below(
        self, keys: Sequence[float], since: datetime | None, matches_from: int
    ) -> tuple[int, list[int]]:
        """How many players played at or after ``since`` (any time: None) with at least
        ``matches_from`` matches (≥ 0), and for each of ``keys`` how many of them have a
        :attr:`Codec.sort_key` strictly below it: :class:`rankcraft.Census`'s counts.
        Optional: a store without it has its players read and counted by the league."""
        ...

    def active_keys(self, since: datetime, until: datetime) -> list[tuple[str, float]]:
        """The id and :attr:`Codec.sort_key` of each player whose ``last_played`` is in
        [``since``, ``until``], in no order (:meth:`rankcraft.League.active_players`).
        Optional: a store without it has its players read by the league."""
        ...

    def rank_documents(self) -> Iterator[tuple[str, Any]]:
        """Each player's rank state as the store keeps it (its document: the JSON of
        the export), players without one left out, in no order, without building
        records. Optional: a store without it has its players read by the league."""
        ...

    def tiers(self) -> list[str]:
        """The tiers the players hold (:attr:`Codec.tier`), in the order of each tier's
        best player on the leaderboard (:meth:`rankcraft.League.tiers`). Optional: a
        store without it has its whole board read by the league."""
        ...

    def search(self, text: str, limit: int) -> list[str]:
        """Up to ``limit`` player ids that start with ``text``, then those that hold it,
        each in id order (ASCII letters in either case; ``text`` not empty)."""
        ...

    def recorded(self, ids: Collection[str]) -> set[str]:
        """Which of ``ids`` are recorded: committed, or written in the open batch (a
        voided match's id too: it stays taken).

        The engine asks once per chunk of matches instead of keeping every id in
        memory, so that a league's memory does not grow with its number of matches."""
        ...

    def begin(self) -> None:
        """Start a batch (a transaction) that holds the league's writer lock alone."""
        ...

    def begin_shared(self) -> None:
        """Start a one-match transaction that runs beside others like it (where
        ``parallel_writers``; otherwise the same as :meth:`begin`)."""
        ...

    def lock_players(
        self, players: list[str], match_id: str | None = None
    ) -> dict[str, PlayerRecord]:
        """In a one-match transaction: lock ``players`` (sorted ids) and return their
        committed records (new players left out).

        :raises DuplicateMatchError: ``match_id`` is recorded already.
        """
        ...

    def write(self, players: Iterable[PlayerRecord], matches: Iterable[Entry]) -> None:
        """Store changed records and new matches with their reports."""
        ...

    def commit(self) -> None:
        """End the batch, making its writes durable."""
        ...

    def rollback(self) -> None:
        """Drop the batch's writes."""
        ...

    def player_matches(self, player: str, limit: int | None) -> list[MatchRow]:
        """A player's matches, newest first (at most ``limit``)."""
        ...

    def match(self, match_id: str) -> MatchRow | None:
        """One recorded match, or None."""
        ...

    def count_matches(self) -> int:
        """How many matches are recorded."""
        ...

    def generation(self) -> int:
        """How many batches were ever committed; another process committing changes it."""
        ...

    def bump_generation(self) -> int:
        """Count the open batch (called inside it); returns the new generation."""
        ...

    def get_meta(self, key: str) -> str | None:
        """A value the league keeps beside its players (e.g. the reset schedule), or None."""
        ...

    def set_meta(self, key: str, value: str) -> None:
        """Keep ``value`` under ``key``; only called inside a batch."""
        ...

    def history(self, start: int = 1) -> Iterator[tuple[int, Match]]:
        """The recorded matches from seq ``start`` on, in order, with their seqs."""
        ...

    def reports(self, seqs: Collection[int]) -> dict[int, Report]:
        """The reports of the recorded matches of these seqs."""
        ...

    def last_before(self, players: Collection[str], seq: int) -> dict[str, datetime]:
        """Each of ``players``' latest match time among the matches before ``seq`` (a
        player without one is left out)."""
        ...

    def placement(
        self, items: Sequence[tuple[datetime, Collection[str]]], skip: str | None = None
    ) -> int | None:
        """The seq from which the history changes when matches ``items`` (each its time
        and its players) are placed in it: for each, the seq of its players' latest
        match played at or before its time, else of their first match (None: it goes at
        the end); the least of those (:func:`rankcraft.store.memory_history.placed_from`;
        ``skip``: a match id left out)."""
        ...

    def drop_matches(self, seqs: Collection[int]) -> None:
        """Remove the matches of these seqs (inside a batch; a store in memory moves the
        later ones up, so a batch that also rewrites matches rewrites them first)."""
        ...

    def rewrite_matches(self, items: Sequence[tuple[int, Any]], relink: Collection[str]) -> None:
        """Write each ``(seq, entry)`` over the match of that seq (inside a batch); the
        participants of the ids in ``relink`` again too."""
        ...

    def drop_history(self, start: int) -> None:
        """Remove the matches from seq ``start`` on (inside a batch; a re-rate writes
        them again)."""
        ...

    def drop_players(self, players: Collection[str]) -> None:
        """Remove these players' records (inside a batch)."""
        ...

    def add_edit(self, edit: Mapping[str, Any]) -> int:
        """Keep a correction's audit row (inside a batch); returns its number ``n``."""
        ...

    def edit_rows(self) -> list[dict[str, Any]]:
        """Every correction's audit row, oldest first."""
        ...

    def add_outbox(self, events: Sequence[tuple[str, str]]) -> int:
        """Keep events to publish, each (its id, its JSON text), in order (inside a batch);
        returns the number ``n`` of the last one kept (0: none)."""
        ...

    def outbox(self, limit: int) -> list[tuple[int, str, str]]:
        """The first ``limit`` committed events to publish: (``n``, id, JSON text)."""
        ...

    def drop_outbox(self, upto: int) -> None:
        """Remove the events up to number ``upto`` (published; inside a batch)."""
        ...

    def close(self) -> None:
        """Release the store's resources."""
        ...
