"""rankcraft's error types.

Every error raised for bad input derives from :class:`InputError`; the command line
maps it to exit status 2. Messages name the field and the offending value.
"""

from __future__ import annotations

import re

_LEADING_FIELD = re.compile(r"'([A-Za-z_][\w.]*(?:\[\d+\])*)'")


class RankcraftError(Exception):
    """Base class of every error rankcraft raises on purpose.

    Attributes:
        committed: raised by ``League.record_many(commit_every=N)``: how many matches of
            that call were committed before the error (they stay); None otherwise.
    """

    committed: int | None = None


class InputError(RankcraftError, ValueError):
    """Input that rankcraft refuses: a ruleset, a match, a state document, an argument.

    Nothing is changed when one is raised.
    """

    _field: str | None = None

    @property
    def field(self) -> str | None:
        """The field that was wrong: the one given when raised, else the one the message
        opens with (``'played_at' is missing`` names ``played_at``), else None. The HTTP
        service reports it."""
        if self._field is not None:
            return self._field
        found = _LEADING_FIELD.match(getattr(self, "reason", None) or str(self))
        return found.group(1) if found else None


class RulesetError(InputError):
    """A ruleset that cannot be loaded: bad TOML, unknown plugin, bad parameter.

    Attributes:
        line: the 1-based line of the ruleset file the error stands on, when known.
    """

    line: int | None = None


class MatchError(InputError):
    """A match that breaks the match format or the league's rules.

    Attributes:
        match_id: the ``id`` of the offending match, when it has one.
        line: 1-based line number in the input file, when read from a file.
        item: 0-based position of the match in what :meth:`League.record_many
            <rankcraft.League.record_many>` was given, when raised there.
    """

    item: int | None = None

    def __init__(
        self,
        message: str,
        *,
        match_id: str | None = None,
        line: int | None = None,
        field: str | None = None,
    ):
        self.reason = message
        self.match_id = match_id
        self.line = line
        self._field = field
        super().__init__(self._format())

    def _format(self) -> str:
        where = []
        if self.line is not None:
            where.append(f"line {self.line}")
        if self.match_id is not None:
            where.append(f"match {self.match_id!r}")
        return f"{', '.join(where)}: {self.reason}" if where else self.reason

    def at_line(self, line: int) -> MatchError:
        """Return a copy of this error that also names ``line``."""
        copy = type(self)(self.reason, match_id=self.match_id, line=line, field=self._field)
        copy.item, copy.committed = self.item, self.committed
        return copy


class DuplicateMatchError(MatchError):
    """A match id that the league has recorded already."""

    @property
    def field(self) -> str | None:
        return "id"


class LateMatchError(MatchError):
    """A match played earlier than one of its players' last recorded match."""

    @property
    def field(self) -> str | None:
        return "played_at"


class StateError(InputError):
    """A player-state document (export/import) that does not fit the ruleset."""


class LeagueMismatchError(InputError):
    """A database used with a ruleset other than the one it was created with."""


class StoreError(RankcraftError):
    """A database that cannot be used as asked: read-only, locked by another process, on a
    full disk, unreadable. The message names the database and what happened."""


class PluginError(RankcraftError):
    """A plugin that is missing, blocked, or does not implement what a ruleset asks of it."""


class PluginConflictError(PluginError):
    """Two installed distributions provide a plugin under the same name."""
