"""The general rating steps: a match of every shape, in every period mode.

:class:`GeneralSteps` rates what the written-out 1-v-1 of :class:`rankcraft.steps.Steps`
leaves out (teams, free-for-alls, quitters, partial play, ``batch`` and ``live``
periods, a rank layer, an update that takes a context), in the order of docs/design.md:
load (a row as the match meets it: :meth:`GeneralSteps.prepare` rates stale pending
results and decays idle time), aggregate and expect, pair, then one participant at a
time update and project (:meth:`GeneralSteps.participant`). Like the steps it belongs to
it stores nothing: it takes the players' rows and returns their new rows.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any

from . import answers
from .answers import finite
from .bound import Bound
from .errors import LateMatchError
from .model import Match, PlayerContext, State, format_time, pair_score
from .rated import Rated
from .rows import BASE, LAST, MATCHES, PENDING, PERIOD, PERIOD_MATCHES, RANK, SKILL, Row


class GeneralSteps:
    """The general steps of one ruleset, over the hooks its :class:`~rankcraft.steps.Steps`
    resolved.

    :param steps: the steps whose hooks these use (read once, here; with their checks
        of ``rankcraft_explain``'s answer and the report factors as they keep them).
    """

    def __init__(self, steps: Bound) -> None:
        self.ruleset = steps.ruleset
        self.mode = steps.mode
        self.forms = steps.forms
        self.update = steps.update
        self.update_context = steps.update_context
        self.explain = steps.explain
        self.expect = steps.expect
        self.team = steps.team
        self.aggregate = steps.aggregate
        self.plain_singles = steps.plain_singles
        self.rank = steps.rank
        self.rank_context = steps.rank_context
        self.decay = steps.decay
        self.onset = steps.onset
        self.new_row = steps.new_row
        self.fields = len(steps.skill_names)  # (an update returns a tuple of this length)
        # a plugin's answers checked (:mod:`rankcraft.answers`), naming the plugin and hook
        self.answered = steps.answered
        self.rank_fields = len(steps.rank_names)  # (a rank returns a tuple of this length)
        self.probabilities = steps.probabilities
        self.team_plugin = steps.plugin_of["team"]
        self.explained = steps.explained
        self.shared = steps.shared

    # -- a row as a match meets it ------------------------------------------------------

    def decayed(self, row: Row, when: datetime) -> State:
        """The player's skill as it would stand at ``when`` (idle-time decay), for
        predictions; the row is not changed."""
        state = row[SKILL]
        last = row[LAST]
        if self.decay is not None and last is not None:
            days = max((when - last).total_seconds(), 0.0) / 86400.0
            periods = self.ruleset.period.periods(days)
            if periods > 0:
                state = self.decay(state, periods)
                if type(state) is not tuple or len(state) != self.fields or not finite(state):
                    self.answered(state, "decay")  # (raises, naming plugin and hook)
        return state

    def commit_pending(self, player: str, row: Row) -> Row:
        """Rate a row's pending results (a closed ``batch`` period, a ``live`` period that
        time has passed, or a deferred loss); returns the row without them."""
        new = row.copy()
        new[PENDING] = ()
        new[PERIOD_MATCHES] = 0
        if self.mode == "live":
            new[BASE] = None
            return new
        pending = row[PENDING]
        score = sum(p[1] * p[2] for p in pending) / max(sum(p[2] for p in pending), 1e-300)
        games = row[MATCHES] - row[PERIOD_MATCHES]
        context = None
        if self.update_context or self.rank_context:
            context = PlayerContext(None, player, 0, games, 0.5, score, pending, self.mode)
        args = (pending, games, 0, None, 0.5, score, self.mode, player)
        new[SKILL] = self.answered(self.update(row[SKILL], *args, context))
        if self.rank is not None:
            rank = self.rank(row[RANK], row[SKILL], new[SKILL], *args, context)
            new[RANK] = self.answered(rank, "rank")
        return new

    def prepare(self, player: str, row: Row, at: datetime, period: int | None) -> Row:
        """The row as a match at ``at`` meets it: stale pending results rated, idle time
        decayed. Returns ``row`` itself when nothing changes."""
        decay = self.decay
        spec = self.ruleset.period
        if period is None:  # match mode
            if row[PENDING]:
                row = self.commit_pending(player, row)
            if row[LAST] != at:
                state = self.decayed(row, at)
                if state is not row[SKILL]:
                    row = row.copy()
                    row[SKILL] = state
            return row
        last_period = row[PERIOD]
        if last_period is not None and last_period >= period:
            return row
        if last_period is not None and row[PENDING]:
            row = self.commit_pending(player, row)
        row = row.copy()
        if last_period is not None:
            idle = period - last_period - 1
        elif row[LAST] is not None:  # imported or migrated: idle since its last match
            idle = period - spec.index(row[LAST]) - 1
        else:
            idle = 0
        if idle > 0 and decay is not None:
            row[SKILL] = self.answered(decay(row[SKILL], float(idle)), "decay")
        row[PERIOD] = period
        return row

    # -- one match ----------------------------------------------------------------------

    def rate(
        self, match: Match, stored: Callable[[str], Row | None]
    ) -> tuple[list[tuple[str, Row]], Rated]:
        """A match of any shape (:attr:`rankcraft.steps.Steps.rate_general`)."""
        teams = match.teams
        period = None if self.mode == "match" else self.ruleset.period.index(match.played_at)
        singles = (
            self.plain_singles
            and len(teams) == 2
            and len(teams[0]) == 1
            and len(teams[1]) == 1
            and even_times(match.seconds_played)
        )
        befores, rows, sides, shown = self._load(match, stored, period, singles)
        expected = self.probabilities(self.expect(shown, match.home, match), len(sides))
        if singles:
            score = pair_score(match.places, 0, 1)
            weight = match.weight
            pairings: Sequence[Sequence[Sequence[Any]]] = (
                (((sides[1][0], score, weight),),),
                (((sides[0][0], 1.0 - score, weight),),),
            )
        else:
            pairings = self.team(sides, match.places, match.weight, match)
            answers.pairings(pairings, teams, self.team_plugin, "rankcraft_team")
        out: list[tuple[str, Row]] = []
        changes = []
        for i, side in enumerate(teams):
            score = _side_score(match.places, i)
            for j, pid in enumerate(side):
                new, change = self.participant(
                    match, pid, i, score, expected[i], befores[i][j], rows[i][j], pairings[i][j]
                )
                out.append((pid, new))
                changes.append(change)
        return out, Rated((match, expected, tuple(changes), self.forms))

    def _load(
        self,
        match: Match,
        stored: Callable[[str], Row | None],
        period: int | None,
        singles: bool,
    ) -> tuple[list[list[Row]], list[list[Row]], list[list[State]], list[State]]:
        """Each side's stored rows, its rows as the match meets them, the states its
        opponents are paired with, and the state the forecast uses (its aggregate)."""
        at = match.played_at
        # without decay or a period, a stored row meets the match as it is (no pending)
        plain = self.decay is None and period is None
        befores: list[list[Row]] = []
        rows: list[list[Row]] = []
        sides: list[list[State]] = []
        shown: list[State] = []
        aggregate = self.aggregate
        for side in match.teams:
            side_before, side_rows, side_states = [], [], []
            for pid in side:
                row = stored(pid)
                if row is None:
                    row = self.new_row()
                elif row[LAST] is not None and at < row[LAST]:
                    late(match, pid, row)
                side_before.append(row)
                if row[PENDING] or not (plain or (row[LAST] is None and period is None)):
                    row = self.prepare(pid, row, at, period)
                side_rows.append(row)
                # live mode: the open period is rated from its start, against opponents as
                # they stood at its start (Glickman's math), whatever is displayed now
                state = row[SKILL] if row[BASE] is None else row[BASE]
                if self.onset is not None and row[MATCHES] - row[PERIOD_MATCHES] > 0:
                    state = self.onset(state, 1.0)  # as opponents see it (Needs)
                    state = self.answered(state, "update", "rankcraft_decay")
                side_states.append(state)
            befores.append(side_before)
            rows.append(side_rows)
            sides.append(side_states)
            # the forecast uses what players see now (in live mode, the re-rated period)
            shown.append(
                side_rows[0][SKILL]
                if singles
                else self.answered(aggregate([r[SKILL] for r in side_rows]), "team")
            )
        return befores, rows, sides, shown

    def participant(
        self,
        match: Match,
        pid: str,
        side: int,
        score: float,
        expected: float,
        before: Row,
        row: Row,
        pairs: Sequence[Any],
    ) -> tuple[Row, tuple[Any, ...]]:
        """One participant's update and rank projection: their new row and report change."""
        mode = self.mode
        used = row[SKILL]
        rule = "result"
        if match.quit:
            rule, pairs = self._quit_rule(match, pid, pairs)
        if rule in ("loss", "deferred-loss"):
            score = 0.0
        games = row[MATCHES] - row[PERIOD_MATCHES]
        context = None
        if self.update_context or self.rank_context:
            context = PlayerContext(match, pid, side, games, expected, score, pairs, mode)
        args = (games, side, match, expected, score, mode, pid)
        new = row.copy()
        after, factors = self._skill_after(new, rule, pairs, args, context)
        if mode == "match" and before[PENDING]:
            # a deferred loss (INVERSUS quit) was rated as this match started
            factors = {"deferred_loss": float(len(before[PENDING])), **(factors or {})}
        if self.rank is not None and rule not in ("cancelled", "deferred-loss"):
            rank = self.rank(row[RANK], used, after, pairs, *args, context)
            if type(rank) is not tuple or len(rank) != self.rank_fields or not finite(rank):
                self.answered(rank, "rank")  # (raises)
            new[RANK] = rank
        if context is not None and context.factors:
            factors = {**factors, **context.factors} if factors else context.factors
        new[SKILL] = after
        new[MATCHES] = row[MATCHES] + 1
        new[LAST] = match.played_at
        change = (
            pid,
            side,
            before[SKILL],
            used,
            after,
            row[RANK],
            new[RANK],
            self.shared(factors),
        )
        return new, change

    def _skill_after(
        self,
        new: Row,
        rule: str,
        pairs: Sequence[Any],
        args: tuple[Any, ...],
        context: PlayerContext | None,
    ) -> tuple[State, Mapping[str, float] | None]:
        """The participant's skill after the match by the quit rule and the period mode
        (``new``, the row being built, takes the pending results), and the factors that
        explain it."""
        mode = self.mode
        used = new[SKILL]
        pending = new[PENDING]
        if rule == "cancelled":
            return used, {"cancelled": 1.0}
        if rule == "deferred-loss":
            new[PENDING] = (*pending, *pairs)
            return used, {"deferred": 1.0}
        if mode == "batch":
            new[PENDING] = pending = (*pending, *pairs)
            new[PERIOD_MATCHES] += 1
            return used, {"pending": float(len(pending))}
        state, rated = used, pairs
        if mode == "live":  # re-rate the open period from its start
            if not pending:
                new[BASE] = used
            new[PENDING] = rated = (*pending, *pairs)
            new[PERIOD_MATCHES] += 1
            state = new[BASE]
            if context is not None:
                context.pairings = rated
        after = self.update(state, rated, *args, context)
        if type(after) is not tuple or len(after) != self.fields or not finite(after):
            self.answered(after)  # (raises)
        if context is not None:
            context.pairings = pairs  # the rank layer judges this match alone
        if self.explain is None:
            return after, None
        return after, self.explained(self.explain(state, rated, *args, after))

    def _quit_rule(self, match: Match, pid: str, pairs: Sequence[Any]) -> tuple[str, Sequence[Any]]:
        """How a match with quitters rates ``pid``: the rule's name and the pairings."""
        quits = self.ruleset.quits
        if pid in match.quit:
            rule = quits.quitter
            if rule == "deferred-loss" and self.mode != "match":
                rule = "loss"  # a period's results are rated later anyway
            if rule != "result":
                pairs = [(p[0], 0.0, p[2]) for p in pairs]
            return rule, pairs
        return ("cancelled" if quits.others == "cancelled" else "result"), pairs


def late(match: Match, pid: str, row: Row) -> None:
    """Refuse ``match``: it is earlier than the last match of ``pid`` (``row``)."""
    raise LateMatchError(
        f"'played_at' {format_time(match.played_at)} is earlier than the last match "
        f"of player {pid!r} at {format_time(row[LAST])}",
        match_id=match.id,
    )


def _side_score(places: Sequence[int], side: int) -> float:
    """A side's result: its mean pairwise score against the other sides, in [0, 1]."""
    n = len(places)
    if n == 2:
        return pair_score(places, side, 1 - side)
    return sum(pair_score(places, side, j) for j in range(n) if j != side) / (n - 1)


def even_times(seconds: Sequence[Sequence[int]] | None) -> bool:
    """Whether a 1-v-1's two players played alike: no times, or the same time each (the
    whole match: a share of play of 1, nothing to scale). Such a match is paired plainly
    by the core for a team plugin that declares plain singles, and rated by the loop's
    written-out duel."""
    return seconds is None or seconds[0] == seconds[1]
