"""The validation of state documents coming in: an export's players (an import), a
stored record, a report read back. Every field is checked against the ruleset's state
classes, and an error names the document's path and the value (docs/design.md, the
state document). :func:`parse_export` checks a whole export document;
:func:`imported_ruleset` compares its ruleset with the league's."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any

import attrs
import cattrs

from .errors import MatchError, RulesetError, StateError
from .io import MAX_FUTURE, parse_match, parse_time, past_the_clock
from .model import (
    Match,
    Pairing,
    PlayerChange,
    PlayerRecord,
    Report,
    State,
    field_of_role,
    shifted,
)
from .ruleset import (
    Ruleset,
    converter,
    differences,
    format_exception,
    loads_stored_ruleset,
)
from .store.base import Codec

if TYPE_CHECKING:
    pass

__all__ = ["StateReader", "imported_ruleset", "parse_export"]

_CLOCK = "this machine's clock"
MAX_COUNT = 2**31 - 1
"""The most matches a record counts (a store's integer column holds it everywhere)."""


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


class StateReader:
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
        verify: Callable[[str, State], str | None] | None = None,
        period_of: Callable[[datetime], int] | None = None,
    ) -> None:
        self.skill_class = skill_class
        self.rank_class = rank_class
        self.initial_rank = initial_rank
        self.location = field_of_role(skill_class, "location")
        self.complete = complete
        self.mode = mode  # the ruleset's period mode
        # (an import's: the owning plugins' check of a state, and a time's rating period)
        self.verify = verify
        self.period_of = period_of

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
        if type(matches) is not int or not 0 <= matches <= MAX_COUNT:
            raise StateError(
                f"{path}.matches must be a whole number in [0, {MAX_COUNT}]: {matches!r}"[:300]
            )
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
        if self.complete:
            self._agree(path, skill, rank, data, matches, last_played, extra)
        return PlayerRecord(
            id=pid, skill=skill, rank=rank, matches=matches, last_played=last_played, **extra
        )

    def _agree(
        self,
        path: str,
        skill: State,
        rank: State,
        data: Mapping[str, Any],
        matches: int,
        last_played: datetime | None,
        extra: Mapping[str, Any],
    ) -> None:
        """Refuse an imported record whose derived fields disagree with what they derive
        from: the states' (their plugins say, ``rankcraft_verify``), a rank left to the
        initial one for a player who has played, an open period that is not the period
        of the player's last match."""
        if self.rank_class is not None and data.get("rank") is None and matches > 0:
            raise StateError(
                f"{path}.rank is null or missing for a player of {matches} matches: only a "
                "player without matches starts at the initial rank"
            )
        if self.verify is not None:
            for part, state in (("skill", skill), ("rank", rank)):
                said = None if state is None else self.verify(part, state)
                if said is not None:
                    raise StateError(f"{path}.{part}: {said}")
        period = extra.get("period")
        if period is not None and self.period_of is not None:
            expected = None if last_played is None else self.period_of(last_played)
            if period != expected:
                raise StateError(
                    f"{path}.open.period must be the rating period of 'last_played' "
                    f"({expected!r}): {period!r}"[:300]
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
        if type(count) is not int or not 0 <= count <= MAX_COUNT:
            raise StateError(
                f"{path}.period_matches must be a whole number in [0, {MAX_COUNT}]: {count!r}"[:300]
            )
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
    extra = set(document) - {
        "ruleset",
        "rankcraft",
        "ruleset_toml",
        "schedule",
        "players",
        "history",
    }
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


def fit_history(document: Mapping[str, Any], fitted: bool) -> list[Match]:
    """The matches of a document's ``history`` (what a league with a whole-history model
    exports, its fit being built from them), validated; ``fitted``: the importing league
    has such a model (it then needs them when the document has players).

    :raises StateError: naming the match that is not valid, or the missing key."""
    rows = document.get("history")
    if rows is None:
        if fitted and document.get("players"):
            raise StateError(
                "this league's ruleset fits the whole history (a [fit] slot): the document "
                "must bring it ('history', as such a league exports it)"
            )
        return []
    if not isinstance(rows, list):
        raise StateError(f"'history' must be a list of matches: {rows!r}"[:300])
    out = []
    for i, row in enumerate(rows):
        try:
            out.append(parse_match(row))
        except MatchError as exc:
            raise StateError(f"history[{i}]: {exc}") from None
    return out if fitted else []
