"""The schema of a ruleset: its tables as attrs classes (:class:`Ruleset`, the period,
quits, display and reset tables, a slot's plugin and params), and the one cattrs
converter (:data:`converter`) that turns TOML tables into them and back, strict about
types, each failure one line naming the field path and the value. Reading ruleset files
and text (``extends``, the plugins' params, the checks across tables) is
:mod:`rankcraft.ruleset`'s, which these names are read from too.
"""

from __future__ import annotations

import json
import math
import typing
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

import attrs
import cattrs
from cattrs.cols import homogenous_tuple_structure_factory, list_structure_factory
from cattrs.gen import make_dict_structure_fn
from cattrs.preconf.tomllib import make_converter

from .errors import PluginError, RulesetError
from .historyspec import HistorySpec as HistorySpec
from .manager import Plugins
from .model import PERIOD_MODES as PERIOD_MODES
from .model import Scale, field_of_role, scale_of
from .suggest import did_you_mean
from .validators import within

converter = make_converter(forbid_extra_keys=True)
"""The one converter between TOML tables and attrs classes (rulesets and params)."""


def _strict_float(value: Any, _: type) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"expected a number, got {value!r}")
    return float(value)


def _strict_int(value: Any, _: type) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"expected a whole number, got {value!r}")
    return value


def _strict_str(value: Any, _: type) -> str:
    if not isinstance(value, str):
        raise TypeError(f"expected a string, got {value!r}")
    return value


def _strict_bool(value: Any, _: type) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"expected true or false, got {value!r}")
    return value


converter.register_structure_hook(float, _strict_float)
converter.register_structure_hook(int, _strict_int)
converter.register_structure_hook(str, _strict_str)
converter.register_structure_hook(bool, _strict_bool)


_PLACEHOLDERS = (("bool", "<true or false>"), ("float", "<number>"), ("int", "<whole number>"))


def _example(field: attrs.Attribute[Any]) -> str | None:
    """``field``'s value in a table's example: its default when that is plain, else a
    placeholder for its type; None for a field that is best left out (an optional one,
    a table or list)."""
    default = field.default
    if isinstance(default, bool):
        return "true" if default else "false"
    if isinstance(default, int | float):
        return repr(default)
    if isinstance(default, str):
        return json.dumps(default)
    if default is not attrs.NOTHING:
        return None
    kind = str(getattr(field.type, "__name__", field.type))
    if kind == "str":
        return '"..."'
    return next((text for name, text in _PLACEHOLDERS if kind == name), "...")


def table_shape(cls: type) -> str:
    """An example of a table of attrs class ``cls`` in TOML's inline form, its required
    keys and plain defaults (``{ games_below = <whole number>, k = <number> }``)."""
    fields = [f for f in attrs.fields(cls) if f.init]
    items = [f"{f.name} = {value}" for f in fields if (value := _example(f)) is not None]
    return "{ " + ", ".join(items) + " }" if items else "{}"


def _tables_only(cls: type) -> Any:
    """The structure hook of an attrs class: a value that is not a table is refused,
    naming the table's shape (cattrs alone said "'list' object has no attribute 'keys'")."""
    inner: Any = make_dict_structure_fn(cls, converter)

    def structure_table(value: Any, type_: type) -> Any:
        if not isinstance(value, Mapping):
            raise TypeError(f"expected a table such as {table_shape(cls)}, got {value!r}"[:400])
        return inner(value, type_)

    return structure_table


def _is_array_of_tables(type_: Any) -> bool:
    args = typing.get_args(type_)
    return typing.get_origin(type_) in (tuple, list) and bool(args) and attrs.has(args[0])


def _arrays_only(type_: Any) -> Any:
    """The structure hook of a list of tables: a table or a text (whose keys or letters
    cattrs took for the items) is refused, naming the items' shape."""
    cls = typing.get_args(type_)[0]
    inner: Any
    if typing.get_origin(type_) is list:
        inner = list_structure_factory(type_, converter)
    else:
        inner = homogenous_tuple_structure_factory(type_, converter)

    def structure_array(value: Any, type__: Any) -> Any:
        if not isinstance(value, list | tuple):
            raise TypeError(
                f"expected an array of tables such as [{table_shape(cls)}], got {value!r}"[:400]
            )
        return inner(value, type__)

    return structure_array


converter.register_structure_hook_factory(attrs.has, _tables_only)
converter.register_structure_hook_factory(_is_array_of_tables, _arrays_only)


def unknown_keys(extra: set[str] | frozenset[str], known: Any) -> str:
    """``unknown key(s) 'k_factr' (did you mean 'k_factor'?)``: the keys a table may not
    have, with the known keys closest to the first of them."""
    listed = sorted(extra)
    return f"unknown key(s) {', '.join(map(repr, listed))}{did_you_mean(listed[0], known)}"


def format_exception(exc: BaseException, type_: type | None) -> str:
    if isinstance(exc, cattrs.ForbiddenExtraKeysError):
        # (fields derived when the params are built, init=False, are not keys of the table)
        known = [f.name for f in attrs.fields(exc.cl) if f.init] if attrs.has(exc.cl) else []
        return unknown_keys(exc.extra_fields, known)
    if isinstance(exc, KeyError):
        return "required key is missing"
    if isinstance(exc, ValueError | TypeError):
        # attrs' built-in validators raise ValueError(message, attribute, ...): keep the message
        first = exc.args[0] if exc.args else ""
        message = first if isinstance(first, str) and first else str(exc)
        if len(exc.args) == 4 and isinstance(exc.args[3], str):  # (attrs' in_: options, value)
            options = exc.args[2]
            if isinstance(options, tuple | list | set | frozenset | dict):
                message += did_you_mean(exc.args[3], [str(o) for o in options])
        return message
    return cattrs.v.format_exception(exc, type_)


def structure(data: Any, cls: type, *, path: str, source: str) -> Any:
    """Structure ``data`` into ``cls`` with :data:`converter`; raise :class:`RulesetError`.

    Every failure becomes one line naming the field path and the value.
    """
    try:
        return converter.structure(data, cls)
    except Exception as exc:
        if isinstance(exc, cattrs.BaseValidationError):
            lines = cattrs.transform_error(exc, path=path, format_exception=format_exception)
        else:
            lines = [f"{exc} @ {path}"]
        raise RulesetError(f"{source}: " + "; ".join(lines)) from None


QUITTER_RULES = ("result", "loss", "deferred-loss")
OTHERS_RULES = ("result", "cancelled")
DEFAULT_TEAM_PLUGIN = "mean"


@attrs.frozen(kw_only=True)
class PeriodSpec:
    """How time is counted.

    Attributes:
        mode: ``"match"`` (default): every match is one rating period, rated at once;
            ``"batch"``: Glickman's rating periods of ``length_days`` from ``origin``: the
            results of a period are rated together when it closes (a replay closes its last
            period at the end); ``"live"``: the same periods, but after every match the
            player's period is re-rated from its start with all its results so far.
        length_days: length of one rating period in days, from a second (1/86400) to
            1e6 (default 1). Decay gets idle time in these units.
        granularity_days: ``match`` mode: idle time is first rounded down to whole
            multiples of this many days, in [0, 1e6] (default 0: real-valued time).
        origin: ``batch``/``live`` modes: the start of period 0, an ISO-8601 date or
            date-time, UTC when no zone is given (default ``"2000-01-03"``, a Monday).
    """

    mode: str = attrs.field(default="match", validator=attrs.validators.in_(PERIOD_MODES))
    length_days: float = attrs.field(default=1.0, validator=within(1.0 / 86400.0, 1e6))
    granularity_days: float = attrs.field(default=0.0, validator=within(0.0, 1e6))
    origin: str = attrs.field(default="2000-01-03")

    @origin.validator
    def _check_origin(self, attribute: attrs.Attribute[str], value: str) -> None:
        try:
            datetime.fromisoformat(value)
        except ValueError:
            raise ValueError(f"'origin' must be an ISO-8601 date or date-time: {value!r}") from None

    @property
    def origin_time(self) -> datetime:
        """``origin`` as an aware UTC time."""
        moment = datetime.fromisoformat(self.origin)
        return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)

    def index(self, moment: datetime) -> int:
        """The rating period (``batch``/``live``) that contains ``moment``."""
        days = (moment - self.origin_time).total_seconds() / 86400.0
        return math.floor(days / self.length_days + 1e-12)

    def periods(self, elapsed_days: float) -> float:
        """Idle rating periods for ``elapsed_days`` of inactivity (≥ 0)."""
        if self.granularity_days > 0:
            elapsed_days = (
                math.floor(elapsed_days / self.granularity_days + 1e-9) * self.granularity_days
            )
        return max(elapsed_days, 0.0) / self.length_days


@attrs.frozen(kw_only=True)
class QuitSpec:
    """What a player's quit (the match's ``quit`` list) does.

    Attributes:
        quitter: ``"result"`` (default: the match's result stands), ``"loss"`` (a quitter
            loses, whatever the score) or ``"deferred-loss"`` (INVERSUS: the quitter's loss
            is rated when their next match starts, against the opponents as they stood when
            the abandoned match started; in ``batch`` and ``live`` modes, where a period's
            results are rated together, it counts as ``"loss"``).
        others: ``"result"`` (default) or ``"cancelled"``: when anyone quit, the players
            who stayed are not rated for the match (INVERSUS: no automatic win).
    """

    quitter: str = attrs.field(default="result", validator=attrs.validators.in_(QUITTER_RULES))
    others: str = attrs.field(default="result", validator=attrs.validators.in_(OTHERS_RULES))


@attrs.frozen(kw_only=True)
class DisplaySpec:
    """How leaderboards and player views show players (``[display]``). Display only: no
    rating, export or match report depends on it.

    Attributes:
        conservative: k in [0, 10] (default 0): show and sort players by their skill's
            location − k * spread (TrueSkill's "μ − 3σ", Glicko's "r − 2RD"), so that a
            player the system knows little about does not top the table on luck. Needs a
            skill state with a ``spread`` field and a ruleset without a ``[rank]`` slot
            (rank points order those).
        active_days: leaderboards list only the players whose latest match is within this
            many days of the league's latest match, in [1e-6, 1e6] (default: no limit;
            a retired driver keeps their rating but leaves the table).
    """

    conservative: float = attrs.field(default=0.0, validator=within(0.0, 10.0))
    active_days: float | None = attrs.field(
        default=None, validator=attrs.validators.optional(within(1e-6, 1e6))
    )


INTERVAL_Z = 1.959963984540054
"""The normal quantile of a 95% interval: location ± 1.96 * spread."""


class Display:
    """What leaderboards sort by and player views show, from one player's states.

    :param spec: the ruleset's ``[display]`` table.
    :param skill_class, rank_class: the plugins' state classes (``rank_class`` None
        without a rank slot).

    :meth:`value` is the one sort key of every leaderboard (the library's, the command
    line's, the HTTP service's): a store that keeps it in an indexed column computes it
    with this method. Every figure here is on the scale players see (the fields'
    :class:`Scale`: Glicko-2's μ and φ as Glickman's rating and RD); :meth:`skill` gives
    the skill's location and spread on it, under the names players see.
    """

    def __init__(self, spec: DisplaySpec, skill_class: type, rank_class: type | None) -> None:
        self.spec = spec
        self.k = spec.conservative
        self.location = field_of_role(skill_class, "location")
        self.spread = field_of_role(skill_class, "spread")
        self.rank_location = (
            field_of_role(rank_class, "location") if rank_class is not None else None
        )
        self.location_scale = _scale(skill_class, self.location)
        self.spread_scale = _scale(skill_class, self.spread)

    @property
    def names(self) -> tuple[str | None, str | None]:
        """The names players see the skill's location and spread as (None: no such field)."""
        return (
            None if self.location is None else self.location_scale.name,
            None if self.spread is None else self.spread_scale.name,
        )

    def skill(self, skill: Any) -> dict[str, float]:
        """The skill's location and spread as players see them, by the names they see.

        >>> from rankcraft.plugins.glicko2 import Glicko2Skill
        >>> shown = Display(DisplaySpec(), Glicko2Skill, None)
        >>> {k: round(v, 2) for k, v in shown.skill(Glicko2Skill(1.0, 0.5, 0.06)).items()}
        {'rating': 1673.72, 'RD': 86.86}
        """
        out = {}
        for field, scale in (
            (self.location, self.location_scale),
            (self.spread, self.spread_scale),
        ):
            if field is not None:
                out[scale.name] = scale(float(getattr(skill, field)))
        return out

    @property
    def orders(self) -> bool:
        """Whether players have a display value (False: leaderboards order by id)."""
        return self.rank_location is not None or self.location is not None

    def scales(self) -> dict[str, dict[str, Any]]:
        """Per role (``location``, ``spread``), the skill field as kept and its scale,
        ``{"field", "factor", "offset"}``: how a client (the web page) shows a state
        as a match report keeps it."""
        kept = {"location": (self.location, self.location_scale)}
        kept["spread"] = (self.spread, self.spread_scale)
        return {
            role: {"field": field, "factor": scale.factor, "offset": scale.offset}
            for role, (field, scale) in kept.items()
            if field is not None
        }

    def value(self, skill: Any, rank: Any) -> float | None:
        """The display value of a player: their rank points (the rank state's location)
        when the ruleset has a rank layer, else the skill's location − k * spread (k the
        ``conservative`` setting, 0 by default), in the skill's own units; None when
        neither state has a location field.

        >>> from rankcraft.plugins.glicko1 import Glicko1Skill
        >>> shown = Display(DisplaySpec(conservative=2.0), Glicko1Skill, None)
        >>> shown.value(Glicko1Skill(1700.0, 120.0), None)
        1460.0
        """
        if self.rank_location is not None:
            return float(getattr(rank, self.rank_location))
        if self.location is None:
            return None
        scale = self.location_scale  # (written out: the sort key of every row written)
        value = scale.offset + scale.factor * float(getattr(skill, self.location))
        if self.k:
            spread = float(getattr(skill, self.spread))  # type: ignore[arg-type]
            value -= self.k * (self.spread_scale.factor * spread)
        return value

    def interval(self, skill: Any) -> tuple[float, float] | None:
        """The skill's 95% interval, location ± 1.96 * spread (on the scale players see
        them), or None when the skill has no spread field."""
        if self.location is None or self.spread is None:
            return None
        centre = self.location_scale(float(getattr(skill, self.location)))
        half = INTERVAL_Z * self.spread_scale(float(getattr(skill, self.spread)))
        return (centre - half, centre + half)

    def active(self, last_played: datetime | None, latest: datetime | None) -> bool:
        """Whether a player whose latest match is ``last_played`` is listed, when the
        league's latest match is ``latest`` (always, without ``active_days``)."""
        days = self.spec.active_days
        if days is None:
            return True
        if last_played is None or latest is None:
            return False
        return (latest - last_played).total_seconds() <= days * 86400.0


def _scale(state_class: type, field: str | None) -> Scale:
    """The scale players see ``field`` of ``state_class`` on (any, without the field)."""
    return Scale("") if field is None else scale_of(state_class, field)


@attrs.frozen(kw_only=True)
class ResetSchedule:
    """A season event that a replay runs by itself: on dates (every ``every_days`` from
    ``start``), or when the data says a season ended (``season_field`` or ``gap_days``).
    Exactly one of ``every_days``, ``season_field`` and ``gap_days`` is given.

    Attributes:
        kind: the event handed to the reset plugin, e.g. ``"soft"`` or ``"hard"``.
        every_days: days between two events, from an hour (1/24) to 1e6 (7 for weekly, 28
            for four-week seasons).
        start: with ``every_days`` only: ISO-8601 date or date-time (UTC without a zone);
            the first event is ``every_days`` after it. Left out: the schedule starts at
            the league's first match. Events due at the same moment run in file order.
        season_field: a field of the match's free data, ``"meta.KEY"`` (e.g.
            ``"meta.season"``): the event runs before the first match whose value (a
            string or an integer) differs from the previous match's.
        gap_days: days, from an hour (1/24) to 1e6: the event runs before a match that
            comes more than this long after the league's previous match (the off-season).
    """

    kind: str
    every_days: float | None = attrs.field(default=None)
    start: str | None = attrs.field(default=None)
    season_field: str | None = attrs.field(default=None)
    gap_days: float | None = attrs.field(default=None)

    @every_days.validator
    def _check_every(self, attribute: attrs.Attribute[float | None], value: float | None) -> None:
        if value is not None:
            within(1.0 / 24.0, 1e6)(self, attribute, value)

    @gap_days.validator
    def _check_gap(self, attribute: attrs.Attribute[float | None], value: float | None) -> None:
        if value is not None:
            within(1.0 / 24.0, 1e6)(self, attribute, value)

    @season_field.validator
    def _check_field(self, attribute: attrs.Attribute[str | None], value: str | None) -> None:
        if value is None:
            return
        parts = value.split(".")
        if len(parts) < 2 or parts[0] != "meta" or not all(parts[1:]):
            raise ValueError(
                "'season_field' must name a field of the match's free data, "
                f"'meta.KEY' (e.g. 'meta.season'): {value!r}"
            )

    @start.validator
    def _check_start(self, attribute: attrs.Attribute[str | None], value: str | None) -> None:
        if value is None:
            return
        try:
            datetime.fromisoformat(value)
        except ValueError:
            raise ValueError(f"'start' must be an ISO-8601 date or date-time: {value!r}") from None

    def __attrs_post_init__(self) -> None:
        given = [
            k for k in ("every_days", "season_field", "gap_days") if getattr(self, k) is not None
        ]
        if len(given) != 1:
            raise ValueError(
                "a [[resets]] entry needs exactly one of 'every_days' (dates), "
                f"'season_field' or 'gap_days' (from the data): {given or 'none'} "
                f"(kind {self.kind!r})"
            )
        if self.start is not None and self.every_days is None:
            raise ValueError(
                f"'start' goes with 'every_days' (a dated schedule): {self.start!r} "
                f"(kind {self.kind!r})"
            )
        if self.start is not None and self.every_days is not None:
            try:  # (the first event runs every_days after start: a time a league can hold)
                self.start_time + timedelta(days=self.every_days)  # type: ignore[operator]
            except OverflowError:
                raise ValueError(
                    f"'start' plus 'every_days' must fall within the years 1 to 9999: "
                    f"{self.start!r} plus {self.every_days:g} days (kind {self.kind!r})"
                ) from None

    @property
    def trigger(self) -> str:
        """``"dates"``, ``"season"`` (a season field) or ``"gap"`` (a long gap)."""
        if self.season_field is not None:
            return "season"
        return "gap" if self.gap_days is not None else "dates"

    def season_of(self, meta: Mapping[str, Any]) -> str | int | None:
        """The match's season value (``season_field`` read from its ``meta``), or None
        when the field is absent; a value that is not a string or an integer is refused
        (a ValueError naming the field and the value)."""
        assert self.season_field is not None
        value: Any = meta
        for key in self.season_field.split(".")[1:]:
            if not isinstance(value, Mapping) or key not in value:
                return None
            value = value[key]
        if isinstance(value, bool) or not isinstance(value, str | int):
            raise ValueError(
                f"'{self.season_field}' must be a string or an integer (the season's "
                f"name): {value!r}"[:300]
            )
        return value

    @property
    def start_time(self) -> datetime | None:
        """``start`` as an aware UTC time, or None (from the league's first match)."""
        if self.start is None:
            return None
        moment = datetime.fromisoformat(self.start)
        return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def reset_kind_refused(kind: str, reset: SlotSpec, plugins: Plugins) -> str | None:
    """Why the reset plugin cannot run an event ``kind`` (it names the kinds it runs,
    ``rankcraft_reset_kinds``, and ``kind`` is not among them, said with the closest), or
    None when it can or does not say.

    :raises PluginError: the plugin's answer is not a list of names.
    """
    kinds = plugins.reset_kinds(reset.plugin, reset.params)
    if kinds is None or kind in kinds:
        return None
    return (
        f"'kind' must be an event the reset plugin {reset.plugin!r} runs "
        f"({', '.join(map(repr, kinds)) or 'none'}): {kind!r}{did_you_mean(kind, kinds)}"
    )


def check_reset_kinds(
    resets: tuple[ResetSchedule, ...], reset: SlotSpec, plugins: Plugins, source: str
) -> None:
    """Refuse a ``[[resets]]`` kind the reset plugin does not run
    (:func:`reset_kind_refused`)."""
    for index, schedule in enumerate(resets):
        try:
            why = reset_kind_refused(schedule.kind, reset, plugins)
        except PluginError as exc:
            raise RulesetError(f"{source}: {exc} @ ruleset.reset.plugin") from None
        if why is not None:
            raise RulesetError(f"{source}: {why} @ ruleset.resets[{index}].kind")


@attrs.frozen(kw_only=True)
class SlotSpec:
    """One slot of a ruleset.

    Attributes:
        plugin: the entry-point name of an installed plugin.
        params: an instance of the plugin's params class for this slot (None when the
            plugin takes none).
    """

    plugin: str
    params: Any = None


@attrs.frozen(kw_only=True)
class Ruleset:
    """A loaded, validated ruleset.

    Attributes:
        name: the ruleset's name (a database remembers it).
        description: one line for people.
        period: how time is counted (:class:`PeriodSpec`).
        quits: what quitting a match does (:class:`QuitSpec`).
        update: the skill model; it also serves ``initial``, ``decay`` and
            ``expectation`` unless those slots name another plugin.
        initial, decay, expectation: optional overrides of those steps.
        team: how sides become pairings (a file without ``[team]`` gets plugin ``mean``).
        rank: the visible rank layer, optional.
        reset: season events, optional.
        fit: a whole-history model refitting the skills every day, optional
            (:mod:`rankcraft.fithooks`).
        resets: season events run by themselves during replays (``[[resets]]``).
        display: how leaderboards and player views show players (:class:`DisplaySpec`).
        history: what the league does with late matches (:class:`HistorySpec`).
    """

    name: str
    description: str = ""
    period: PeriodSpec = attrs.field(factory=PeriodSpec)
    quits: QuitSpec = attrs.field(factory=QuitSpec)
    update: SlotSpec
    initial: SlotSpec | None = None
    decay: SlotSpec | None = None
    expectation: SlotSpec | None = None
    team: SlotSpec
    rank: SlotSpec | None = None
    reset: SlotSpec | None = None
    fit: SlotSpec | None = None
    resets: tuple[ResetSchedule, ...] = ()
    display: DisplaySpec = attrs.field(factory=DisplaySpec)
    history: HistorySpec = attrs.field(factory=HistorySpec)
    plugins: Plugins = attrs.field(eq=False, repr=False, factory=Plugins)

    def slot(self, name: str) -> SlotSpec | None:
        """The effective spec of a slot: ``initial``, ``decay`` and ``expectation`` fall
        back to the update slot's plugin and params."""
        spec: SlotSpec | None = getattr(self, name)
        if spec is None and name in ("initial", "decay", "expectation"):
            return self.update
        return spec
