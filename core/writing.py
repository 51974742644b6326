"""Recording matches: one match in its own transaction, many in one (or one per
``commit_every``), the rating loop they share, and the close of a rating period.

:class:`Writer` rates with the ruleset's steps (:mod:`rankcraft.steps`) and keeps the
results in the unit of work (:mod:`rankcraft.unit`), running the season events due before
each match (:mod:`rankcraft.seasons`); :meth:`Writer.rate_all` is the loop every match
goes through.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

import attrs

from .errors import DuplicateMatchError, LateMatchError, MatchError, RankcraftError
from .io import parse_match
from .loop import Loop, Observe
from .model import Match, Report
from .rated import Rated
from .refits import Refits
from .rows import PENDING
from .ruleset import Ruleset
from .seasons import Run, Seasons
from .steps import Steps
from .store import Store
from .unit import FLUSH_EVERY, UnitOfWork

CHUNK = 2000
"""record_many reads this many matches ahead, to ask the store which it has already and
to read their players' rows in one query."""


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


def parsed_item(item: Match | Mapping[str, Any], position: int) -> Match:
    """A match dict validated (a :class:`Match` is already), a refusal naming its 0-based
    position."""
    if isinstance(item, Match):
        return item
    try:
        return parse_match(item)
    except MatchError as exc:
        if exc.item is None:
            exc.item = position
        raise


def _parse_chunk(
    chunk: list[Match | Mapping[str, Any]],
) -> tuple[list[Match], MatchError | None]:
    """A chunk's matches validated up to the first bad one, and its refusal (None when
    all are good): the caller rates those before it, then raises it in its turn."""
    parsed: list[Match] = []
    for item in chunk:
        try:
            parsed.append(item if isinstance(item, Match) else parse_match(item))
        except MatchError as exc:
            return parsed, exc
    return parsed, None


def _id_of(item: Any) -> str | None:
    """The id of a match or match dict handed to record_many, when it has a valid one."""
    mid = item.get("id") if type(item) is dict else getattr(item, "id", None)
    return mid if type(mid) is str else None


Late = Callable[[list[Any], bool, int, str | None], RecordSummary]
"""Places matches, some late, at their times and re-rates after them: ``(matches or match
dicts, skip_seen, commit_every, by) -> summary``
(:meth:`rankcraft.corrections.Corrections.record_late`)."""


class Writer:
    """Records matches into one league.

    :param ruleset: the league's ruleset (its period mode). :param store: its store.
    :param unit: its unit of work. :param steps: its steps. :param seasons: its schedule.
    :param run_reset: runs one season event (:data:`rankcraft.seasons.Run`).
    """

    def __init__(
        self,
        ruleset: Ruleset,
        store: Store,
        unit: UnitOfWork,
        steps: Steps,
        seasons: Seasons,
        run_reset: Run,
        refits: Refits | None = None,
    ) -> None:
        self.ruleset = ruleset
        self.store = store
        self.unit = unit
        self.steps = steps
        self.seasons = seasons
        self.run_reset = run_reset
        self.refits = refits
        self.loop = Loop(steps)
        # places a late match and re-rates after it (the league's corrections, where the
        # ruleset says ``[history] late = "rerate"``); None: a late match is refused
        self.late: Late | None = None

    def record(self, match: Match | Mapping[str, Any], by: str | None = None) -> Report:
        """Rate one match and store it with its report (:meth:`record_one`); a late
        match, where the ruleset re-rates them, takes its place in time (outside a batch;
        ``by``: the API token's name its audit entry keeps)."""
        m = match if isinstance(match, Match) else parse_match(match)
        try:
            return self.record_one(m)
        except LateMatchError:
            if self.late is None or self.unit.in_transaction:
                raise
            report = self.late([m], False, 0, by).last
            assert report is not None
            return report

    def record_one(self, m: Match) -> Report:
        """Rate one match and store it with its report (one transaction).

        In PostgreSQL the transaction locks only this match's players and reads their
        records as other processes left them, so that matches on other players commit in
        parallel and no process rates from a stale record. (A match whose season event
        is due, and any match in SQLite, takes the league-wide writer lock instead.)

        :param m: the match.
        :returns: the match's :class:`Report`.
        :raises MatchError: the match is malformed, repeats an id, or goes back in time;
            nothing is changed.
        """
        unit = self.unit
        # (a refit may change every player: league-wide too)
        one_match = unit.row_locks and not unit.in_transaction and self.refits is None
        one_match = one_match and not self.seasons.due_in(self.store, m)
        players = sorted({p for side in m.teams for p in side})
        with unit.transaction(players, m.id) if one_match else unit.transaction():
            # (inside the transaction: another process may have recorded it; the one-match
            # path's lock_players has checked already)
            if m.id in unit.seen or (not one_match and self.store.recorded((m.id,))):
                raise DuplicateMatchError(f"match id {m.id!r} is already recorded", match_id=m.id)
            unit.fetch(players)
            entry = self.rate(m)
            if len(unit.pending) >= FLUSH_EVERY:  # (many records in one batch)
                unit.flush()
        return entry.report

    def rate(self, match: Match) -> Rated:
        """Rate one match in the open transaction (see :meth:`rate_all`)."""
        entry = self.rate_all((match,))[0]
        assert entry is not None
        return entry

    def rate_all(
        self,
        matches: Iterable[Match],
        seen: set[str] | None = None,
        skip_seen: bool = False,
        progress: Callable[[int], None] | None = None,
        position: int | None = None,
        *,
        keep: bool = True,
        observe: Observe | None = None,
        expected: list[tuple[float, ...]] | None = None,
    ) -> tuple[Rated | None, int, int]:
        """Run due season events, rate each match and keep the result in the open
        transaction: what ``record`` and ``record_many`` do for every match, through the
        one rating loop (:meth:`rankcraft.loop.Loop.run`, whose docstring says the
        arguments), in the unit of work's open transaction; with ``keep`` False no
        history is made (a scored replay, the streaming rater).

        Returns the last entry, and how many matches were rated and passed over."""
        return self.loop.run(
            matches,
            self.unit,
            keep=self.unit.add if keep else None,
            seen=seen,
            skip_seen=skip_seen,
            run_due=before_each(self.seasons, self.run_reset, self.refits),
            observe=observe,
            expected=expected,
            progress=progress,
            position=position,
        )

    def stream(
        self,
        matches: Iterable[Match | Mapping[str, Any]],
        *,
        expected: list[tuple[float, ...]] | None = None,
        observe: Observe | None = None,
        close: bool = True,
    ) -> int:
        """Rate matches in order, in one transaction, keeping no history: no match, no
        report and no id is kept, so a repeated id is not refused (the players' records,
        the season events and the periods are the league's as ever).

        :param matches: :class:`Match` objects (validated once: a history parsed once is
            rated many times without parsing again) or match dicts, in time order.
        :param expected: each match's pre-match probabilities are appended here.
        :param observe: called before each match is rated (:data:`rankcraft.loop.Observe`).
        :param close: in ``batch`` mode, close the open rating period at the end.
        :returns: the number of matches rated.
        :raises MatchError: the first bad match (its 0-based position as ``item``);
            nothing is changed.
        """
        with self.unit.transaction():
            if self.unit.lazy:  # over a database, a chunk at a time
                rated = self._stream_chunks(iter(matches), expected, observe)
            else:  # in memory every player is here: each match read as it is rated
                each = (parsed_item(m, i) for i, m in enumerate(matches))
                _, rated, _ = self.rate_all(
                    each, position=0, keep=False, observe=observe, expected=expected
                )
            if close and self.ruleset.period.mode == "batch":
                self.close_period()
        return rated

    def _stream_chunks(
        self,
        iterator: Iterator[Match | Mapping[str, Any]],
        expected: list[tuple[float, ...]] | None,
        observe: Observe | None,
    ) -> int:
        """:meth:`stream` over a database: each chunk's players read in one query, its
        matches rated up to a bad one, which is then raised in its turn (as
        :meth:`record_many` does)."""
        rated = 0
        while chunk := list(itertools.islice(iterator, CHUNK)):
            parsed, failure = _parse_chunk(chunk)
            self.unit.fetch({p for m in parsed for side in m.teams for p in side})
            _, done, _ = self.rate_all(
                parsed, position=rated, keep=False, observe=observe, expected=expected
            )
            rated += done
            if failure is not None:
                if failure.item is None:
                    failure.item = rated
                raise failure
        return rated

    def record_many(
        self,
        matches: Iterable[Match | Mapping[str, Any]],
        skip_seen: bool = False,
        progress: Callable[[int], None] | None = None,
        close: bool = True,
        commit_every: int = 0,
    ) -> RecordSummary:
        """:meth:`record_in_order`; where the ruleset re-rates late matches (outside a
        batch), a late one makes the whole call place its matches at their times
        (:meth:`rankcraft.corrections.Corrections.late`), ids already recorded passed over
        (with ``skip_seen``, or when an earlier ``commit_every`` transaction kept them)."""
        if self.late is None or self.unit.in_transaction:
            return self.record_in_order(matches, skip_seen, progress, close, commit_every)
        items = list(matches)
        try:
            return self.record_in_order(items, skip_seen, progress, close, commit_every)
        except LateMatchError:
            return self.late(items, skip_seen, commit_every, None)

    def record_in_order(
        self,
        matches: Iterable[Match | Mapping[str, Any]],
        skip_seen: bool = False,
        progress: Callable[[int], None] | None = None,
        close: bool = True,
        commit_every: int = 0,
    ) -> RecordSummary:
        """Rate matches in order: in one transaction (nothing is kept on any error), or
        in one transaction per ``commit_every`` matches.

        :param matches: :class:`Match` objects or match dicts, in time order.
        :param skip_seen: pass over ids already recorded instead of refusing them.
        :param progress: called with the count of matches handled, every 1000 matches.
        :param close: in ``batch`` mode, close the open rating period at the end (a replay
            does; a caller feeding one history in several calls closes only the last).
        :param commit_every: > 0: commit every that many matches; an error then keeps the
            matches committed before it (its ``committed`` attribute counts them).
        :raises MatchError: the first bad match (its 0-based position in ``matches`` as
            ``item``; with its line when read from a file).

        Matches are read in chunks of a few thousand: before each chunk the matches rated
        so far are handed to the store, which then says which of the chunk's ids it has
        already. Memory therefore holds one chunk, not every id of the history.
        """
        if commit_every <= 0:
            with self.unit.transaction():
                summary = self._record_all(iter(matches), skip_seen, progress, 0)
                if close and self.ruleset.period.mode == "batch":
                    self.close_period()
            return summary
        iterator = iter(matches)
        recorded = skipped = 0
        last = None
        try:
            while chunk := list(itertools.islice(iterator, commit_every)):
                with self.unit.transaction():
                    done = self._record_all(iter(chunk), skip_seen, None, recorded + skipped)
                recorded += done.recorded
                skipped += done.skipped
                last = done.last or last
                if progress is not None:
                    progress(recorded + skipped)
            if close and self.ruleset.period.mode == "batch":
                self.close_period()
        except RankcraftError as exc:  # (a bad match, or the input failing to be read)
            exc.committed = recorded
            raise
        return RecordSummary(recorded=recorded, skipped=skipped, last=last)

    def _record_all(
        self,
        iterator: Iterator[Match | Mapping[str, Any]],
        skip_seen: bool,
        progress: Callable[[int], None] | None,
        base: int,
    ) -> RecordSummary:
        """The loop of :meth:`record_many` inside its transaction; ``base``: the position
        of the first item in the caller's sequence."""
        unit = self.unit
        store = self.store
        seen = unit.seen
        lazy = unit.lazy
        recorded = skipped = 0
        position = base
        last: Rated | None = None
        try:
            while chunk := list(itertools.islice(iterator, CHUNK)):
                if unit.pending:  # hand the matches over: the store answers for their ids
                    last = unit.pending[-1]
                    store.write((), unit.pending)  # (players: once, at the commit)
                    unit.pending = []
                seen.clear()
                seen.update(store.recorded([i for i in map(_id_of, chunk) if i is not None]))
                parsed, failure = _parse_chunk(chunk)
                if lazy:  # the chunk's players, in one query
                    unit.fetch({p for m in parsed for side in m.teams for p in side})
                _, done, passed = self.rate_all(parsed, seen, skip_seen, progress, position)
                recorded += done
                skipped += passed
                position += done + passed
                if failure is not None:
                    raise failure
        except MatchError as exc:
            if exc.item is None:
                exc.item = position
            raise
        if unit.pending:
            last = unit.pending[-1]
        return RecordSummary(
            recorded=recorded, skipped=skipped, last=None if last is None else last.report
        )

    def close_period(self) -> int:
        """Rate every pending result now: closes the open ``batch`` period (a replay does
        this at its end), and commits ``live`` periods. Deferred losses (``match`` mode)
        stay pending until the player's next match.

        :returns: the number of players whose pending results were rated.
        """
        if self.ruleset.period.mode == "match":
            return 0
        unit = self.unit
        with unit.transaction():
            known = unit.known()
            waiting = [pid for pid, row in known.items() if row[PENDING]]
            for pid in waiting:
                unit.put(pid, self.steps.commit_pending(pid, known[pid]))
        return len(waiting)


def before_each(
    seasons: Seasons, run_reset: Run, refits: Refits | None
) -> Callable[[Match], None] | None:
    """What runs before each match is rated: a history model's refit, then the season
    events due (None: nothing)."""
    if refits is None:
        return (lambda m: seasons.run_due(m, run_reset)) if seasons.events else None
    if not seasons.events:
        return refits.due

    def due(match: Match) -> None:
        refits.due(match)
        seasons.run_due(match, run_reset)

    return due
