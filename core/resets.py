"""Season events run over the players: one event through the reset plugin (by hand,
:meth:`rankcraft.League.reset`, or when the schedule of :mod:`rankcraft.seasons` says it
is due before a match), the context handed to the plugin, and the rows a match at a later
time would meet (the events due by then applied to copies, for a prediction).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

from .errors import InputError, PluginError, StateError
from .io import parse_time
from .model import PlayerRecord, ResetContext
from .players import Players
from .ruleset import Ruleset
from .rulesetschema import reset_kind_refused
from .seasons import Seasons, due_before
from .steps import SKILL, Steps
from .store import Store
from .store.base import Codec
from .unit import UnitOfWork


class Resets:
    """The season events of one league.

    :param ruleset: the league's ruleset. :param steps: its steps (the reset hooks,
        looked up at each event). :param store: its store. :param unit: its unit of work.
    :param seasons: its schedule. :param players: its players' reads (an event's scope).
    :param codec: its codec (a returned record is checked as an import's are).
    """

    def __init__(
        self,
        ruleset: Ruleset,
        steps: Steps,
        store: Store,
        unit: UnitOfWork,
        seasons: Seasons,
        players: Players,
        codec: Codec,
    ) -> None:
        self.ruleset = ruleset
        self.steps = steps
        self.store = store
        self.unit = unit
        self.seasons = seasons
        self.players = players
        self.codec = codec
        # called inside a season event run by hand (the league's audit keeps it)
        self.noted: Callable[[str, datetime | None], None] | None = None
        # (the rows a prediction projected last: its key, the rows it read, its answer)
        self._projection: tuple[Any, dict[str, Any], dict[str, Any]] | None = None

    def reset(self, kind: str, at: datetime | str | None = None) -> int:
        """Run a season event (e.g. ``"soft"``, ``"hard"``) through the reset plugin.

        All changed records are committed in one transaction.

        :returns: the number of players whose record changed.
        :raises InputError: the ruleset has no reset slot, or the plugin refuses ``kind``.
        """
        if self.steps.reset is None:
            raise InputError(
                f"ruleset {self.ruleset.name!r} has no [reset] slot: "
                f"no season events to run ({kind!r})"
            )
        assert self.ruleset.reset is not None
        why = reset_kind_refused(kind, self.ruleset.reset, self.ruleset.plugins)
        if why is not None:  # (before anything is read or run)
            raise InputError(why)
        when = parse_time(at, field="at") if isinstance(at, str) else at
        with self.unit.transaction():
            changed = self.run(kind, when)
            if self.noted is not None:
                self.noted(kind, when)
            if self.seasons.events:  # (every player went through it, up to now)
                self.unit.written()
                self.seasons.note_ran(kind, when, self.store.latest_played())
            return changed

    def context(
        self,
        kind: str,
        when: datetime | None,
        since: datetime | None,
        every_days: float | None = None,
    ) -> ResetContext:
        """The context a season event ``kind`` at ``when`` hands the reset plugin."""
        steps = self.steps
        return ResetContext(
            kind=kind,
            at=when,
            skill_params=steps.skill_params,
            rank_params=None if self.ruleset.rank is None else self.ruleset.rank.params,
            decay=steps.object_decay(),
            since=since,
            ran=dict(self.seasons.ran),
            every_days=every_days,
        )

    def run(
        self,
        kind: str,
        when: datetime | None,
        since: datetime | None = None,
        every_days: float | None = None,
    ) -> int:
        """Run one season event; returns the number of records it changed.

        The plugin returns only the records it changes (or any superset); a returned
        record that is the one it was given, or equal to it, is not written."""
        steps = self.steps
        assert steps.reset is not None
        context = self.context(kind, when, since, every_days)
        scope = steps.reset_scope(kind, context) if steps.reset_scope is not None else None
        rows = self.unit.known() if scope is None else self.players.rows_in(scope)
        players = [steps.record_of(p, rows[p]) for p in sorted(rows)]
        returned = steps.reset(players, kind, context)
        if not returned:
            return 0
        given = {r.id: r for r in players}
        changed = 0
        plugin = self.ruleset.reset.plugin if self.ruleset.reset is not None else "?"
        for record in returned:
            old = given.get(str(getattr(record, "id", "")))
            if old is None:
                raise PluginError(
                    f"plugin {plugin!r}: rankcraft_reset returned {record!r:.200}, not the "
                    "record of a player it was given"
                )
            if record is not old and record != old:
                self.unit.put_record(self._checked(record, plugin))
                changed += 1
        return changed

    def _checked(self, record: PlayerRecord, plugin: str) -> PlayerRecord:
        """A record a reset plugin returned, checked as an import's records are (the one
        validator, :attr:`Codec.parse_record`): written as a state document and read back.

        :raises PluginError: naming the plugin, the hook, the player and what is wrong."""
        codec = self.codec
        try:
            return codec.parse_record(codec.record_to_dict(record), "record")
        except StateError as exc:
            reason = str(exc)
        except (TypeError, ValueError, AttributeError) as exc:  # (not states of its classes)
            reason = f"{type(exc).__name__}: {exc}"
        raise PluginError(
            f"plugin {plugin!r}: rankcraft_reset returned a record of player {record.id!r} "
            f"that an import would refuse: {reason}"
        )

    def projected(self, when: datetime, season: str | int | None = None) -> Mapping[str, Any]:
        """The players' rows as a match at ``when`` would meet them: the season events due
        by then applied to copies (``record`` runs them before rating the match); the
        league's rows themselves when none is due."""
        rows = self.unit.rows
        steps = self.steps
        seasons = self.seasons
        if steps.reset is None or not seasons.events or not seasons.due_by(when, season):
            return rows
        # (a free-for-all's evaluation predicts every pair at one time: project once while
        # no row and no schedule moment has changed)
        cached = self._projection
        key = (when, season, tuple(seasons.moments), seasons.latest, len(rows), self.unit.runs)
        if (
            cached is not None
            and cached[0] == key
            and all(rows.get(p) is r for p, r in cached[1].items())
        ):
            return cached[2]
        source = {pid: row for pid, row in rows.items() if row is not None}
        current = {pid: steps.record_of(pid, row) for pid, row in source.items()}
        before = dict(current)
        due_before(seasons, when, self._on_copies(current), season)
        projected: dict[str, Any] = dict(rows)
        to_tuple = steps.skill_form.to_tuple
        for pid, record in current.items():
            if record is not before[pid] and record.skill != before[pid].skill:
                row = list(source[pid])
                row[SKILL] = to_tuple(record.skill)
                projected[pid] = row
        self._projection = (key, source, projected)
        return projected

    def _on_copies(self, current: dict[str, Any]) -> Any:
        """``run(kind, moment, since, every_days)`` that applies an event to the records
        ``current`` (copies, replaced as the plugin changes them)."""
        reset = self.steps.reset
        assert reset is not None

        def run(kind: str, moment: datetime, since: datetime | None, every: float | None) -> int:
            context = self.context(kind, moment, since, every)
            changed = 0
            for record in reset([current[p] for p in sorted(current)], kind, context):
                if record.id in current and record != current[record.id]:
                    current[record.id] = record
                    changed += 1
            return changed

        return run
