"""Season events run by themselves: when each of a ruleset's ``[[resets]]`` runs next.

An entry runs on dates (``every_days`` from ``start``), or when the data says a season
ended: before the first match of a new value of a season field (``season_field``), or
before a match that comes more than ``gap_days`` after the league's previous match.

The schedule is kept in the store (meta key ``next_resets``) so that a league reopened,
or another process, runs each event once. An event anchored at the league's first match
(no ``start``) is placed when that match comes. The store also keeps when each kind of
event last ran over the whole league (meta key ``resets_ran``), which a reset plugin may
use to say which players an event can change (:class:`rankcraft.PlayerScope`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

import attrs

from .errors import MatchError, StateError
from .io import parse_time
from .model import Match, format_time
from .ruleset import ResetSchedule, Ruleset
from .store import Store

_KEY = "next_resets"
_RAN_KEY = "resets_ran"

Run = Callable[[str, datetime, datetime | None, float | None], int]
"""``run(kind, moment, since, every_days) -> records changed``: runs one event
(``every_days`` None: an event triggered by the data)."""
Progress = Callable[[int, int], None]
"""``progress(events handled, events due)``: reported during a catch-up."""


@attrs.frozen
class Mark:
    """What an entry triggered by the data remembers.

    Attributes:
        since: when the entry last ran (its first match before it ever ran).
        season: the season field's value of the latest match (season fields only).
    """

    since: datetime
    season: str | int | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"since": format_time(self.since)}
        if self.season is not None:
            out["season"] = self.season
        return out


Moment = datetime | Mark | None
"""One entry's state: a dated entry's next moment (None: at the league's first match), or
a data-triggered entry's :class:`Mark` (None: no match seen yet)."""


def _parse_moment(event: ResetSchedule, value: Any, field: str) -> Moment:
    """One entry's state as the store or a state document writes it (validated)."""
    if value is None:
        return None
    if event.trigger == "dates":
        if not isinstance(value, str):
            raise MatchError(f"'{field}' must be a time: {value!r}"[:300])
        return parse_time(value, field=field)
    if not isinstance(value, Mapping) or not set(value) <= {"since", "season"}:
        raise MatchError(
            f"'{field}' must be an object with 'since' (and 'season'): {value!r}"[:300]
        )
    season = value.get("season")
    if event.trigger == "season" and (
        isinstance(season, bool) or not isinstance(season, str | int)
    ):
        raise MatchError(f"'{field}.season' must be a string or an integer: {season!r}"[:300])
    return Mark(parse_time(value.get("since"), field=f"{field}.since"), season)


def _moment_json(moment: Moment) -> Any:
    if moment is None:
        return None
    return moment.to_json() if isinstance(moment, Mark) else format_time(moment)


class Seasons:
    """The schedule of one league's season events.

    :param ruleset: the league's ruleset (its ``resets`` list).

    Attributes:
        progress: called while a match dated after many due season events runs them (a
            catch-up of more than one ``[[resets]]`` event), with the events handled so
            far and the events due; None (the default) reports nothing. ``rankcraft``
            draws it as a progress bar on a terminal (:attr:`League.catch_up_progress`).
    """

    def __init__(self, ruleset: Ruleset) -> None:
        self.events = ruleset.resets
        self.moments: list[Moment] = []
        self.latest: datetime | None = None  # the league's latest match (gap_days)
        self.ran: dict[str, datetime] = {}
        self.dirty = False
        self.progress: Progress | None = None

    def _initial(self) -> list[Moment]:
        return [
            None
            if e.start_time is None or e.every_days is None
            else e.start_time + timedelta(days=e.every_days)
            for e in self.events
        ]

    def _stored(self, store: Store) -> list[Moment]:
        saved = store.get_meta(_KEY)
        if saved is not None:
            texts = json.loads(saved)
            if len(texts) == len(self.events):
                return [_parse_moment(e, t, _KEY) for e, t in zip(self.events, texts, strict=True)]
        return self._initial()

    # -- the unit of work's protocol ----------------------------------------------------

    def load(self, store: Store) -> None:
        """Read the schedule from the store."""
        self.moments = self._stored(store)
        ran = store.get_meta(_RAN_KEY) if self.events else None
        self.ran = (
            {}
            if ran is None
            else {k: parse_time(t, field=_RAN_KEY) for k, t in json.loads(ran).items()}
        )
        if any(e.gap_days is not None for e in self.events):
            self.latest = store.latest_played()
        self.dirty = False

    def snapshot(self) -> Any:
        """The schedule as it stands (restored when a transaction fails)."""
        return (list(self.moments), self.latest, dict(self.ran))

    def restore(self, snapshot: Any) -> None:
        moments, self.latest, ran = snapshot
        self.moments = list(moments)
        self.ran = dict(ran)
        self.dirty = False

    def save(self, store: Store) -> None:
        """Write the schedule into the open transaction, if it changed."""
        if self.dirty:
            store.set_meta(_KEY, json.dumps(self.to_texts()))
            store.set_meta(
                _RAN_KEY, json.dumps({k: format_time(t) for k, t in sorted(self.ran.items())})
            )
            self.dirty = False

    # -- the state document ---------------------------------------------------------------

    def to_texts(self) -> list[Any]:
        """Each entry's state, as the state document writes it: when a dated entry runs
        next (None: when the league's first match comes); for an entry triggered by the
        data, ``{"since": when it last ran, "season": the latest match's season}`` (None:
        no match yet)."""
        return [_moment_json(m) for m in self.moments]

    def adopt(self, texts: Any) -> None:
        """Take the schedule of a state document (``schedule``), validated.

        :raises StateError: not one state (or null) per ``[[resets]]`` entry.
        """
        if not isinstance(texts, list) or len(texts) != len(self.events):
            raise StateError(
                f"'schedule' must list one time (or null) per [[resets]] entry of the "
                f"ruleset ({len(self.events)}): {texts!r}"[:300]
            )
        moments = []
        for i, (event, text) in enumerate(zip(self.events, texts, strict=True)):
            try:
                moments.append(_parse_moment(event, text, f"schedule[{i}]"))
            except MatchError as exc:
                raise StateError(exc.reason) from None
        self.moments = moments
        self.dirty = True

    def imported(self, latest: datetime | None) -> None:
        """Players were imported: their records need not follow from the events that ran
        (every kind counts as never run), and the league's latest match may be theirs."""
        self.ran.clear()
        self.dirty = True
        if latest is not None and (self.latest is None or latest > self.latest):
            self.latest = latest

    # -- events -------------------------------------------------------------------------

    def note_ran(self, kind: str, at: datetime | None, latest: datetime | None) -> None:
        """An event ``kind`` ran by hand over every player, at ``at`` (None: now), when the
        league's latest match was ``latest``: every player who played by then went
        through it."""
        moments = [m for m in (at, latest) if m is not None]
        if moments:
            self.ran[kind] = max(moments)
        else:
            self.ran.pop(kind, None)
        self.dirty = True

    def due_in(self, store: Store, match: Match) -> bool:
        """Whether an event is due before ``match`` as the store has the schedule now
        (such a match takes the league-wide path, which runs the event first). Outside a
        transaction only: the league takes the schedule as the store has it."""
        if not self.events:
            return False
        # (``ran`` is not read: it matters only when an event is due, and then the
        # league-wide transaction reads the whole schedule again)
        self.moments = self._stored(store)
        if any(e.gap_days is not None for e in self.events):
            self.latest = store.latest_played()
        at = match.played_at
        for event, moment in zip(self.events, self.moments, strict=True):
            if moment is None:
                return True
            if isinstance(moment, Mark):
                if event.trigger == "season" and _season(event, match, 0) != moment.season:
                    return True
                if event.trigger == "gap" and self._gap(event, at):
                    return True
            elif moment <= at:
                return True
        return False

    def due_by(self, at: datetime, season: str | int | None = None) -> bool:
        """Whether a prediction at ``at`` meets an event: a dated one due by then, a gap
        longer than ``gap_days`` since the league's latest match, or (``season`` given) a
        season field's change."""
        return any(
            (m is not None and not isinstance(m, Mark) and m <= at)
            or (e.gap_days is not None and self._gap(e, at))
            or _new_season(e, m, season)
            for e, m in zip(self.events, self.moments, strict=True)
        )

    def _gap(self, event: ResetSchedule, at: datetime) -> bool:
        assert event.gap_days is not None
        latest = self.latest
        return latest is not None and (at - latest).total_seconds() > event.gap_days * 86400.0

    def run_due(self, match: Match, run: Run) -> None:
        """Run the events due before ``match``: the dated ones due at or before its time
        (:meth:`run_dated`), then, in file order, those its data triggers (a new season
        value; a long gap since the league's previous match). A data-triggered event runs
        at the match's time; its ``since`` is when the entry last ran (or the league's
        first match).

        :raises MatchError: the match has no value (or a value that is not a string or an
            integer) for an entry's ``season_field``.
        """
        at = match.played_at
        self.run_dated(at, run)
        for i, event in enumerate(self.events):
            if event.trigger == "dates":
                continue
            mark = self.moments[i]
            season = _season(event, match, i) if event.trigger == "season" else None
            assert mark is None or isinstance(mark, Mark)
            if mark is None:  # the league's first match: no season has ended
                self.moments[i] = Mark(at, season)
                self.dirty = True
                continue
            if event.trigger == "season" and season == mark.season:
                continue
            if event.trigger == "gap" and not self._gap(event, at):
                continue
            self._run(run, event.kind, at, mark.since, None)
            self.moments[i] = Mark(at, season)
            self.dirty = True
        if self.latest is None or at > self.latest:
            self.latest = at

    def _run(
        self, run: Run, kind: str, moment: datetime, since: datetime | None, every: float | None
    ) -> int:
        changed = run(kind, moment, since, every)
        self.ran[kind] = moment
        return changed

    def _steps(self, dated: list[int], at: datetime) -> dict[int, timedelta]:
        """Each dated entry's step (``every_days``); an entry anchored at the league's
        first match is placed one step after ``at``, that match's time."""
        moments = self.moments
        steps: dict[int, timedelta] = {}
        for i in dated:
            steps[i] = timedelta(days=self.events[i].every_days or 0.0)
            if moments[i] is None:  # anchored at the league's first match
                moments[i] = at + steps[i]
                self.dirty = True
        return steps

    def run_dated(self, at: datetime, run: Run) -> None:
        """Run, in time order, every dated event due at or before ``at``:
        ``run(kind, moment, since, every_days) -> records changed``, ``since`` being the
        event's previous moment (``moment`` less ``every_days``).

        Catch-up is cheap: once every entry's latest run changed no record (and nothing
        changed since), no later run can change one before the next match, so the
        schedule jumps past ``at`` without running them (the contract of
        ``rankcraft_reset``: an event is a function of the records, its kind, and which
        players played since the previous event). An entry's first run in a catch-up
        does not count as quiet: the period it closes may hold the latest matches, while
        every later run closes a period nobody played in (a decay that spares the players
        of the first period still has work in the second).

        With more than one event due, :attr:`progress` (when set) is called with the
        events handled and the events due (a terminal draws a bar).
        """
        dated = [i for i, e in enumerate(self.events) if e.every_days is not None]
        if not dated:
            return
        moments = self.moments
        steps = self._steps(dated, at)
        pending = {i: m for i in dated if isinstance(m := moments[i], datetime) and m <= at}
        total = sum((at - m) // steps[i] + 1 for i, m in pending.items())
        report = self.progress if total > 1 else None
        done = 0
        quiet: set[int] = set()
        ran: set[int] = set()
        while True:
            due = min(
                ((m, i) for i in dated if isinstance(m := moments[i], datetime) and m <= at),
                default=None,
            )
            if due is None:
                if report is not None:
                    report(total, total)
                return
            moment, i = due
            step = steps[i]
            self.dirty = True
            if len(quiet) == len(dated):  # at rest: skip to the first moment after at
                times = (at - moment) // step + 1
                moments[i] = _later(moment, step, times, at)
                done += times
                continue
            event = self.events[i]
            changed = self._run(run, event.kind, moment, moment - step, event.every_days)
            moments[i] = _later(moment, step, 1, at)
            done += 1
            if report is not None:
                report(done, total)
            if changed:
                quiet.clear()
            elif i in ran:  # (an entry's first run may close a period with play in it: only
                quiet.add(i)  # a run over a period nobody played in proves the league at rest)
            ran.add(i)


@attrs.frozen
class Coming:
    """The runs of one ``[[resets]]`` entry that a match at a later time would set off
    (:func:`coming`).

    Attributes:
        kind: the event's kind (``soft``, ``hard`` ...). runs: how many times it runs.
        first, last: the moments of its first and last run.
        every_days: its period (None: an event a long gap in play sets off).
    """

    kind: str
    runs: int
    first: datetime
    last: datetime
    every_days: float | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "runs": self.runs,
            "first": format_time(self.first),
            "last": format_time(self.last),
            "every_days": self.every_days,
        }


def coming(seasons: Seasons, at: datetime) -> list[Coming]:
    """The season events a match at ``at`` would run first, as the schedule stands (read
    it with :meth:`Seasons.load`): each dated entry due by then, with how many times it
    runs (a catch-up runs every one, in time order), and each entry a gap longer than its
    ``gap_days`` since the league's latest match sets off. Entries a season field sets
    off are not known before the match's ``meta`` is; nothing is run or changed.

    >>> from rankcraft.ruleset import load_ruleset
    >>> from rankcraft.store import MemoryStore
    >>> from datetime import UTC
    >>> weekly = Seasons(load_ruleset("skyweaver"))
    >>> weekly.load(MemoryStore())
    >>> weekly.moments = [datetime(2024, 1, 8, tzinfo=UTC), datetime(2024, 1, 29, tzinfo=UTC)]
    >>> [(c.kind, c.runs, c.last.date().isoformat())
    ...  for c in coming(weekly, datetime(2024, 3, 1, tzinfo=UTC))]
    [('soft', 8, '2024-02-26'), ('hard', 2, '2024-02-26')]
    """
    out = []
    for event, moment in zip(seasons.events, seasons.moments, strict=True):
        if isinstance(moment, datetime) and event.every_days is not None and moment <= at:
            step = timedelta(days=event.every_days)
            runs = (at - moment) // step + 1
            last = moment + step * (runs - 1)
            out.append(Coming(event.kind, runs, moment, last, event.every_days))
        elif isinstance(moment, Mark) and event.trigger == "gap" and seasons._gap(event, at):
            out.append(Coming(event.kind, 1, at, at, None))
    return out


def season_of(ruleset: Ruleset, first: datetime) -> Callable[[datetime], tuple[datetime, datetime]]:
    """The season a time falls in, as ``time -> (start, end)`` (end excluded). Seasons
    are the periods between the runs of the ruleset's least frequent ``[[resets]]`` event
    (the largest ``every_days``: Skyweaver's four-weekly hard reset), counted as the
    league counts them: from the event's ``start``, else from the first match
    (``first``). Without dated ``[[resets]]`` (none, or only events a season field or
    a gap in the data triggers): calendar years (UTC).

    >>> from rankcraft.ruleset import load_ruleset, loads_ruleset
    >>> two_weeks = loads_ruleset(
    ...     'name = "x"\\n[update]\\nplugin = "elo"\\n[reset]\\nplugin = "regress"\\n'
    ...     '[[resets]]\\nkind = "season"\\nevery_days = 14.0\\n')
    >>> season = season_of(two_weeks, datetime(2024, 1, 1, 12, tzinfo=UTC))
    >>> [t.isoformat() for t in season(datetime(2024, 1, 20, tzinfo=UTC))]
    ['2024-01-15T12:00:00+00:00', '2024-01-29T12:00:00+00:00']
    >>> first = datetime(2024, 5, 1, tzinfo=UTC)
    >>> [t.year for t in season_of(load_ruleset("elo"), first)(first)]
    [2024, 2025]
    >>> by_field = loads_ruleset(
    ...     'name = "y"\\n[update]\\nplugin = "elo"\\n[reset]\\nplugin = "regress"\\n'
    ...     '[[resets]]\\nkind = "season"\\nseason_field = "meta.season"\\n')
    >>> [t.year for t in season_of(by_field, first)(first)]
    [2024, 2025]
    """
    dated = [(r.every_days, r) for r in ruleset.resets if r.every_days is not None]
    if not dated:

        def year(at: datetime) -> tuple[datetime, datetime]:
            start = datetime(at.year, 1, 1, tzinfo=UTC)
            return start, _clamped(start, lambda: datetime(at.year + 1, 1, 1, tzinfo=UTC))

        return year
    days, longest = max(dated, key=lambda item: item[0])
    origin = longest.start_time or first
    step = timedelta(days=days)

    def period(at: datetime) -> tuple[datetime, datetime]:
        start = _clamped(origin, lambda: origin + step * ((at - origin) // step))
        return start, _clamped(start, lambda: start + step)

    return period


def _clamped(moment: datetime, later: Callable[[], datetime]) -> datetime:
    """``later()``, or the last time a date holds where it would pass year 9999."""
    try:
        return later()
    except (OverflowError, ValueError):
        return datetime.max.replace(tzinfo=UTC)


def _season(event: ResetSchedule, match: Match, index: int) -> str | int:
    """``match``'s value of the entry's season field.

    :raises MatchError: absent, or not a string or an integer.
    """
    try:
        value = event.season_of(match.meta)
    except ValueError as exc:
        raise MatchError(f"match {match.id!r}: {exc}") from None
    if value is None:
        raise MatchError(
            f"match {match.id!r} has no '{event.season_field}': [[resets]] entry {index} "
            f"({event.kind!r}) runs when the season it names changes"
        )
    return value


def _new_season(event: ResetSchedule, moment: Moment, season: str | int | None) -> bool:
    """Whether a match of ``season`` starts a new season for a ``season_field`` entry."""
    return (
        season is not None
        and event.season_field is not None
        and isinstance(moment, Mark)
        and season != moment.season
    )


def due_before(seasons: Seasons, at: datetime, run: Run, season: str | int | None = None) -> None:
    """Run, on a copy of the schedule, the events a match at ``at`` would meet, as
    :meth:`Seasons.run_due` would (same order, same catch-up rule); the league's schedule
    is not changed. For a prediction at a later time: ``run`` applies each event to a
    copy of the records. A prediction knows the next match's season only when given it
    (``season``): entries with a ``season_field`` run only then, when it changes the
    season; a gap longer than ``gap_days`` since the league's latest match runs its
    entry."""
    if not seasons.events:
        return
    copy = Seasons.__new__(Seasons)
    copy.events = seasons.events
    copy.moments = [
        at if m is None and e.every_days is not None else m
        for e, m in zip(seasons.events, seasons.moments, strict=True)
    ]
    copy.latest = seasons.latest
    copy.ran = dict(seasons.ran)
    copy.dirty = False
    copy.progress = None
    copy.run_dated(at, run)
    for i, event in enumerate(copy.events):
        mark = copy.moments[i]
        if isinstance(mark, Mark) and (
            (event.gap_days is not None and copy._gap(event, at))
            or _new_season(event, mark, season)
        ):
            copy._run(run, event.kind, at, mark.since, None)


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
