"""The state documents of a league: player records and reports as JSON-ready dicts, the
export document, and their validation when they come back in (docs/design.md).

:func:`make_codec` builds, for one ruleset's state classes, the :class:`Codec` that
stores on disk and the export use; :class:`Documents` writes a league's export document
and loads one's players into it, validated by :func:`parse_export`
(:meth:`rankcraft.League.export`, :meth:`rankcraft.League.import_state`).
"""

from __future__ import annotations

import json
import math
import warnings
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

import attrs
import cattrs

from .boards import leaderboard_key, tier_function
from .errors import MatchError, PluginError, RulesetError, StateError
from .io import MAX_FUTURE, parse_time, past_the_clock
from .model import (
    Match,
    Pairing,
    PlayerChange,
    PlayerRecord,
    Report,
    State,
    field_of_role,
    format_time,
    shifted,
)
from .rated import PACKED, Rated, ReportPacker, ReportWriter, compact_json, match_text
from .ruleset import (
    Display,
    ImportedRulesetWarning,
    Ruleset,
    converter,
    differences,
    dumps,
    format_exception,
    loads_stored_ruleset,
)
from .store.base import Codec

if TYPE_CHECKING:
    from .seasons import Seasons
    from .steps import Steps
    from .unit import UnitOfWork

__all__ = ["Documents", "imported_ruleset", "league_codec", "make_codec", "parse_export"]

_CLOCK = "this machine's clock"


def _check_finite(value: Any, path: str) -> None:
    if isinstance(value, float):
        if not math.isfinite(value):
            raise StateError(f"{path} must be a finite number: {value!r}")
    elif isinstance(value, list | tuple):
        for i, item in enumerate(value):
            _check_finite(item, f"{path}[{i}]")


def _unknown_keys(data: Mapping[str, Any], allowed: set[str], path: str) -> None:
    extra = set(data) - allowed
    if extra:
        raise StateError(f"{path}: unknown key(s) {', '.join(map(repr, sorted(extra)))}")


def _missing_fields(data: Mapping[str, Any], cls: type, path: str) -> None:
    """Refuse a state that leaves out a field of its class: an import takes a state as
    it is written, and a default there (Elo's ``peak`` from the rating) would invent one."""
    missing = [f.name for f in attrs.fields(cls) if f.init and f.name not in data]
    if missing:
        raise StateError(
            f"{path}: {', '.join(map(repr, missing))} {'is' if len(missing) == 1 else 'are'} "
            "missing (an imported state gives every field of the ruleset's state)"
        )


class _States:
    """Structures and checks the states of one ruleset's classes.

    ``complete``: every state must give every field of its class, and an open period its
    ``period`` and ``pending`` (and, with results pending, the period they belong to and,
    in ``live`` ``mode``, the ``base`` they are rated from): an import; the store's own
    records, written by an older version, may leave out a field added since, whose default
    then applies."""

    def __init__(
        self,
        skill_class: type,
        rank_class: type | None,
        initial_rank: Callable[[], State] | None,
        *,
        complete: bool = False,
        mode: str = "match",
    ) -> None:
        self.skill_class = skill_class
        self.rank_class = rank_class
        self.initial_rank = initial_rank
        self.location = field_of_role(skill_class, "location")
        self.complete = complete
        self.mode = mode  # the ruleset's period mode

    def state(self, data: Any, cls: type, path: str) -> State:
        if not isinstance(data, Mapping):
            raise StateError(f"{path} must be an object: {data!r}")
        try:
            state: State = converter.structure(dict(data), cls)
        except cattrs.BaseValidationError as exc:
            lines = cattrs.transform_error(exc, path=path, format_exception=format_exception)
            raise StateError("; ".join(lines)) from None
        except (TypeError, ValueError) as exc:
            raise StateError(f"{path}: {exc}") from None
        for field in cls.__attrs_attrs__:  # type: ignore[attr-defined]
            _check_finite(getattr(state, field.name), f"{path}.{field.name}")
        if self.complete:
            _missing_fields(data, cls, path)
        return state

    def record(self, data: Any, path: str) -> PlayerRecord:
        if not isinstance(data, Mapping):
            raise StateError(f"{path} must be an object: {data!r}")
        _unknown_keys(data, {"id", "skill", "rank", "matches", "last_played", "open"}, path)
        pid = data.get("id")
        if not isinstance(pid, str) or not pid:
            raise StateError(f"{path}.id must be a non-empty string: {pid!r}")
        path = f"{path} {pid!r}"
        if "skill" not in data:
            raise StateError(f"{path}: 'skill' is missing")
        skill = self.state(data["skill"], self.skill_class, f"{path}.skill")
        rank = None
        if self.rank_class is not None:
            raw_rank = data.get("rank")
            rank = (
                self.initial_rank()
                if raw_rank is None and self.initial_rank is not None
                else self.state(raw_rank, self.rank_class, f"{path}.rank")
            )
        matches = data.get("matches", 0)
        if type(matches) is not int or matches < 0:
            raise StateError(f"{path}.matches must be a whole number >= 0: {matches!r}")
        last = data.get("last_played")
        last_played = None
        if last is not None:
            try:
                last_played = parse_time(last, field="last_played")
            except MatchError as exc:
                raise StateError(f"{path}: {exc.reason}") from None
        extra: dict[str, Any] = {}
        if data.get("open") is not None:
            extra = self.open_period(data["open"], f"{path}.open", skill)
            if extra["period_matches"] > matches:
                raise StateError(
                    f"{path}.open.period_matches exceeds matches: "
                    f"{extra['period_matches']} > {matches}"
                )
        return PlayerRecord(
            id=pid, skill=skill, rank=rank, matches=matches, last_played=last_played, **extra
        )

    def open_period(self, data: Any, path: str, own: State) -> dict[str, Any]:
        if not isinstance(data, Mapping):
            raise StateError(f"{path} must be an object: {data!r}")
        _unknown_keys(data, {"period", "period_matches", "base", "pending"}, path)
        if self.complete:  # (an import invents no open period)
            missing = [k for k in ("period", "pending") if k not in data]
            if missing:
                raise StateError(
                    f"{path}: {', '.join(map(repr, missing))} "
                    f"{'is' if len(missing) == 1 else 'are'} missing (an imported open period "
                    "gives 'period' and 'pending'; null or [] where there is none)"
                )
        period = data.get("period")
        if period is not None and type(period) is not int:
            raise StateError(f"{path}.period must be a whole number or null: {period!r}")
        count = data.get("period_matches", 0)
        if type(count) is not int or count < 0:
            raise StateError(f"{path}.period_matches must be a whole number >= 0: {count!r}")
        pending_raw = data.get("pending", [])
        if not isinstance(pending_raw, list):
            raise StateError(f"{path}.pending must be a list: {pending_raw!r}")
        base = data.get("base")
        if self.complete and pending_raw and self.mode != "match":
            if period is None:
                raise StateError(
                    f"{path}.period is null while results are pending: in {self.mode} mode "
                    "they belong to a period, rated when it closes"
                )
            if self.mode == "live" and base is None:
                raise StateError(
                    f"{path}.base is null or missing while results are pending: a live "
                    "period is rated again from its start, the skill 'base' gives"
                )
        return {
            "period": period,
            "period_matches": count,
            "base": None if base is None else self.state(base, self.skill_class, f"{path}.base"),
            "pending": tuple(
                self.pairing(item, f"{path}.pending[{k}]", own)
                for k, item in enumerate(pending_raw)
            ),
        }

    def pairing(self, item: Any, where: str, own: State) -> Pairing:
        if not isinstance(item, list) or len(item) != 3:
            raise StateError(f"{where} must be [opponent, score, weight]: {item!r}")
        opponent = self.opponent(item[0], f"{where}[0]", own)
        for name, value in (("score", item[1]), ("weight", item[2])):
            if (
                isinstance(value, bool)
                or not isinstance(value, int | float)
                or not math.isfinite(value)
                or not 0.0 <= value <= 1.0
            ):
                raise StateError(f"{where}: {name} must be a number in [0, 1]: {value!r}")
        return Pairing(opponent, float(item[1]), float(item[2]))

    def opponent(self, data: Any, path: str, own: State) -> State:
        """A pending pairing's opponent: a skill state, whose location alone may lie past
        the range a stored state holds (a team's shifted opponent,
        :func:`rankcraft.model.shifted`): the rest checked as a state, with the player's
        own location in its place, then that field set; any other fault is the state's
        error."""
        try:
            return self.state(data, self.skill_class, path)
        except StateError:
            location = self.location
            value = data.get(location) if isinstance(data, Mapping) and location else None
            if (
                location is None
                or isinstance(value, bool)
                or not isinstance(value, int | float)
                or not math.isfinite(value)
            ):
                raise
            inside = {**data, location: getattr(own, location)}
            return shifted(self.state(inside, self.skill_class, path), location, float(value))

    def report(self, data: Mapping[str, Any]) -> Report:
        """A report from the dict the writer's text decodes to (trusted: the store's own)."""
        structure = converter.structure
        skill, rank = self.skill_class, self.rank_class
        changes = []
        for c in data["changes"]:
            before: State = structure(c["skill_before"], skill)
            with_rank = "rank_after" in c and rank is not None
            rank_class: Any = rank
            changes.append(
                PlayerChange(
                    player=c["player"],
                    side=c["side"],
                    skill_before=before,
                    skill_used=structure(c["skill_used"], skill) if "skill_used" in c else before,
                    skill_after=structure(c["skill_after"], skill),
                    rank_before=structure(c["rank_before"], rank_class) if with_rank else None,
                    rank_after=structure(c["rank_after"], rank_class) if with_rank else None,
                    factors=c.get("factors", {}),
                )
            )
        return Report(
            match_id=data["match_id"],
            played_at=parse_time(data["played_at"]),
            expected=tuple(data["expected"]),
            changes=tuple(changes),
        )


def make_codec(
    writer: ReportWriter,
    skill_class: type,
    rank_class: type | None,
    initial_rank: Callable[[], State] | None,
    *,
    sort_key: tuple[str, Callable[[PlayerRecord], float]] = ("id", lambda record: 0.0),
    tier: Callable[[PlayerRecord], str | None] = lambda record: None,
    mode: str = "match",
) -> Codec:
    """The codec of a ruleset's state classes: records and reports to dicts and back.

    ``sort_key``: (its name, the leaderboard's key of a record); ``tier``: a record's tier
    or None (what a store on disk keeps in indexed columns); ``mode``: the ruleset's
    period mode (an import's open periods are checked for it)."""
    states = _States(skill_class, rank_class, initial_rank)
    imported = _States(skill_class, rank_class, initial_rank, complete=True, mode=mode)
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


def _entry_row(packer: ReportPacker) -> Callable[[Rated], tuple[str, bytes]]:
    """:attr:`Codec.entry_row`: a rated match's text and packed report; a state or factor
    that is not a finite number is the plugin's error, naming the match."""

    def entry_row(entry: Rated) -> tuple[str, bytes]:
        try:
            return match_text(entry.match), packer.pack(entry)
        except ValueError as exc:  # (JSON refuses NaN and infinity)
            raise PluginError(
                f"match {entry.match.id!r}: a plugin gave a state or a factor that is not a "
                f"finite number ({exc})"
            ) from None

    return entry_row


def parse_export(
    document: Any, ruleset_name: str, codec: Codec, *, max_future: float | None = MAX_FUTURE
) -> list[PlayerRecord]:
    """The records of an export document, validated for a league of ``ruleset_name``:
    every state whole (no field left to a default), and no ``last_played`` more than
    ``max_future`` seconds past this machine's clock (None: no bound).

    :raises StateError: naming the key, the player and the value that do not fit.
    """
    if not isinstance(document, Mapping):
        raise StateError(f"a state document must be an object, got {type(document).__name__}")
    extra = set(document) - {"ruleset", "rankcraft", "ruleset_toml", "schedule", "players"}
    if extra:
        raise StateError(
            f"unknown key(s) {', '.join(map(repr, sorted(extra)))} in the state document"
        )
    toml = document.get("ruleset_toml")
    if toml is not None and not isinstance(toml, str):
        raise StateError(f"'ruleset_toml' must be the ruleset's TOML text: {toml!r}"[:300])
    name = document.get("ruleset")
    if name is not None and name != ruleset_name:
        raise StateError(
            f"the document was exported with ruleset {name!r}; this league uses {ruleset_name!r}"
        )
    rows = document.get("players")
    if not isinstance(rows, list):
        raise StateError(f"'players' must be a list: {rows!r}")
    records = [codec.parse_record(row, f"players[{i}]") for i, row in enumerate(rows)]
    for i, record in enumerate(records):
        late = None
        if record.last_played is not None and max_future is not None:
            late = past_the_clock(record.last_played, max_future, "last_played", _CLOCK)
        if late is not None:
            raise StateError(f"players[{i}] {record.id!r}: {late}")
    ids = [r.id for r in records]
    if len(set(ids)) != len(ids):
        twice = next(p for p in ids if ids.count(p) > 1)
        raise StateError(f"player {twice!r} appears twice in 'players'")
    return records


def imported_ruleset(document: Mapping[str, Any], ruleset: Ruleset, plugins: Any) -> list[str]:
    """How the ruleset a state document carries (``ruleset_toml``) differs from
    ``ruleset``, the importing league's (:func:`rankcraft.ruleset.differences`); empty
    when it rates alike or the document carries none. The text is validated as any
    stored ruleset is (:func:`rankcraft.ruleset.loads_stored_ruleset`).

    :raises StateError: the text is not a valid ruleset (naming ``ruleset_toml``).
    """
    toml = document.get("ruleset_toml")
    if not isinstance(toml, str):
        return []  # (absent; another type is refused by parse_export)
    try:
        theirs = loads_stored_ruleset(toml, source="'ruleset_toml'", plugins=plugins, dropped=[])
    except RulesetError as exc:
        raise StateError(f"'ruleset_toml' is not a valid ruleset: {exc}") from None
    return differences(theirs, ruleset)


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
    )


class Documents:
    """The state documents of one league: its export, and the import of one.

    :param ruleset: the league's ruleset. :param plugins: its plugin facade (a
        document's ruleset is loaded with it). :param codec: its codec. :param seasons:
        its season schedule. :param unit: its unit of work.
    """

    def __init__(
        self, ruleset: Ruleset, plugins: Any, codec: Codec, seasons: Seasons, unit: UnitOfWork
    ) -> None:
        self.ruleset = ruleset
        self.plugins = plugins
        self.codec = codec
        self.seasons = seasons
        self.unit = unit

    def export(self, version: str, records: Iterable[PlayerRecord]) -> dict[str, Any]:
        """The state document (docs/design.md): every player's state (``records``, ordered by
        id), with the ruleset's TOML and the season schedule, so that importing it into a new
        database needs nothing else and continues as the league would; ``version``: the
        rankcraft that writes it."""
        ruleset, seasons = self.ruleset, self.seasons
        to_dict = self.codec.record_to_dict
        document: dict[str, Any] = {
            "ruleset": ruleset.name,
            "rankcraft": version,
            "ruleset_toml": dumps(ruleset),
        }
        if seasons.events:
            document["schedule"] = seasons.to_texts()
        document["players"] = [to_dict(r) for r in records]
        return document

    def import_state(
        self,
        document: Mapping[str, Any],
        accept_ruleset: bool = False,
        max_future: float | None = MAX_FUTURE,
    ) -> int:
        """Load players from an export document (all of them, or none on any error).

        Players in the document replace records of the same id; its ``schedule`` (when
        each season event runs next) replaces the league's. Every state must be whole
        (no field is invented), and the document's ``ruleset_toml``, when given, must be
        a valid ruleset that rates as the league's does.

        :param accept_ruleset: import from a document whose ``ruleset_toml`` rates
            otherwise (``rankcraft import --accept-ruleset``), with an
            :class:`~rankcraft.ruleset.ImportedRulesetWarning` naming the differences.
        :param max_future: the most seconds a ``last_played`` may lie past this
            machine's clock (default 86400, as the service's ``--max-future``; None: no
            bound, for a history of made-up dates).
        :returns: the number of players imported.
        :raises StateError: the document does not fit this league's ruleset.
        """
        ruleset, seasons, unit = self.ruleset, self.seasons, self.unit
        records = parse_export(document, ruleset.name, self.codec, max_future=max_future)
        differ = imported_ruleset(document, ruleset, self.plugins)
        if differ:
            shown = "; ".join(differ[:4]) + (f"; and {len(differ) - 4} more" if differ[4:] else "")
            text = (
                f"the document's ruleset ('ruleset_toml') rates otherwise than the league's "
                f"{ruleset.name!r}: {shown}"
            )
            if not accept_ruleset:
                raise StateError(
                    f"{text}; --accept-ruleset (accept_ruleset=True) imports its players anyway"
                )
            # (stacklevel 3: the caller of League.import_state)
            warnings.warn(ImportedRulesetWarning(f"{text}; imported as asked"), stacklevel=3)
        with unit.transaction():
            if seasons.events:
                lasts = [r.last_played for r in records if r.last_played is not None]
                seasons.imported(max(lasts, default=None))
            if document.get("schedule") is not None:
                seasons.adopt(document["schedule"])
            for record in records:
                unit.put_record(record)
        return len(records)
