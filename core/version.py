"""The installed distribution's version (``rankcraft.__version__``), in a module of its
own so that the modules that write it (exports, new stores, ``--version``, ``/health``,
the OpenAPI document) need not import the package they belong to."""

from __future__ import annotations

from importlib import metadata

try:
    __version__ = metadata.version("rankcraft")
except metadata.PackageNotFoundError:  # pragma: no cover - running from a bare checkout
    __version__ = "0.0.0"

__all__ = ["__version__"]
