"""Scheduled season events: when each of a ruleset's ``[[resets]]`` runs next.

The schedule is kept in the store (meta key ``next_resets``) so that a league reopened,
or another process, runs each event once. An event anchored at the league's first match
(no ``start``) is placed when that match comes.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from .errors import MatchError, StateError
from .io import parse_time
from .model import format_time
from .ruleset import Ruleset
from .store import Store

_KEY = "next_resets"


class Seasons:
    """The schedule of one league's season events.

    :param ruleset: the league's ruleset (its ``resets`` list).
    """

    def __init__(self, ruleset: Ruleset) -> None:
        self.events = ruleset.resets
        self.moments: list[datetime | None] = []
        self.dirty = False

    def _initial(self) -> list[datetime | None]:
        return [
            None if e.start_time is None else e.start_time + timedelta(days=e.every_days)
            for e in self.events
        ]

    def _stored(self, store: Store) -> list[datetime | None]:
        saved = store.get_meta(_KEY)
        if saved is not None:
            moments = [
                None if text is None else parse_time(text, field=_KEY) for text in json.loads(saved)
            ]
            if len(moments) == len(self.events):
                return moments
        return self._initial()

    # -- the unit of work's protocol ----------------------------------------------------

    def load(self, store: Store) -> None:
        """Read the schedule from the store."""
        self.moments = self._stored(store)
        self.dirty = False

    def snapshot(self) -> list[datetime | None]:
        """The schedule as it stands (restored when a transaction fails)."""
        return list(self.moments)

    def restore(self, snapshot: list[datetime | None]) -> None:
        self.moments = list(snapshot)
        self.dirty = False

    def save(self, store: Store) -> None:
        """Write the schedule into the open transaction, if it changed."""
        if self.dirty:
            store.set_meta(_KEY, json.dumps(self.to_texts()))
            self.dirty = False

    # -- the state document ---------------------------------------------------------------

    def to_texts(self) -> list[str | None]:
        """When each event runs next, as the state document writes it (None: when the
        league's first match comes)."""
        return [None if t is None else format_time(t) for t in self.moments]

    def adopt(self, texts: Any) -> None:
        """Take the schedule of a state document (``schedule``), validated.

        :raises StateError: not one time (or null) per ``[[resets]]`` entry.
        """
        if not isinstance(texts, list) or len(texts) != len(self.events):
            raise StateError(
                f"'schedule' must list one time (or null) per [[resets]] entry of the "
                f"ruleset ({len(self.events)}): {texts!r}"[:300]
            )
        moments = []
        for i, text in enumerate(texts):
            try:
                moments.append(None if text is None else parse_time(text, field=f"schedule[{i}]"))
            except MatchError as exc:
                raise StateError(exc.reason) from None
        self.moments = moments
        self.dirty = True

    # -- events -------------------------------------------------------------------------

    def due_in(self, store: Store, at: datetime) -> bool:
        """Whether an event is due by ``at`` as the store has the schedule now (such a
        match takes the league-wide path, which runs the event first)."""
        return bool(self.events) and any(m is None or m <= at for m in self._stored(store))

    def run_due(self, at: datetime, run: Callable[[str, datetime, datetime], int]) -> None:
        """Run, in time order, every event due at or before ``at``:
        ``run(kind, moment, since) -> records changed``, ``since`` being the event's
        previous moment (``moment`` less ``every_days``).

        Catch-up is cheap: once every entry's latest run changed no record (and nothing
        changed since), no later run can change one before the next match, so the
        schedule jumps past ``at`` without running them (the contract of
        ``rankcraft_reset``: an event is a function of the records, its kind, and which
        players played since the previous event). An entry's first run in a catch-up
        does not count as quiet: the period it closes may hold the latest matches, while
        every later run closes a period nobody played in (a decay that spares the players
        of the first period still has work in the second).
        """
        if not self.events:
            return
        moments = self.moments
        for i, moment in enumerate(moments):
            if moment is None:  # anchored at the league's first match
                moments[i] = at + timedelta(days=self.events[i].every_days)
                self.dirty = True
        quiet: set[int] = set()
        ran: set[int] = set()
        while True:
            due = min(
                ((m, i) for i, m in enumerate(moments) if m is not None and m <= at),
                default=None,
            )
            if due is None:
                return
            moment, i = due
            step = timedelta(days=self.events[i].every_days)
            self.dirty = True
            if len(quiet) == len(self.events):  # at rest: skip to the first moment after at
                moments[i] = _later(moment, step, (at - moment) // step + 1, at)
                continue
            changed = run(self.events[i].kind, moment, moment - step)
            moments[i] = _later(moment, step, 1, at)
            if changed:
                quiet.clear()
            elif i in ran:  # (an entry's first run may close a period with play in it: only
                quiet.add(i)  # a run over a period nobody played in proves the league at rest)
            ran.add(i)


def due_before(
    seasons: Seasons, at: datetime, run: Callable[[str, datetime, datetime], int]
) -> None:
    """Run, on a copy of the schedule, the events due by ``at`` as :meth:`Seasons.run_due`
    would (same order, same catch-up rule); the league's schedule is not changed. For a
    prediction at a later time: ``run`` applies each event to a copy of the records."""
    if not seasons.events:
        return
    copy = Seasons.__new__(Seasons)
    copy.events = seasons.events
    copy.moments = [m if m is not None else at for m in seasons.moments]
    copy.dirty = False
    copy.run_due(at, run)


def _later(moment: datetime, step: timedelta, times: int, at: datetime) -> datetime:
    """``moment`` plus ``times`` steps (the schedule's next moment after a match at ``at``).

    :raises MatchError: the moment is past the last time a date holds (year 9999): the
        match leaves the schedule no room (nothing is changed).
    """
    try:
        return moment + step * times
    except OverflowError:
        raise MatchError(
            f"'played_at' {format_time(at)} leaves no room for the season schedule: its next "
            "event would fall after the year 9999"
        ) from None
