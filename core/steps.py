"""The rating steps of one ruleset: pure functions built once from its plugins' hooks.

:class:`Steps` resolves, when a league is built, the one implementation of each slot's
hook that the ruleset names (a third party's plugin exactly like a bundled one) and rates
a match with them, in the order of docs/design.md: load, decay, aggregate and expect,
pair, update, project. Nothing here stores anything: :meth:`Steps.rate` takes the
players' rows and returns their new rows and the match's :class:`~rankcraft.rated.Rated`
entry; the league's unit of work keeps them.

A *row* is a player's record as the loop keeps it, a list indexed by the constants below
(a list costs a few hundredths of a microsecond to build; a frozen record, half of one):
``[skill, rank, matches, last_played, pending, period, period_matches, base]``, the
fields of :class:`~rankcraft.PlayerRecord` in that order without the id, its states in
their tuple form (:mod:`rankcraft.forms`): :meth:`Steps.row_of` and
:meth:`Steps.record_of` turn records into rows and back.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any

import attrs

from .errors import LateMatchError, PluginError
from .forms import Form
from .manager import OutcomesFn, Plugins, StandingsFn
from .model import (
    Match,
    Pairing,
    PlayerContext,
    PlayerRecord,
    PlayerScope,
    State,
    format_time,
    pair_score,
)
from .rated import Rated
from .ruleset import Ruleset

Row = list[Any]
SKILL, RANK, MATCHES, LAST, PENDING, PERIOD, PERIOD_MATCHES, BASE = range(8)

_new_record = object.__new__
_set = object.__setattr__
_RECORD_FIELDS = (
    "skill",
    "rank",
    "matches",
    "last_played",
    "pending",
    "period",
    "period_matches",
    "base",
)


def _state_names(cls: type | None) -> tuple[str, ...]:
    return () if cls is None else tuple(f.name for f in attrs.fields(cls))


class Steps:
    """The hook implementations a ruleset names, resolved once, and the steps built on them.

    :param ruleset: the validated ruleset.
    :param plugins: the plugin facade the ruleset's plugins are registered in.

    Attributes:
        skill_class, rank_class: the state classes of the skill and rank plugins (None
            without a rank slot). skill_names, rank_names: their field names, in order.
        skill_form, rank_form: their :class:`~rankcraft.forms.Form` (tuple form and
            public form).
    """

    def __init__(self, ruleset: Ruleset, plugins: Plugins) -> None:
        rs, pl = ruleset, plugins
        self.ruleset = ruleset
        self.mode = rs.period.mode
        forms = self.forms = self._forms(pl)
        update, expectation = rs.slot("update"), rs.slot("expectation")
        assert update is not None and expectation is not None
        self.update = pl.update(update.plugin, update.params, forms)
        self.update_context = pl.takes(update.plugin, "rankcraft_update", "context")
        self.explain = pl.explain(update.plugin, update.params)
        self.expect = pl.expectation(expectation.plugin, expectation.params, forms)
        expect = self.expect
        # a prediction has no match: the expectation's ``match`` argument is None
        self.predict: Callable[[Sequence[State], int | None], Sequence[float]] = (
            lambda states, home: expect(states, home, None)
        )
        # the optional draw model beside the expectation (forecasts only, never per match):
        # ``(states, home, match)``, the match None for a forecast without one
        self.outcomes: OutcomesFn | None = pl.outcomes(
            expectation.plugin, expectation.params, forms
        )
        self._bind_decay(pl)
        self.team = pl.team(rs.team.plugin, rs.team.params, forms)
        self.aggregate = pl.aggregate(rs.team.plugin, rs.team.params, forms)
        team_needs = pl.needs(rs.team.plugin, "team")
        # a 1-v-1 of plain results: the core pairs the two players itself (Needs)
        self.plain_singles = team_needs is not None and team_needs.plain_singles
        self.rank: Callable[..., State] | None = None
        self.rank_context = False
        if rs.rank is not None:
            self.rank = pl.rank(rs.rank.plugin, rs.rank.params, forms)
            self.rank_context = pl.takes(rs.rank.plugin, "rankcraft_rank", "context")
        self._bind_season_hooks(pl)
        self._factors: dict[str, float] = {}
        if self.outcomes is not None:
            # a plugin that implements the hook with its draw model turned off (e.g. elo
            # without ``draw``) answers None for every pair: then there is no draw model
            newcomer = self.aggregate([self._initial])
            if self.outcomes([newcomer, newcomer], None, None) is None:
                self.outcomes = None
        # the common shape written out (:meth:`_rate_duel`): what it leaves out is absent
        self._duel = self.mode == "match" and self.rank is None and not self.update_context

    def _forms(self, pl: Plugins) -> tuple[Form, Form | None]:
        """The skill and rank state classes, their forms and their initial states."""
        rs = self.ruleset
        initial = rs.slot("initial")
        assert initial is not None
        first = pl.initial(initial.plugin, "initial", initial.params)()
        self.skill_class: type = type(first)
        self.skill_form = Form(self.skill_class)
        self.rank_class: type | None = None
        self.rank_form: Form | None = None
        first_rank = None
        if rs.rank is not None:
            first_rank = pl.initial(rs.rank.plugin, "rank", rs.rank.params)()
            self.rank_class = type(first_rank)
            self.rank_form = Form(self.rank_class)
        self._initial = self.skill_form.to_tuple(first)
        self._initial_rank = None if self.rank_form is None else self.rank_form.to_tuple(first_rank)
        # (the public form: a document without a rank state is read with the initial one)
        self.initial_rank: Callable[[], State] | None = (
            None if rs.rank is None else lambda: first_rank
        )
        self.skill_names = self.skill_form.names
        self.rank_names = () if self.rank_form is None else self.rank_form.names
        self._fields = len(self.skill_names)  # (an update returns a tuple of this length)
        return self.skill_form, self.rank_form

    def _bind_decay(self, pl: Plugins) -> None:
        """The decay slot's decay, the skill plugin's own one, and the period's onset."""
        rs, forms = self.ruleset, self.forms
        update, decay = rs.slot("update"), rs.slot("decay")
        assert update is not None and decay is not None
        self.decay: Callable[[State, float], State] | None = None
        if rs.decay is not None or pl.implements(decay.plugin, "rankcraft_decay"):
            self.decay = pl.decay(decay.plugin, decay.params, forms)
        # a season event grows uncertainty with the skill plugin's own decay, even when the
        # ruleset's [decay] slot turns match-time decay off (Skyweaver: the weekly reset does)
        self.skill_decay: Callable[[State, float], State] | None = None
        if pl.implements(update.plugin, "rankcraft_decay"):
            self.skill_decay = pl.decay(update.plugin, update.params, forms)
        self.skill_params = update.params
        needs = pl.needs(update.plugin, "update")
        # batch/live: opponents seen at the period's onset (the skill's decay, one period)
        self.onset = (
            self.skill_decay
            if needs is not None and needs.opponents_at_onset and rs.period.mode != "match"
            else None
        )

    def _bind_season_hooks(self, pl: Plugins) -> None:
        """The reset and standings hooks (never called per match)."""
        rs = self.ruleset
        self.reset = pl.reset(rs.reset.plugin, rs.reset.params) if rs.reset is not None else None
        self.reset_scope = (
            pl.reset_scope(rs.reset.plugin, rs.reset.params) if rs.reset is not None else None
        )
        self.standings: StandingsFn | None = None
        self.standings_scope: Callable[[datetime | None], PlayerScope | None] | None = None
        for spec in (rs.rank, rs.slot("update")):
            if spec is not None and pl.implements(spec.plugin, "rankcraft_standings"):
                self.standings = pl.standings(spec.plugin, spec.params)
                self.standings_scope = pl.standings_scope(spec.plugin, spec.params)
                break

    # -- players ----------------------------------------------------------------------

    def new_row(self) -> Row:
        """The row of a player the league has not seen (states are immutable: every new
        player starts from the one initial state the plugins gave)."""
        return [self._initial, self._initial_rank, 0, None, (), None, 0, None]

    def row_of(self, record: PlayerRecord) -> Row:
        """A record as a row: its states in their tuple form."""
        skill = self.skill_form.to_tuple
        rank = self.rank_form.to_tuple if self.rank_form is not None else _same
        pending: tuple[Any, ...] = record.pending
        if pending:
            pending = tuple((skill(p[0]), p[1], p[2]) for p in pending)
        base = record.base
        return [
            skill(record.skill),
            rank(record.rank),
            record.matches,
            record.last_played,
            pending,
            record.period,
            record.period_matches,
            None if base is None else skill(base),
        ]

    def record_of(self, player: str, row: Row) -> PlayerRecord:
        """A row as the frozen :class:`~rankcraft.PlayerRecord` of ``player``, its states
        in their public form (the state classes' validators run on them).

        (Built field by field: equal to ``PlayerRecord(...)``, at half the cost.)"""
        skill = self.skill_form.to_object
        rank = row[RANK]
        pending = row[PENDING]
        if pending:
            unchecked = self.skill_form.to_object_unchecked
            pending = tuple(Pairing(unchecked(p[0]), p[1], p[2]) for p in pending)
        base = row[BASE]
        record = _new_record(PlayerRecord)
        _set(record, "id", player)
        _set(record, "skill", skill(row[SKILL]))
        _set(
            record,
            "rank",
            None if rank is None or self.rank_form is None else self.rank_form.to_object(rank),
        )
        _set(record, "matches", row[MATCHES])
        _set(record, "last_played", row[LAST])
        _set(record, "pending", pending)
        _set(record, "period", row[PERIOD])
        _set(record, "period_matches", row[PERIOD_MATCHES])
        _set(record, "base", None if base is None else skill(base))
        return record

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
                if not isinstance(state, tuple):
                    raise self._not_a_tuple(state, "decay")
        return state

    def object_decay(self) -> Callable[[Any, float], Any] | None:
        """The skill plugin's own decay on public-form states (a season event's
        ``ResetContext.decay``), or None."""
        decay = self.skill_decay
        if decay is None:
            return None
        form = self.skill_form
        return lambda state, periods: form.to_object(decay(form.to_tuple(state), periods))

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
        new[SKILL] = self.update(row[SKILL], *args, context)
        if not isinstance(new[SKILL], tuple) or len(new[SKILL]) != self._fields:
            raise self._not_a_tuple(new[SKILL])
        if self.rank is not None:
            new[RANK] = self.rank(row[RANK], row[SKILL], new[SKILL], *args, context)
            if not isinstance(new[RANK], tuple):
                raise self._not_a_tuple(new[RANK], "rank")
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
            row[SKILL] = decay(row[SKILL], float(idle))
            if not isinstance(row[SKILL], tuple):
                raise self._not_a_tuple(row[SKILL], "decay")
        row[PERIOD] = period
        return row

    # -- one match --------------------------------------------------------------------

    def rate(
        self, match: Match, stored: Callable[[str], Row | None]
    ) -> tuple[list[tuple[str, Row]], Rated]:
        """Rate ``match`` against the players' stored rows (``stored(id)``: the row, or
        None for a new player). Returns each participant's new row, in the order of
        ``match.teams``, and the match's entry. Changes nothing.

        :raises LateMatchError: the match is earlier than a participant's last match.
        :raises PluginError: the expectation plugin broke its contract.
        """
        teams = match.teams
        if (
            self._duel
            and len(teams) == 2
            and len(teams[0]) == 1
            and len(teams[1]) == 1
            and not match.quit
            and match.seconds_played is None
        ):
            return self._rate_duel(match, stored)
        return self._rate_general(match, stored)

    def _rate_general(
        self, match: Match, stored: Callable[[str], Row | None]
    ) -> tuple[list[tuple[str, Row]], Rated]:
        """:meth:`rate` for every shape."""
        teams = match.teams
        at = match.played_at
        period = None if self.mode == "match" else self.ruleset.period.index(at)
        # without decay or a period, a stored row meets the match as it is (no pending)
        plain = self.decay is None and period is None
        befores: list[list[Row]] = []
        rows: list[list[Row]] = []
        sides: list[list[State]] = []
        shown: list[State] = []
        singles = (
            self.plain_singles
            and len(teams) == 2
            and len(teams[0]) == 1
            and len(teams[1]) == 1
            and match.seconds_played is None
        )
        aggregate = self.aggregate
        for side in teams:
            side_before, side_rows, side_states = [], [], []
            for pid in side:
                row = stored(pid)
                if row is None:
                    row = self.new_row()
                elif row[LAST] is not None and at < row[LAST]:
                    _late(match, pid, row)
                side_before.append(row)
                if row[PENDING] or not (plain or (row[LAST] is None and period is None)):
                    row = self.prepare(pid, row, at, period)
                side_rows.append(row)
                # live mode: the open period is rated from its start, against opponents as
                # they stood at its start (Glickman's math), whatever is displayed now
                state = row[SKILL] if row[BASE] is None else row[BASE]
                if self.onset is not None and row[MATCHES] - row[PERIOD_MATCHES] > 0:
                    state = self.onset(state, 1.0)  # as opponents see it (Needs)
                side_states.append(state)
            befores.append(side_before)
            rows.append(side_rows)
            sides.append(side_states)
            # the forecast uses what players see now (in live mode, the re-rated period)
            shown.append(
                side_rows[0][SKILL] if singles else aggregate([r[SKILL] for r in side_rows])
            )
        expected = _checked(self.expect(shown, match.home, match), len(sides))
        if singles:
            score = pair_score(match.places, 0, 1)
            weight = match.weight
            pairings: Sequence[Sequence[Sequence[Any]]] = (
                (((sides[1][0], score, weight),),),
                (((sides[0][0], 1.0 - score, weight),),),
            )
        else:
            pairings = self.team(sides, match.places, match.weight, match)
        out: list[tuple[str, Row]] = []
        changes = []
        for i, side in enumerate(teams):
            score = _side_score(match.places, i)
            for j, pid in enumerate(side):
                new, change = self._player(
                    match, pid, i, score, expected[i], befores[i][j], rows[i][j], pairings[i][j]
                )
                out.append((pid, new))
                changes.append(change)
        return out, Rated((match, expected, tuple(changes), self.forms))

    def _rate_duel(
        self, match: Match, stored: Callable[[str], Row | None]
    ) -> tuple[list[tuple[str, Row]], Rated]:
        """:meth:`rate` for the common shape, written out: two sides of one player, no
        quitter, no partial play, rated match by match without period or rank layer, by an
        update that takes no context (the core pairs the two, or the team plugin does). The
        same hooks, in the same order, give the same numbers as the general steps."""
        (first,), (second,) = match.teams
        at = match.played_at
        row_a = stored(first) or self.new_row()
        row_b = stored(second) or self.new_row()
        if row_a[PENDING] or row_b[PENDING]:  # (an imported deferred loss: the general
            return self._rate_general(match, stored)  # steps rate it)
        last = row_a[LAST]
        if last is not None and at < last:
            _late(match, first, row_a)
        last = row_b[LAST]
        if last is not None and at < last:
            _late(match, second, row_b)
        before_a, before_b = a, b = row_a[SKILL], row_b[SKILL]
        if self.decay is not None:  # (idle time, as the general steps' prepare decays it)
            if row_a[LAST] != at:
                a = self.decayed(row_a, at)
            if row_b[LAST] != at:
                b = self.decayed(row_b, at)
        places = match.places
        score = 1.0 if places[0] < places[1] else 0.0 if places[0] > places[1] else 0.5
        lost = 1.0 - score
        weight = match.weight
        if self.plain_singles:  # (the core pairs the two)
            expected = tuple(self.expect([a, b], match.home, match))
            pairs_a: Any = ((b, score, weight),)
            pairs_b: Any = ((a, lost, weight),)
        else:  # (a joint team model: its own sides and pairings, as the general steps ask)
            aggregate = self.aggregate
            shown = [aggregate([a]), aggregate([b])]
            expected = tuple(self.expect(shown, match.home, match))
            if len(expected) == 2 and _duel_sum(*expected):
                pairings = self.team([[a], [b]], places, weight, match)
                pairs_a, pairs_b = pairings[0][0], pairings[1][0]
        if len(expected) != 2 or not _duel_sum(*expected):
            _checked(expected, 2)  # (raises)
        won_a, won_b = expected
        update, explain, fields = self.update, self.explain, self._fields
        # side 0
        pairs = pairs_a
        games = row_a[MATCHES]
        after_a = update(a, pairs, games, 0, match, won_a, score, "match", first, None)
        if type(after_a) is not tuple or len(after_a) != fields:
            raise self._not_a_tuple(after_a)
        factors_a = None
        if explain is not None:
            said = explain(a, pairs, games, 0, match, won_a, score, "match", first, after_a)
            factors_a = self._shared(self._explained(said))
        new_a = row_a.copy()
        new_a[SKILL] = after_a
        new_a[MATCHES] = games + 1
        new_a[LAST] = at
        # side 1
        pairs = pairs_b
        games = row_b[MATCHES]
        after_b = update(b, pairs, games, 1, match, won_b, lost, "match", second, None)
        if type(after_b) is not tuple or len(after_b) != fields:
            raise self._not_a_tuple(after_b)
        factors_b = None
        if explain is not None:
            said = explain(b, pairs, games, 1, match, won_b, lost, "match", second, after_b)
            factors_b = self._shared(self._explained(said))
        new_b = row_b.copy()
        new_b[SKILL] = after_b
        new_b[MATCHES] = games + 1
        new_b[LAST] = at
        changes = (
            (first, 0, before_a, a, after_a, None, None, factors_a),
            (second, 1, before_b, b, after_b, None, None, factors_b),
        )
        return [(first, new_a), (second, new_b)], Rated((match, expected, changes, self.forms))

    def _explained(self, factors: Any) -> Mapping[str, float] | None:
        """``rankcraft_explain``'s answer, refused unless a mapping or None."""
        if factors is None or isinstance(factors, dict | Mapping):
            return factors
        spec = self.ruleset.slot("update")
        raise PluginError(
            f"plugin {spec.plugin if spec else '?'!r}: rankcraft_explain returned {factors!r}, "
            "not a mapping of factor names to numbers (or None)"
        )

    def _not_a_tuple(self, state: Any, slot: str = "update") -> PluginError:
        """The error for a hook that returned something else than a state tuple."""
        spec = self.ruleset.slot(slot)
        name = spec.plugin if spec is not None else "?"
        return PluginError(
            f"plugin {name!r}: rankcraft_{slot} returned {state!r}, not a tuple of "
            f"{len(self.skill_names if slot != 'rank' else self.rank_names)} fields: in the "
            "per-match hooks a state is the tuple of its class's fields, in order (hook "
            "contract 2, docs/plugins.md#migrating-to-hook-contract-2)"
        )

    def _shared(self, factors: Mapping[str, float] | None) -> dict[str, float] | None:
        """The report factors as kept: None when empty, and one dict for equal factors
        in a row (Elo's ``{"k": 32.0}`` every match; the kept dicts are never changed)."""
        if not factors:
            return None
        if factors is self._factors or factors == self._factors:
            return self._factors
        self._factors = dict(factors)
        return self._factors

    def _player(
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
            new[RANK] = self.rank(row[RANK], used, after, pairs, *args, context)
            if not isinstance(new[RANK], tuple):
                raise self._not_a_tuple(new[RANK], "rank")
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
            self._shared(factors),
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
        if not isinstance(after, tuple) or len(after) != self._fields:
            raise self._not_a_tuple(after)
        if context is not None:
            context.pairings = pairs  # the rank layer judges this match alone
        if self.explain is None:
            return after, None
        return after, self._explained(self.explain(state, rated, *args, after))

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


def _late(match: Match, pid: str, row: Row) -> None:
    """Refuse ``match``: it is earlier than the last match of ``pid`` (``row``)."""
    raise LateMatchError(
        f"'played_at' {format_time(match.played_at)} is earlier than the last match "
        f"of player {pid!r} at {format_time(row[LAST])}",
        match_id=match.id,
    )


def _same(value: Any) -> Any:
    return value


def _side_score(places: Sequence[int], side: int) -> float:
    """A side's result: its mean pairwise score against the other sides, in [0, 1]."""
    n = len(places)
    if n == 2:
        return pair_score(places, side, 1 - side)
    return sum(pair_score(places, side, j) for j in range(n) if j != side) / (n - 1)


def _duel_sum(first: float, second: float) -> bool:
    """Whether two probabilities are each in [0, 1] and sum to 1 (what :func:`_checked`
    asks of a duel's expectation, for the answer it would keep as it is)."""
    return 0.0 <= first <= 1.0 and 0.0 <= second <= 1.0 and abs(first + second - 1.0) <= 1e-9


def _checked(expected: Sequence[float], sides: int) -> tuple[float, ...]:
    """The expectation hook's answer, refused unless it is one probability per side in
    [0, 1] summing to 1."""
    out = tuple(expected)
    total = 0.0
    for p in out:
        if not 0.0 <= p <= 1.0:
            raise PluginError(f"expectation plugin returned a probability outside [0, 1]: {out!r}")
        total += p
    if len(out) != sides or abs(total - 1.0) > 1e-9:
        raise PluginError(
            f"expectation plugin returned {out!r} for {sides} sides "
            "(one probability per side, summing to 1)"
        )
    return out
