"""The league: rates matches through the ruleset's plugins and keeps the results.

The steps per match (DESIGN §4): validate, load, decay, aggregate and expect, pair,
update, project, commit. Each slot's hook implementation is resolved once, when the
league is built; the per-match loop calls plain functions.

>>> import rankcraft
>>> league = rankcraft.League("elo")
>>> report = league.record({"id": "m1", "played_at": "2024-05-01T20:00:00Z",
...                         "teams": [["alice"], ["bob"]], "scores": [1, 0]})
>>> report.expected
(0.5, 0.5)
>>> league.player("alice").skill.rating, league.player("bob").skill.rating
(1516.0, 1484.0)
"""

from __future__ import annotations

import gc
import itertools
import json
import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import attrs
import cattrs

from .errors import (
    DuplicateMatchError,
    InputError,
    LateMatchError,
    LeagueMismatchError,
    MatchError,
    PluginError,
    RulesetError,
    StateError,
)
from .fast import FastPath, packer, solo_side
from .io import parse_match, parse_time
from .manager import Plugins
from .model import (
    Match,
    Pairing,
    PlayerChange,
    PlayerContext,
    PlayerRecord,
    Report,
    ResetContext,
    State,
    field_of_role,
    format_time,
    pair_score,
)
from .ruleset import Ruleset, converter, dumps, format_exception, load_ruleset, loads_ruleset
from .store import (
    Codec,
    Entry,
    MatchRow,
    MemoryStore,
    Recorded,
    Store,
    open_store,
)

_FLUSH_EVERY = 2000
"""Matches kept in memory before they are written into the open transaction."""
_SETTLE_AT = 20_000  # players the fused path holds as tuples before it writes them out
_CHUNK = 2000  # record_many reads this many matches ahead, to ask the store which it has


class UnknownPlayerError(InputError, KeyError):
    """A player id the league has never seen."""

    def __str__(self) -> str:
        return str(self.args[0])


@attrs.frozen(kw_only=True)
class RecordSummary:
    """What :meth:`League.record_many` did.

    Attributes:
        recorded: matches rated and stored. skipped: repeated ids passed over
        (``skip_seen``). last: the report of the last match recorded, or None.
    """

    recorded: int
    skipped: int
    last: Report | None = None


def _state_names(cls: type) -> tuple[str, ...]:
    return tuple(f.name for f in attrs.fields(cls))


def _id_of(item: Any) -> str | None:
    """The id of a match or match dict handed to record_many, when it has a valid one."""
    mid = item.get("id") if type(item) is dict else getattr(item, "id", None)
    return mid if type(mid) is str else None


def _check_finite(value: Any, path: str) -> None:
    if isinstance(value, float):
        if not math.isfinite(value):
            raise StateError(f"{path} must be a finite number: {value!r}")
    elif isinstance(value, list | tuple):
        for i, item in enumerate(value):
            _check_finite(item, f"{path}[{i}]")


class League:
    """A set of players rated by one ruleset, with a store that keeps them.

    :param ruleset: a :class:`Ruleset`, a bundled ruleset name or a ruleset file path.
    :param store: where to keep the league (default: in memory).
    :param plugins: the plugin facade (default: the one the ruleset was loaded with).
    :param fast: let :meth:`record_many` rate plain 1-v-1 matches on the fused path when
        the ruleset's plugins offer kernels (default true; false rates every match through
        the ordinary hooks, the reference the fused path is tested against).
    :raises LeagueMismatchError: the store was created with another ruleset.
    """

    def __init__(
        self,
        ruleset: Ruleset | str | Path = "elo",
        *,
        store: Store | None = None,
        plugins: Plugins | None = None,
        fast: bool = True,
    ) -> None:
        self._fast_enabled = fast
        if not isinstance(ruleset, Ruleset):
            ruleset = load_ruleset(ruleset, plugins=plugins)
        self.ruleset = ruleset
        self.plugins = plugins if plugins is not None else ruleset.plugins
        self.store: Store = store if store is not None else MemoryStore()
        self._compile()
        stored = self.store.attach(ruleset.name, dumps(ruleset), self.codec)
        if stored is not None:
            self._check_same_ruleset(stored)
        self._players: dict[str, PlayerRecord] = self.store.load_players()
        # ids recorded in the open batch and not yet written to the store, plus those of
        # the chunk being read that the store already has: the league never holds every
        # id in memory (the store answers `recorded`), so memory does not grow with matches
        self._seen: set[str] = set()
        self._next_resets = self._load_schedule()
        self._schedule_dirty = False
        self._generation = self.store.generation()
        # a store whose writers run in parallel (PostgreSQL) locks single players:
        # record() then takes the one-match path
        self._row_locks = bool(getattr(self.store, "parallel_writers", False))
        self._in_batch = False
        self._undo: dict[str, PlayerRecord | None] = {}
        self._dirty: set[str] = set()
        self._pending: list[Entry] = []

    @classmethod
    def open(
        cls,
        path: str | Path,
        ruleset: Ruleset | str | Path | None = None,
        *,
        plugins: Plugins | None = None,
        create: bool = True,
        fast: bool = True,
    ) -> League:
        """Open (or create) a league kept in an SQLite file or a PostgreSQL database.

        :param path: the database file, or ``postgresql://user@host/dbname[?schema=NAME]``.
        :param ruleset: required for a new database; for an existing one it must be the
            ruleset the database was created with (None: use that one).
        :param create: create the file when missing (False: refuse).
        :param fast: as for :class:`League`.
        """
        if ruleset is not None and not isinstance(ruleset, Ruleset):
            ruleset = load_ruleset(ruleset, plugins=plugins)
        store = open_store(path, create=create)
        try:
            stored = store.stored_ruleset()
            if ruleset is None:
                if stored is None:
                    raise InputError(
                        f"{str(path)!r} is a new database: give a ruleset (e.g. --ruleset elo)"
                    )
                ruleset = loads_ruleset(
                    stored[1], source=f"the ruleset stored in {str(path)!r}", plugins=plugins
                )
            return cls(ruleset, store=store, plugins=plugins, fast=fast)
        except BaseException:
            store.close()
            raise

    def _check_same_ruleset(self, stored: tuple[str, str]) -> None:
        name, text = stored
        try:
            theirs = loads_ruleset(text, source="stored ruleset", plugins=self.plugins)
        except RulesetError as exc:
            raise LeagueMismatchError(
                f"the store was created with ruleset {name!r}, which no longer loads: {exc}"
            ) from None
        # a description is for people: editing it does not change the ruleset's meaning
        if attrs.evolve(theirs, description=self.ruleset.description) != self.ruleset:
            detail = (
                "same name, different parameters"
                if name == self.ruleset.name
                else "a different ruleset"
            )
            raise LeagueMismatchError(
                f"the store was created with ruleset {name!r}; it cannot be used with ruleset "
                f"{self.ruleset.name!r} ({detail}); omit the ruleset to use {name!r}"
            )

    # -- resolution (once per league) ---------------------------------------------------

    def _compile(self) -> None:
        rs = self.ruleset
        pl = self.plugins
        initial = rs.slot("initial")
        update = rs.slot("update")
        expectation = rs.slot("expectation")
        decay = rs.slot("decay")
        assert initial and update and expectation and decay
        self._initial_skill = pl.initial(initial.plugin, "initial", initial.params)
        self.skill_class: type = type(self._initial_skill())
        self._update = pl.update(update.plugin, update.params)
        self._expect = pl.expectation(expectation.plugin, expectation.params)
        self._decay: Callable[[State, float], State] | None = None
        if rs.decay is not None or pl.implements(decay.plugin, "rankcraft_decay"):
            self._decay = pl.decay(decay.plugin, decay.params)
        # a season event grows uncertainty with the skill plugin's own decay, even when the
        # ruleset's [decay] slot turns match-time decay off (Skyweaver: the weekly reset does)
        self._skill_decay: Callable[[State, float], State] | None = None
        if pl.implements(update.plugin, "rankcraft_decay"):
            self._skill_decay = pl.decay(update.plugin, update.params)
        self._team = pl.team(rs.team.plugin, rs.team.params)
        self._aggregate = pl.aggregate(rs.team.plugin, rs.team.params)
        self._rank: Callable[[State, State, State, PlayerContext], State] | None = None
        self._initial_rank: Callable[[], State] | None = None
        self.rank_class: type | None = None
        if rs.rank is not None:
            self._rank = pl.rank(rs.rank.plugin, rs.rank.params)
            self._initial_rank = pl.initial(rs.rank.plugin, "rank", rs.rank.params)
            self.rank_class = type(self._initial_rank())
        self._reset = pl.reset(rs.reset.plugin, rs.reset.params) if rs.reset is not None else None
        self._standings: Callable[[Sequence[PlayerRecord]], Mapping[str, str]] | None = None
        for spec in (rs.rank, update):
            if spec is not None and pl.implements(spec.plugin, "rankcraft_standings"):
                self._standings = pl.standings(spec.plugin, spec.params)
                break
        self._sort_field = (
            field_of_role(self.rank_class, "location") if self.rank_class is not None else None
        )
        self._sort_on_rank = self._sort_field is not None
        if self._sort_field is None:
            self._sort_field = field_of_role(self.skill_class, "location")
        self._skill_names = _state_names(self.skill_class)
        self._rank_names = _state_names(self.rank_class) if self.rank_class is not None else ()
        self.codec = self._make_codec()
        self._fast = self._fast_path()
        # batch mode: the update plugin may rate a whole period in arrays (close_period)
        self._period_kernel: Callable[..., list[tuple[Any, ...]]] | None = None
        if rs.period.mode == "batch" and rs.rank is None:
            self._period_kernel = pl.kernel(
                update.plugin, "period", update.params, self._skill_names
            )

    def _fast_path(self) -> FastPath | None:
        """The fused 1-v-1 path, when every slot of the ruleset offers a kernel."""
        rs = self.ruleset
        pl = self.plugins
        if rs.period.mode != "match" or rs.reset is not None or rs.resets:
            return None
        update = rs.slot("update")
        expectation = rs.slot("expectation")
        decay = rs.slot("decay")
        assert update and expectation and decay
        if pl.kernel(rs.team.plugin, "team", rs.team.params) is not solo_side:
            return None
        update_kernel = pl.kernel(update.plugin, "update", update.params)
        expect_kernel = pl.kernel(expectation.plugin, "expectation", expectation.params)
        if update_kernel is None or expect_kernel is None:
            return None
        decay_kernel = None
        if self._decay is not None:
            decay_kernel = pl.kernel(decay.plugin, "decay", decay.params)
            if decay_kernel is None:
                return None
        rank_kernel = None
        if rs.rank is not None:
            rank_kernel = pl.kernel(rs.rank.plugin, "rank", rs.rank.params, self._skill_names)
            if rank_kernel is None:
                return None
        return FastPath(
            self,
            decay_kernel,
            expect_kernel,
            update_kernel,
            rank_kernel,
            self._skill_names,
            self._rank_names,
        )

    def _make_codec(self) -> Codec:
        skill_names = self._skill_names
        rank_names = self._rank_names
        skill_class, rank_class = self.skill_class, self.rank_class

        def skill_dict(state: State) -> dict[str, Any]:
            return {n: getattr(state, n) for n in skill_names}

        def rank_dict(state: State | None) -> dict[str, Any] | None:
            return None if state is None else {n: getattr(state, n) for n in rank_names}

        def record_to_dict(record: PlayerRecord) -> dict[str, Any]:
            out = {
                "id": record.id,
                "skill": skill_dict(record.skill),
                "rank": rank_dict(record.rank),
                "matches": record.matches,
                "last_played": None
                if record.last_played is None
                else format_time(record.last_played),
            }
            if record.period is not None or record.pending:
                out["open"] = {
                    "period": record.period,
                    "period_matches": record.period_matches,
                    "base": None if record.base is None else skill_dict(record.base),
                    "pending": [
                        [skill_dict(p.opponent), p.score, p.weight] for p in record.pending
                    ],
                }
            return out

        def record_from_dict(data: Mapping[str, Any]) -> PlayerRecord:
            return self._record_from_dict(data, "player")

        def report_to_dict(report: Report) -> dict[str, Any]:
            changes = []
            for c in report.changes:
                entry: dict[str, Any] = {
                    "player": c.player,
                    "side": c.side,
                    "skill_before": skill_dict(c.skill_before),
                    "skill_after": skill_dict(c.skill_after),
                }
                if c.skill_used is not c.skill_before:
                    entry["skill_used"] = skill_dict(c.skill_used)
                if c.rank_after is not None:
                    entry["rank_before"] = rank_dict(c.rank_before)
                    entry["rank_after"] = rank_dict(c.rank_after)
                if c.factors:
                    entry["factors"] = dict(c.factors)
                changes.append(entry)
            return {
                "match_id": report.match_id,
                "played_at": format_time(report.played_at),
                "expected": list(report.expected),
                "changes": changes,
            }

        def report_from_dict(data: Mapping[str, Any]) -> Report:
            structure = converter.structure
            changes = []
            for c in data["changes"]:
                before: State = structure(c["skill_before"], skill_class)
                rank_before: State | None = None
                rank_after: State | None = None
                if "rank_after" in c and rank_class is not None:
                    rank_before = structure(c["rank_before"], rank_class)
                    rank_after = structure(c["rank_after"], rank_class)
                changes.append(
                    PlayerChange(
                        player=c["player"],
                        side=c["side"],
                        skill_before=before,
                        skill_used=structure(c["skill_used"], skill_class)
                        if "skill_used" in c
                        else before,
                        skill_after=structure(c["skill_after"], skill_class),
                        rank_before=rank_before,
                        rank_after=rank_after,
                        factors=c.get("factors", {}),
                    )
                )
            return Report(
                match_id=data["match_id"],
                played_at=parse_time(data["played_at"]),
                expected=tuple(data["expected"]),
                changes=tuple(changes),
            )

        return Codec(
            record_to_dict=record_to_dict,
            record_from_dict=record_from_dict,
            report_to_dict=report_to_dict,
            report_from_dict=report_from_dict,
        )

    def _structure_state(self, data: Any, cls: type, path: str) -> State:
        if not isinstance(data, Mapping):
            raise StateError(f"{path} must be an object: {data!r}")
        try:
            state: State = converter.structure(dict(data), cls)
        except cattrs.BaseValidationError as exc:
            lines = cattrs.transform_error(exc, path=path, format_exception=format_exception)
            raise StateError("; ".join(lines)) from None
        except (TypeError, ValueError) as exc:
            raise StateError(f"{path}: {exc}") from None
        for name in _state_names(cls):
            _check_finite(getattr(state, name), f"{path}.{name}")
        return state

    def _record_from_dict(self, data: Mapping[str, Any], path: str) -> PlayerRecord:
        if not isinstance(data, Mapping):
            raise StateError(f"{path} must be an object: {data!r}")
        extra = set(data) - {"id", "skill", "rank", "matches", "last_played", "open"}
        if extra:
            raise StateError(f"{path}: unknown key(s) {', '.join(map(repr, sorted(extra)))}")
        pid = data.get("id")
        if not isinstance(pid, str) or not pid:
            raise StateError(f"{path}.id must be a non-empty string: {pid!r}")
        path = f"{path} {pid!r}"
        if "skill" not in data:
            raise StateError(f"{path}: 'skill' is missing")
        skill = self._structure_state(data["skill"], self.skill_class, f"{path}.skill")
        rank = None
        if self.rank_class is not None:
            raw_rank = data.get("rank")
            rank = (
                self._initial_rank()
                if raw_rank is None and self._initial_rank is not None
                else self._structure_state(raw_rank, self.rank_class, f"{path}.rank")
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
        open_ = data.get("open")
        extra_fields: dict[str, Any] = {}
        if open_ is not None:
            extra_fields = self._open_from_dict(open_, f"{path}.open")
            if extra_fields["period_matches"] > matches:
                raise StateError(
                    f"{path}.open.period_matches exceeds matches: "
                    f"{extra_fields['period_matches']} > {matches}"
                )
        return PlayerRecord(
            id=pid, skill=skill, rank=rank, matches=matches, last_played=last_played, **extra_fields
        )

    def _open_from_dict(self, data: Any, path: str) -> dict[str, Any]:
        if not isinstance(data, Mapping):
            raise StateError(f"{path} must be an object: {data!r}")
        extra = set(data) - {"period", "period_matches", "base", "pending"}
        if extra:
            raise StateError(f"{path}: unknown key(s) {', '.join(map(repr, sorted(extra)))}")
        period = data.get("period")
        if period is not None and type(period) is not int:
            raise StateError(f"{path}.period must be a whole number or null: {period!r}")
        count = data.get("period_matches", 0)
        if type(count) is not int or count < 0:
            raise StateError(f"{path}.period_matches must be a whole number >= 0: {count!r}")
        base = data.get("base")
        pending_raw = data.get("pending", [])
        if not isinstance(pending_raw, list):
            raise StateError(f"{path}.pending must be a list: {pending_raw!r}")
        pending = []
        for k, item in enumerate(pending_raw):
            where = f"{path}.pending[{k}]"
            if not isinstance(item, list) or len(item) != 3:
                raise StateError(f"{where} must be [opponent, score, weight]: {item!r}")
            opponent = self._structure_state(item[0], self.skill_class, f"{where}[0]")
            score, weight = item[1], item[2]
            for name, value in (("score", score), ("weight", weight)):
                if (
                    isinstance(value, bool)
                    or not isinstance(value, int | float)
                    or not math.isfinite(value)
                    or not 0.0 <= value <= 1.0
                ):
                    raise StateError(f"{where}: {name} must be a number in [0, 1]: {value!r}")
            pending.append(Pairing(opponent, float(score), float(weight)))
        return {
            "period": period,
            "period_matches": count,
            "base": None
            if base is None
            else self._structure_state(base, self.skill_class, f"{path}.base"),
            "pending": tuple(pending),
        }

    # -- rating ---------------------------------------------------------------------------

    def _new_record(self, player: str) -> PlayerRecord:
        return PlayerRecord(
            id=player,
            skill=self._initial_skill(),
            rank=self._initial_rank() if self._initial_rank is not None else None,
        )

    def _commit_pending(self, record: PlayerRecord) -> PlayerRecord:
        """Rate a record's pending results (a closed ``batch`` period, a ``live`` period
        that time has passed, or a deferred loss); returns the record without them."""
        mode = self.ruleset.period.mode
        if mode == "live":
            return attrs.evolve(record, pending=(), period_matches=0, base=None)
        pending = record.pending
        score = sum(p.score * p.weight for p in pending) / max(
            sum(p.weight for p in pending), 1e-300
        )
        context = PlayerContext(
            None, record.id, 0, record.matches - record.period_matches, 0.5, score, pending, mode
        )
        skill = self._update(record.skill, pending, context)
        rank = record.rank
        if self._rank is not None:
            rank = self._rank(rank, record.skill, skill, context)
        return attrs.evolve(record, skill=skill, rank=rank, pending=(), period_matches=0)

    def _prepare(
        self, record: PlayerRecord, match: Match, at: datetime, period: int | None
    ) -> PlayerRecord:
        """The record as this match meets it: stale pending results rated, idle time
        decayed. Pure: nothing is stored."""
        decay = self._decay
        spec = self.ruleset.period
        if period is None:  # match mode
            if record.pending:
                record = self._commit_pending(record)
            last = record.last_played
            if last is not None and decay is not None:
                periods = spec.periods((at - last).total_seconds() / 86400.0)
                if periods > 0:
                    # (a direct build: attrs.evolve costs several microseconds per call)
                    record = PlayerRecord(
                        id=record.id,
                        skill=decay(record.skill, periods),
                        rank=record.rank,
                        matches=record.matches,
                        last_played=last,
                        pending=record.pending,
                        period=record.period,
                        period_matches=record.period_matches,
                        base=record.base,
                    )
            return record
        last_period = record.period
        if last_period is not None and last_period < period:
            if record.pending:
                record = self._commit_pending(record)
            idle = period - last_period - 1
            skill = record.skill
            if idle > 0 and decay is not None:
                skill = decay(skill, float(idle))
            return attrs.evolve(record, skill=skill, period=period)
        if record.period is None:
            skill = record.skill
            if record.last_played is not None and decay is not None:
                # imported or migrated: decay for the periods since its last match
                idle = period - spec.index(record.last_played) - 1
                if idle > 0:
                    skill = decay(skill, float(idle))
            return attrs.evolve(record, skill=skill, period=period)
        return record

    def _rate(self, match: Match) -> tuple[list[PlayerRecord], Report]:
        """Compute the match's new records and report without changing anything."""
        players = self._players
        at = match.played_at
        teams = match.teams
        spec = self.ruleset.period
        mode = spec.mode
        period = None if mode == "match" else spec.index(at)
        stored: list[list[PlayerRecord]] = []
        records: list[list[PlayerRecord]] = []
        sides: list[list[State]] = []
        shown: list[list[State]] = []
        for side in teams:
            side_stored = []
            side_records = []
            side_states = []
            side_shown = []
            for pid in side:
                record = players.get(pid)
                if record is None:
                    record = self._new_record(pid)
                last = record.last_played
                if last is not None and at < last:
                    raise LateMatchError(
                        f"'played_at' {format_time(at)} is earlier than the last match "
                        f"of player {pid!r} at {format_time(last)}",
                        match_id=match.id,
                    )
                side_stored.append(record)
                if record.pending or last is not None or period is not None:
                    record = self._prepare(record, match, at, period)
                side_records.append(record)
                # live mode: the open period is rated from its start, against opponents as
                # they stood at its start (Glickman's math), whatever is displayed now
                side_states.append(record.base if record.base is not None else record.skill)
                side_shown.append(record.skill)
            stored.append(side_stored)
            records.append(side_records)
            sides.append(side_states)
            shown.append(side_shown)

        aggregate = self._aggregate
        # the forecast uses what players see now (in live mode, the re-rated open period)
        expected = tuple(self._expect([aggregate(s) for s in shown], match.home))
        total = 0.0
        for p in expected:
            if not 0.0 <= p <= 1.0:
                raise PluginError(
                    f"expectation plugin returned a probability outside [0, 1]: {expected!r}"
                )
            total += p
        if len(expected) != len(teams) or abs(total - 1.0) > 1e-9:
            raise PluginError(
                f"expectation plugin returned {expected!r} for {len(teams)} sides "
                "(one probability per side, summing to 1)"
            )
        places = match.places
        pairings = self._team(sides, places, match.weight)
        n_sides = len(teams)
        update = self._update
        rank = self._rank
        quitters = match.quit
        quits = self.ruleset.quits
        new_records: list[PlayerRecord] = []
        changes: list[PlayerChange] = []
        for i, side in enumerate(teams):
            if n_sides == 2:
                score = pair_score(places, i, 1 - i)
            else:
                score = sum(pair_score(places, i, j) for j in range(n_sides) if j != i) / (
                    n_sides - 1
                )
            side_records = records[i]
            side_pairings = pairings[i]
            for j, pid in enumerate(side):
                record = side_records[j]
                used = record.skill
                pairs = side_pairings[j]
                rule = "result"
                if quitters:
                    if pid in quitters:
                        rule = quits.quitter
                        if rule == "deferred-loss" and mode != "match":
                            rule = "loss"  # a period's results are rated later anyway
                        if rule != "result":
                            pairs = [Pairing(p.opponent, 0.0, p.weight) for p in pairs]
                    elif quits.others == "cancelled":
                        rule = "cancelled"
                context = PlayerContext(
                    match,
                    pid,
                    i,
                    record.matches - record.period_matches,
                    expected[i],
                    0.0 if rule in ("loss", "deferred-loss") else score,
                    pairs,
                    mode,
                )
                if mode == "match" and stored[i][j].pending:
                    # a deferred loss (INVERSUS quit) was rated as this match started
                    context.explain("deferred_loss", float(len(stored[i][j].pending)))
                rank_after = record.rank
                pending = record.pending
                base = record.base
                period_matches = record.period_matches
                if rule == "cancelled":
                    after = used
                    context.explain("cancelled", 1.0)
                elif rule == "deferred-loss":
                    after = used
                    pending = (*pending, *pairs)
                    context.explain("deferred", 1.0)
                elif mode == "match":
                    after = update(used, pairs, context)
                elif mode == "batch":
                    after = used
                    pending = (*pending, *pairs)
                    period_matches += 1
                    context.explain("pending", float(len(pending)))
                else:  # live: re-rate the open period from its start
                    if not pending:
                        base = used
                    pending = (*pending, *pairs)
                    period_matches += 1
                    context.pairings = pending
                    after = update(base, pending, context)
                    context.pairings = pairs  # the rank layer judges this match alone
                if rank is not None and rule not in ("cancelled", "deferred-loss"):
                    rank_after = rank(record.rank, used, after, context)
                new_records.append(
                    PlayerRecord(
                        id=pid,
                        skill=after,
                        rank=rank_after,
                        matches=record.matches + 1,
                        last_played=at,
                        pending=pending,
                        period=record.period,
                        period_matches=period_matches,
                        base=base,
                    )
                )
                before = stored[i][j]
                changes.append(
                    PlayerChange(
                        player=pid,
                        side=i,
                        skill_before=before.skill,
                        skill_used=used,
                        skill_after=after,
                        rank_before=record.rank,
                        rank_after=rank_after,
                        factors=context.factors,
                    )
                )
        report = Report(match_id=match.id, played_at=at, expected=expected, changes=tuple(changes))
        return new_records, report

    def close_period(self) -> int:
        """Rate every pending result now: closes the open ``batch`` period (a replay does
        this at its end), and commits ``live`` periods. Deferred losses (``match`` mode)
        stay pending until the player's next match.

        :returns: the number of players whose pending results were rated.
        """
        if self.ruleset.period.mode == "match":
            return 0
        waiting = [r for r in self._players.values() if r.pending]
        with self.batch():
            if self._period_kernel is not None and waiting:
                self._close_in_arrays(waiting)
            else:
                for record in waiting:
                    self._put(self._commit_pending(record))
        return len(waiting)

    def _close_in_arrays(self, waiting: list[PlayerRecord]) -> None:
        """``batch`` mode: rate every waiting player's period with the update plugin's
        ``period`` kernel (one array computation instead of one update per player)."""
        assert self._period_kernel is not None
        skill = self.skill_class
        pack = packer(self._skill_names)
        states = [pack(r.skill) for r in waiting]
        results = [[(pack(p.opponent), p.score, p.weight) for p in r.pending] for r in waiting]
        rated = self._period_kernel(states, results)
        for r, values in zip(waiting, rated, strict=True):
            # (a direct build: attrs.evolve costs several microseconds per call)
            self._put(
                PlayerRecord(
                    id=r.id,
                    skill=skill(*values),
                    rank=r.rank,
                    matches=r.matches,
                    last_played=r.last_played,
                    period=r.period,
                    base=r.base,
                )
            )

    def _put(self, record: PlayerRecord) -> None:
        pid = record.id
        if pid not in self._undo:
            self._undo[pid] = self._players.get(pid)
        self._players[pid] = record
        self._dirty.add(pid)

    def _apply(self, records: list[PlayerRecord], match: Match, report: Report) -> None:
        for record in records:
            self._put(record)
        self._seen.add(match.id)
        self._pending.append(Recorded(match, report))
        if len(self._pending) >= _FLUSH_EVERY:
            self._flush()

    def _flush(self) -> None:
        if self._fast is not None and self._fast.states:
            self._fast.settle()
        players = self._players
        self.store.write([players[p] for p in self._dirty], self._pending)
        self._dirty = set()
        self._pending.clear()  # in place: record_many holds the list

    @contextmanager
    def batch(self) -> Iterator[None]:
        """Group recordings into one transaction: all of them are kept, or none.

        Nested uses join the outer batch. On a database the batch holds the league's
        writer lock alone (other writers wait), and starts from what they committed.
        """
        if self._in_batch:
            yield
            return
        with self._transaction(None):
            yield

    @contextmanager
    def _transaction(self, lock: list[str] | None, match_id: str | None = None) -> Iterator[None]:
        """One write transaction. ``lock`` None: league-wide (the writer lock alone,
        reloading what others committed). ``lock``: a one-match transaction that locks
        just these players (sorted ids), reads their stored records again and refuses
        ``match_id`` if another process recorded it."""
        # A long batch allocates many small acyclic objects; the cyclic collector's full
        # passes over them cost more than the rating itself. Pause it for the batch.
        gc_was_enabled = gc.isenabled()
        gc.disable()
        schedule_before = list(self._next_resets)
        self._in_batch = True
        self._undo = {}
        self._seen.clear()
        self._dirty = set()
        self._pending = []
        store: Any = self.store  # (begin_shared, lock_players: stores with parallel writers)
        if lock is None:
            store.begin()
        else:
            store.begin_shared()
        try:
            if lock is not None:
                self._adopt(store.lock_players(lock, match_id), lock)
            elif store.generation() != self._generation:
                # another process committed since this league last looked: start from it
                self._reload()
                schedule_before = list(self._next_resets)
            yield
            self._flush()
            generation = self.store.bump_generation()
            if lock is None:
                # (after a one-match transaction other players may still be stale)
                self._generation = generation
            if self._schedule_dirty:
                self.store.set_meta(
                    "next_resets",
                    json.dumps([None if t is None else format_time(t) for t in self._next_resets]),
                )
            self.store.commit()
        except BaseException:
            self.store.rollback()
            if self._fast is not None:
                self._fast.discard()
            self._next_resets = schedule_before
            players = self._players
            for pid, old in self._undo.items():
                if old is None:
                    players.pop(pid, None)
                else:
                    players[pid] = old
            raise
        finally:
            self._schedule_dirty = False
            if gc_was_enabled:
                gc.enable()
            self._in_batch = False
            self._undo = {}
            self._seen.clear()  # committed (the store has them) or rolled back
            self._dirty = set()
            self._pending = []

    def _coerce(self, match: Match | Mapping[str, Any]) -> Match:
        return match if isinstance(match, Match) else parse_match(match)

    def record(self, match: Match | Mapping[str, Any]) -> Report:
        """Rate one match and store it with its report (one transaction).

        In PostgreSQL the transaction locks only this match's players and reads their
        records as other processes left them, so that matches on other players commit in
        parallel and no process rates from a stale record. (A match whose season event
        is due, and any match in SQLite, takes the league-wide writer lock instead.)

        :param match: a :class:`Match` or a dict in the match format (DESIGN §2).
        :returns: the match's :class:`Report`.
        :raises MatchError: the match is malformed, repeats an id, or goes back in time;
            nothing is changed.
        """
        m = self._coerce(match)
        one_match = self._row_locks and not self._in_batch and not self._reset_due(m.played_at)
        with (
            self._transaction(sorted({p for side in m.teams for p in side}), m.id)
            if one_match
            else self.batch()
        ):
            # (inside the transaction: another process may have recorded it; the one-match
            # path's lock_players has checked already)
            if m.id in self._seen or (not one_match and self.store.recorded((m.id,))):
                raise DuplicateMatchError(f"match id {m.id!r} is already recorded", match_id=m.id)
            if not one_match and self._next_resets:
                self._run_due_resets(m.played_at)
            records, report = self._rate(m)
            self._apply(records, m, report)
        return report

    def record_many(
        self,
        matches: Iterable[Match | Mapping[str, Any]],
        *,
        skip_seen: bool = False,
        progress: Callable[[int], None] | None = None,
        close: bool = True,
    ) -> RecordSummary:
        """Rate matches in order, in one transaction: on any error nothing is kept.

        :param matches: :class:`Match` objects or match dicts, in time order.
        :param skip_seen: pass over ids already recorded instead of refusing them.
        :param progress: called with the count of matches handled, every 1000 matches.
        :param close: in ``batch`` mode, close the open rating period at the end (a replay
            does; a caller feeding one history in several calls closes only the last).
        :raises MatchError: the first bad match (with its line when read from a file, and
            its 0-based position in ``matches`` as ``item``).

        The matches are read in chunks of a few thousand: before each chunk the matches
        rated so far are handed to the store, which then says which of the chunk's ids
        it has already. Memory therefore holds one chunk, not every id of the history.
        """
        recorded = skipped = 0
        last: Report | Entry | None = None
        fast = self._fast if self._fast_enabled else None
        store = self.store
        position = 0
        with self.batch():
            seen = self._seen
            pending = self._pending  # (a new list per batch: read inside it)
            run = fast.runner(seen, pending) if fast is not None else None
            iterator = iter(matches)
            try:
                while chunk := list(itertools.islice(iterator, _CHUNK)):
                    if pending:
                        last = pending[-1]
                        if fast is not None and len(fast.states) > _SETTLE_AT:
                            self._flush()  # many players touched: write them out too
                        else:
                            store.write((), pending)
                            pending.clear()
                    seen.clear()
                    seen.update(store.recorded([i for i in map(_id_of, chunk) if i is not None]))
                    base = position
                    for position, item in enumerate(chunk, base):  # noqa: B007
                        if run is not None and run(item):
                            recorded += 1
                            if progress is not None and (recorded + skipped) % 1000 == 0:
                                progress(recorded + skipped)
                            continue
                        m = self._coerce(item)
                        if fast is not None and fast.states:
                            # the ordinary path reads these players' records: update them
                            fast.settle([p for side in m.teams for p in side])
                        if m.id in seen:
                            if skip_seen:
                                skipped += 1
                                continue
                            raise DuplicateMatchError(
                                f"match id {m.id!r} is already recorded", match_id=m.id
                            )
                        if self._next_resets:
                            self._run_due_resets(m.played_at)
                        records, last = self._rate(m)
                        self._apply(records, m, last)
                        recorded += 1
                        if progress is not None and (recorded + skipped) % 1000 == 0:
                            progress(recorded + skipped)
                    position += 1
            except MatchError as exc:
                if exc.item is None:
                    exc.item = position
                raise
            if pending:
                last = pending[-1]
            if fast is not None and fast.states:
                fast.settle()
            if close and self.ruleset.period.mode == "batch":
                self.close_period()
        report = last if last is None or isinstance(last, Report) else last.report
        return RecordSummary(recorded=recorded, skipped=skipped, last=report)

    # -- reading --------------------------------------------------------------------------

    def __contains__(self, player: object) -> bool:
        return player in self._players

    def __len__(self) -> int:
        return len(self._players)

    def player(self, player: str) -> PlayerRecord:
        """A player's record.

        :raises UnknownPlayerError: the league has never seen ``player``.
        """
        try:
            return self._players[player]
        except KeyError:
            raise UnknownPlayerError(f"unknown player {player!r}") from None

    def players(self) -> list[PlayerRecord]:
        """Every player's record, ordered by id."""
        return [self._players[p] for p in sorted(self._players)]

    def history(self, player: str, limit: int | None = 10) -> list[MatchRow]:
        """A player's latest matches with their reports, newest first."""
        self.player(player)
        return self.store.player_matches(player, limit)

    def report(self, match_id: str) -> Report:
        """The report kept with a recorded match.

        :raises InputError: no such match.
        """
        row = self.store.match(match_id)
        if row is None:
            raise InputError(f"unknown match {match_id!r}")
        return row.report

    @property
    def match_count(self) -> int:
        """How many matches the league has recorded."""
        return self.store.count_matches()

    def leaderboard(self, top: int | None = None) -> list[PlayerRecord]:
        """Players ordered best first: by rank points when the ruleset has a rank layer,
        else by the skill's location field (e.g. Elo ``rating``); ties by id."""
        field = self._sort_field
        records = list(self._players.values())
        if field is None:
            records.sort(key=lambda r: r.id)
        elif self._sort_on_rank:
            records.sort(key=lambda r: (-getattr(r.rank, field), r.id))
        else:
            records.sort(key=lambda r: (-getattr(r.skill, field), r.id))
        return records if top is None else records[:top]

    def predict(
        self,
        sides: Sequence[Sequence[str]],
        at: datetime | str | None = None,
        home: int | None = None,
    ) -> list[float]:
        """Win probability of each side if they met now (or at time ``at``).

        Unknown players count as new players. With ``at``, each player's skill is
        decayed for the time since their last match; ``home`` is the index of the side at
        home (for rulesets with a home advantage).

        :param sides: player ids per side, at least two sides, none empty, no player twice.
        :returns: one probability per side, summing to 1.
        """
        if isinstance(sides, str) or len(sides) < 2:
            raise InputError(f"predict needs at least 2 sides: {sides!r}")
        flat = [p for side in sides for p in side]
        if any(not side or isinstance(side, str) for side in sides):
            raise InputError(f"every side must be a non-empty list of player ids: {sides!r}")
        if len(set(flat)) != len(flat):
            raise InputError(f"a player appears twice in {sides!r}")
        when = parse_time(at, field="at") if isinstance(at, str) else at
        states = []
        for side in sides:
            members = []
            for pid in side:
                record = self._players.get(pid) or self._new_record(pid)
                state = record.skill
                if when is not None and self._decay is not None and record.last_played:
                    periods = self.ruleset.period.periods(
                        max((when - record.last_played).total_seconds(), 0.0) / 86400.0
                    )
                    if periods > 0:
                        state = self._decay(state, periods)
                members.append(state)
            states.append(self._aggregate(members))
        if home is not None and not 0 <= home < len(sides):
            raise InputError(f"'home' must be a side index (0 to {len(sides) - 1}): {home!r}")
        return [float(p) for p in self._expect(states, home)]

    # -- state documents -------------------------------------------------------------------

    def export(self) -> dict[str, Any]:
        """Every player's state as the export document (DESIGN §2), ordered by id."""
        from . import __version__

        to_dict = self.codec.record_to_dict
        return {
            "ruleset": self.ruleset.name,
            "rankcraft": __version__,
            "players": [to_dict(r) for r in self.players()],
        }

    def import_state(self, document: Mapping[str, Any]) -> int:
        """Load players from an export document (all of them, or none on any error).

        Players in the document replace records of the same id.

        :returns: the number of players imported.
        :raises StateError: the document does not fit this league's ruleset.
        """
        if not isinstance(document, Mapping):
            raise StateError(f"a state document must be an object, got {type(document).__name__}")
        extra = set(document) - {"ruleset", "rankcraft", "players"}
        if extra:
            raise StateError(
                f"unknown key(s) {', '.join(map(repr, sorted(extra)))} in the state document"
            )
        name = document.get("ruleset")
        if name is not None and name != self.ruleset.name:
            raise StateError(
                f"the document was exported with ruleset {name!r}; this league "
                f"uses {self.ruleset.name!r}"
            )
        rows = document.get("players")
        if not isinstance(rows, list):
            raise StateError(f"'players' must be a list: {rows!r}")
        records = [self._record_from_dict(row, f"players[{i}]") for i, row in enumerate(rows)]
        ids = [r.id for r in records]
        if len(set(ids)) != len(ids):
            twice = next(p for p in ids if ids.count(p) > 1)
            raise StateError(f"player {twice!r} appears twice in 'players'")
        with self.batch():
            for record in records:
                self._put(record)
        return len(records)

    def reset(self, kind: str, at: datetime | str | None = None) -> int:
        """Run a season event (e.g. ``"soft"``, ``"hard"``) through the reset plugin.

        All changed records are committed in one transaction.

        :returns: the number of players whose record changed.
        :raises InputError: the ruleset has no reset slot, or the plugin refuses ``kind``.
        """
        if self._reset is None:
            raise InputError(
                f"ruleset {self.ruleset.name!r} has no [reset] slot: "
                f"no season events to run ({kind!r})"
            )
        when = parse_time(at, field="at") if isinstance(at, str) else at
        with self.batch():
            return self._run_reset(kind, when)

    def _run_reset(self, kind: str, when: datetime | None) -> int:
        assert self._reset is not None
        update = self.ruleset.slot("update")
        assert update is not None
        context = ResetContext(
            kind=kind, at=when, skill_params=update.params, decay=self._skill_decay
        )
        before = self.players()
        after = list(self._reset(before, kind, context))
        changed = 0
        for record in after:
            old = self._players.get(record.id)
            if old is None:
                raise PluginError(f"reset plugin returned unknown player {record.id!r}")
            if record != old:
                self._put(record)
                changed += 1
        return changed

    def _reset_due(self, at: datetime) -> bool:
        """Whether a scheduled season event is due by ``at`` (as the store has it now):
        such a match takes the league-wide path, which runs the event first."""
        if not self.ruleset.resets:
            return False
        moments = self._load_schedule()
        return any(moment is None or moment <= at for moment in moments)

    def _adopt(self, stored: Mapping[str, PlayerRecord], players: Iterable[str]) -> None:
        """Take these players' records as the store has them (absent: not yet played)."""
        cache = self._players
        for pid in players:
            record = stored.get(pid)
            if record is None:
                cache.pop(pid, None)
            else:
                cache[pid] = record

    def refresh(self, players: Iterable[str] | None = None) -> None:
        """Read again what other processes committed to the league's database.

        :param players: just these players' records (cheap: one row each); None: every
            record, when anything changed since this league last looked.

        A league in one process never needs this; a service with several workers over
        one database calls it before answering a read.
        """
        store: Any = self.store
        if not hasattr(store, "load_player") or self._in_batch:
            return  # in memory: nobody else writes
        if players is not None:
            wanted = list(players)
            self._adopt({p: r for p in wanted if (r := store.load_player(p)) is not None}, wanted)
            return
        if store.generation() != self._generation:
            self._reload()

    def _reload(self) -> None:
        """Read players, match ids and the schedule again from the store."""
        self._players = self.store.load_players()
        self._seen.clear()
        self._next_resets = self._load_schedule()
        self._generation = self.store.generation()

    def _load_schedule(self) -> list[datetime | None]:
        """When each scheduled event runs next (None: when the league's first match comes)."""
        saved = self.store.get_meta("next_resets")
        schedule = self.ruleset.resets
        if saved is not None:
            moments = [
                None if text is None else parse_time(text, field="next_resets")
                for text in json.loads(saved)
            ]
            if len(moments) == len(schedule):
                return moments
        return [
            None if s.start_time is None else s.start_time + timedelta(days=s.every_days)
            for s in schedule
        ]

    def _run_due_resets(self, at: datetime) -> None:
        """Run the ruleset's scheduled season events due at or before ``at``, in order."""
        schedule = self.ruleset.resets
        moments = self._next_resets
        for i, moment in enumerate(moments):
            if moment is None:  # anchored at the league's first match
                moments[i] = at + timedelta(days=schedule[i].every_days)
                self._schedule_dirty = True
        while True:
            due = min(
                (
                    (moment, i)
                    for i, moment in enumerate(moments)
                    if moment is not None and moment <= at
                ),
                default=None,
            )
            if due is None:
                return
            moment, i = due
            self._run_reset(schedule[i].kind, moment)
            moments[i] = moment + timedelta(days=schedule[i].every_days)
            self._schedule_dirty = True

    @property
    def has_standings(self) -> bool:
        """Whether the ruleset gives league-wide labels (:meth:`standings`)."""
        return self._standings is not None

    def standings(self) -> dict[str, str]:
        """League-wide labels per player (a tier such as Grandweaver, a percentile), from
        the rank plugin (or the update plugin without a rank slot); empty when neither
        offers them."""
        if self._standings is None:
            return {}
        return dict(self._standings(self.players()))

    def close(self) -> None:
        """Close the store."""
        self.store.close()

    def __enter__(self) -> League:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
