"""The two pluggy markers. Plugin authors import only :data:`rankcraft.hookimpl`."""

from __future__ import annotations

import pluggy

PROJECT = "rankcraft"

hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)
