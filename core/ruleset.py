"""Rulesets: TOML data that names a plugin (and its params) for each slot.

This module reads rulesets (a bundled name, a file or TOML text: ``extends`` resolved,
each slot's plugin found and its params validated, the tables checked against each
other), writes them back (:func:`to_dict`, :func:`dumps`) and compares two
(:func:`differences`). The tables' attrs classes and the one cattrs converter that turns
TOML tables into them and back (:data:`converter`) are :mod:`rankcraft.rulesetschema`'s,
and read from here too. A ruleset never imports or runs code: a slot names an installed
plugin, and that plugin's own params class validates the slot's table.

>>> import rankcraft
>>> ruleset = rankcraft.load_ruleset("elo")
>>> ruleset.update.plugin, ruleset.update.params.k_factor
('elo', 32.0)
>>> rankcraft.loads_ruleset(dumps(ruleset)) == ruleset
True
"""

from __future__ import annotations

import tomllib
import warnings
from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from typing import Any

import tomli_w

from .errors import RulesetError
from .fits import check_fit, check_history
from .installed import installed_plugins
from .manager import SLOTS, Plugins
from .rulesetlines import with_line
from .rulesetschema import (
    DEFAULT_TEAM_PLUGIN,
    INTERVAL_Z,
    OTHERS_RULES,
    PERIOD_MODES,
    QUITTER_RULES,
    Display,
    DisplaySpec,
    HistorySpec,
    PeriodSpec,
    QuitSpec,
    ResetSchedule,
    Ruleset,
    SlotSpec,
    check_reset_kinds,
    converter,
    format_exception,
    structure,
    unknown_keys,
)
from .suggest import did_you_mean

__all__ = [
    "DEFAULT_TEAM_PLUGIN",
    "INTERVAL_Z",
    "OTHERS_RULES",
    "PERIOD_MODES",
    "QUITTER_RULES",
    "Display",
    "DisplaySpec",
    "ImportedRulesetWarning",
    "PeriodSpec",
    "QuitSpec",
    "ResetSchedule",
    "Ruleset",
    "RulesetMigrationWarning",
    "SlotSpec",
    "bundled_names",
    "converter",
    "differences",
    "dumps",
    "format_exception",
    "from_dict",
    "load_ruleset",
    "loads_ruleset",
    "loads_stored_ruleset",
    "structure",
    "to_dict",
    "unknown_keys",
]


class RulesetMigrationWarning(UserWarning):
    """A stored ruleset was read with a change: something an older rankcraft accepted,
    and which nothing reads any more, was dropped (:func:`loads_stored_ruleset`)."""


class ImportedRulesetWarning(UserWarning):
    """A state document was imported although its ruleset rates otherwise than the
    league's (``League.import_state(accept_ruleset=True)``, ``import --accept-ruleset``)."""


_HEAD_KEYS = ("name", "description", "extends", "period", "quits", "resets", "display", "history")
_TOP_KEYS = (*_HEAD_KEYS, *SLOTS)
_SLOT_HOOKS = {
    "initial": "rankcraft_initial",
    "decay": "rankcraft_decay",
    "team": "rankcraft_team",
    "expectation": "rankcraft_expectation",
    "update": "rankcraft_update",
    "rank": "rankcraft_rank",
    "reset": "rankcraft_reset",
    "fit": "rankcraft_fit",
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
        hint = ""
        if isinstance(raw, list) and f"{slot}s" in _TOP_KEYS:  # ([[reset]] for [[resets]])
            hint = f" (did you mean [[{slot}s]]? [{slot}] names the plugin that runs them)"
        raise RulesetError(f"{source}: [{slot}] must be a table{hint}: {raw!r} @ {where}"[:600])
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
            f"{source}: unknown plugin {plugin!r}{did_you_mean(plugin, plugins.names())} @ "
            f"{where}.plugin (installed: {', '.join(plugins.names()) or 'none'})"
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
    """A ``[team]`` or ``[fit]`` slot naming the update slot's plugin, without a params
    table of its own, uses the update slot's params when the plugin validates both slots
    with the same class (a joint model's team step, or a history model's fit, and its
    update read one set of constants)."""
    update = slots["update"]
    for name in ("team", "fit"):
        spec, raw = slots.get(name), data.get(name)
        if (
            spec is not None
            and spec.plugin == update.plugin
            and isinstance(raw, Mapping)
            and "params" not in raw
            and spec.params is not None
            and type(spec.params) is type(update.params)
        ):
            slots[name] = SlotSpec(plugin=spec.plugin, params=update.params)


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
    plugins = plugins if plugins is not None else installed_plugins()
    data = _resolve_extends(_named(raw, source, base_path), source, base_path, ())
    name, description = _header(data, source)
    period = structure(data.get("period", {}), PeriodSpec, path="ruleset.period", source=source)
    quits = structure(data.get("quits", {}), QuitSpec, path="ruleset.quits", source=source)
    history = structure(data.get("history", {}), HistorySpec, path="ruleset.history", source=source)
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
    resets = _resets(data, slots, plugins, source, stored=dropped is not None)
    display = _display(data, slots, source)
    ruleset = Ruleset(
        name=name,
        description=description,
        period=period,
        quits=quits,
        plugins=plugins,
        resets=resets,
        display=display,
        history=history,
        **slots,
    )
    check_fit(ruleset, source)
    check_history(ruleset, source)
    return ruleset


def _named(raw: Mapping[str, Any], source: str, base_path: Path | None) -> dict[str, Any]:
    """The document, a copy: a ruleset file that extends another without a ``name`` of its
    own takes its file's name (else it would take its parent's, and be stored and shown
    as the parent); one not read from a file is refused."""
    if "extends" in raw and "name" not in raw:
        if base_path is None:
            raise RulesetError(
                f"{source}: a ruleset that extends {raw['extends']!r} needs its own 'name' "
                "(else it would pass for its parent) @ ruleset.name"
            )
        raw = {**raw, "name": base_path.stem}
    return dict(raw)


def _header(data: Mapping[str, Any], source: str) -> tuple[str, str]:
    """The ruleset's name and description, after its keys are checked (and the
    ``[update]`` slot found)."""
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
    return name, description


def _resets(
    data: Mapping[str, Any],
    slots: Mapping[str, SlotSpec],
    plugins: Plugins,
    source: str,
    stored: bool,
) -> tuple[ResetSchedule, ...]:
    """The ``[[resets]]`` schedules (each needs the ``[reset]`` slot to run it, and each
    kind must be one the reset plugin runs, unless the ruleset is ``stored``)."""
    resets: tuple[ResetSchedule, ...] = structure(
        data.get("resets", []), tuple[ResetSchedule, ...], path="ruleset.resets", source=source
    )
    if resets and "reset" not in slots:
        raise RulesetError(
            f"{source}: [[resets]] needs a [reset] slot to run them @ ruleset.resets"
        )
    if resets and not stored:  # (a league made before the check still opens, to be read)
        check_reset_kinds(resets, slots["reset"], plugins, source)
    return resets


def _display(data: Mapping[str, Any], slots: Mapping[str, SlotSpec], source: str) -> DisplaySpec:
    """The ``[display]`` table (a conservative order needs no rank layer's points)."""
    display: DisplaySpec = structure(
        data.get("display", {}), DisplaySpec, path="ruleset.display", source=source
    )
    if display.conservative and "rank" in slots:
        raise RulesetError(
            f"{source}: 'conservative' orders players by skill, but the [rank] slot's rank "
            f"points order this ruleset's leaderboards: {display.conservative!r} @ "
            "ruleset.display.conservative"
        )
    return display


def loads_ruleset(
    text: str, *, source: str = "<string>", plugins: Plugins | None = None
) -> Ruleset:
    """Load a ruleset from TOML text (:func:`rankcraft.rulesetlines.ruleset_error`
    finds the line of ``text`` an error stands on)."""
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
    try:
        return from_dict(_parse_toml(text, name), source=name, plugins=plugins, base_path=path)
    except RulesetError as exc:  # (a file's error names its line; a bundled one's needs none)
        raise (with_line(exc, text) if path is not None else exc) from None


def to_dict(ruleset: Ruleset) -> dict[str, Any]:
    """The ruleset as a TOML-ready dict (every parameter spelled out, no ``extends``)."""
    out: dict[str, Any] = {"name": ruleset.name}
    if ruleset.description:
        out["description"] = ruleset.description
    out["period"] = converter.unstructure(ruleset.period)
    if ruleset.quits != QuitSpec():
        out["quits"] = converter.unstructure(ruleset.quits)
    for slot in ("update", "initial", "decay", "expectation", "team", "rank", "reset", "fit"):
        spec: SlotSpec | None = getattr(ruleset, slot)
        if spec is None:
            continue
        table: dict[str, Any] = {"plugin": spec.plugin}
        shared = slot in ("team", "fit") and spec.params is ruleset.update.params  # (see from_dict)
        if spec.params is not None and not shared:
            table["params"] = _drop_none(converter.unstructure(spec.params))
        out[slot] = table
    if ruleset.resets:
        out["resets"] = [_drop_none(converter.unstructure(r)) for r in ruleset.resets]
    if ruleset.display != DisplaySpec():
        out["display"] = _drop_none(converter.unstructure(ruleset.display))
    if ruleset.history != HistorySpec():
        out["history"] = converter.unstructure(ruleset.history)
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
