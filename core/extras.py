"""The optional extras (``serve``, ``tune``, ``plots``, ``postgres``): the one error a
missing one gives, with the command that installs it where rankcraft came from (an
index, or the folder of a clone)."""

from __future__ import annotations

import json
from importlib import metadata
from urllib.parse import unquote, urlparse

from .errors import InputError


def _installed_from() -> tuple[str, bool] | None:
    """(the folder, editable) rankcraft was installed from, when it was installed from a
    folder (a clone: PEP 610's ``direct_url.json``); None from an index."""
    texts = (d.read_text("direct_url.json") for d in metadata.distributions(name="rankcraft"))
    text = next((t for t in texts if t), None)  # (a stale egg-info in the folder has none)
    try:
        found = json.loads(text) if text else None
    except ValueError:
        return None
    if not isinstance(found, dict) or not isinstance(found.get("dir_info"), dict):
        return None
    url = urlparse(str(found.get("url", "")))
    if url.scheme != "file":
        return None
    return unquote(url.path), bool(found["dir_info"].get("editable"))


def install_hint(extra: str) -> str:
    """The command that installs ``extra`` into this environment: ``pip install
    'rankcraft[serve]'`` from an index; from a clone, the clone's folder (``pip install
    '/path/to/rankcraft[serve]'``, ``-e`` where it was installed editable), for which a
    ``rankcraft[serve]`` from an index would be another package."""
    source = _installed_from()
    if source is None:
        return f"pip install 'rankcraft[{extra}]'"
    folder, editable = source
    return f"pip install {'-e ' if editable else ''}'{folder}[{extra}]' (from the clone)"


def missing(what: str, packages: str, extra: str) -> InputError:
    """The error of a feature whose extra is not installed: ``plots need matplotlib:
    pip install 'rankcraft[plots]'``."""
    return InputError(f"{what} {packages}: {install_hint(extra)}")
