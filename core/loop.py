"""The one rating loop: every match rankcraft rates goes through :meth:`Loop.run`.

``League.record`` (a batch of one), ``record_many``, ``replay``, ``evaluate``, ``tune``, the
lab and the streaming :class:`rankcraft.Rater` all hand their already-validated matches
to this loop. It calls the ruleset's hooks, bound once by :class:`rankcraft.steps.Steps`,
on the players' rows (:mod:`rankcraft.rows`):

- the commonest match (two sides of one player, rated match by match, no rank layer, an
  update that takes no context) is written out here (:meth:`Loop.duel`), the same hooks
  in the same order as the general steps, so the same numbers;
- every other shape goes to the general steps (:class:`rankcraft.generalsteps.GeneralSteps`).

**Scratch rows instead of an undo log.** The loop never changes a row it was given: the
first time a batch meets a player, the player's row is copied into the batch's *scratch*
(a dict of rows by id), and every later match of the batch changes that copy in place.
The caller takes the scratch when the batch succeeds (the league hands it to its unit of
work, one row per player) and drops it when the batch fails: that is the transaction. A
season event due inside the batch first takes the scratch (``flush``), since it reads
every player.

**History is optional.** With ``keep`` the loop builds each match's
:class:`~rankcraft.rated.Rated` entry (the report: states before, used and after, and
the factors ``rankcraft_explain`` gives) and hands it over; without it (the streaming
rater, a scored replay) no entry and no factor is made, and a duel costs little more
than its hooks.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from .errors import DuplicateMatchError, MatchError, PluginError
from .generalsteps import checked, duel_sum, late
from .model import Match
from .rated import Rated
from .rows import LAST, MATCHES, PENDING, SKILL, Row

if TYPE_CHECKING:
    from .steps import Steps

Stored = Callable[[str], Row | None]
"""A player's committed row by id, or None for a player the league has not seen."""
Observe = Callable[[Match, Stored], None]
"""Called before each match is rated (its season events run), with the rows as the match
meets them: what a scored replay forecasts from."""

__all__ = ["Loop", "Observe", "Stored"]


class Loop:
    """The rating loop of one ruleset, over the hooks its :class:`~rankcraft.steps.Steps`
    resolved.

    :param steps: the ruleset's steps.
    """

    def __init__(self, steps: Steps) -> None:
        self.steps = steps
        self.new_row = steps.new_row
        self.rate_general = steps.rate_general
        # the written-out duel serves rulesets rated match by match, without rank layer
        # and with an update that takes no context
        self.duels = steps.duel_ok
        self.decay = steps.decay
        self.decayed = steps.decayed
        self.plain_singles = steps.plain_singles
        self.expect = steps.expect
        self.update = steps.update
        self.explain = steps.explain
        self.fields = steps.fields
        self.forms = steps.forms

    def run(
        self,
        matches: Iterable[Match],
        stored: Stored,
        scratch: dict[str, Row],
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
        """Rate ``matches`` in order into ``scratch``.

        :param stored: the committed rows (never changed).
        :param scratch: the batch's rows: a player's row is copied here from ``stored``
            (or made new) when the batch first meets them, then changed in place.
        :param keep: called with each match's :class:`Rated` entry (None: no history).
        :param seen: ids already recorded: passed over with ``skip_seen``, else refused
            (:class:`DuplicateMatchError`); the ids rated are not added (``keep`` does).
        :param run_due: runs the season events due before a match (it must take the
            scratch first when an event runs: see the module's docstring).
        :param observe: called before each match is rated (:data:`Observe`).
        :param expected: each rated match's pre-match probabilities are appended here.
        :param progress: called with ``position`` plus the matches handled, at each
            multiple of 1000; ``position`` also goes into a :class:`MatchError`'s ``item``.
        :returns: the last entry kept (None without ``keep``), how many matches were rated
            and how many passed over.
        :raises MatchError: a match refused by the league (late, repeated); the scratch
            is then incomplete and must be dropped.
        :raises PluginError: a plugin broke its contract (the match is named).
        """
        get = scratch.get
        new_row = self.new_row
        duels, duel, general = self.duels, self.duel, self.rate_general
        rated = skipped = 0
        base = position or 0
        entry = match = None

        def view(pid: str) -> Row | None:
            return get(pid) or stored(pid)

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
                    teams = match.teams
                    if (
                        duels
                        and len(teams) == 2
                        and len(teams[0]) == 1
                        and len(teams[1]) == 1
                        and not match.quit
                        and match.seconds_played is None
                    ):
                        (first,), (second,) = teams
                        row_a = get(first)
                        if row_a is None:
                            row_a = scratch[first] = _copy(stored(first)) or new_row()
                        row_b = get(second)
                        if row_b is None:
                            row_b = scratch[second] = _copy(stored(second)) or new_row()
                        if row_a[PENDING] or row_b[PENDING]:  # (an imported deferred loss)
                            said, entry = _general(general, match, view, scratch)
                        else:
                            said, entry = duel(match, row_a, row_b, keep is not None)
                    else:
                        said, entry = _general(general, match, view, scratch)
                    if keep is not None:
                        keep(entry)
                    if expected is not None:
                        expected.append(said)
                    rated += 1
                if progress is not None and (base + rated + skipped) % 1000 == 0:
                    progress(base + rated + skipped)
        except PluginError as exc:  # (a plugin broke its contract: say on which match)
            if match is None:
                raise
            raise PluginError(f"{exc} (rating match {match.id!r})") from exc
        except MatchError as exc:
            if position is not None and exc.item is None:
                exc.item = position + rated + skipped
            raise
        return (entry if keep is not None else None), rated, skipped

    def duel(
        self, match: Match, row_a: Row, row_b: Row, keep: bool
    ) -> tuple[tuple[float, ...], Rated | None]:
        """A 1-v-1 rated in place: two sides of one player, no quitter, no partial play,
        no pending result (the caller has checked). Changes both scratch rows; returns the
        pre-match probabilities and, with ``keep``, the match's entry."""
        at = match.played_at
        last_a, last_b = row_a[LAST], row_b[LAST]
        if (last_a is not None and at < last_a) or (last_b is not None and at < last_b):
            _late_duel(match, row_a, row_b)
        before_a, before_b = a, b = row_a[SKILL], row_b[SKILL]
        if self.decay is not None:  # (idle time, as the general steps' prepare decays it)
            if last_a != at:
                a = self.decayed(row_a, at)
            if last_b != at:
                b = self.decayed(row_b, at)
        places = match.places
        score = 1.0 if places[0] < places[1] else 0.0 if places[0] > places[1] else 0.5
        lost, weight = 1.0 - score, match.weight
        if self.plain_singles:  # (the core pairs the two)
            expected = tuple(self.expect([a, b], match.home, match))
            if len(expected) != 2 or not duel_sum(*expected):
                checked(expected, 2)  # (raises)
            pairs_a: Any = ((b, score, weight),)
            pairs_b: Any = ((a, lost, weight),)
        else:  # (a joint team model: its own sides and pairings, as the general steps ask)
            expected, pairs_a, pairs_b = self.steps.joint_duel(a, b, match)
        won_a, won_b = expected
        update, fields = self.update, self.fields
        (first,), (second,) = match.teams
        games_a, games_b = row_a[MATCHES], row_b[MATCHES]
        after_a = update(a, pairs_a, games_a, 0, match, won_a, score, "match", first, None)
        if type(after_a) is not tuple or len(after_a) != fields:
            raise self.steps.not_a_tuple(after_a)
        after_b = update(b, pairs_b, games_b, 1, match, won_b, lost, "match", second, None)
        if type(after_b) is not tuple or len(after_b) != fields:
            raise self.steps.not_a_tuple(after_b)
        row_a[SKILL], row_a[MATCHES], row_a[LAST] = after_a, games_a + 1, at
        row_b[SKILL], row_b[MATCHES], row_b[LAST] = after_b, games_b + 1, at
        if not keep:
            return expected, None
        factors_a = factors_b = None
        explain = self.explain
        if explain is not None:
            steps = self.steps
            said = explain(a, pairs_a, games_a, 0, match, won_a, score, "match", first, after_a)
            factors_a = steps.shared(steps.explained(said))
            said = explain(b, pairs_b, games_b, 1, match, won_b, lost, "match", second, after_b)
            factors_b = steps.shared(steps.explained(said))
        changes = (
            (first, 0, before_a, a, after_a, None, None, factors_a),
            (second, 1, before_b, b, after_b, None, None, factors_b),
        )
        return expected, Rated((match, expected, changes, self.forms))


def _copy(row: Row | None) -> Row | None:
    """A committed row's copy for the scratch (None stays None)."""
    return None if row is None else row.copy()


def _general(
    general: Callable[[Match, Stored], tuple[list[tuple[str, Row]], Rated]],
    match: Match,
    view: Stored,
    scratch: dict[str, Row],
) -> tuple[tuple[float, ...], Rated]:
    """A match of any shape by the general steps (which return new rows), into the
    scratch."""
    changes, entry = general(match, view)
    for pid, row in changes:
        scratch[pid] = row
    return entry[1], entry


def _late_duel(match: Match, row_a: Row, row_b: Row) -> None:
    """Refuse a 1-v-1 earlier than the last match of one of its players (the first
    side's player named first, as the general steps name them)."""
    (first,), (second,) = match.teams
    for pid, row in ((first, row_a), (second, row_b)):
        last = row[LAST]
        if last is not None and match.played_at < last:
            late(match, pid, row)
