"""The state documents of a league: :class:`Documents` writes a league's export document
and loads one's players into it (:meth:`rankcraft.League.export`,
:meth:`rankcraft.League.import_state`; docs/design.md, the state document). What comes in
is validated by :mod:`rankcraft.importing`; records and reports are turned into dicts by
the codec of :mod:`rankcraft.codec`.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from .errors import StateError
from .io import MAX_FUTURE
from .model import PlayerRecord
from .ruleset import (
    ImportedRulesetWarning,
    Ruleset,
    dumps,
)
from .store.base import Codec

if TYPE_CHECKING:
    from .refits import Refits
    from .seasons import Seasons
    from .unit import UnitOfWork
from .codec import league_codec, make_codec
from .importing import fit_history, imported_ruleset, parse_export

IMPORTED = "imported"
"""meta key set once players were imported (:mod:`rankcraft.corrections` reads it)."""

__all__ = [
    "IMPORTED",
    "Documents",
    "imported_ruleset",
    "league_codec",
    "make_codec",
    "parse_export",
]


class Documents:
    """The state documents of one league: its export, and the import of one.

    :param ruleset: the league's ruleset. :param plugins: its plugin facade (a
        document's ruleset is loaded with it). :param codec: its codec. :param seasons:
        its season schedule. :param unit: its unit of work.
    """

    def __init__(
        self,
        ruleset: Ruleset,
        plugins: Any,
        codec: Codec,
        seasons: Seasons,
        unit: UnitOfWork,
        refits: Refits | None = None,
    ) -> None:
        self.refits = refits  # (a history model's league exports its matches too)
        self.ruleset = ruleset
        self.plugins = plugins
        self.codec = codec
        self.seasons = seasons
        self.unit = unit

    def export(self, version: str, records: Iterable[PlayerRecord]) -> dict[str, Any]:
        """The state document (docs/design.md): every player's state (``records``, ordered by
        id), with the ruleset's TOML and the season schedule, so that importing it into a new
        database needs nothing else and continues as the league would; ``version``: the
        rankcraft that writes it."""
        ruleset, seasons = self.ruleset, self.seasons
        to_dict = self.codec.record_to_dict
        document: dict[str, Any] = {
            "ruleset": ruleset.name,
            "rankcraft": version,
            "ruleset_toml": dumps(ruleset),
        }
        if seasons.events:
            document["schedule"] = seasons.to_texts()
        document["players"] = [to_dict(r) for r in records]
        if self.refits is not None:
            document["history"] = [m.to_dict() for m in self.refits.history()]
        return document

    def import_state(
        self,
        document: Mapping[str, Any],
        accept_ruleset: bool = False,
        max_future: float | None = MAX_FUTURE,
    ) -> int:
        """Load players from an export document (all of them, or none on any error).

        Players in the document replace records of the same id; its ``schedule`` (when
        each season event runs next) replaces the league's. Every state must be whole
        (no field is invented), and the document's ``ruleset_toml``, when given, must be
        a valid ruleset that rates as the league's does.

        :param accept_ruleset: import from a document whose ``ruleset_toml`` rates
            otherwise (``rankcraft import --accept-ruleset``), with an
            :class:`~rankcraft.ruleset.ImportedRulesetWarning` naming the differences.
        :param max_future: the most seconds a ``last_played`` may lie past this
            machine's clock (default 86400, as the service's ``--max-future``; None: no
            bound, for a history of made-up dates).
        :returns: the number of players imported.
        :raises StateError: the document does not fit this league's ruleset.
        """
        ruleset, seasons, unit = self.ruleset, self.seasons, self.unit
        records = parse_export(document, ruleset.name, self.codec, max_future=max_future)
        history = fit_history(document, self.refits is not None)
        differ = imported_ruleset(document, ruleset, self.plugins)
        if differ:
            shown = "; ".join(differ[:4]) + (f"; and {len(differ) - 4} more" if differ[4:] else "")
            text = (
                f"the document's ruleset ('ruleset_toml') rates otherwise than the league's "
                f"{ruleset.name!r}: {shown}"
            )
            if not accept_ruleset:
                raise StateError(
                    f"{text}; --accept-ruleset (accept_ruleset=True) imports its players anyway"
                )
            # (stacklevel 3: the caller of League.import_state)
            warnings.warn(ImportedRulesetWarning(f"{text}; imported as asked"), stacklevel=3)
        with unit.transaction():
            if seasons.events:
                lasts = [r.last_played for r in records if r.last_played is not None]
                seasons.imported(max(lasts, default=None))
            if document.get("schedule") is not None:
                seasons.adopt(document["schedule"])
            for record in records:
                unit.put_record(record)
            if records:  # (the players hold what no match of the history explains)
                self.unit.store.set_meta(IMPORTED, "true")
            if self.refits is not None and history:
                self.refits.adopt(history)
        return len(records)
