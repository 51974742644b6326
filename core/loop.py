"""The one rating loop: every match rankcraft rates goes through :meth:`Loop.run`.

``League.record`` (a batch of one), ``record_many``, ``replay``, ``evaluate``, ``tune``, the
lab and the streaming :class:`rankcraft.Rater` all hand their already-validated matches
to this loop. It calls the ruleset's hooks, bound once by :class:`rankcraft.steps.Steps`,
on the players' rows (:mod:`rankcraft.rows`):

- the commonest match (two sides of one player, rated match by match, no rank layer, an
  update that takes no context) is written out here (:meth:`Loop.duel`), the same hooks
  in the same order as the general steps, so the same numbers;
- every other shape goes to the general steps (:class:`rankcraft.generalsteps.GeneralSteps`).

**Copies taken once per batch instead of an undo log per match.** The loop never changes
a committed row: the first time a transaction meets a player, the unit of work copies the
player's row (:meth:`rankcraft.unit.UnitOfWork.take`: the committed row goes into its undo
log, the copy into the league's rows), and every later match of the transaction changes
that copy in place. Readers in the transaction see each change at once; a failed
transaction puts the committed rows back.

**History is optional.** With ``keep`` the loop builds each match's
:class:`~rankcraft.rated.Rated` entry (the report: states before, used and after, and
the factors ``rankcraft_explain`` gives) and hands it over; without it (the streaming
rater, a scored replay) no entry and no factor is made, and a duel costs little more
than its hooks.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Protocol

from .answers import duel_pair, finite
from .bound import Bound
from .errors import DuplicateMatchError, MatchError, PluginError
from .generalsteps import even_times, late
from .model import Match
from .rated import Rated
from .rows import LAST, MATCHES, PENDING, SKILL, Row

Stored = Callable[[str], Row | None]
"""A player's row by id, or None for a player the league has not seen."""
Observe = Callable[[Match, Stored], None]
"""Called before each match is rated (its season events run), with the rows as the match
meets them: what a scored replay forecasts from."""

__all__ = ["Batch", "Loop", "Observe", "Stored"]


class Batch(Protocol):
    """What the loop rates in: the open transaction's rows (the league's unit of work,
    :class:`rankcraft.unit.UnitOfWork`)."""

    rows: dict[str, Row | None]
    """Every row the league holds, the transaction's changes included (None: a player a
    database does not have)."""
    touched: dict[str, Row]
    """The rows the transaction has taken (its copies, changed in place)."""
    runs: int
    """How many times a loop has run on these rows (:meth:`Loop.run` adds one)."""

    def take(self, player: str) -> Row:
        """The player's row to change in place (copied on the transaction's first take)."""
        ...

    def put_all(self, changes: Iterable[tuple[str, Row]]) -> None:
        """Replace rows with new ones (the general steps return new rows)."""
        ...


class Loop:
    """The rating loop of one ruleset, over the hooks its :class:`~rankcraft.steps.Steps`
    resolved.

    :param steps: the ruleset's bound hooks (:class:`~rankcraft.bound.Bound`).
    """

    def __init__(self, steps: Bound) -> None:
        self.steps = steps
        # the written-out duel serves rulesets rated match by match, without rank layer
        # and with an update that takes no context
        self.duels = steps.duel_ok

    def run(
        self,
        matches: Iterable[Match],
        batch: Batch,
        *,
        keep: Callable[[Rated], None] | None = None,
        seen: set[str] | None = None,
        skip_seen: bool = False,
        run_due: Callable[[Match], None] | None = None,
        observe: Observe | None = None,
        expected: list[tuple[float, ...]] | None = None,
        progress: Callable[[int], None] | None = None,
        position: int | None = None,
    ) -> tuple[Rated | None, int, int]:
        """Rate ``matches`` in order into ``batch`` (the open transaction).

        ``keep``: called with each match's :class:`Rated` entry (None: no history).
        ``seen``: ids already recorded, passed over with ``skip_seen``, else refused.
        ``run_due``: runs the season events due before a match. ``observe``:
        :data:`Observe`. ``expected``: each match's probabilities are appended.
        ``progress``: called with ``position`` plus the matches handled at each multiple
        of 1000 (``position`` also goes into a :class:`MatchError`'s ``item``). Returns
        the last entry kept, how many matches were rated and how many passed over. On
        :class:`MatchError` (late, repeated) or :class:`PluginError` (naming the match)
        the transaction must be rolled back."""
        batch.runs += 1  # (rows change in place: caches keyed on rows compare this)
        one = self.one(batch, keep is not None)
        view = batch.rows.get
        rated = skipped = 0
        base, entry, match = position or 0, None, None
        try:
            for match in matches:
                if seen is not None and match.id in seen:
                    if not skip_seen:
                        raise DuplicateMatchError(
                            f"match id {match.id!r} is already recorded", match_id=match.id
                        )
                    skipped += 1
                else:
                    if run_due is not None:
                        run_due(match)
                    if observe is not None:
                        observe(match, view)
                    said, entry = one(match)
                    if keep is not None:
                        keep(entry)
                    if expected is not None:
                        expected.append(said)
                    rated += 1
                if progress is not None and (base + rated + skipped) % 1000 == 0:
                    progress(base + rated + skipped)
        except (PluginError, MatchError) as exc:
            raise _placed(exc, match, position, rated + skipped)  # noqa: B904 (chained there)
        return (entry if keep is not None else None), rated, skipped

    def one(self, batch: Batch, keep: bool) -> Callable[[Match], Any]:
        """The function that rates one match in ``batch``: ``match -> (probabilities,
        entry)``, by the written-out duel when the match's shape allows (two sides of one
        player, no quitter, both playing alike, no pending result), else by the general
        steps; the entry is None for a duel without ``keep``. (A closure: what it calls
        are its free variables, read faster than attributes in the per-match path.)"""
        duel = self.duel(keep)
        general, duels, even = self.steps.rate_general, self.duels, even_times
        touched, take, put_all, view = batch.touched, batch.take, batch.put_all, batch.rows.get

        def one(match: Match) -> tuple[tuple[float, ...], Rated | None]:
            teams = match.teams
            if duels and len(teams) == 2 and not match.quit and even(match.seconds_played):
                side_a, side_b = teams
                if len(side_a) == 1 and len(side_b) == 1:
                    row_a = touched.get(side_a[0]) or take(side_a[0])
                    row_b = touched.get(side_b[0]) or take(side_b[0])
                    if not (row_a[PENDING] or row_b[PENDING]):  # (else a deferred loss)
                        return duel(match, row_a, row_b)
            changes, entry = general(match, view)
            put_all(changes)
            return entry[1], entry

        return one

    def duel(
        self, keep: bool
    ) -> Callable[[Match, Row, Row], tuple[tuple[float, ...], Rated | None]]:
        """The written-out 1-v-1: ``(match, row_a, row_b) -> (probabilities, entry)``,
        both taken rows changed in place (:meth:`one` has checked the shape); with
        ``keep``, the match's entry with the factors ``rankcraft_explain`` gives."""
        steps = self.steps
        decay, decayed, expect, update = steps.decay, steps.decayed, steps.expect, steps.update
        fields, forms, explain = steps.fields, steps.forms, steps.explain
        singles, probabilities = steps.plain_singles, steps.probabilities

        def duel(match: Match, row_a: Row, row_b: Row) -> tuple[tuple[float, ...], Rated | None]:
            at = match.played_at
            last_a, last_b = row_a[LAST], row_b[LAST]
            if (last_a is not None and at < last_a) or (last_b is not None and at < last_b):
                _late_duel(match, row_a, row_b)
            before_a = a = row_a[SKILL]
            before_b = b = row_b[SKILL]
            if decay is not None:  # (idle time, as the general steps' prepare decays it)
                if last_a != at:
                    a = decayed(row_a, at)
                if last_b != at:
                    b = decayed(row_b, at)
            places = match.places
            score = 1.0 if places[0] < places[1] else 0.0 if places[0] > places[1] else 0.5
            lost, weight = 1.0 - score, match.weight
            if singles:  # (the core pairs the two)
                answer = expect([a, b], match.home, match)
                expected = duel_pair(answer) or probabilities(answer, 2)  # (raises)
                pairs_a: Any = ((b, score, weight),)
                pairs_b: Any = ((a, lost, weight),)
            else:  # (a joint team model: its own sides and pairings)
                expected, pairs_a, pairs_b = steps.joint_duel(a, b, match)
            (first,), (second,) = match.teams
            games_a, games_b = row_a[MATCHES], row_b[MATCHES]
            won_a, won_b = expected
            after_a = update(a, pairs_a, games_a, 0, match, won_a, score, "match", first, None)
            if type(after_a) is not tuple or len(after_a) != fields or not finite(after_a):
                steps.answered(after_a)  # (raises, naming plugin and hook)
            after_b = update(b, pairs_b, games_b, 1, match, won_b, lost, "match", second, None)
            if type(after_b) is not tuple or len(after_b) != fields or not finite(after_b):
                steps.answered(after_b)
            row_a[SKILL], row_a[MATCHES], row_a[LAST] = after_a, games_a + 1, at
            row_b[SKILL], row_b[MATCHES], row_b[LAST] = after_b, games_b + 1, at
            if not keep:
                return expected, None
            factors_a = factors_b = None
            if explain is not None:
                said = explain(a, pairs_a, games_a, 0, match, won_a, score, "match", first, after_a)
                factors_a = steps.shared(steps.explained(said))
                said = explain(b, pairs_b, games_b, 1, match, won_b, lost, "match", second, after_b)
                factors_b = steps.shared(steps.explained(said))
            changes = (
                (first, 0, before_a, a, after_a, None, None, factors_a),
                (second, 1, before_b, b, after_b, None, None, factors_b),
            )
            return expected, Rated((match, expected, changes, forms))

        return duel


def _placed(
    exc: PluginError | MatchError, match: Match | None, position: int | None, done: int
) -> Exception:
    """The error to raise for ``exc``, raised while rating ``match``: a plugin's broken
    contract names the match (a new :class:`PluginError` chained to it); a refused
    match takes its place in the caller's sequence as ``item`` (``position`` + ``done``)."""
    if isinstance(exc, PluginError):
        if match is None:
            return exc
        said = PluginError(f"{exc} (rating match {match.id!r})")
        said.__cause__ = exc
        return said
    if position is not None and exc.item is None:
        exc.item = position + done
    return exc


def _late_duel(match: Match, row_a: Row, row_b: Row) -> None:
    """Refuse a 1-v-1 earlier than the last match of one of its players (the first
    side's player named first, as the general steps name them)."""
    (first,), (second,) = match.teams
    for pid, row in ((first, row_a), (second, row_b)):
        last = row[LAST]
        if last is not None and match.played_at < last:
            late(match, pid, row)
