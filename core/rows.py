"""Player rows: a player's record as the rating loop keeps it, and the turns between the
two.

A *row* is a list indexed by the constants below (a list costs a few hundredths of a
microsecond to build; a frozen record, half of one):
``[skill, rank, matches, last_played, pending, period, period_matches, base]``, the
fields of :class:`~rankcraft.PlayerRecord` in that order without the id, its states in
their tuple form (:mod:`rankcraft.forms`). :class:`Rows` makes the row of a new player and
turns records into rows and back (:meth:`Rows.row_of`, :meth:`Rows.record_of`), for the
state forms of one ruleset (:class:`rankcraft.steps.Steps` builds it).
"""

from __future__ import annotations

from typing import Any

from .forms import Form
from .model import Pairing, PlayerRecord, State

Row = list[Any]
SKILL, RANK, MATCHES, LAST, PENDING, PERIOD, PERIOD_MATCHES, BASE = range(8)

_new_record = object.__new__
_set = object.__setattr__


class Rows:
    """The rows of one ruleset's players.

    :param skill_form, rank_form: the forms of the skill and rank states (rank None
        without a rank slot).
    :param initial, initial_rank: the initial states in their tuple form (states are
        immutable: every new player starts from these).
    """

    def __init__(
        self,
        skill_form: Form,
        rank_form: Form | None,
        initial: tuple[Any, ...],
        initial_rank: tuple[Any, ...] | None,
    ) -> None:
        self.skill_form = skill_form
        self.rank_form = rank_form
        self.initial = initial
        self.initial_rank = initial_rank

    def new_row(self) -> Row:
        """The row of a player the league has not seen (states are immutable: every new
        player starts from the one initial state the plugins gave)."""
        return [self.initial, self.initial_rank, 0, None, (), None, 0, None]

    def row_of(self, record: PlayerRecord) -> Row:
        """A record as a row: its states in their tuple form."""
        skill = self.skill_form.to_tuple
        rank = self.rank_form.to_tuple if self.rank_form is not None else _same
        pending: tuple[Any, ...] = record.pending
        if pending:
            pending = tuple((skill(p[0]), p[1], p[2]) for p in pending)
        base = record.base
        return [
            skill(record.skill),
            rank(record.rank),
            record.matches,
            record.last_played,
            pending,
            record.period,
            record.period_matches,
            None if base is None else skill(base),
        ]

    def record_of(self, player: str, row: Row) -> PlayerRecord:
        """A row as the frozen :class:`~rankcraft.PlayerRecord` of ``player``, its states
        in their public form (the state classes' validators run on them).

        (Built field by field: equal to ``PlayerRecord(...)``, at half the cost.)"""
        skill = self.skill_form.to_object
        rank = row[RANK]
        pending = row[PENDING]
        if pending:
            unchecked = self.skill_form.to_object_unchecked
            pending = tuple(Pairing(unchecked(p[0]), p[1], p[2]) for p in pending)
        base = row[BASE]
        record = _new_record(PlayerRecord)
        _set(record, "id", player)
        _set(record, "skill", skill(row[SKILL]))
        _set(
            record,
            "rank",
            None if rank is None or self.rank_form is None else self.rank_form.to_object(rank),
        )
        _set(record, "matches", row[MATCHES])
        _set(record, "last_played", row[LAST])
        _set(record, "pending", pending)
        _set(record, "period", row[PERIOD])
        _set(record, "period_matches", row[PERIOD_MATCHES])
        _set(record, "base", None if base is None else skill(base))
        return record


def _same(value: State) -> State:
    return value
