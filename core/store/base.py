"""The store interface and the codec that turns states into JSON-ready dicts."""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Iterable, Mapping
from datetime import datetime
from typing import Any, Protocol

import attrs

from ..model import Match, PlayerRecord, Report
from .migrations import SCHEMA_VERSION

__all__ = ["SCHEMA_VERSION", "Codec", "Entry", "MatchRow", "Recorded", "Store", "compact_json"]

compact_json: Callable[[Any], str] = json.JSONEncoder(separators=(",", ":"), allow_nan=False).encode
"""JSON text without spaces; NaN and infinity refused (ValueError)."""


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
    """A rated match on its way to a store: :class:`Recorded`, or a compact
    :class:`rankcraft.fast.FastEntry` that builds its objects only when read."""

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

    def json_texts(self, codec: Codec) -> tuple[str, str]:
        """The match (in the JSON line format) and the report (as ``codec.report_to_dict``
        gives it), each as :func:`compact_json` text: what a store on disk writes."""
        ...


class Recorded:
    """A rated match and its report (the ordinary path's :class:`Entry`)."""

    __slots__ = ("match", "report")

    def __init__(self, match: Match, report: Report) -> None:
        self.match = match
        self.report = report

    @property
    def id(self) -> str:
        return self.match.id

    @property
    def played_at(self) -> datetime:
        return self.match.played_at

    @property
    def teams(self) -> tuple[tuple[str, ...], ...]:
        return self.match.teams

    def json_texts(self, codec: Codec) -> tuple[str, str]:
        return compact_json(self.match.to_dict()), compact_json(codec.report_to_dict(self.report))


@attrs.frozen(kw_only=True)
class Codec:
    """Turns records and reports into JSON-ready dicts and back (for stores on disk).

    Built by the league from its ruleset; a store never needs to know a plugin.
    """

    record_to_dict: Callable[[PlayerRecord], dict[str, Any]]
    record_from_dict: Callable[[Mapping[str, Any]], PlayerRecord]
    report_to_dict: Callable[[Report], dict[str, Any]]
    report_from_dict: Callable[[Mapping[str, Any]], Report]


class Store(Protocol):
    """What the engine needs from a store.

    ``begin``/``commit``/``rollback`` bracket one batch; ``write`` is only called inside
    one. A failed batch is rolled back whole.
    """

    def attach(self, ruleset_name: str, ruleset_toml: str, codec: Codec) -> tuple[str, str] | None:
        """Remember the ruleset of a new store, or return the stored (name, toml)."""
        ...

    def load_players(self) -> dict[str, PlayerRecord]:
        """Every player's record."""
        ...

    def recorded(self, ids: Collection[str]) -> set[str]:
        """Which of ``ids`` are recorded: committed, or written in the open batch.

        The engine asks once per chunk of matches instead of keeping every id in
        memory, so that a league's memory does not grow with its number of matches."""
        ...

    def begin(self) -> None:
        """Start a batch (a transaction)."""
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

    def close(self) -> None:
        """Release the store's resources."""
        ...
