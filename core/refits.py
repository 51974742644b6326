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
import hashlib
import itertools
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import date, datetime
from typing import Any, NamedTuple, Self

from . import answers
from .errors import MatchError, PluginError
from .historyspec import FitLimits
from .io import parse_match
from .manager import Plugins
from .model import Match, State
from .rated import match_text
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
FIT_KEPT = "fit_kept"
"""meta key: the fit as the league last closed with it (``rankcraft_fit_dump``), with the
count and digest of the matches it was handed (JSON): a league that opens starts from it
when its history still begins with those matches."""


class FitHooks(NamedTuple):
    """A history model's bound hooks (:meth:`rankcraft.Plugins.fit`): ``start`` makes an
    empty fit, ``refit`` is ``rankcraft_fit``; ``curve``, ``dump`` and ``load`` are the
    optional ones (None without them)."""

    start: Callable[[], Any]
    refit: FitFn
    curve: CurveFn | None
    dump: Callable[[Any], Any] | None
    load: Callable[[Any], Any] | None


__all__ = [
    "FIT_HISTORY",
    "FIT_KEPT",
    "CurveFn",
    "FitFn",
    "FitHooks",
    "Fitted",
    "Refits",
    "make_refits",
]


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
    hooks = FitHooks(*plugins.fit(spec.plugin, spec.params))
    limits = ruleset.history.limits()
    key = f"{spec.plugin} {spec.params!r} {limits!r}"  # (what a kept fit was fitted under)
    refits = Refits(spec.plugin, hooks, limits, key, steps.fields, store, unit)
    kept.parts += (refits,)
    return refits


class Refits:
    """The whole-history fit of one league.

    :param plugin: the fit slot's plugin (named in errors). :param hooks: its bound
        hooks. :param limits: the ruleset's refit limits. :param key: the plugin, params
        and limits as text (a kept fit is used only under the same). :param fields: how
        many fields a skill state has. :param store: the league's store (its history
        rebuilds the fit). :param unit: its unit of work.
    """

    def __init__(
        self,
        plugin: str,
        hooks: FitHooks,
        limits: FitLimits,
        key: str,
        fields: int,
        store: Store,
        unit: UnitOfWork,
    ) -> None:
        self.plugin = plugin
        self.hooks = hooks
        self.limits = limits
        self.key = key
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
        self.handed = 0  # matches handed to the fit (the pending ones included) ...
        self.digest = hashlib.sha256()  # ... and the digest of their texts
        self._kept: tuple[int, str] | None = None  # (what the stored kept fit covers)
        self.wrote = False  # (whether this league recorded a match: only then it keeps)

    # -- kept with each transaction (rankcraft.unit.Schedule) -----------------------------

    def snapshot(self) -> Any:
        """The fit's place as a transaction begins."""
        self._base, self._backup = self.refits, None
        place = (self.builds, self.refits, list(self.pending), self.day, self._kept)
        return (*place, self.handed, self.digest.copy())

    def restore(self, snapshot: Any) -> None:
        """Put the fit back as it was when ``snapshot`` was taken (a failed transaction):
        the copy taken before the transaction's first refit, or, where the fit was built
        from the history in the transaction, a build again when next used."""
        builds, refits, pending, day, kept, handed, digest = snapshot
        self._kept = kept
        if builds != self.builds:
            self.load(self.store)
        else:
            if self._backup is not None:  # (a refit began: it may have failed half-way)
                self.fit = self._backup
            self.refits, self.pending, self.day = refits, list(pending), day
            self.handed, self.digest = handed, digest.copy()
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
        self.wrote = True
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
        self.handed += 1
        self.digest.update(_text(match))

    def curve(self, player: str) -> list[tuple[datetime, State]]:
        """A player's smoothed skill through time (``rankcraft_fit_curve``; empty
        without the hook or for a player the fit does not know). (The bound hooks
        raise a plugin's failure as a :class:`PluginError` naming it.)"""
        if self.hooks.curve is None:
            return []
        if self.fit is None:
            self._rebuild()
        return [(at, tuple(state)) for at, state in self.hooks.curve(self.fit, player)]

    def _refit(self, now: datetime) -> Mapping[str, State]:
        """Hand the fit the pending matches and return the states it answers."""
        states = self.hooks.refit(self.fit, tuple(self.pending), now, self.limits)
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
        """Hand a new fit the stored history, day by day, as it was handed first; or,
        where the kept fit covers a prefix of that history, start from it and hand the
        rest."""
        self.fit, self.pending, self.day = self.hooks.start(), [], None
        self.handed, self.digest = 0, hashlib.sha256()
        self.builds += 1
        history = iter(self.history())
        for match in self._resume(history):
            self._hand(match, write=False)
        for match in history:
            self._hand(match, write=False)
        self._base = self.refits  # (a refit after this in the transaction keeps a copy)

    def _resume(self, history: Iterable[Match]) -> list[Match]:
        """Start from the kept fit when it was fitted under the same key and the history
        begins with the matches it was handed: [] then; else the matches read to check,
        to be handed as any others."""
        kept = self._read_kept()
        if kept is None:
            return []
        read = list(itertools.islice(history, kept["matches"]))
        digest = hashlib.sha256()
        for match in read:
            digest.update(_text(match))
        if len(read) != kept["matches"] or digest.hexdigest() != kept["digest"]:
            return read
        try:
            fit = self.hooks.load(kept["fit"])  # type: ignore[misc]
        except PluginError:  # (the hook's failure, named so: data it cannot take)
            return read  # (rebuilt from the history: slower, never wrong)
        self.fit, self.handed, self.digest = fit, len(read), digest
        self.pending = read[len(read) - kept["pending"] :] if kept["pending"] else []
        self.day = read[-1].played_at.date() if read else None
        self._kept = (self.handed, digest.hexdigest())
        return []

    def _read_kept(self) -> dict[str, Any] | None:
        text = self.store.get_meta(FIT_KEPT) if self.hooks.load is not None else None
        if text is None:
            return None
        kept: dict[str, Any] = json.loads(text)
        return kept if kept.get("key") == self.key else None

    def unkept(self) -> bool:
        """Whether the fit has something :meth:`keep` would write: only a league that
        recorded a match (a league that only reads writes nothing, a read-only store
        included), in a database (no other league opens a store in memory)."""
        if not (self.wrote and self.store.shared and self.handed):
            return False
        if self.hooks.dump is None or self.fit is None:
            return False
        return (self.handed, self.digest.hexdigest()) != self._kept

    def keep(self) -> None:
        """Write the fit (``rankcraft_fit_dump``) with the count and digest of the matches
        it was handed, into the open transaction, unless it is kept already or there is
        nothing to keep."""
        dump = self.hooks.dump
        if dump is None or not self.unkept():
            return
        covers = (self.handed, self.digest.hexdigest())
        data = {
            "key": self.key,
            "matches": self.handed,
            "pending": len(self.pending),
            "digest": covers[1],
            "fit": dump(self.fit),
        }
        self.store.set_meta(FIT_KEPT, json.dumps(data, allow_nan=False, separators=(",", ":")))
        self._kept = covers


def _text(match: Match) -> bytes:
    return match_text(match).encode() + b"\n"


class Fitted:
    """The whole-history model's methods of :class:`rankcraft.League`, and its closing
    (which keeps the fit)."""

    _refits: Refits | None
    _unit: UnitOfWork
    skill_class: type
    store: Store

    _closed = False
    """Whether the store was closed (by :meth:`close`, or by a ``with`` block's error)."""

    def close(self) -> None:
        """Close the store (a whole-history model's fit kept first: :meth:`keep_fit`);
        a database league used afterwards raises :class:`rankcraft.StoreError`, and
        closing again does nothing."""
        if self._closed:
            return
        try:
            self.keep_fit()
        finally:
            self._shut()

    def _shut(self) -> None:
        self._closed = True
        self.store.close()
        self._unit.forget()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, kind: object, *exc: object) -> None:
        if kind is None:
            self.close()
        else:  # (failing: the store closed as it is, nothing more written)
            self._shut()

    def keep_fit(self) -> None:
        """Keep a whole-history model's fit in the store (``rankcraft_fit_dump``), in a
        transaction of its own, for the next league that opens it to start from
        (docs/history-models.md); :meth:`close` does. Nothing for a forward model, a
        model without the hook, or a fit kept already."""
        refits = self._refits
        if refits is not None and refits.unkept():
            with self._unit.transaction():
                refits.keep()

    @property
    def has_curve(self) -> bool:
        """Whether the league's whole-history model gives a smoothed curve
        (``rankcraft_fit_curve``): False for a forward model or a model without one."""
        return self._refits is not None and self._refits.hooks.curve is not None

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
