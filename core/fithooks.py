# mypy: disable-error-code="empty-body"
"""The hooks of a whole-history model: the ruleset's ``[fit]`` slot (docs/history-models.md).

A forward model moves a match's players once and never looks at the match again. A
*history model* fits every skill at once from all the matches so far (TrueSkill Through
Time, a time-weighted Dixon-Coles fit). The league runs one the same way for every
plugin: it rates each match forward with the ruleset's ``[update]`` slot as ever (the
transaction, the history, the reports, rank layers on top), and before the first match
of each new day (UTC) it hands the fit the matches rated since the previous refit and
writes the states the fit returns into the players' records. A forecast is therefore
always made from the fit of the matches before it.

The fit object is the plugin's own (``rankcraft_fit_start`` makes it, only the plugin
reads it). It must be a function of the matches handed to it, in order and in the same
groups, and of the limits: the league rebuilds it by handing the stored history again
(when a database is opened, after a failed transaction, after an edit of the history),
and the rebuilt fit must answer as the original did.

These specs are part of :mod:`rankcraft.hookspecs` (the one reference of every hook).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from ._markers import hookspec
from .historyspec import FitLimits
from .model import Match, State


@hookspec
def rankcraft_fit_start(params: Any) -> Any:
    """Return a new, empty fit: the object :func:`rankcraft_fit` adds matches to.

    :param params: the fit slot's params (``[fit.params]``, or the update slot's when
        ``[fit]`` names the update plugin and has no params table of its own).
    :returns: any object; the league keeps it and hands it back, and never reads it.

    .. versionadded:: 0.4
    """


@hookspec
def rankcraft_fit(
    params: Any, fit: Any, matches: Sequence[Match], now: datetime, limits: FitLimits
) -> Mapping[str, State]:
    """Add ``matches`` to ``fit``, fit the whole history again, and return the skill states.

    Called before the first match of each new day with the matches rated since the
    previous call (all of one or more earlier days, in the league's order), and never
    with an empty list. A refit should cost what changed: start from the fit as it
    stands (a warm start), iterate until no skill moves by more than
    ``limits.tolerance`` or ``limits.iterations`` sweeps are done, and leave out
    matches older than ``limits.window_days`` before ``now`` when that is set.

    :param params: the fit slot's params.
    :param fit: the object :func:`rankcraft_fit_start` returned (changed in place).
    :param matches: the new matches, validated, in order (at least one).
    :param now: the time of the match about to be rated (timezone-aware UTC); no match
        handed so far is later.
    :param limits: the ruleset's ``[history]`` tolerance, iterations and window
        (:class:`rankcraft.FitLimits`).
    :returns: ``{player id: skill state}``, each a tuple of the skill state class's
        fields in order (contract 2), for every player the fit knows (the league writes
        those that differ from the player's record). A state is the player's skill as of
        their latest match: the ruleset's decay, if any, adds the idle time since.

    .. versionadded:: 0.4
    """


@hookspec
def rankcraft_fit_curve(params: Any, fit: Any, player: str) -> Sequence[tuple[datetime, State]]:
    """Return a player's smoothed skill through time, as the whole-history fit sees it
    (optional: a model without a curve leaves it out).

    :param params: the fit slot's params.
    :param fit: the fit (as :func:`rankcraft_fit` left it).
    :param player: the player's id.
    :returns: ``(time, state)`` pairs in time order, one per time the player played
        (states as tuples, contract 2); empty for a player the fit does not know.

    .. versionadded:: 0.4
    """


@hookspec
def rankcraft_fit_dump(params: Any, fit: Any) -> Any:
    """Return the fit as JSON-able data (dicts, lists, strings, finite floats, ints,
    booleans, None) that :func:`rankcraft_fit_load` turns back into the same fit
    (optional). The league keeps it when it closes, with a digest of the matches the fit
    was handed, and a league that opens the database starts from it instead of handing
    the fit the whole history again; a model without it is rebuilt from the history.

    :param params: the fit slot's params.
    :param fit: the fit as :func:`rankcraft_fit` left it (not changed).
    :returns: data that loads back into a fit answering exactly as this one (floats are
        kept to the bit: JSON writes their shortest exact text).

    .. versionadded:: 0.4
    """


@hookspec
def rankcraft_fit_load(params: Any, data: Any) -> Any:
    """Return the fit that :func:`rankcraft_fit_dump` gave ``data`` of (optional; both or
    neither). Raise ``ValueError`` for data it cannot take (another format, another
    version): the league then rebuilds the fit from the history, as it does on any failure
    of this hook.

    :param params: the fit slot's params.
    :param data: what :func:`rankcraft_fit_dump` returned, read back from JSON.
    :returns: a fit, as :func:`rankcraft_fit_start` makes them, answering exactly as the
        dumped one did.

    .. versionadded:: 0.4
    """


FIT_HOOK_SLOTS: dict[str, tuple[str, ...]] = {
    "rankcraft_fit_start": ("fit",),
    "rankcraft_fit": ("fit",),
    "rankcraft_fit_curve": ("fit",),
    "rankcraft_fit_dump": ("fit",),
    "rankcraft_fit_load": ("fit",),
}
"""Which slot each history-model hook serves."""
