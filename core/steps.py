"""The rating steps of one ruleset: pure functions built once from its plugins' hooks.

:class:`Steps` resolves, when a league is built, the one implementation of each slot's
hook that the ruleset names (a third party's plugin exactly like a bundled one); the one
rating loop (:mod:`rankcraft.loop`) rates matches with them, in the order of
docs/design.md: load, decay, aggregate and expect, pair, update, project. Nothing here
stores anything: :attr:`Steps.rate_general` takes the players' rows
(:mod:`rankcraft.rows`) and returns their new rows and the match's
:class:`~rankcraft.rated.Rated` entry.

The commonest match (two sides of one player, rated match by match) is rated by the
written-out duel of :class:`rankcraft.loop.Loop`; every other shape by the general steps
(:class:`rankcraft.generalsteps.GeneralSteps`): the same hooks, in the same order, give
the same numbers both ways.
:meth:`Steps.row_of` and :meth:`Steps.record_of` turn records into rows and back
(:class:`rankcraft.rows.Rows`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any

from . import answers
from .forms import Form
from .generalsteps import GeneralSteps
from .manager import SLOTS, OutcomesFn, Plugins, StandingsFn
from .model import Match, PlayerScope, State
from .rows import BASE, LAST, MATCHES, PENDING, PERIOD, PERIOD_MATCHES, RANK, SKILL, Row, Rows
from .ruleset import Ruleset, SlotSpec

__all__ = [
    "BASE",
    "LAST",
    "MATCHES",
    "PENDING",
    "PERIOD",
    "PERIOD_MATCHES",
    "RANK",
    "SKILL",
    "Row",
    "Steps",
]


class Steps:
    """The hook implementations a ruleset names, resolved once, and the steps built on them.

    :param ruleset: the validated ruleset.
    :param plugins: the plugin facade the ruleset's plugins are registered in.

    Attributes:
        skill_class, rank_class: the state classes of the skill and rank plugins (None
            without a rank slot). skill_names, rank_names: their field names, in order.
        skill_form, rank_form: their :class:`~rankcraft.forms.Form` (tuple form and
            public form).
        new_row, row_of, record_of: a new player's row, a record as a row and back
            (:class:`~rankcraft.rows.Rows`).
        prepare, commit_pending, decayed: a row as a match meets it, its pending results
            rated, its skill decayed for a prediction
            (:class:`~rankcraft.generalsteps.GeneralSteps`).
    """

    def __init__(self, ruleset: Ruleset, plugins: Plugins) -> None:
        rs, pl = ruleset, plugins
        self.ruleset = ruleset
        self.mode = rs.period.mode
        # each slot's plugin, as the checks of its answers name it (:mod:`rankcraft.answers`)
        self.plugin_of = {slot: spec.plugin for slot in SLOTS if (spec := rs.slot(slot))}
        forms = self.forms = self._forms(pl)
        update, expectation = rs.slot("update"), rs.slot("expectation")
        assert update is not None and expectation is not None
        self.update = pl.update(update.plugin, update.params, forms)
        self.update_context = pl.takes(update.plugin, "rankcraft_update", "context")
        self.explain = pl.explain(update.plugin, update.params)
        self.expect = pl.expectation(expectation.plugin, expectation.params, forms)
        # ``(answer, sides) -> probabilities``: the expectation's answer checked
        self.probabilities: Callable[[Any, int], tuple[float, ...]] = functools.partial(
            answers.probabilities, plugin=expectation.plugin, hook="rankcraft_expectation"
        )
        expect = self.expect
        # a prediction has no match: the expectation's ``match`` argument is None
        self.predict: Callable[[Sequence[State], int | None], Sequence[float]] = (
            lambda states, home: self.probabilities(expect(states, home, None), len(states))
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
            newcomer = self.aggregate([self._rows.initial])
            if self.outcomes([newcomer, newcomer], None, None) is None:
                self.outcomes = None
        self.outcomes = _outcomes(self.outcomes, expectation.plugin)  # (its answers checked)
        # the common shape written out (rankcraft.loop.Loop.duel): what it leaves out
        # is absent
        self.duel_ok = self.mode == "match" and self.rank is None and not self.update_context
        # every other shape, and a row as a match meets it: the general steps
        general = GeneralSteps(self)
        self.rate_general = general.rate
        self.prepare = general.prepare
        self.commit_pending = general.commit_pending
        self.decayed = general.decayed

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
        initial_rank = None if self.rank_form is None else self.rank_form.to_tuple(first_rank)
        rows = self._rows = Rows(
            self.skill_form, self.rank_form, self.skill_form.to_tuple(first), initial_rank
        )
        self.new_row = rows.new_row
        self.row_of = rows.row_of
        self.record_of = rows.record_of
        # (the public form: a document without a rank state is read with the initial one)
        self.initial_rank: Callable[[], State] | None = (
            None if rs.rank is None else lambda: first_rank
        )
        # what the owning plugin says is wrong with a state coming in (an import, a reset's
        # record): ``verify("skill" or "rank", state) -> str or None``
        self.verify = _verifier(pl, initial, rs.rank)
        self.skill_names = self.skill_form.names
        self.rank_names = () if self.rank_form is None else self.rank_form.names
        self.fields = len(self.skill_names)  # (an update returns a tuple of this length)
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
                self.standings = _labelled(pl.standings(spec.plugin, spec.params), spec.plugin)
                self.standings_scope = pl.standings_scope(spec.plugin, spec.params)
                break

    # -- players ----------------------------------------------------------------------
    # (their rows: :class:`~rankcraft.rows.Rows`; a row as a match meets it, ``prepare``,
    # ``commit_pending`` and ``decayed``: :class:`~rankcraft.generalsteps.GeneralSteps`)

    def object_decay(self) -> Callable[[Any, float], Any] | None:
        """The skill plugin's own decay on public-form states (a season event's
        ``ResetContext.decay``), or None."""
        decay = self.skill_decay
        if decay is None:
            return None
        form = self.skill_form
        return lambda state, periods: form.to_object(decay(form.to_tuple(state), periods))

    # -- one match: the loop (:mod:`rankcraft.loop`) rates it with these ------------

    def joint_duel(self, a: State, b: State, match: Match) -> tuple[tuple[float, ...], Any, Any]:
        """A 1-v-1's expectation and the two sides' pairings by a joint team model (its
        own sides and pairings, as the general steps ask); refused as the general steps
        refuse an expectation that is not two probabilities summing to 1."""
        aggregate = self.aggregate
        shown = [aggregate([a]), aggregate([b])]
        expected = self.probabilities(self.expect(shown, match.home, match), 2)
        pairings = self.team([[a], [b]], match.places, match.weight, match)
        answers.pairings(pairings, match.teams, self.plugin_of["team"], "rankcraft_team")
        return expected, pairings[0][0], pairings[1][0]

    def explained(self, factors: Any) -> Mapping[str, float] | None:
        """``rankcraft_explain``'s answer, refused unless a mapping or None (its numbers
        are checked as they are kept, by :meth:`shared`)."""
        if factors is None or isinstance(factors, dict | Mapping):
            return factors
        return answers.factors(factors, self.plugin_of["update"], "rankcraft_explain")

    def answered(
        self, state: Any, slot: str = "update", hook: str | None = None
    ) -> tuple[Any, ...]:
        """A state answered by ``slot``'s plugin (``update``, ``decay``, ``rank``, or
        ``team`` for its aggregate) through ``hook`` (default: the slot's own),
        checked (:func:`rankcraft.answers.state`)."""
        if hook is None:
            hook = "rankcraft_aggregate" if slot == "team" else f"rankcraft_{slot}"
        names = self.rank_names if slot == "rank" else self.skill_names
        size = None if slot == "team" else len(names)
        return answers.state(state, size, self.plugin_of.get(slot, "?"), hook)

    def shared(self, factors: Mapping[str, float] | None) -> dict[str, float] | None:
        """The report factors as kept: None when empty, and one dict for equal factors
        in a row (Elo's ``{"k": 32.0}`` every match; the kept dicts are never changed).
        Factors not kept already are checked to be finite numbers (a NaN is never equal
        to the kept one)."""
        if not factors:
            return None
        if factors is self._factors or factors == self._factors:
            return self._factors
        answers.factors(factors, self.plugin_of["update"], "rankcraft_explain")
        self._factors = dict(factors)
        return self._factors


def _verifier(
    pl: Plugins, initial: SlotSpec, rank: SlotSpec | None
) -> Callable[[str, Any], str | None]:
    """``(part, state) -> what is wrong or None``: ``rankcraft_verify`` of the plugin
    owning a ``part`` (``"skill"`` or ``"rank"``) state, when it has one."""
    checks = {
        "skill": pl.verify(initial.plugin, "initial", initial.params),
        "rank": None if rank is None else pl.verify(rank.plugin, "rank", rank.params),
    }

    def verify(part: str, state: Any) -> str | None:
        check = checks[part]
        return None if check is None else check(state)

    return verify


def _outcomes(outcomes: OutcomesFn | None, plugin: str) -> OutcomesFn | None:
    """``rankcraft_outcomes`` with its answer checked: None, or three probabilities
    (forecasts only, never per match)."""
    if outcomes is None:
        return None
    return lambda states, home, match: answers.optional_probabilities(
        outcomes(states, home, match), 3, plugin, "rankcraft_outcomes"
    )


def _labelled(standings: StandingsFn, plugin: str) -> StandingsFn:
    """``rankcraft_standings`` with its answer checked (never called per match)."""
    return lambda players, census: answers.labels(
        standings(players, census), plugin, "rankcraft_standings"
    )
