"""The plugin manager: entry points, plugin folders, name conflicts, blocking, and a
typed facade.

There is no global manager: :func:`get_plugin_manager` builds a fresh one each time, and
:class:`Plugins` wraps it so that every hook call the core makes is typed. Plugins,
first-party ones included, are found through the ``rankcraft`` entry-point group; for
trying a plugin without packaging it, every module of a *plugins folder*
(``RANKCRAFT_PLUGINS_DIR``, or ``rankcraft --plugins-dir``) is a plugin too, named after
its file, under the same conflict and block-list rules.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from importlib import metadata
from pathlib import Path
from typing import Any, NamedTuple, cast

import attrs
import pluggy

from . import answers, hookspecs
from ._markers import PROJECT
from .errors import PluginConflictError, PluginError, RankcraftError
from .forms import Form, layout
from .model import (
    Census,
    Match,
    Needs,
    Pairing,
    PlayerRecord,
    PlayerScope,
    ResetContext,
    State,
)

ENTRY_POINT_GROUP = "rankcraft"
DISABLE_ENV = "RANKCRAFT_DISABLE_PLUGINS"
"""Environment variable: comma-separated plugin names that are never registered (``NAME``
blocks every provider of the name; ``NAME@SOURCE`` only the one from that distribution,
or from ``plugins-dir``)."""
PLUGINS_DIR_ENV = "RANKCRAFT_PLUGINS_DIR"
"""Environment variable: folders (separated by ``os.pathsep``) whose ``*.py`` modules are
loaded as plugins, each named after its file (``streak.py`` is plugin ``streak``)."""
DIR_SOURCE = "plugins-dir"
"""The source a plugin loaded from a plugins folder is listed under."""
FOLDER_MODULES = "rankcraft_plugins_dir."
"""The package a plugins folder's file is imported under (``streak.py`` as
``rankcraft_plugins_dir.streak``)."""

Forms = tuple[Form, "Form | None"]
"""The skill and rank state forms of a ruleset (the rank one None without a rank slot)."""

SLOTS = ("initial", "decay", "team", "expectation", "update", "rank", "reset", "fit")

TeamFn = Callable[
    [Sequence[Sequence[State]], Sequence[int], float, Match],
    Sequence[Sequence[Sequence[Pairing]]],
]
ExpectationFn = Callable[[Sequence[State], int | None, Match | None], Sequence[float]]
QualityFn = Callable[[Sequence[Sequence[State]], Sequence[State], int | None], float]
OutcomesFn = Callable[[Sequence[State], int | None, Match | None], Sequence[float] | None]
UpdateFn = Callable[..., State]
"""``(state, pairings, games, side, match, expected, score, mode, player, context)``."""
ExplainFn = Callable[..., Mapping[str, float] | None]
"""``(state, pairings, games, side, match, expected, score, mode, player, after)``."""
RankFn = Callable[..., State]
"""``(rank_state, before, after, pairings, games, side, match, expected, score, mode, player,
context)``."""
ResetFn = Callable[[Sequence[PlayerRecord], str, ResetContext], Sequence[PlayerRecord]]
PlayerScopeFn = Callable[[str, ResetContext], PlayerScope | None]
StandingsScopeFn = Callable[[datetime | None], PlayerScope | None]
StandingsFn = Callable[[Sequence[PlayerRecord], Census], Mapping[str, str]]


@attrs.frozen(kw_only=True)
class PluginInfo:
    """An installed plugin as ``rankcraft plugins`` lists it.

    Attributes:
        name: the entry-point name a ruleset writes. module: the module registered.
        distribution: the distribution that provides it (None for ad-hoc registration).
        version: that distribution's version. slots: the slots it can fill.
        error: why it failed to load (then it fills no slot), or None.
        contract: the hook contract it is written for, 2 or 1 (adapted, deprecated:
            docs/plugins.md); None when it failed to load.
    """

    name: str
    module: str
    distribution: str | None
    version: str | None
    slots: tuple[str, ...]
    error: str | None = None
    contract: int | None = None


class PluginManager(pluggy.PluginManager):
    """pluggy's manager plus the distribution each entry-point plugin came from."""

    def __init__(self) -> None:
        super().__init__(PROJECT)
        self.add_hookspecs(hookspecs)
        self.origins: dict[str, tuple[str, str]] = {}
        # plugins that failed to load: name -> (source, where, error); a ruleset naming
        # one is refused with the error, and every other command runs
        self.failed: dict[str, tuple[str, str, str]] = {}


def blocked_from_env(environ: dict[str, str] | None = None) -> set[str]:
    """Plugin names listed in ``RANKCRAFT_DISABLE_PLUGINS`` (comma or space separated)."""
    raw = (os.environ if environ is None else environ).get(DISABLE_ENV, "")
    return {name for name in raw.replace(",", " ").split() if name}


def plugin_dirs_from_env(environ: dict[str, str] | None = None) -> list[Path]:
    """The folders listed in ``RANKCRAFT_PLUGINS_DIR``."""
    raw = (os.environ if environ is None else environ).get(PLUGINS_DIR_ENV, "")
    return [Path(part) for part in raw.split(os.pathsep) if part]


def get_plugin_manager(
    *,
    entry_points: bool = True,
    block: Iterable[str] = (),
    plugin_dirs: Iterable[str | Path] | None = None,
) -> PluginManager:
    """Build a new plugin manager.

    :param entry_points: load every plugin of the ``rankcraft`` entry-point group.
    :param block: plugin names (``NAME`` or ``NAME@SOURCE``) never to register, besides
        ``RANKCRAFT_DISABLE_PLUGINS``.
    :param plugin_dirs: folders whose modules are plugins (default: those of
        ``RANKCRAFT_PLUGINS_DIR`` when ``entry_points`` is true, else none).
    :raises PluginConflictError: two sources provide the same plugin name and the block
        list does not settle which one (or neither) is used.
    :raises PluginError: a plugin folder is missing, or one of its modules fails to load.
    """
    pm = PluginManager()
    blocked = set(block) | blocked_from_env()
    for name in blocked:
        if "@" not in name:
            pm.set_blocked(name)
    found: dict[str, dict[str, _Source]] = {}
    if entry_points:
        _find_entry_points(found)
    dirs = (
        plugin_dirs if plugin_dirs is not None else (plugin_dirs_from_env() if entry_points else [])
    )
    for folder in dirs:
        _find_in_folder(Path(folder), found)
    _register(pm, found, blocked)
    pm.check_pending()
    return pm


class _Source(NamedTuple):
    """Where a plugin name comes from: a distribution (with its version) or a folder."""

    version: str | None
    where: str  # the module (entry point) or the file (folder)
    load: Callable[[], Any]


def _find_entry_points(found: dict[str, dict[str, _Source]]) -> None:
    named: dict[int, tuple[str, str]] = {}  # (a distribution's metadata is parsed once)
    for ep in metadata.entry_points(group=ENTRY_POINT_GROUP):
        if ep.dist is None:
            dist, version = "<unknown distribution>", "?"
        else:
            known = named.get(id(ep.dist))
            if known is None:
                data = ep.dist.metadata
                known = named[id(ep.dist)] = (data["Name"], data["Version"])
            dist, version = known
        # One distribution listing a name twice (a stale egg-info beside an install) is one.
        found.setdefault(ep.name, {}).setdefault(dist, _Source(version, ep.value, ep.load))


def _find_in_folder(folder: Path, found: dict[str, dict[str, _Source]]) -> None:
    if not folder.is_dir():
        raise PluginError(f"plugins folder {str(folder)!r} does not exist")
    for path in sorted(folder.glob("*.py")):
        if path.name.startswith("_"):
            continue
        sources = found.setdefault(path.stem, {})
        if DIR_SOURCE in sources:
            raise PluginConflictError(
                f"plugin name {path.stem!r} is provided by two plugin files: "
                f"{sources[DIR_SOURCE].where} and {path}"
            )
        sources[DIR_SOURCE] = _Source(None, str(path), functools.partial(_load_file, path))


def _load_file(path: Path) -> Any:
    """Import one plugin file as module ``rankcraft_plugins_dir.<stem>``."""
    name = f"{FOLDER_MODULES}{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise PluginError(f"cannot load plugin file {str(path)!r}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # (attrs and dataclasses look classes' modules up)
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module


def _register(pm: PluginManager, found: dict[str, dict[str, _Source]], blocked: set[str]) -> None:
    """Register one source per name; refuse names that two unblocked sources provide."""
    for name, sources in sorted(found.items()):
        if name in blocked:
            continue
        usable = {o: s for o, s in sources.items() if f"{name}@{o}" not in blocked}
        if len(usable) > 1:
            listed = " and ".join(f"{o} ({s.where})" for o, s in sorted(usable.items()))
            choices = " or ".join(f"{name}@{o}" for o in sorted(usable))
            raise PluginConflictError(
                f"plugin name {name!r} is provided by more than one distribution: {listed}; "
                f"uninstall one, or block one with {DISABLE_ENV}={choices} "
                f"({DISABLE_ENV}={name} blocks every one)"
            )
        if not usable:
            continue
        ((origin, source),) = usable.items()
        try:
            module = source.load()
            pm.register(module, name=name)
            pm.check_pending()  # (an implementation of a hook rankcraft does not have)
        except BaseException as exc:
            # a broken plugin names itself, and breaks nothing else: one that exits, or
            # raises KeyboardInterrupt or any other BaseException at import, too (it would
            # silence every command, or end it with a traceback)
            if pm.has_plugin(name):
                pm.unregister(name=name)
            reason = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
            error = f"plugin {name!r} from {origin} failed to load: {reason}"
            pm.failed[name] = (origin, source.where, error)
            continue
        pm.origins[name] = (origin, source.version or source.where)


def _layout(forms: Forms | None) -> dict[str, int]:
    return {} if forms is None else layout(forms[0].cls)


def _call_adapter(
    impl: pluggy.HookImpl, spec_args: Sequence[str], fixed: dict[str, Any], hook: str
) -> Any:
    """A plain function calling ``impl`` with ``fixed`` bound and the rest positional.

    The returned function takes the spec's remaining arguments in spec order. An impl
    may take fewer arguments than the spec (pluggy's rule): only those it names are passed.
    Whatever the implementation raises, ``BaseException`` subclasses included, leaves it
    as a :class:`PluginError` naming the plugin and ``hook``
    (:func:`rankcraft.answers.raised`; rankcraft's own errors, such as a plugin's
    ``MatchError``, as they are). The function is compiled once from the argument names
    (identifiers of the hookspec and the implementation), so a call costs one call,
    whatever the subset, and its ``try`` nothing until something is raised.
    """
    names = tuple(impl.argnames)
    free = [a for a in spec_args if a not in fixed]
    if not all(n.isidentifier() for n in (*names, *free)):  # (never: they are parameters)
        raise PluginError(f"hook implementation {impl.plugin_name!r} has odd argument names")
    namespace: dict[str, Any] = {
        "_impl": impl.function,
        "_raised": answers.raised,
        "_Own": RankcraftError,
        "_plugin": impl.plugin_name,
        "_hook": hook,
    }
    namespace.update({f"_fixed_{n}": v for n, v in fixed.items()})
    arguments = ", ".join(f"_fixed_{n}" if n in fixed else n for n in names)
    source = (
        f"def {hook}({', '.join(free)}):\n"
        f"    try:\n"
        f"        return _impl({arguments})\n"
        f"    except _Own:\n"
        f"        raise\n"
        f"    except BaseException as _exc:\n"
        f"        raise _raised(_exc, _plugin, _hook) from _exc\n"
    )
    exec(source, namespace)
    return namespace[hook]


class Plugins:
    """Typed facade over a :class:`PluginManager`.

    Each method returns a plain function bound to one plugin's implementation, resolved
    once (the engine calls those in its per-match loop, never ``pm.hook``).
    """

    def __init__(self, pm: pluggy.PluginManager | None = None) -> None:
        self.pm = pm if pm is not None else get_plugin_manager()
        self.pm.check_pending()

    # -- what is installed ------------------------------------------------------------

    def names(self) -> list[str]:
        """Names of the registered plugins, sorted."""
        return sorted(
            name for name, plugin in self.pm.list_name_plugin() if plugin is not None and name
        )

    def has(self, plugin: str) -> bool:
        """Whether a plugin of that name is registered."""
        return self.pm.get_plugin(plugin) is not None

    def _impl(self, plugin: str, hook: str) -> pluggy.HookImpl | None:
        caller = getattr(self.pm.hook, hook)
        for impl in caller.get_hookimpls():
            if impl.plugin_name == plugin:
                return cast(pluggy.HookImpl, impl)
        return None

    def implements(self, plugin: str, hook: str) -> bool:
        """Whether ``plugin`` implements ``hook`` (e.g. ``"rankcraft_decay"``)."""
        return self._impl(plugin, hook) is not None

    def slots(self, plugin: str) -> tuple[str, ...]:
        """The slots ``plugin`` can fill, in ruleset order."""
        served: set[str] = set()
        for hook, slots in hookspecs.HOOK_SLOTS.items():
            if self.implements(plugin, hook):
                served.update(slots)
        if "rank" in served and not self.implements(plugin, "rankcraft_rank"):
            served.discard("rank")
        if "rank" in served and not self.implements(plugin, "rankcraft_update"):
            served.discard("initial")  # its rankcraft_initial gives rank states
        return tuple(s for s in SLOTS if s in served)

    def failure(self, plugin: str) -> str | None:
        """Why ``plugin`` failed to load, or None (loaded, or not installed)."""
        failed = getattr(self.pm, "failed", {}).get(plugin)
        return None if failed is None else failed[2]

    def info(self) -> list[PluginInfo]:
        """Every plugin with its distribution, version and slots, and those that failed
        to load with their error, ordered by name."""
        out = []
        origins = getattr(self.pm, "origins", {})
        for name in self.names():
            module = self.pm.get_plugin(name)
            dist, version = origins.get(name, (None, None))
            out.append(
                PluginInfo(
                    name=name,
                    module=getattr(module, "__name__", type(module).__name__),
                    distribution=dist,
                    version=version,
                    slots=self.slots(name),
                    contract=self.contract(name),
                )
            )
        for name, (origin, where, error) in getattr(self.pm, "failed", {}).items():
            out.append(
                PluginInfo(
                    name=name,
                    module=where,
                    distribution=origin,
                    version=None,
                    slots=(),
                    error=error,
                )
            )
        return sorted(out, key=lambda i: i.name)

    def _bind(self, plugin: str, hook: str, **fixed: Any) -> Any:
        impl = self._impl(plugin, hook)
        if impl is None:
            raise PluginError(f"plugin {plugin!r} does not implement {hook}")
        spec = getattr(self.pm.hook, hook).spec
        assert spec is not None
        return _call_adapter(impl, spec.argnames, fixed, hook)

    def takes(self, plugin: str, hook: str, argument: str) -> bool:
        """Whether ``plugin``'s implementation of ``hook`` names ``argument`` (an
        implementation takes the arguments it names: the engine builds an optional one,
        such as ``context``, only for implementations that take it)."""
        impl = self._impl(plugin, hook)
        return impl is not None and argument in impl.argnames

    def contract(self, plugin: str) -> int:
        """The hook contract ``plugin`` is written for: 2 (states as tuples, the module
        sets ``RANKCRAFT_CONTRACT = 2``) or 1 (states as attrs instances; deprecated,
        adapted by :mod:`rankcraft.contract1`)."""
        module = self.pm.get_plugin(plugin)
        value = getattr(module, "RANKCRAFT_CONTRACT", 1)
        if type(value) is not int or value not in (1, 2):  # (True == 1: refused too)
            raise PluginError(f"plugin {plugin!r} sets RANKCRAFT_CONTRACT = {value!r} (1 or 2)")
        return int(value)

    def _state_hook(self, plugin: str, hook: str, forms: Forms | None, **fixed: Any) -> Any:
        """The implementation bound as :meth:`_bind` binds it, adapted to tuple states
        when the plugin is written for contract 1 (unless ``forms`` is None: the
        implementation as it is, taking the states it was written for)."""
        function = self._bind(plugin, hook, **fixed)
        if forms is None or self.contract(plugin) == 2:
            return function
        from . import contract1

        return contract1.adapt(hook, function, forms, plugin)

    # -- declarations (once per ruleset) ----------------------------------------------

    def params_class(self, plugin: str, slot: str) -> type | None:
        """The params class ``plugin`` validates ``slot``'s table with, or None."""
        if not self.implements(plugin, "rankcraft_params"):
            return None
        return cast("type | None", self._bind(plugin, "rankcraft_params", slot=slot)())

    def needs(self, plugin: str, slot: str) -> Needs | None:
        """What ``plugin`` reads from skill states in ``slot``, or None."""
        if not self.implements(plugin, "rankcraft_needs"):
            return None
        needs = self._bind(plugin, "rankcraft_needs", slot=slot)()
        if needs is None or isinstance(needs, Needs):
            return needs
        raise PluginError(
            f"plugin {plugin!r}: rankcraft_needs returned {needs!r}, not a rankcraft.Needs "
            "(or None)"
        )

    def reset_kinds(self, plugin: str, params: Any) -> tuple[str, ...] | None:
        """The season events ``plugin`` runs with the reset slot's ``params``, or None
        when it does not say (``rankcraft_reset_kinds`` is optional)."""
        if not self.implements(plugin, "rankcraft_reset_kinds"):
            return None
        kinds = self._bind(plugin, "rankcraft_reset_kinds", params=params)()
        if not isinstance(kinds, list | tuple) or not all(isinstance(k, str) for k in kinds):
            raise PluginError(
                f"plugin {plugin!r}: rankcraft_reset_kinds must return a list of names: {kinds!r}"[
                    :300
                ]
            )
        return tuple(kinds)

    # -- per-match functions ----------------------------------------------------------

    def initial(self, plugin: str, slot: str, params: Any) -> Callable[[], State]:
        """``() -> state``: a new player's state for ``slot`` (``"initial"`` or ``"rank"``)."""
        return cast(
            "Callable[[], State]",
            self._bind(plugin, "rankcraft_initial", slot=slot, params=params),
        )

    def decay(
        self, plugin: str, params: Any, forms: Forms | None = None
    ) -> Callable[[State, float], State]:
        """``(state, periods) -> state``."""
        return cast(
            "Callable[[State, float], State]",
            self._state_hook(
                plugin, "rankcraft_decay", forms, params=params, layout=_layout(forms)
            ),
        )

    def aggregate(
        self, plugin: str, params: Any, forms: Forms | None = None
    ) -> Callable[[Sequence[State]], State]:
        """``(members) -> side state``."""
        return cast(
            "Callable[[Sequence[State]], State]",
            self._state_hook(
                plugin, "rankcraft_aggregate", forms, params=params, layout=_layout(forms)
            ),
        )

    def team(self, plugin: str, params: Any, forms: Forms | None = None) -> TeamFn:
        """``(sides, places, weight, match) -> pairings per side per player``."""
        return cast(
            TeamFn,
            self._state_hook(plugin, "rankcraft_team", forms, params=params, layout=_layout(forms)),
        )

    def expectation(self, plugin: str, params: Any, forms: Forms | None = None) -> ExpectationFn:
        """``(side_states, home, match) -> probabilities``."""
        return cast(
            ExpectationFn, self._state_hook(plugin, "rankcraft_expectation", forms, params=params)
        )

    def quality(self, plugin: str, params: Any, forms: Forms | None = None) -> QualityFn:
        """``(sides, side_states, home) -> quality in [0, 1]`` (matchmaking only)."""
        return cast(QualityFn, self._state_hook(plugin, "rankcraft_quality", forms, params=params))

    def outcomes(self, plugin: str, params: Any, forms: Forms | None = None) -> OutcomesFn | None:
        """``(side_states, home, match) -> (P(win), P(draw), P(loss)) or None``; None when the
        plugin has no ``rankcraft_outcomes`` (an optional hook)."""
        if not self.implements(plugin, "rankcraft_outcomes"):
            return None
        return cast(
            OutcomesFn, self._state_hook(plugin, "rankcraft_outcomes", forms, params=params)
        )

    def update(self, plugin: str, params: Any, forms: Forms | None = None) -> UpdateFn:
        """``(state, pairings, games, side, match, expected, score, mode, player, context)
        -> state``."""
        return cast(UpdateFn, self._state_hook(plugin, "rankcraft_update", forms, params=params))

    def explain(self, plugin: str, params: Any) -> ExplainFn | None:
        """``(state, pairings, games, side, match, expected, score, mode, player, after)
        -> factors or None``; None when the plugin has no ``rankcraft_explain``."""
        if not self.implements(plugin, "rankcraft_explain"):
            return None
        return cast(ExplainFn, self._bind(plugin, "rankcraft_explain", params=params))

    def rank(self, plugin: str, params: Any, forms: Forms | None = None) -> RankFn:
        """``(rank_state, before, after, pairings, games, side, match, expected, score, mode,
        player, context) -> rank state``."""
        return cast(
            RankFn,
            self._state_hook(plugin, "rankcraft_rank", forms, params=params, layout=_layout(forms)),
        )

    def standings(self, plugin: str, params: Any) -> StandingsFn:
        """``(players, census) -> label per player id``."""
        return cast(StandingsFn, self._bind(plugin, "rankcraft_standings", params=params))

    def standings_scope(self, plugin: str, params: Any) -> StandingsScopeFn | None:
        """``(latest) -> scope or None``; None when the plugin has no
        ``rankcraft_standings_scope`` (an optional hook: labels read every player)."""
        if not self.implements(plugin, "rankcraft_standings_scope"):
            return None
        return cast(
            StandingsScopeFn, self._bind(plugin, "rankcraft_standings_scope", params=params)
        )

    def verify(self, plugin: str, slot: str, params: Any) -> Callable[[State], str | None] | None:
        """``(state) -> what is wrong, or None``: ``plugin``'s check of a state coming in
        for ``slot`` (``"initial"`` or ``"rank"``), with its answer checked; None when the
        plugin has no ``rankcraft_verify`` (an optional hook)."""
        if not self.implements(plugin, "rankcraft_verify"):
            return None
        verify = self._bind(plugin, "rankcraft_verify", params=params, slot=slot)

        def checked(state: State) -> str | None:
            said = verify(state)
            if said is None or type(said) is str:
                return said
            raise PluginError(
                f"plugin {plugin!r}: rankcraft_verify returned {said!r:.200}, not what is "
                "wrong (a string) or None"
            )

        return checked

    def fit(self, plugin: str, params: Any) -> tuple[Any, ...]:
        """A history model's ``(start, fit, curve, dump, load)``: ``() -> fit``, ``(fit,
        matches, now, limits) -> {player: state}``, ``(fit, player) -> [(time, state)]``,
        ``(fit) -> data``, ``(data) -> fit`` (each of the last three None without its
        optional hook)."""
        hooks = [f"rankcraft_fit_{name}" for name in ("curve", "dump", "load")]
        return (
            self._bind(plugin, "rankcraft_fit_start", params=params),
            self._bind(plugin, "rankcraft_fit", params=params),
            *(self._bind(plugin, h, params=params) if self.implements(plugin, h) else None
              for h in hooks),
        )  # fmt: skip

    def reset(self, plugin: str, params: Any) -> ResetFn:
        """``(players, kind, context) -> records``."""
        return cast(ResetFn, self._bind(plugin, "rankcraft_reset", params=params))

    def reset_scope(self, plugin: str, params: Any) -> PlayerScopeFn | None:
        """``(kind, context) -> scope or None``; None when the plugin has no
        ``rankcraft_reset_scope`` (an optional hook: every player is in every event)."""
        if not self.implements(plugin, "rankcraft_reset_scope"):
            return None
        return cast(PlayerScopeFn, self._bind(plugin, "rankcraft_reset_scope", params=params))


def plugin_in_traceback(exc: BaseException) -> str | None:
    """The name of the plugin whose code raised ``exc``: the outermost frame of its
    traceback that runs in a plugin's module (an entry point's, or a plugins folder's
    file), so the plugin whose hook the core called; None when no plugin's code is in it.
    """
    modules = {ep.module: ep.name for ep in metadata.entry_points(group=ENTRY_POINT_GROUP)}
    trace = exc.__traceback__
    while trace is not None:
        module = trace.tb_frame.f_globals.get("__name__", "")
        if module in modules:
            return modules[module]
        if module.startswith(FOLDER_MODULES):
            return str(module[len(FOLDER_MODULES) :])
        trace = trace.tb_next
    return None
