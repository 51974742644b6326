"""The installed plugins' facade, built once per process (:func:`installed_plugins`):
what a ruleset is loaded with when it is given none."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from .manager import Plugins, blocked_from_env, plugin_dirs_from_env

__all__ = ["installed_plugins"]

_INSTALLED: dict[tuple[Any, ...], Plugins] = {}


def installed_plugins() -> Plugins:
    """The facade over every installed plugin (the ``rankcraft`` entry points, the
    folders of ``RANKCRAFT_PLUGINS_DIR``, less ``RANKCRAFT_DISABLE_PLUGINS``), built once
    per process: what a ruleset is loaded with when no facade is given.

    Building a plugin manager imports and registers every plugin (25-50 ms); a ``League``,
    a CLI command, a tuning trial and a test each used to build their own. The facade is
    built again when those two variables or ``sys.path`` change, or a file of a plugins
    folder is added, removed or changed (its name, size and modification time are
    compared), so an edited plugin file is read again as before. (A distribution installed
    into a folder already on ``sys.path`` while the process runs is seen by the next
    process.) It is shared: register nothing on its manager
    (build your own with :func:`get_plugin_manager` and ``Plugins(pm)``).

    :raises PluginConflictError, PluginError: as :func:`get_plugin_manager` (nothing is
        kept then).
    """
    key = (
        tuple(sorted(blocked_from_env())),
        tuple(map(_folder_key, plugin_dirs_from_env())),
        tuple(sys.path),  # (where distributions, and so entry points, are found)
    )
    plugins = _INSTALLED.get(key)
    if plugins is None:
        plugins = _INSTALLED[key] = Plugins()
    return plugins


def _folder_key(folder: Path) -> tuple[Any, ...]:
    """What identifies a plugins folder's contents: each module's name, size and
    modification time (a folder that does not exist is its own key: the build refuses it)."""
    try:
        files = sorted(folder.glob("*.py"))
        return (str(folder), tuple((p.name, *_stat(p)) for p in files))
    except OSError:
        return (str(folder), None)


def _stat(path: Path) -> tuple[int, int]:
    info = path.stat()
    return info.st_size, info.st_mtime_ns
