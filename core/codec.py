"""The codec of a ruleset's state classes: records and reports to JSON-ready dicts and
stored texts, and back (:class:`rankcraft.store.base.Codec`, what the stores and the
export use)."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any

from .boards import leaderboard_key, tier_function
from .errors import PluginError
from .importing import StateReader
from .model import (
    Match,
    PlayerRecord,
    Report,
    State,
    format_time,
)
from .rated import PACKED, Rated, ReportPacker, ReportWriter, compact_json, match_text
from .ruleset import Display
from .store.base import Codec

if TYPE_CHECKING:
    from .steps import Steps

__all__ = ["league_codec", "make_codec"]


def make_codec(
    writer: ReportWriter,
    skill_class: type,
    rank_class: type | None,
    initial_rank: Callable[[], State] | None,
    *,
    sort_key: tuple[str, Callable[[PlayerRecord], float]] = ("id", lambda record: 0.0),
    tier: Callable[[PlayerRecord], str | None] = lambda record: None,
    mode: str = "match",
    verify: Callable[[str, State], str | None] | None = None,
    period_of: Callable[[datetime], int] | None = None,
) -> Codec:
    """The codec of a ruleset's state classes: records and reports to dicts and back.

    ``sort_key``: (its name, the leaderboard's key of a record); ``tier``: a record's tier
    or None (what a store on disk keeps in indexed columns); ``mode``: the ruleset's
    period mode (an import's open periods are checked for it); ``verify``: the owning
    plugins' check of a state coming in (:meth:`rankcraft.steps.Steps.verify`);
    ``period_of``: the rating period of a time (``batch`` and ``live`` modes)."""
    states = StateReader(skill_class, rank_class, initial_rank)
    how: dict[str, Any] = {"complete": True, "mode": mode, "verify": verify, "period_of": period_of}
    imported = StateReader(skill_class, rank_class, initial_rank, **how)
    record_to_dict = _record_to_dict(writer)
    record_texts = _record_texts(writer, record_to_dict)

    def report_to_dict(report: Report) -> dict[str, Any]:
        text = writer.report_text(
            report.match_id, report.played_at, tuple(report.expected), Rated.changes_of(report)
        )
        data: dict[str, Any] = json.loads(text)
        return data

    packer = ReportPacker(writer)
    entry_row = _entry_row(packer)

    def report_of(match: Match, kept: str | bytes) -> Report:
        if kept[0] == PACKED and isinstance(kept, bytes):
            return states.report(packer.unpack(kept, match))
        return states.report(json.loads(kept))

    return Codec(
        record_to_dict=record_to_dict,
        record_from_dict=lambda data: states.record(data, "player"),
        report_to_dict=report_to_dict,
        report_from_dict=states.report,
        entry_row=entry_row,
        report_row=lambda entry: entry_row(entry, with_text=False)[1],
        record_texts=record_texts,
        report_of=report_of,
        parse_record=imported.record,
        sort_key=sort_key[1],
        sort_key_name=sort_key[0],
        tier=tier,
    )


def _record_to_dict(writer: ReportWriter) -> Callable[[PlayerRecord], dict[str, Any]]:
    """:attr:`Codec.record_to_dict`: a record as the state document writes it."""
    skill_dict, rank_dict = writer.skill_dict, writer.rank_dict

    def record_to_dict(record: PlayerRecord) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": record.id,
            "skill": skill_dict(record.skill),
            "rank": rank_dict(record.rank),
            "matches": record.matches,
            "last_played": None if record.last_played is None else format_time(record.last_played),
        }
        if record.period is not None or record.pending:
            out["open"] = {
                "period": record.period,
                "period_matches": record.period_matches,
                "base": None if record.base is None else skill_dict(record.base),
                "pending": [[skill_dict(p.opponent), p.score, p.weight] for p in record.pending],
            }
        return out

    return record_to_dict


def _record_texts(
    writer: ReportWriter, record_to_dict: Callable[[PlayerRecord], dict[str, Any]]
) -> Callable[[PlayerRecord], tuple[str, str | None, str | None, str | None]]:
    """:attr:`Codec.record_texts`: a record's skill, rank, time and open-period texts; a
    state that is not a finite number is the plugin's error, naming the player."""
    skill_text, rank_text = writer.skill_text, writer.rank_text

    def record_texts(record: PlayerRecord) -> tuple[str, str | None, str | None, str | None]:
        last, rank = record.last_played, record.rank
        open_ = None
        try:
            if record.period is not None or record.pending:
                open_ = compact_json(record_to_dict(record)["open"])
            return (
                skill_text(record.skill),
                None if rank is None else rank_text(rank),
                None if last is None else format_time(last),
                open_,
            )
        except ValueError as exc:  # (JSON refuses NaN and infinity)
            raise PluginError(
                f"player {record.id!r}: a plugin gave a state that is not a finite number "
                f"({exc}): {record.skill!r}"
            ) from None

    return record_texts


def _entry_row(packer: ReportPacker) -> Callable[..., tuple[str, bytes]]:
    """:attr:`Codec.entry_row`: a rated match's text and packed report; a state or factor
    that is not a finite number is the plugin's error, naming the match."""

    def entry_row(entry: Rated, with_text: bool = True) -> tuple[str, bytes]:
        try:
            return (match_text(entry.match) if with_text else ""), packer.pack(entry)
        except ValueError as exc:  # (JSON refuses NaN and infinity)
            raise PluginError(
                f"match {entry.match.id!r}: a plugin gave a state or a factor that is not a "
                f"finite number ({exc})"
            ) from None

    return entry_row


def league_codec(steps: Steps, display: Display, mode: str) -> Codec:
    """The codec of a league (:func:`make_codec`): its steps' state classes, with the
    leaderboard's key (:func:`rankcraft.boards.leaderboard_key`) and tiers, and its
    period ``mode``."""
    return make_codec(
        ReportWriter(steps.skill_names, steps.rank_names),
        steps.skill_class,
        steps.rank_class,
        steps.initial_rank,
        sort_key=leaderboard_key(display),
        tier=tier_function(steps),
        mode=mode,
        verify=steps.verify,
        period_of=None if mode == "match" else steps.ruleset.period.index,
    )
