# mypy: disable-error-code="empty-body"
"""The hooks a rankcraft plugin implements.

A ruleset names, for each *slot* (``initial``, ``decay``, ``team``, ``expectation``,
``update``, ``rank``, ``reset``), the plugin that fills it. When the ruleset is loaded the
engine looks up that one plugin's implementation of the slot's hook and, from then on,
calls it as a plain function: the hooks are never broadcast to every installed plugin, so
none is ``firstresult`` and no implementation has to ask "is this call for me?".

Implementations take any subset of a hook's arguments, by name, and never give them
defaults (pluggy does not pass defaults).

**States in the per-match hooks are plain tuples** (contract 2): a plugin declares its
state as an attrs class (the class ``rankcraft_initial`` returns an instance of), and
every per-match hook (decay, aggregate, team, expectation, outcomes, quality, update,
explain, rank) is handed and returns the tuple of that class's field values, in field
order. The core builds the class's instances only when a state leaves the rating loop
(``PlayerRecord.skill``, reports), and the season hooks (reset, standings) get those
instances. A plugin module says it is written this way with ``RANKCRAFT_CONTRACT = 2``;
a module without it is adapted as written for the first contract (instances everywhere;
:mod:`rankcraft.contract1`, deprecated). A plugin that reads another plugin's states (a
team plugin reading the ``location``) finds the fields' positions with
:func:`rankcraft.forms.layout`.

The reference page for plugin authors is docs/hooks.md.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from ._markers import hookspec
from .fithooks import FIT_HOOK_SLOTS
from .fithooks import rankcraft_fit as rankcraft_fit
from .fithooks import rankcraft_fit_curve as rankcraft_fit_curve
from .fithooks import rankcraft_fit_dump as rankcraft_fit_dump
from .fithooks import rankcraft_fit_load as rankcraft_fit_load
from .fithooks import rankcraft_fit_start as rankcraft_fit_start
from .model import (
    Census,
    Match,
    Needs,
    Pairing,
    PlayerContext,
    PlayerRecord,
    PlayerScope,
    ResetContext,
    State,
)

# ---------------------------------------------------------------------------------------
# Declarations: called once, when a ruleset is loaded
# ---------------------------------------------------------------------------------------


@hookspec
def rankcraft_params(slot: str) -> type | None:
    """Return the attrs class that validates the plugin's params table for ``slot``.

    The ruleset's ``[slot.params]`` table is structured into this class by rankcraft's
    cattrs converter: unknown keys are refused, and the class's validators refuse values
    out of range. Every field needs a default so that an empty table is valid.

    :param slot: the slot being loaded: ``"initial"``, ``"decay"``, ``"team"``,
        ``"expectation"``, ``"update"``, ``"rank"`` or ``"reset"``.
    :returns: an attrs class, or ``None`` when the plugin takes no params for that slot
        (the table must then be empty).

    .. versionadded:: 0.1
    """


@hookspec
def rankcraft_needs(slot: str) -> Needs | None:
    """Declare what the plugin reads from the skill states it is handed in ``slot``.

    Loading a ruleset whose skill plugin's state class lacks a needed field or role is an
    error naming both plugins, raised before any match is rated. For the update slot,
    ``opponents_at_onset`` asks for the opponents at the rating period's onset in
    ``batch`` and ``live`` modes (see :class:`rankcraft.Needs`). In any slot, ``modes``
    names the ``[period]`` modes the plugin rates correctly there (default all three): a
    ruleset with another mode is refused when loaded, naming the plugin and the mode.

    :param slot: the slot being loaded (see :func:`rankcraft_params`).
    :returns: a :class:`rankcraft.Needs`, or ``None`` when the plugin reads nothing.

    .. versionadded:: 0.1
    """


# ---------------------------------------------------------------------------------------
# Per match: the steps of docs/design.md (rating one match), in the order the engine calls them
# ---------------------------------------------------------------------------------------


@hookspec
def rankcraft_initial(slot: str, params: Any) -> State:
    """Return the state of a player the league has not seen yet.

    Called once per league and slot: every new player starts from that state (states are
    immutable). Called for the skill slot (``"initial"``) and, when the ruleset has a rank slot, for
    ``"rank"``: a plugin serving both tells them apart by ``slot``.

    :param slot: ``"initial"`` (skill state) or ``"rank"`` (rank state).
    :param params: the slot's params instance (``None`` without a params class).
    :returns: a new state instance (an attrs instance; the type defines the state fields).

    .. versionadded:: 0.1
    """


@hookspec
def rankcraft_decay(params: Any, state: State, periods: float, layout: Mapping[str, int]) -> State:
    """Return ``state`` after ``periods`` rating periods without play.

    Called before a match for each participant with a previous match, and by
    predictions made at a later time. ``periods`` is the idle time divided by the
    ruleset's ``[period] length_days``, after whole-``granularity_days`` rounding down.

    :param params: the decay slot's params.
    :param state: the stored skill state.
    :param periods: idle rating periods, a real number ≥ 0 (0 when the gap rounds to 0).
    :param layout: as for :func:`rankcraft_aggregate`, for a decay plugin that moves
        another plugin's states, which it does not know (``regress`` moves the
        ``location``).
    :returns: the decayed state; return ``state`` itself when nothing changes.

    .. versionadded:: 0.1
    """


@hookspec
def rankcraft_aggregate(params: Any, members: Sequence[State], layout: Mapping[str, int]) -> State:
    """Return one skill state that stands for a whole side in predictions.

    The engine hands these side states to :func:`rankcraft_expectation` for the match
    report and for :meth:`rankcraft.League.predict`.

    :param params: the team slot's params.
    :param members: the skill states of the side's players (decayed), at least one.
    :param layout: for a team plugin that reads the skill plugin's states, which it does
        not know: the positions of the skill state's fields in its tuple form, by field
        name and by role (``"location"``, ``"spread"``), from
        :func:`rankcraft.forms.layout`.
    :returns: a state of the skill plugin's class (for one member, usually that member).

    .. versionadded:: 0.1
    """


@hookspec
def rankcraft_team(
    params: Any,
    sides: Sequence[Sequence[State]],
    places: Sequence[int],
    weight: float,
    match: Match,
    layout: Mapping[str, int],
) -> Sequence[Sequence[Sequence[Pairing]]]:
    """Turn the sides of a match into the results each player's update digests.

    A team plugin that pairs two sides of one player each plainly (each against the
    other, at the match's weight) says so with ``Needs(plain_singles=True)``: the core
    then pairs such matches itself, without calling this hook.

    :param params: the team slot's params.
    :param sides: the decayed skill states per side, per player, in the order of
        ``match.teams``.
    :param places: the outcome, one place per side: 1 is best, equal places tie.
    :param weight: the match's weight in (0, 1]; multiply it into each pairing's weight.
    :param match: the match itself, for what else it carries (``seconds_played`` for
        partial play, ``scores``); most team plugins leave it out of their signature.
    :param layout: as for :func:`rankcraft_aggregate`.

    .. versionchanged:: 0.2
       ``match`` added (joint models weigh partial play inside the team computation).
    :returns: for each side, for each player, a sequence of :class:`rankcraft.Pairing`
        ``(opponent_state, score, weight)``; the same shape as ``sides``.

    .. versionadded:: 0.1
    .. versionchanged:: 0.1 ``seconds`` (partial play).
    """


@hookspec
def rankcraft_expectation(
    params: Any, side_states: Sequence[State], home: int | None, match: Match | None
) -> Sequence[float]:
    """Return the pre-match probability that each side wins: its expected score, a draw
    counting half a win (a win probability where draws cannot happen; a draw model goes
    in :func:`rankcraft_outcomes`).

    :param params: the expectation slot's params.
    :param side_states: one state per side, from :func:`rankcraft_aggregate`; two or more.
    :param home: index of the side playing at home, or None (a neutral venue, or unknown);
        plugins with a home-advantage param use it, others ignore it.
    :param match: the match being rated, or forecast before it is
        (:meth:`rankcraft.League.forecast` with ``match=``, ``rankcraft evaluate``'s
        three-way scores), for plugins that read its context (its ``meta``, e.g. the
        competition or the surface, or its date); None for a prediction made without a
        match (:meth:`rankcraft.League.predict`).
    :returns: one probability per side, each in [0, 1], summing to 1. For more than two
        sides, the share of the side in the round robin of every pair is a good reading.

    .. versionadded:: 0.1
    .. versionchanged:: 0.2 the optional ``match`` argument.
    """


@hookspec
def rankcraft_quality(
    params: Any,
    sides: Sequence[Sequence[State]],
    side_states: Sequence[State],
    home: int | None,
) -> float:
    """Return how good a match the proposed sides would make, in [0, 1] (1 is best).

    Optional; asked of the expectation slot's plugin by matchmaking
    (:mod:`rankcraft.matchmaking`), never while rating. A model with Gaussian uncertainty
    answers the draw-probability quality of Herbrich, Minka and Graepel ("TrueSkill: A
    Bayesian Skill Rating System", 2006; :func:`rankcraft.matchmaking.gaussian_quality`
    computes it). Without this hook matchmaking uses the closeness of the expectation:
    1 - |p0 - p1| for two sides, the normalised entropy of the win probabilities for more.

    :param params: the expectation slot's params.
    :param sides: the skill states per side, per player (decayed to the time asked about),
        in the order of the proposed sides; two or more sides, none empty.
    :param side_states: one state per side, from the team slot's
        :func:`rankcraft_aggregate`.
    :param home: index of the side playing at home, or None (a neutral venue).
    :returns: a finite number in [0, 1]; equal sides of certain skill should give values
        near the model's best, a foregone result near 0.

    .. versionadded:: 0.2
    """


@hookspec
def rankcraft_outcomes(
    params: Any, side_states: Sequence[State], home: int | None, match: Match | None
) -> Sequence[float] | None:
    """Return the pre-match probabilities of a win, a draw and a loss (optional).

    A draw model beside :func:`rankcraft_expectation`, asked of the expectation slot's
    plugin for two sides: :meth:`rankcraft.League.forecast` (``rankcraft predict``,
    ``/predict``) shows P(win), P(draw) and P(loss), and ``rankcraft evaluate`` scores
    them (three-way log loss, ranked probability score). Without it (or when it returns
    None) a forecast gives the expected score alone and calls it that. Never called per
    match: the rating loop uses the expectation only.

    The answer should agree with the expectation: P(side 0 wins) + ½ P(draw) is side 0's
    expected score (Davidson's and the ordered-logit draw models keep it so).

    :param params: the expectation slot's params.
    :param side_states: one state per side, from :func:`rankcraft_aggregate`; exactly two.
    :param home: index of the side playing at home, or None (as for
        :func:`rankcraft_expectation`).
    :param match: the match being forecast, as :func:`rankcraft_expectation` gets it
        when the match is rated (its ``meta`` and date: the competition, the surface, the
        pools); None for a forecast made without a match (:meth:`rankcraft.League.forecast`
        with sides only). A plugin whose expectation reads the match should read it here
        too, so that the two agree.
    :returns: ``(P(side 0 wins), P(draw), P(side 1 wins))``, each in [0, 1], summing to 1;
        or None when the plugin has no draw model for these states (e.g. a draw param of
        0 meaning "not modelled").

    .. versionadded:: 0.2
    .. versionchanged:: 0.2 the optional ``match`` argument (an implementation may leave
       it out of its signature, as implementations written before it do).
    """


@hookspec
def rankcraft_update(
    params: Any,
    state: State,
    pairings: Sequence[Pairing],
    games: int,
    side: int,
    match: Match | None,
    expected: float,
    score: float,
    mode: str,
    player: str,
    context: PlayerContext,
) -> State:
    """Return a player's new skill state after the match.

    Name only the arguments the update reads: ``context`` in particular is an object
    built per participant only for implementations that name it (the first contract's
    way of passing these facts; it costs about a microsecond a player).

    :param params: the update slot's params.
    :param state: the player's skill state (a tuple) as the match used it (after decay).
    :param pairings: the results from :func:`rankcraft_team`, at least one: tuples
        ``(opponent_state, score, weight)`` (:class:`rankcraft.Pairing` names them).
    :param games: rated matches the player had before this one (before the open rating
        period in ``batch`` and ``live`` modes), ≥ 0.
    :param side: index of the player's side in ``match.teams``.
    :param match: the match being rated; None when a ``batch`` period is closed or a
        deferred result is applied (the results then come from several matches).
    :param expected: the pre-match probability that the player's side wins (its
        expected score), in [0, 1], from :func:`rankcraft_expectation`.
    :param score: the side's result, its mean pairwise score against the other sides,
        in [0, 1] (0 for a quitter rated as a loss).
    :param mode: the ruleset's period mode: ``"match"``, ``"batch"`` or ``"live"``.
    :param player: the player's id.
    :param context: a :class:`rankcraft.PlayerContext` holding the arguments above, and
        ``context.explain(name, value)`` to record a factor of the change.
    :returns: the new skill state, a tuple of the state class's field values in order.

    .. versionadded:: 0.1
    .. versionchanged:: 0.3 states are tuples; the facts of ``context`` are arguments
       of their own, and ``context`` is built only when named.
    """


@hookspec
def rankcraft_explain(
    params: Any,
    state: State,
    pairings: Sequence[Pairing],
    games: int,
    side: int,
    match: Match | None,
    expected: float,
    score: float,
    mode: str,
    player: str,
    after: State,
) -> Mapping[str, float] | None:
    """Return the factors a player's change is explained with in the match report
    (Elo's ``k``), or None (optional; asked of the update slot's plugin).

    Called beside :func:`rankcraft_update` with the same arguments and its answer
    (``after``), so the explanation is what the update used. Return the same mapping
    object for equal factors where it can (a constant K): the report keeps one.

    :param params: as :func:`rankcraft_update` got it.
    :param state: as :func:`rankcraft_update` got it.
    :param pairings: as :func:`rankcraft_update` got it.
    :param games: as :func:`rankcraft_update` got it.
    :param side: as :func:`rankcraft_update` got it.
    :param match: as :func:`rankcraft_update` got it.
    :param expected: as :func:`rankcraft_update` got it.
    :param score: as :func:`rankcraft_update` got it.
    :param mode: as :func:`rankcraft_update` got it.
    :param player: as :func:`rankcraft_update` got it.
    :param after: the new state the update returned.
    :returns: factor names and finite values, or None (nothing to explain).

    .. versionadded:: 0.3
    """


@hookspec
def rankcraft_rank(
    params: Any,
    rank_state: State,
    before: State,
    after: State,
    pairings: Sequence[Pairing],
    games: int,
    side: int,
    match: Match | None,
    expected: float,
    score: float,
    mode: str,
    player: str,
    context: PlayerContext,
    layout: Mapping[str, int],
) -> State:
    """Return a player's new rank state (the visible rank) after the match.

    :param params: the rank slot's params.
    :param rank_state: the player's rank state (a tuple) before the match.
    :param before: the skill state the match used (after decay).
    :param after: the skill state after the update.
    :param pairings: this match's pairings (also in a ``live`` period), as for
        :func:`rankcraft_update`.
    :param games: as for :func:`rankcraft_update`.
    :param side: as for :func:`rankcraft_update`.
    :param match: as for :func:`rankcraft_update`.
    :param expected: as for :func:`rankcraft_update`.
    :param score: as for :func:`rankcraft_update`: win (1), draw (0.5) or loss (0) for
        two sides.
    :param mode: as for :func:`rankcraft_update`.
    :param player: as for :func:`rankcraft_update`.
    :param context: as for :func:`rankcraft_update`, built only when named; its
        ``explain`` records the rank layer's factors (a series, a cap) in the report.
    :param layout: the positions of the skill state's fields (``before``, ``after``), as
        for :func:`rankcraft_aggregate`.
    :returns: the new rank state (a tuple).

    .. versionadded:: 0.1
    .. versionchanged:: 0.3 as :func:`rankcraft_update`.
    """


# ---------------------------------------------------------------------------------------
# Season events: called on demand or on a schedule, never per match
# ---------------------------------------------------------------------------------------


@hookspec
def rankcraft_reset(
    params: Any, players: Sequence[PlayerRecord], kind: str, context: ResetContext
) -> Sequence[PlayerRecord]:
    """Apply a season event (soft or hard reset, migration) to every player.

    The engine commits the returned records in one transaction. Return only the records
    the event changes: the engine writes those alone, so an event costs in proportion to
    the players it changes (returning a record unchanged is allowed, and not written).

    An event must be a function of the records, its kind and which players played since
    the previous event (``context.played``): when a scheduled catch-up finds that the
    latest run of every ``[[resets]]`` entry changed no record, it skips the remaining
    due events (a match dated years ahead does not run every weekly event in between).

    :param params: the reset slot's params.
    :param players: every player's record, ordered by id; only the players in the
        event's scope when the plugin answers :func:`rankcraft_reset_scope`.
    :param kind: the event, e.g. ``"soft"`` or ``"hard"``; raise
        :class:`rankcraft.InputError` for a kind the plugin does not offer.
    :param context: the event's time, the previous event's (``since``) and the
        ruleset's skill params (``skill_params``) and rank params (``rank_params``).
    :returns: the new records of the players the event changes (same ids; players left
        out are unchanged).

    .. versionadded:: 0.1
    """


@hookspec
def rankcraft_reset_kinds(params: Any) -> Sequence[str]:
    """Name the season events the plugin runs (optional, but every reset plugin should).

    Asked once, when a ruleset is loaded: a ``[[resets]]`` entry whose ``kind`` is not
    among them is refused there, naming the kind, the kinds offered and the closest one,
    instead of failing at the first scheduled event, after matches were recorded. Without
    this hook a kind is only found wrong when the event runs (``rankcraft check`` runs
    each scheduled event once on a scratch league, so it finds it there).

    :param params: the reset slot's params (a plugin whose kinds are configured, as
        ``regress``'s ``kinds``, answers from them).
    :returns: the kinds :func:`rankcraft_reset` accepts, e.g. ``("soft", "hard")``.

    .. versionadded:: 0.3
    """


@hookspec
def rankcraft_reset_scope(params: Any, kind: str, context: ResetContext) -> PlayerScope | None:
    """Say which players a season event can change (optional).

    Asked before each event: the league then reads from its store only the players in
    the scope (along the store's indexed columns: latest match, leaderboard value, tier)
    and hands only those to :func:`rankcraft_reset`, so that an event costs in
    proportion to the players it can change, not to the league. Without this hook, or
    when it returns None, every player is read and handed over (the default).

    The answer must be exact: every player outside the scope must be one the event
    would leave unchanged, and whatever the event computes from the whole league
    (a mean, the top 100, the lowest rating) must be computable from the players in the
    scope. An event that moves everyone (a regression to the mean, a rescaling) cannot
    be scoped: return None. A kind the plugin does not offer may return None
    (:func:`rankcraft_reset` then refuses it).

    :param params: the reset slot's params.
    :param kind: the event, e.g. ``"soft"`` or ``"hard"``.
    :param context: as :func:`rankcraft_reset` gets it (``since``; ``ran``, when each kind
        last ran over the league).
    :returns: a :class:`rankcraft.PlayerScope`, or None for every player.

    .. versionadded:: 0.2
    """


# ---------------------------------------------------------------------------------------
# Views of the whole league: called for displays, never per match
# ---------------------------------------------------------------------------------------


@hookspec
def rankcraft_standings(
    params: Any, players: Sequence[PlayerRecord], census: Census
) -> Mapping[str, str]:
    """Return a label per player that depends on the whole league (a title, a percentile).

    Some ranks cannot be read off one player's state: Skyweaver's Grandweaver is the top
    100 Masters; the team wager's percentile ("Ranking in Team-Based Competitive Games")
    compares every active player. The engine calls the
    rank plugin's implementation (or, without a rank slot, the update plugin's) for
    leaderboards and player views.

    :param params: the params of the slot whose plugin answers (rank, else update).
    :param players: the players to label, and the players of the plugin's
        :func:`rankcraft_standings_scope` (every player without that hook).
    :param census: counts of the league's players (a :class:`rankcraft.Census`): its
        ``latest`` match, and how many players pass a filter (played since, matches
        played) and stand below given players on the leaderboard. A label that is a
        count (a percentile) asks the census instead of reading every player: on a
        database the counts are SQL counts, without decoding rows (a scan of the
        table, or the time and key indexes).
    :returns: a mapping from player id to a short label; players left out have none.

    .. versionadded:: 0.1
    .. versionchanged:: 0.2 the ``census`` argument (an implementation may leave it out;
        a caller passes it).
    """


@hookspec
def rankcraft_standings_scope(params: Any, latest: datetime | None) -> PlayerScope | None:
    """Say which players the league-wide labels depend on (optional).

    When a reader asks for some players' labels (a leaderboard page, one player's view),
    the league reads from its store only the players in this scope, adds the players
    asked about, and hands those to :func:`rankcraft_standings` of the same plugin, so
    that a label costs in proportion to the scope, not to the league. Without this hook,
    or when it returns None, every player is read (the default).

    The answer must be exact: the label of any player must be computable from that
    player and the players in the scope (Skyweaver's Grandweaver, the top 100 Masters,
    needs the Masters: every player with at least 1,200 RP; the team wager's percentile
    compares a player with the active players, and counts them with the ``census`` of
    :func:`rankcraft_standings`, so its scope is nobody but the players asked about). A
    label that needs every player's record cannot be scoped: return None.

    :param params: the params of the slot whose plugin answers :func:`rankcraft_standings`.
    :param latest: when the league's latest match was played (the latest
        ``last_played`` of any player), or None before any match; for scopes relative
        to it (the players active lately).
    :returns: a :class:`rankcraft.PlayerScope` (no condition: only the players asked
        about), or None for every player.

    .. versionadded:: 0.2
    .. versionchanged:: 0.2 the optional ``latest`` argument.
    """


# ---------------------------------------------------------------------------------------
# States coming in: an import's, a season event's records; never per match
# ---------------------------------------------------------------------------------------


@hookspec
def rankcraft_verify(params: Any, slot: str, state: State) -> str | None:
    """Say what is wrong with a state that comes from outside the rating loop (optional).

    An import's states, and the records a reset plugin returns, are first checked
    against the state class (every field, in range, finite); then the plugin that owns
    the state is asked whether its fields agree with each other: a field the plugin
    derives from others (the goals model's ``rating``, the sum of ``attack`` and
    ``defence``; a Skyweaver rank's ``tier`` and ``floor``, from its points) must be what
    the plugin would derive. Nothing is written when it says something is wrong: the
    import is refused with a ``StateError`` naming the player, the state and this answer.

    :param params: the slot's params instance.
    :param slot: ``"initial"`` for a skill state, ``"rank"`` for a rank state (as
        :func:`rankcraft_initial`).
    :param state: the state, an instance of the plugin's state class.
    :returns: what is wrong, naming the field and the value (``'rating' must be attack +
        defence, 0.2: 35.0``), or ``None`` when the state is one the plugin could have made.

    .. versionadded:: 0.2
    """


HOOK_SLOTS: dict[str, tuple[str, ...]] = {
    "rankcraft_initial": ("initial", "rank"),
    "rankcraft_decay": ("decay",),
    "rankcraft_aggregate": ("team",),
    "rankcraft_team": ("team",),
    "rankcraft_expectation": ("expectation",),
    "rankcraft_update": ("update",),
    "rankcraft_explain": ("update",),
    "rankcraft_rank": ("rank",),
    "rankcraft_reset": ("reset",),
    "rankcraft_reset_scope": ("reset",),
    "rankcraft_reset_kinds": ("reset",),
    **FIT_HOOK_SLOTS,
}
"""Which slots each per-match or season hook serves (used by ``rankcraft plugins``)."""
