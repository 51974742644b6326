"""Rulesets: TOML data that names a plugin (and its params) for each slot.

One cattrs converter (:data:`converter`) turns TOML tables into attrs instances and back.
A ruleset never imports or runs code: a slot names an installed plugin, and that plugin's
own params class validates the slot's table.

>>> import rankcraft
>>> ruleset = rankcraft.load_ruleset("elo")
>>> ruleset.update.plugin, ruleset.update.params.k_factor
('elo', 32.0)
>>> rankcraft.loads_ruleset(dumps(ruleset)) == ruleset
True
"""

from __future__ import annotations

import math
import tomllib
import warnings
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from importlib import resources
from pathlib import Path
from typing import Any

import attrs
import cattrs
import tomli_w
from cattrs.preconf.tomllib import make_converter

from .errors import PluginError, RulesetError
from .manager import SLOTS, Plugins
from .model import field_of_role
from .suggest import did_you_mean
from .validators import within

converter = make_converter(forbid_extra_keys=True)
"""The one converter between TOML tables and attrs classes (rulesets and params)."""


class RulesetMigrationWarning(UserWarning):
    """A stored ruleset was read with a change: something an older rankcraft accepted,
    and which nothing reads any more, was dropped (:func:`loads_stored_ruleset`)."""


class ImportedRulesetWarning(UserWarning):
    """A state document was imported although its ruleset rates otherwise than the
    league's (``League.import_state(accept_ruleset=True)``, ``import --accept-ruleset``)."""


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
        return first if isinstance(first, str) and first else str(exc)
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


# ---------------------------------------------------------------------------------------
# The schema
# ---------------------------------------------------------------------------------------


PERIOD_MODES = ("match", "batch", "live")
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
    with this method.
    """

    def __init__(self, spec: DisplaySpec, skill_class: type, rank_class: type | None) -> None:
        self.spec = spec
        self.k = spec.conservative
        self.location = field_of_role(skill_class, "location")
        self.spread = field_of_role(skill_class, "spread")
        self.rank_location = (
            field_of_role(rank_class, "location") if rank_class is not None else None
        )

    @property
    def orders(self) -> bool:
        """Whether players have a display value (False: leaderboards order by id)."""
        return self.rank_location is not None or self.location is not None

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
        value = float(getattr(skill, self.location))
        if self.k:
            value -= self.k * float(getattr(skill, self.spread))  # type: ignore[arg-type]
        return value

    def interval(self, skill: Any) -> tuple[float, float] | None:
        """The skill's 95% interval, location ± 1.96 * spread (skill units), or None
        when the skill has no spread field."""
        if self.location is None or self.spread is None:
            return None
        centre = float(getattr(skill, self.location))
        half = INTERVAL_Z * float(getattr(skill, self.spread))
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
        resets: season events run by themselves during replays (``[[resets]]``).
        display: how leaderboards and player views show players (:class:`DisplaySpec`).
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
    resets: tuple[ResetSchedule, ...] = ()
    display: DisplaySpec = attrs.field(factory=DisplaySpec)
    plugins: Plugins = attrs.field(eq=False, repr=False, factory=Plugins)

    def slot(self, name: str) -> SlotSpec | None:
        """The effective spec of a slot: ``initial``, ``decay`` and ``expectation`` fall
        back to the update slot's plugin and params."""
        spec: SlotSpec | None = getattr(self, name)
        if spec is None and name in ("initial", "decay", "expectation"):
            return self.update
        return spec


_TOP_KEYS = ("name", "description", "extends", "period", "quits", "resets", "display", *SLOTS)
_SLOT_HOOKS = {
    "initial": "rankcraft_initial",
    "decay": "rankcraft_decay",
    "team": "rankcraft_team",
    "expectation": "rankcraft_expectation",
    "update": "rankcraft_update",
    "rank": "rankcraft_rank",
    "reset": "rankcraft_reset",
}


# ---------------------------------------------------------------------------------------
# Loading
# ---------------------------------------------------------------------------------------


def bundled_names() -> list[str]:
    """Names of the rulesets that ship with rankcraft."""
    folder = resources.files("rankcraft.rulesets")
    return sorted(p.name[:-5] for p in folder.iterdir() if p.name.endswith(".toml"))


def _bundled_text(name: str) -> str:
    return resources.files("rankcraft.rulesets").joinpath(f"{name}.toml").read_text("utf-8")


def _parse_toml(text: str, source: str) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise RulesetError(f"{source}: malformed TOML: {exc}") from None
    except RecursionError:  # (tomllib recurses once per nested array or table)
        raise RulesetError(f"{source}: malformed TOML: arrays or tables nest too deeply") from None


def _read_source(source: str | Path) -> tuple[str, str, Path | None]:
    """(text, display name, file path or None) for a bundled name or a path."""
    path = Path(source)
    if isinstance(source, Path) or path.suffix == ".toml" or path.exists():
        try:
            return path.read_text("utf-8"), str(path), path
        except OSError as exc:
            raise RulesetError(f"cannot read ruleset {str(source)!r}: {exc.strerror}") from None
        except UnicodeDecodeError:
            raise RulesetError(f"{path}: not UTF-8 text") from None
    if str(source) in bundled_names():
        return _bundled_text(str(source)), f"<bundled ruleset {source}>", None
    raise RulesetError(
        f"unknown ruleset {str(source)!r}: not a file and not a bundled ruleset"
        f"{did_you_mean(str(source), bundled_names())} (bundled: {', '.join(bundled_names())})"
    )


def _merge(base: dict[str, Any], override: Mapping[str, Any]) -> dict[str, Any]:
    """``override`` on top of ``base``; a slot naming another plugin replaces the slot."""
    out = dict(base)
    for key, value in override.items():
        old = out.get(key)
        if isinstance(value, Mapping) and isinstance(old, Mapping):
            if key in SLOTS and value.get("plugin", old.get("plugin")) != old.get("plugin"):
                out[key] = dict(value)
            else:
                out[key] = _merge(dict(old), value)
        else:
            out[key] = value
    return out


def _extends_target(parent: str, source: str, here: Path | None) -> str | Path:
    """What ``extends = parent`` may read: a bundled ruleset name, or (only for a ruleset
    read from a file) a ``.toml`` file inside that file's own folder. A ruleset from a
    string or a database extends bundled names only, so that no ruleset text can make
    rankcraft read an arbitrary file (``/etc/passwd``, ``../x.toml``)."""
    looks_like_path = parent.endswith(".toml") or "/" in parent or "\\" in parent
    if not looks_like_path:
        if parent in bundled_names():
            return parent
        raise RulesetError(
            f"{source}: unknown ruleset {parent!r} in 'extends'"
            f"{did_you_mean(parent, bundled_names())} (bundled: "
            f"{', '.join(bundled_names())}) @ ruleset.extends"
        )
    if here is None:
        raise RulesetError(
            f"{source}: 'extends' must name a bundled ruleset ({', '.join(bundled_names())}); "
            f"a ruleset not read from a file cannot extend a file: {parent!r} @ ruleset.extends"
        )
    folder = here.parent.resolve()
    target = (folder / parent).resolve()
    if not parent.endswith(".toml") or not target.is_relative_to(folder):
        raise RulesetError(
            f"{source}: 'extends' must name a bundled ruleset or a .toml file in the "
            f"ruleset's own folder ({folder}): {parent!r} @ ruleset.extends"
        )
    return target


def _resolve_extends(
    raw: dict[str, Any], source: str, here: Path | None, seen: tuple[str, ...]
) -> dict[str, Any]:
    parent = raw.pop("extends", None)
    if parent is None:
        return raw
    if not isinstance(parent, str):
        raise RulesetError(f"{source}: 'extends' must be a ruleset name or path: {parent!r}")
    if parent in seen:
        raise RulesetError(f"{source}: 'extends' loops: {' -> '.join((*seen, parent))}")
    target = _extends_target(parent, source, here)
    text, name, path = _read_source(target)
    base = _resolve_extends(_parse_toml(text, name), name, path, (*seen, parent))
    return _merge(base, raw)


def _structure_slot(
    raw: Any, slot: str, plugins: Plugins, source: str, dropped: list[str] | None = None
) -> SlotSpec:
    """The slot's spec; ``dropped`` (a stored ruleset's list of what was dropped): a
    params table of a slot whose plugin takes none is dropped and said there, instead of
    refused."""
    where = f"ruleset.{slot}"
    if not isinstance(raw, Mapping):
        raise RulesetError(f"{source}: [{slot}] must be a table: {raw!r} @ {where}")
    extra = set(raw) - {"plugin", "params"}
    if extra:
        raise RulesetError(
            f"{source}: {unknown_keys(extra, ('plugin', 'params'))} @ {where} "
            "(a slot has 'plugin' and 'params')"
        )
    plugin = raw.get("plugin")
    if not isinstance(plugin, str):
        raise RulesetError(f"{source}: 'plugin' must name a plugin: {plugin!r} @ {where}")
    failure = plugins.failure(plugin)
    if failure is not None:
        raise RulesetError(f"{source}: {failure} @ {where}.plugin")
    if not plugins.has(plugin):
        raise RulesetError(
            f"{source}: unknown plugin {plugin!r} @ {where}.plugin "
            f"(installed: {', '.join(plugins.names()) or 'none'})"
        )
    hook = _SLOT_HOOKS[slot]
    if not plugins.implements(plugin, hook):
        raise RulesetError(
            f"{source}: plugin {plugin!r} cannot fill slot {slot!r}: it does not implement "
            f"{hook} (it fills: {', '.join(plugins.slots(plugin)) or 'nothing'}) @ {where}.plugin"
        )
    table = raw.get("params", {})
    if not isinstance(table, Mapping):
        raise RulesetError(f"{source}: 'params' must be a table: {table!r} @ {where}.params")
    cls = plugins.params_class(plugin, slot)
    if cls is None:
        if table and dropped is not None:
            keys = ", ".join(map(repr, sorted(table)))
            dropped.append(
                f"[{slot}.params] ({keys}): plugin {plugin!r} takes none in slot {slot!r}"
            )
            return SlotSpec(plugin=plugin, params=None)
        if table:
            raise RulesetError(
                f"{source}: plugin {plugin!r} takes no params in slot {slot!r}: "
                f"unknown key(s) {', '.join(map(repr, sorted(table)))} @ {where}.params"
            )
        return SlotSpec(plugin=plugin, params=None)
    params = structure(dict(table), cls, path=f"{where}.params", source=source)
    return SlotSpec(plugin=plugin, params=params)


def _share_update_params(slots: dict[str, SlotSpec], data: Mapping[str, Any]) -> None:
    """A ``[team]`` slot naming the update slot's plugin, without a params table of its
    own, uses the update slot's params when the plugin validates both slots with the same
    class (a joint model's team step and update read one set of constants)."""
    team, update = slots["team"], slots["update"]
    raw = data["team"]
    if (
        team.plugin == update.plugin
        and isinstance(raw, Mapping)
        and "params" not in raw
        and team.params is not None
        and type(team.params) is type(update.params)
    ):
        slots["team"] = SlotSpec(plugin=team.plugin, params=update.params)


def from_dict(
    raw: Mapping[str, Any],
    *,
    source: str = "<ruleset>",
    plugins: Plugins | None = None,
    base_path: Path | None = None,
    dropped: list[str] | None = None,
) -> Ruleset:
    """Build a :class:`Ruleset` from a parsed TOML document (``extends`` resolved here).

    :param dropped: for a stored ruleset (:func:`loads_stored_ruleset`): params tables
        of slots whose plugin takes none are dropped, each said in this list, instead of
        refused.
    """
    plugins = plugins if plugins is not None else Plugins()
    if "extends" in raw and "name" not in raw:
        # else it would take its parent's name, and be stored and shown as the parent
        if base_path is None:
            raise RulesetError(
                f"{source}: a ruleset that extends {raw['extends']!r} needs its own 'name' "
                "(else it would pass for its parent) @ ruleset.name"
            )
        raw = {**raw, "name": base_path.stem}
    data = _resolve_extends(dict(raw), source, base_path, ())
    extra = set(data) - set(_TOP_KEYS)
    if extra:
        raise RulesetError(
            f"{source}: {unknown_keys(extra, _TOP_KEYS)} @ ruleset "
            f"(allowed: {', '.join(_TOP_KEYS)})"
        )
    name = data.get("name")
    if not isinstance(name, str) or not name.strip():
        raise RulesetError(f"{source}: 'name' must be a non-empty string: {name!r} @ ruleset.name")
    description = data.get("description", "")
    if not isinstance(description, str):
        raise RulesetError(f"{source}: 'description' must be a string: {description!r}")
    if "update" not in data:
        raise RulesetError(f"{source}: the [update] slot is required @ ruleset.update")
    period = structure(data.get("period", {}), PeriodSpec, path="ruleset.period", source=source)
    quits = structure(data.get("quits", {}), QuitSpec, path="ruleset.quits", source=source)
    data.setdefault("team", {"plugin": DEFAULT_TEAM_PLUGIN})
    slots = {
        slot: _structure_slot(data[slot], slot, plugins, source, dropped)
        for slot in SLOTS
        if slot in data
    }
    _share_update_params(slots, data)
    if period.mode == "batch" and "rank" in slots:
        raise RulesetError(
            f"{source}: a [rank] slot needs [period] mode 'match' or 'live' (ranks move after "
            "every match; in 'batch' mode skills only move when a period closes) @ "
            "ruleset.period.mode"
        )
    resets = structure(
        data.get("resets", []), tuple[ResetSchedule, ...], path="ruleset.resets", source=source
    )
    if resets and "reset" not in slots:
        raise RulesetError(
            f"{source}: [[resets]] needs a [reset] slot to run them @ ruleset.resets"
        )
    display = structure(data.get("display", {}), DisplaySpec, path="ruleset.display", source=source)
    if display.conservative and "rank" in slots:
        raise RulesetError(
            f"{source}: 'conservative' orders players by skill, but the [rank] slot's rank "
            f"points order this ruleset's leaderboards: {display.conservative!r} @ "
            "ruleset.display.conservative"
        )
    ruleset = Ruleset(
        name=name,
        description=description,
        period=period,
        quits=quits,
        plugins=plugins,
        resets=resets,
        display=display,
        **slots,
    )
    _check_fit(ruleset, source)
    return ruleset


def _check_fit(ruleset: Ruleset, source: str) -> None:
    """Refuse plugins that read skill fields the skill plugin does not keep."""
    plugins = ruleset.plugins
    initial = ruleset.slot("initial")
    assert initial is not None
    try:
        state = plugins.initial(initial.plugin, "initial", initial.params)()
    except PluginError as exc:
        raise RulesetError(f"{source}: {exc}") from None
    if not attrs.has(type(state)):
        raise RulesetError(
            f"{source}: plugin {initial.plugin!r} returned a non-attrs initial state: {state!r}"
        )
    state_class = type(state)
    names = {f.name for f in attrs.fields(state_class)}
    conservative = ruleset.display.conservative
    if conservative and field_of_role(state_class, "spread") is None:
        raise RulesetError(
            f"{source}: 'conservative' needs a skill with an uncertainty (a field of role "
            f"'spread'), but {initial.plugin!r} keeps {', '.join(sorted(names))}: "
            f"{conservative!r} @ ruleset.display.conservative"
        )
    for slot in SLOTS:
        spec = ruleset.slot(slot)
        if spec is None:
            continue
        needs = plugins.needs(spec.plugin, slot)
        if needs is None:
            continue
        if needs.whole_match and (ruleset.period.mode, ruleset.quits.quitter) != (
            "match",
            "result",
        ):
            raise RulesetError(
                f"{source}: plugin {spec.plugin!r} in slot {slot!r} rates each match as a "
                f"whole: it needs [period] mode 'match' and [quits] quitter 'result', not "
                f"{ruleset.period.mode!r} and {ruleset.quits.quitter!r} @ ruleset.period.mode"
            )
        missing = [f for f in needs.fields if f not in names]
        missing += [f"a {r} field" for r in needs.roles if field_of_role(state_class, r) is None]
        if missing:
            raise RulesetError(
                f"{source}: plugin {spec.plugin!r} in slot {slot!r} does not fit skill plugin "
                f"{initial.plugin!r}: it needs {', '.join(missing)}, but {initial.plugin!r} "
                f"keeps {', '.join(sorted(names))}"
            )


def loads_ruleset(
    text: str, *, source: str = "<string>", plugins: Plugins | None = None
) -> Ruleset:
    """Load a ruleset from TOML text."""
    return from_dict(_parse_toml(text, source), source=source, plugins=plugins)


def loads_stored_ruleset(
    text: str,
    *,
    source: str = "<stored ruleset>",
    plugins: Plugins | None = None,
    dropped: list[str] | None = None,
) -> Ruleset:
    """Load a ruleset that rankcraft stored itself (in a league's database, or an export
    document's ``ruleset_toml``), migrating what an older rankcraft accepted.

    A params table of a slot whose plugin takes no params there is dropped, with a
    :class:`RulesetMigrationWarning` that names the keys, the slot and the plugin (nothing
    can read those values). Such a table comes from an older version that accepted it:
    ``[team.params]`` and ``[expectation.params]`` of ``wager``, which rankcraft printed
    and never read (docs/wager.md). Everything else is checked as :func:`loads_ruleset`
    checks it; a ruleset *file* with such a table is refused.

    :param dropped: say what was dropped in this list instead of warning.

    >>> import warnings
    >>> old = ('name = "w"\\n[update]\\nplugin = "wager"\\n[team]\\nplugin = "wager"\\n'
    ...        '[team.params]\\ndivisor = 10.0\\n')
    >>> with warnings.catch_warnings(record=True) as said:
    ...     warnings.simplefilter("always")
    ...     ruleset = loads_stored_ruleset(old, source="the ruleset stored in 'old.db'")
    >>> ruleset.team.params is None
    True
    >>> print(said[0].message)  # doctest: +NORMALIZE_WHITESPACE
    the ruleset stored in 'old.db': dropped [team.params] ('divisor'): plugin 'wager'
    takes none in slot 'team'. The rankcraft (or plugin) that stored this ruleset
    accepted them; nothing reads them now. A ruleset file with them is refused: remove
    them from the file.
    """
    said: list[str] = [] if dropped is None else dropped
    ruleset = from_dict(_parse_toml(text, source), source=source, plugins=plugins, dropped=said)
    if said and dropped is None:
        warnings.warn(
            RulesetMigrationWarning(
                f"{source}: dropped {'; '.join(said)}. The rankcraft (or plugin) that "
                "stored this ruleset accepted them; nothing reads them now. A ruleset file "
                "with them is refused: remove them from the file."
            ),
            stacklevel=2,
        )
    return ruleset


def load_ruleset(source: str | Path, *, plugins: Plugins | None = None) -> Ruleset:
    """Load a bundled ruleset by name (``"elo"``) or a ruleset file by path.

    :raises RulesetError: unreadable or malformed file, unknown plugin, bad parameter.
    """
    if isinstance(source, Ruleset):  # tolerated for convenience
        return source
    text, name, path = _read_source(source)
    return from_dict(_parse_toml(text, name), source=name, plugins=plugins, base_path=path)


def to_dict(ruleset: Ruleset) -> dict[str, Any]:
    """The ruleset as a TOML-ready dict (every parameter spelled out, no ``extends``)."""
    out: dict[str, Any] = {"name": ruleset.name}
    if ruleset.description:
        out["description"] = ruleset.description
    out["period"] = converter.unstructure(ruleset.period)
    if ruleset.quits != QuitSpec():
        out["quits"] = converter.unstructure(ruleset.quits)
    for slot in ("update", "initial", "decay", "expectation", "team", "rank", "reset"):
        spec: SlotSpec | None = getattr(ruleset, slot)
        if spec is None:
            continue
        table: dict[str, Any] = {"plugin": spec.plugin}
        shared = slot == "team" and spec.params is ruleset.update.params  # (see from_dict)
        if spec.params is not None and not shared:
            table["params"] = _drop_none(converter.unstructure(spec.params))
        out[slot] = table
    if ruleset.resets:
        out["resets"] = [_drop_none(converter.unstructure(r)) for r in ruleset.resets]
    if ruleset.display != DisplaySpec():
        out["display"] = _drop_none(converter.unstructure(ruleset.display))
    return out


def differences(theirs: Ruleset, mine: Ruleset) -> list[str]:
    """Where two rulesets differ in meaning: ``"key: VALUE there, VALUE here"`` for each
    dotted key of their tables (:func:`to_dict`) whose values differ, in table order;
    the description and the ``[display]`` table are for people and do not count. Empty
    when they rate alike.

    >>> elo = load_ruleset("elo")
    >>> fast = loads_ruleset(
    ...     'extends = "elo"\\nname = "fast"\\n[update.params]\\nk_factor = 64.0\\n'
    ... )
    >>> differences(fast, elo)
    ["name: 'fast' there, 'elo' here", 'update.params.k_factor: 64.0 there, 32.0 here']
    """
    found: list[str] = []

    def walk(a: Any, b: Any, path: str) -> None:
        if isinstance(a, dict) and isinstance(b, dict):
            for key in [*a, *(k for k in b if k not in a)]:
                walk(a.get(key), b.get(key), f"{path}.{key}" if path else key)
        elif a != b:
            found.append(f"{path}: {_shown(a)} there, {_shown(b)} here")

    left, right = to_dict(theirs), to_dict(mine)
    for table in (left, right):
        table.pop("description", None)
        table.pop("display", None)
    walk(left, right, "")
    return found


def _shown(value: Any) -> str:
    return "(absent)" if value is None else repr(value)[:80]


def _drop_none(value: Any) -> Any:
    """TOML has no null: a None param is written by leaving it out (its default is None)."""
    if isinstance(value, dict):
        return {k: _drop_none(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_drop_none(v) for v in value]
    return value


def dumps(ruleset: Ruleset) -> str:
    """The ruleset as TOML text; loading it back gives an equal ruleset."""
    return tomli_w.dumps(to_dict(ruleset))
