"""The refits of a whole-history model: the ruleset's ``[fit]`` slot (:mod:`rankcraft.fithooks`,
docs/history-models.md).

:class:`Refits` holds one league's fit. Before each match is rated (the loop's
``run_due``), :meth:`Refits.due` hands the fit the matches rated since the previous refit
when the match opens a new day (UTC), and writes the states it returns into the players'
rows in the open transaction, so that the refit is kept, or rolled back, with the match.

The fit is kept with each transaction like the season schedule (the unit of work's
``snapshot``/``restore``/``save``/``load``): a failed transaction puts back the fit as it
was (a copy taken before the transaction's first refit), and a league that opens a
database, or sees another process's commit, or has its history edited, rebuilds the fit
by handing it the stored history again, day by day, as it was handed the first time.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import date, datetime
from typing import Any

from . import answers
from .errors import MatchError, PluginError
from .historyspec import FitLimits
from .io import parse_match
from .manager import Plugins
from .model import Match, State
from .rows import SKILL
from .rulesetschema import Ruleset
from .steps import Steps
from .store import Store
from .unit import Schedules, UnitOfWork

FitFn = Callable[[Any, Sequence[Match], datetime, FitLimits], Mapping[str, State]]
"""A bound ``rankcraft_fit``: ``(fit, matches, now, limits) -> {player: state}``."""
CurveFn = Callable[[Any, str], Sequence[tuple[datetime, State]]]
"""A bound ``rankcraft_fit_curve``: ``(fit, player) -> [(time, state)]``."""

FIT_HISTORY = "fit_history"
"""meta key: the matches an imported state document brought (JSON list), which the fit is
built from before the league's own."""

__all__ = ["FIT_HISTORY", "CurveFn", "FitFn", "Fitted", "Refits", "make_refits"]


def make_refits(
    ruleset: Ruleset,
    plugins: Plugins,
    steps: Steps,
    store: Store,
    unit: UnitOfWork,
    kept: Schedules,
) -> Refits | None:
    """The fit of a league with ``ruleset`` (None without a ``[fit]`` slot), kept with
    each of the unit's transactions (added to ``kept``)."""
    spec = ruleset.fit
    if spec is None:
        return None
    start, refit, curve = plugins.fit(spec.plugin, spec.params)
    limits = ruleset.history.limits()
    refits = Refits(spec.plugin, start, refit, curve, limits, steps.fields, store, unit)
    kept.parts += (refits,)
    return refits


class Refits:
    """The whole-history fit of one league.

    :param plugin: the fit slot's plugin (named in errors). :param start: makes an empty
        fit. :param refit: the bound ``rankcraft_fit``. :param curve: the bound
        ``rankcraft_fit_curve``, or None. :param limits: the ruleset's refit limits.
    :param fields: how many fields a skill state has. :param store: the league's store
        (its history rebuilds the fit). :param unit: its unit of work.
    """

    def __init__(
        self,
        plugin: str,
        start: Callable[[], Any],
        refit: FitFn,
        curve: CurveFn | None,
        limits: FitLimits,
        fields: int,
        store: Store,
        unit: UnitOfWork,
    ) -> None:
        self.plugin = plugin
        self.start = start
        self.refit = refit
        self.curve_of = curve
        self.limits = limits
        self.fields = fields
        self.store = store
        self.unit = unit
        self.fit: Any = None  # (None: rebuilt from the history before it is next used)
        self.pending: list[Match] = []  # rated since the last refit
        self.day: date | None = None  # the day of the latest match handed
        self.refits = 0
        self.builds = 0  # (fits built from the stored history)
        self._base = 0  # (refits as the open transaction began)
        self._backup: Any = None  # (the fit before the transaction's first refit)

    # -- kept with each transaction (rankcraft.unit.Schedule) -----------------------------

    def snapshot(self) -> Any:
        """The fit's place as a transaction begins."""
        self._base, self._backup = self.refits, None
        return (self.builds, self.refits, list(self.pending), self.day)

    def restore(self, snapshot: Any) -> None:
        """Put the fit back as it was when ``snapshot`` was taken (a failed transaction):
        the copy taken before the transaction's first refit, or, where the fit was built
        from the history in the transaction, a build again when next used."""
        builds, refits, pending, day = snapshot
        if builds != self.builds:
            self.load(self.store)
        else:
            if self._backup is not None:  # (a refit began: it may have failed half-way)
                self.fit = self._backup
            self.refits, self.pending, self.day = refits, list(pending), day
        self._backup = None

    def save(self, store: Store) -> None:
        """Nothing to write: the fit is a function of the stored history."""

    def history(self) -> Iterable[Match]:
        """Every match the fit is built from, in order: those an import brought
        (:meth:`adopt`), then the stored history."""
        text = self.store.get_meta(FIT_HISTORY)
        if text is not None:
            yield from (parse_match(m, stored=True) for m in json.loads(text))
        yield from (match for _, match in self.store.history())

    def adopt(self, matches: Sequence[Match]) -> None:
        """Take an imported history (in the open transaction): the fit is built from it,
        before the league's own matches."""
        self.store.set_meta(FIT_HISTORY, json.dumps([m.to_dict() for m in matches]))
        self.load(self.store)

    def load(self, store: Store) -> None:
        """The store changed under the league: rebuild the fit when it is next used."""
        self.fit, self.pending, self.day = None, [], None

    # -- the refits --------------------------------------------------------------------

    def due(self, match: Match) -> None:
        """Before ``match`` is rated: refit when it opens a new day, then count it in."""
        if self.fit is None:
            self._rebuild()
        if self.day is not None and match.played_at.date() < self.day:
            raise MatchError(
                f"'played_at' {match.played_at.isoformat()} of match {match.id!r} is "
                f"before the day of the league's latest match ({self.day.isoformat()}): "
                "a league with a whole-history model takes matches in time order",
                match_id=match.id,
            )
        self._hand(match, write=True)

    def _hand(self, match: Match, write: bool) -> None:
        """Count ``match`` in, refitting first when it opens a new day; ``write``: the
        states go into the open transaction's rows (the fit copied first, once a
        transaction), else (a rebuild) the rows have them already."""
        day = match.played_at.date()
        if self.day is not None and day > self.day:
            if write and self.refits == self._base and self._backup is None:
                self._backup = copy.deepcopy(self.fit)
            states = self._refit(match.played_at)
            if write:
                self._write(states)
        self.pending.append(match)
        self.day = day

    def curve(self, player: str) -> list[tuple[datetime, State]]:
        """A player's smoothed skill through time (``rankcraft_fit_curve``; empty
        without the hook or for a player the fit does not know). (The bound hooks
        raise a plugin's failure as a :class:`PluginError` naming it.)"""
        if self.curve_of is None:
            return []
        if self.fit is None:
            self._rebuild()
        return [(at, tuple(state)) for at, state in self.curve_of(self.fit, player)]

    def _refit(self, now: datetime) -> Mapping[str, State]:
        """Hand the fit the pending matches and return the states it answers."""
        states = self.refit(self.fit, tuple(self.pending), now, self.limits)
        if not isinstance(states, Mapping):
            raise PluginError(
                f"plugin {self.plugin!r}: rankcraft_fit must return a mapping of player ids "
                f"to states, not {type(states).__name__}"
            )
        self.pending = []
        self.refits += 1
        return states

    def _write(self, states: Mapping[str, State]) -> None:
        """Write the states that differ into the rows of the open transaction."""
        unit = self.unit
        unit.fetch(states)
        rows, touched, fields = unit.rows, unit.touched, self.fields
        for player, state in states.items():
            row = rows.get(player)
            if row is None or row[SKILL] == state:
                continue
            checked = answers.state(state, fields, self.plugin, "rankcraft_fit")
            (touched.get(player) or unit.take(player))[SKILL] = checked

    def _rebuild(self) -> None:
        """Hand a new fit the stored history, day by day, as it was handed first."""
        self.fit, self.pending, self.day = self.start(), [], None
        self.builds += 1
        for match in self.history():
            self._hand(match, write=False)
        self._base = self.refits  # (a refit after this in the transaction keeps a copy)


class Fitted:
    """The whole-history model's methods of :class:`rankcraft.League`."""

    _refits: Refits | None
    skill_class: type

    def curve(self, player: str) -> list[tuple[datetime, Any]]:
        """A player's smoothed skill through time as the league's whole-history model
        fits it now: ``(time, skill state)`` pairs, one per time the player played, in
        time order (states of the skill plugin's class). Empty for a ruleset without a
        ``[fit]`` slot or a model without a curve.

        :raises UnknownPlayerError: a player the league has never seen."""
        self.player(player)  # type: ignore[attr-defined]  # (raises for an unknown player)
        if self._refits is None:
            return []
        make = self.skill_class
        return [(at, make(*state)) for at, state in self._refits.curve(player)]
