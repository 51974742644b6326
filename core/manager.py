"""The plugin manager: entry points, name conflicts, blocking, and a typed facade.

There is no global manager: :func:`get_plugin_manager` builds a fresh one each time, and
:class:`Plugins` wraps it so that every hook call the core makes is typed. Plugins,
first-party ones included, are found through the ``rankcraft`` entry-point group only.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from importlib import metadata
from typing import Any, cast

import attrs
import pluggy

from . import hookspecs
from ._markers import PROJECT
from .errors import PluginConflictError, PluginError
from .model import Needs, Pairing, PlayerContext, PlayerRecord, ResetContext, State

ENTRY_POINT_GROUP = "rankcraft"
DISABLE_ENV = "RANKCRAFT_DISABLE_PLUGINS"
"""Environment variable: comma-separated plugin names that are never registered."""

SLOTS = ("initial", "decay", "team", "expectation", "update", "rank", "reset")

TeamFn = Callable[
    [Sequence[Sequence[State]], Sequence[int], float], Sequence[Sequence[Sequence[Pairing]]]
]
ExpectationFn = Callable[[Sequence[State], int | None], Sequence[float]]
UpdateFn = Callable[[State, Sequence[Pairing], PlayerContext], State]
RankFn = Callable[[State, State, State, PlayerContext], State]
ResetFn = Callable[[Sequence[PlayerRecord], str, ResetContext], Sequence[PlayerRecord]]


@attrs.frozen(kw_only=True)
class PluginInfo:
    """An installed plugin as ``rankcraft plugins`` lists it.

    Attributes:
        name: the entry-point name a ruleset writes. module: the module registered.
        distribution: the distribution that provides it (None for ad-hoc registration).
        version: that distribution's version. slots: the slots it can fill.
    """

    name: str
    module: str
    distribution: str | None
    version: str | None
    slots: tuple[str, ...]


class PluginManager(pluggy.PluginManager):
    """pluggy's manager plus the distribution each entry-point plugin came from."""

    def __init__(self) -> None:
        super().__init__(PROJECT)
        self.add_hookspecs(hookspecs)
        self.origins: dict[str, tuple[str, str]] = {}


def blocked_from_env(environ: dict[str, str] | None = None) -> set[str]:
    """Plugin names listed in ``RANKCRAFT_DISABLE_PLUGINS`` (comma or space separated)."""
    raw = (os.environ if environ is None else environ).get(DISABLE_ENV, "")
    return {name for name in raw.replace(",", " ").split() if name}


def get_plugin_manager(*, entry_points: bool = True, block: Iterable[str] = ()) -> PluginManager:
    """Build a new plugin manager.

    :param entry_points: load every plugin of the ``rankcraft`` entry-point group.
    :param block: plugin names never to register, besides ``RANKCRAFT_DISABLE_PLUGINS``.
    :raises PluginConflictError: two distributions provide the same plugin name.
    """
    pm = PluginManager()
    blocked = set(block) | blocked_from_env()
    for name in blocked:
        pm.set_blocked(name)
    if entry_points:
        _load_entry_points(pm, blocked)
    pm.check_pending()
    return pm


def _load_entry_points(pm: PluginManager, blocked: set[str]) -> None:
    found: dict[str, dict[str, metadata.EntryPoint]] = {}
    for ep in metadata.entry_points(group=ENTRY_POINT_GROUP):
        dist = ep.dist.name if ep.dist is not None else "<unknown distribution>"
        # One distribution listing a name twice (a stale egg-info beside an install) is one.
        found.setdefault(ep.name, {}).setdefault(dist, ep)
    for name, by_dist in sorted(found.items()):
        if len(by_dist) > 1:
            dists = " and ".join(
                f"{d} ({e.value})" for d, e in sorted(by_dist.items(), key=lambda x: x[0])
            )
            raise PluginConflictError(
                f"plugin name {name!r} is provided by more than one distribution: {dists}; "
                f"uninstall one, or block the name with {DISABLE_ENV}"
            )
        if name in blocked:
            continue
        ((dist, ep),) = by_dist.items()
        try:
            module = ep.load()
        except Exception as exc:  # a broken third-party plugin must name itself
            raise PluginError(f"plugin {name!r} from {dist} failed to load: {exc}") from exc
        pm.register(module, name=name)
        version = ep.dist.version if ep.dist is not None else "?"
        pm.origins[name] = (dist, version)


def _call_adapter(impl: pluggy.HookImpl, spec_args: Sequence[str], fixed: dict[str, Any]) -> Any:
    """A plain function calling ``impl`` with ``fixed`` bound and the rest positional.

    The returned function takes the spec's remaining arguments in spec order. An impl
    may take fewer arguments than the spec (pluggy's rule): only those it names are passed.
    """
    function = impl.function
    names = tuple(impl.argnames)
    free = [a for a in spec_args if a not in fixed]
    if names == tuple(spec_args) and list(spec_args[: len(fixed)]) == list(fixed):
        return functools.partial(function, *fixed.values()) if fixed else function

    def call(*args: Any) -> Any:
        values = dict(fixed)
        values.update(zip(free, args, strict=True))
        return function(*[values[n] for n in names])

    return call


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

    def info(self) -> list[PluginInfo]:
        """Every registered plugin with its distribution, version and slots."""
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
                )
            )
        return out

    def _bind(self, plugin: str, hook: str, **fixed: Any) -> Any:
        impl = self._impl(plugin, hook)
        if impl is None:
            raise PluginError(f"plugin {plugin!r} does not implement {hook}")
        spec = getattr(self.pm.hook, hook).spec
        assert spec is not None
        return _call_adapter(impl, spec.argnames, fixed)

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
        return cast("Needs | None", self._bind(plugin, "rankcraft_needs", slot=slot)())

    def kernel(
        self, plugin: str, slot: str, params: Any, fields: tuple[str, ...] = ()
    ) -> Callable[..., Any] | None:
        """The fused 1-v-1 function ``plugin`` offers for ``slot``, or None
        (see :func:`rankcraft.hookspecs.rankcraft_kernel`)."""
        if not self.implements(plugin, "rankcraft_kernel"):
            return None
        found = self._bind(plugin, "rankcraft_kernel", slot=slot, params=params, fields=fields)()
        return cast("Callable[..., Any] | None", found)

    # -- per-match functions ----------------------------------------------------------

    def initial(self, plugin: str, slot: str, params: Any) -> Callable[[], State]:
        """``() -> state``: a new player's state for ``slot`` (``"initial"`` or ``"rank"``)."""
        return cast(
            "Callable[[], State]",
            self._bind(plugin, "rankcraft_initial", slot=slot, params=params),
        )

    def decay(self, plugin: str, params: Any) -> Callable[[State, float], State]:
        """``(state, periods) -> state``."""
        return cast(
            "Callable[[State, float], State]", self._bind(plugin, "rankcraft_decay", params=params)
        )

    def aggregate(self, plugin: str, params: Any) -> Callable[[Sequence[State]], State]:
        """``(members) -> side state``."""
        return cast(
            "Callable[[Sequence[State]], State]",
            self._bind(plugin, "rankcraft_aggregate", params=params),
        )

    def team(self, plugin: str, params: Any) -> TeamFn:
        """``(sides, places, weight) -> pairings per side per player``."""
        return cast(TeamFn, self._bind(plugin, "rankcraft_team", params=params))

    def expectation(self, plugin: str, params: Any) -> ExpectationFn:
        """``(side_states) -> probabilities``."""
        return cast(ExpectationFn, self._bind(plugin, "rankcraft_expectation", params=params))

    def update(self, plugin: str, params: Any) -> UpdateFn:
        """``(state, pairings, context) -> state``."""
        return cast(UpdateFn, self._bind(plugin, "rankcraft_update", params=params))

    def rank(self, plugin: str, params: Any) -> RankFn:
        """``(rank_state, before, after, context) -> rank state``."""
        return cast(RankFn, self._bind(plugin, "rankcraft_rank", params=params))

    def standings(
        self, plugin: str, params: Any
    ) -> Callable[[Sequence[PlayerRecord]], Mapping[str, str]]:
        """``(players) -> label per player id``."""
        return cast(
            "Callable[[Sequence[PlayerRecord]], Mapping[str, str]]",
            self._bind(plugin, "rankcraft_standings", params=params),
        )

    def reset(self, plugin: str, params: Any) -> ResetFn:
        """``(players, kind, context) -> records``."""
        return cast(ResetFn, self._bind(plugin, "rankcraft_reset", params=params))
