"""rankcraft: skill ratings and player-facing ranks for games.

A small core defines the steps of rating a match as pluggy hooks; every rating system is
a plugin; TOML rulesets say which plugin does each step.

>>> import rankcraft
>>> league = rankcraft.League(rankcraft.load_ruleset("elo"))
>>> _ = league.record({"id": "m1", "played_at": "2024-05-01", "teams": [["ann"], ["bo"]],
...                    "scores": [3, 1]})
>>> [round(p, 3) for p in league.predict([["ann"], ["bo"]])]
[0.546, 0.454]
"""

from __future__ import annotations

from ._markers import hookimpl
from .engine import League, RecordSummary, Shown, UnknownPlayerError
from .errors import (
    DuplicateMatchError,
    InputError,
    LateMatchError,
    LeagueMismatchError,
    MatchError,
    PluginConflictError,
    PluginError,
    RankcraftError,
    RulesetError,
    StateError,
    StoreError,
)
from .forecast import Forecast
from .historyspec import FitLimits
from .io import parse_match, read_matches
from .manager import PluginInfo, Plugins, get_plugin_manager
from .model import (
    Census,
    Counted,
    Match,
    Needs,
    Pairing,
    PlayerChange,
    PlayerContext,
    PlayerRecord,
    PlayerScope,
    Report,
    ResetContext,
    Scale,
    State,
    field_of_role,
    pair_score,
    scale_of,
    shown_state,
    state_field,
)
from .rater import Rater, Ratings, rate
from .ruleset import (
    Display,
    DisplaySpec,
    PeriodSpec,
    Ruleset,
    SlotSpec,
    dumps,
    load_ruleset,
    loads_ruleset,
)
from .version import __version__

dumps_ruleset = dumps

__all__ = [
    "Census",
    "Counted",
    "Display",
    "DisplaySpec",
    "DuplicateMatchError",
    "FitLimits",
    "Forecast",
    "InputError",
    "LateMatchError",
    "League",
    "LeagueMismatchError",
    "Match",
    "MatchError",
    "Needs",
    "Pairing",
    "PeriodSpec",
    "PlayerChange",
    "PlayerContext",
    "PlayerRecord",
    "PlayerScope",
    "PluginConflictError",
    "PluginError",
    "PluginInfo",
    "Plugins",
    "RankcraftError",
    "Rater",
    "Ratings",
    "RecordSummary",
    "Report",
    "ResetContext",
    "Ruleset",
    "RulesetError",
    "Scale",
    "Shown",
    "SlotSpec",
    "State",
    "StateError",
    "StoreError",
    "UnknownPlayerError",
    "__version__",
    "dumps_ruleset",
    "field_of_role",
    "get_plugin_manager",
    "hookimpl",
    "load_ruleset",
    "loads_ruleset",
    "pair_score",
    "parse_match",
    "rate",
    "read_matches",
    "scale_of",
    "shown_state",
    "state_field",
]
