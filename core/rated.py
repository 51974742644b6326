"""A rated match as the league keeps it, and the one encoder of reports into JSON text.

The rating loop builds one :class:`Rated` per match: a tuple of the match, the pre-match
probabilities and one change tuple per participant. It holds no object per player
beyond the states the plugins returned; :attr:`Rated.report` builds the public
:class:`~rankcraft.Report` when it is read. :class:`ReportWriter` is the only encoder of
reports into JSON text: the dict form (``Codec.report_to_dict``) is read back from its
text. :class:`ReportPacker` packs a report as the stores keep it (numbers as doubles),
building on the writer's texts for what is not a float.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Callable
from datetime import datetime
from operator import itemgetter
from typing import Any, cast

from .forms import tuple_form
from .model import Match, PlayerChange, Report, State, format_time

__all__ = ["PACKED", "Rated", "ReportPacker", "ReportWriter", "compact_json", "match_text"]

compact_json: Callable[[Any], str] = json.JSONEncoder(separators=(",", ":"), allow_nan=False).encode
"""JSON text without spaces; NaN and infinity refused (ValueError)."""

_EMPTY: dict[str, float] = {}


class Rated(tuple):  # type: ignore[type-arg]
    """``(match, expected, changes, forms)``: one rated match.

    ``changes`` holds, per participant in the order of ``match.teams``, the tuple
    ``(player, side, skill_before, skill_used, skill_after, rank_before, rank_after,
    factors)`` (``factors`` None when the plugins explained nothing), its states in their
    tuple form; ``forms`` are the skill and rank :class:`~rankcraft.forms.Form` that
    :attr:`report` builds the public states with."""

    __slots__ = ()

    match: Match = property(itemgetter(0))  # type: ignore[assignment]
    expected: tuple[float, ...] = property(itemgetter(1))  # type: ignore[assignment]
    changes: tuple[tuple[Any, ...], ...] = property(itemgetter(2))  # type: ignore[assignment]

    @property
    def id(self) -> str:
        """The match id."""
        match: Match = self[0]
        return match.id

    @property
    def played_at(self) -> datetime:
        """When the match was played (UTC)."""
        match: Match = self[0]
        return match.played_at

    @property
    def teams(self) -> tuple[tuple[str, ...], ...]:
        """The player ids per side."""
        match: Match = self[0]
        return match.teams

    @property
    def report(self) -> Report:
        """The match's :class:`~rankcraft.Report` (a new object on every read)."""
        match, expected, changes, (skill_form, rank_form) = self
        skill = skill_form.to_object_unchecked
        rank = rank_form.to_object_unchecked if rank_form is not None else _none
        return Report(
            match_id=match.id,
            played_at=match.played_at,
            expected=expected,
            changes=tuple(
                _change(
                    player,
                    side,
                    skill(before),
                    used is before,
                    skill(used),
                    skill(after),
                    None if rank_before is None else rank(rank_before),
                    None if rank_after is None else rank(rank_after),
                    factors,
                )
                for player, side, before, used, after, rank_before, rank_after, factors in changes
            ),
        )

    @staticmethod
    def changes_of(report: Report) -> tuple[tuple[Any, ...], ...]:
        """A report's changes as the change tuples of an entry (the inverse of
        :attr:`report`)."""
        return tuple(
            (
                c.player,
                c.side,
                c.skill_before,
                c.skill_used,
                c.skill_after,
                c.rank_before,
                c.rank_after,
                dict(c.factors) or None,
            )
            for c in report.changes
        )


_text: Callable[[str], str] = json.encoder.encode_basestring_ascii
_float_repr = float.__repr__
_FLOAT = {float}


def _number(value: Any) -> str:
    """A value as JSON text, as ``compact_json`` writes it (NaN and infinity refused)."""
    if type(value) is float and value - value == 0.0:  # finite
        return _float_repr(value)
    return compact_json(value)


def _change(
    player: str,
    side: int,
    before: Any,
    same: bool,
    used: Any,
    after: Any,
    rank_before: Any,
    rank_after: Any,
    factors: Any,
) -> PlayerChange:
    """A change of a report; ``skill_used`` is ``skill_before`` itself when the match used
    the state as it was (no decay): the report then leaves it out."""
    return PlayerChange(
        player=player,
        side=side,
        skill_before=before,
        skill_used=before if same else used,
        skill_after=after,
        rank_before=rank_before,
        rank_after=rank_after,
        factors=dict(factors) if factors else {},
    )


def _none(value: Any) -> Any:
    return None


def match_text(match: Match) -> str:
    """A match's JSON text: exactly ``compact_json(match.to_dict())``, what a store keeps
    per match. A match with only an id, a time, its sides and its scores or whole-number
    ranks (the common case) is written from a template; any other goes through
    :meth:`Match.to_dict`."""
    ranks = match.ranks
    if (
        match.meta
        or match.seconds_played is not None
        or match.quit
        or match.home is not None
        or match.weight != 1.0
        or (ranks is not None and (match.scores is not None or _not_places(ranks)))
    ):
        return compact_json(match.to_dict())
    scores = match.scores
    if scores is None:
        tail = "}" if ranks is None else f',"ranks":[{",".join(map(str, ranks))}]}}'
    else:
        known = _scores_text.get(id(scores))
        if known is None or known[0] is not scores:
            if len(_scores_text) > 4096:
                _scores_text.clear()
            known = _scores_text[id(scores)] = (scores, ",".join(map(_number, scores)))
        tail = f',"scores":[{known[1]}]}}'
    sides = match.teams
    if len(sides) == 2 and len(sides[0]) == 1 and len(sides[1]) == 1:  # (the common shape)
        teams = f"[{_text(sides[0][0])}],[{_text(sides[1][0])}]"
    else:
        teams = ",".join(["[" + ",".join(map(_text, side)) + "]" for side in sides])
    # (a time's text has no character JSON escapes)
    return (
        f'{{"id":{_text(match.id)},"played_at":"{format_time(match.played_at)}",'
        f'"teams":[{teams}]{tail}'
    )


def _not_places(ranks: tuple[Any, ...]) -> bool:
    """Whether ``ranks`` holds anything but ints (whose text ``str`` writes as JSON does)."""
    return any(type(rank) is not int for rank in ranks)


_scores_text: dict[int, tuple[tuple[float, ...], str]] = {}
"""The JSON text of score tuples written lately, by identity (a parsed history shares one
tuple among its equal scores; by identity, ``-0.0`` and ``0.0`` keep their own texts)."""


class ReportWriter:
    """Writes rated matches as JSON text, and states as JSON-ready dicts, for one pair of
    state classes.

    :param skill_names: the skill state's field names, in order.
    :param rank_names: the rank state's field names (empty without a rank slot).

    A state's text is remembered by identity for the last states written (a player's
    state after one match is their state before the next).
    """

    def __init__(self, skill_names: tuple[str, ...], rank_names: tuple[str, ...]) -> None:
        self._memo: dict[int, tuple[State, str]] = {}
        self._factors: tuple[dict[str, float], str] | None = None
        self.skill_text = self._object_writer(skill_names)
        self.rank_text = self._object_writer(rank_names)
        self.skill_names = skill_names
        self.rank_names = rank_names

    def _object_writer(self, names: tuple[str, ...]) -> Callable[[State], str]:
        memo = self._memo
        pack = tuple_form(names)
        template = "{" + ",".join(f"{_text(n)}:%s" for n in names) + "}"
        template = template.replace("%s", "\0").replace("%", "%%").replace("\0", "%s")
        floats = template.replace("%s", "%r")  # repr of a finite float is its JSON text

        def write(state: State) -> str:
            known = memo.get(id(state))
            if known is not None and known[0] is state:
                return known[1]
            values = pack(state)
            if set(map(type, values)) == _FLOAT and sum(values) - sum(values) == 0.0:
                text = floats % values
            else:
                text = template % tuple(map(_number, values))
            if len(memo) >= 50_000:
                memo.clear()
            memo[id(state)] = (state, text)
            return text

        return write

    def skill_dict(self, state: State) -> dict[str, Any]:
        """A skill state as a dict of its fields."""
        return {n: getattr(state, n) for n in self.skill_names}

    def rank_dict(self, state: State | None) -> dict[str, Any] | None:
        """A rank state as a dict of its fields (None stays None)."""
        return None if state is None else {n: getattr(state, n) for n in self.rank_names}

    def report_text(
        self,
        match_id: str,
        played_at: datetime,
        expected: tuple[float, ...],
        changes: tuple[tuple[Any, ...], ...],
    ) -> str:
        """A report as compact JSON text (key order: ``match_id``, ``played_at``,
        ``expected``, ``changes``; a change's ``skill_used`` only when it differs from
        ``skill_before``, its rank states only with a rank slot, ``factors`` when any)."""
        skill, rank = self.skill_text, self.rank_text
        parts = []
        for player, side, before, used, after, rank_before, rank_after, factors in changes:
            text = (
                f'{{"player":{_text(player)},"side":{side},"skill_before":{skill(before)},'
                f'"skill_after":{skill(after)}'
            )
            if used is not before:
                text += f',"skill_used":{skill(used)}'
            if rank_after is not None:
                text += f',"rank_before":{rank(rank_before)},"rank_after":{rank(rank_after)}'
            if factors:
                known = self._factors
                if known is None or known[0] is not factors:  # (equal factors share a dict)
                    known = self._factors = (factors, compact_json(factors))
                text += f',"factors":{known[1]}'
            parts.append(text + "}")
        return (
            f'{{"match_id":{_text(match_id)},"played_at":{_text(format_time(played_at))},'
            f'"expected":[{",".join(map(_number, expected))}],"changes":[{",".join(parts)}]}}'
        )


# ---------------------------------------------------------------------------------------
# The packed report: what stores keep per match (numbers as IEEE doubles, not text)
# ---------------------------------------------------------------------------------------

PACKED = 1
"""The first byte of a packed report (a JSON report starts with ``{``)."""

_HEAD = struct.Struct("<BH")  # version, number of expected values
_COUNT = struct.Struct("<I")  # a change count, or the byte length of a long JSON text
_FLAG = struct.Struct("<B")
_USED, _RANK, _FACTORS = 1, 2, 4  # a change's flags
_FLAGS = [bytes((flags,)) for flags in range(8)]
_DOUBLES, _JSON = 0, 1  # how a state is packed


_STRUCTS: dict[int, struct.Struct] = {}
_HEADS: dict[int, struct.Struct] = {}


def _doubles(count: int) -> struct.Struct:
    known = _STRUCTS.get(count)
    if known is None:
        known = _STRUCTS[count] = struct.Struct(f"<{count}d")
    return known


def _head(count: int) -> struct.Struct:
    """A report's head with ``count`` expected values: ``_HEAD``, the values as doubles,
    then the change count (``_COUNT``), in one struct."""
    known = _HEADS.get(count)
    if known is None:
        known = _HEADS[count] = struct.Struct(f"<BH{count}dI")
    return known


class _StatePacker:
    """Packs and unpacks the states of one class: its fields as doubles when they are
    all finite floats, else the state's JSON text (as :class:`ReportWriter` writes it)."""

    def __init__(self, names: tuple[str, ...], text: Callable[[State], str]) -> None:
        self.names = names
        self._values = tuple_form(names)
        self._text = text
        self._fixed = struct.Struct(f"<B{len(names)}d")
        self._floats = _all_floats(len(names))
        # a JSON state's bytes by identity, for the last ones packed (a player's state
        # after one match is their state before the next)
        self._memo: dict[int, tuple[State, bytes]] = {}

    def pack(self, state: State) -> bytes:
        """The state's bytes: a tag, then its fields as doubles or its JSON text."""
        values = state if type(state) is tuple else self._values(state)
        if self._floats(values):
            total = sum(values)
            if total - total == 0.0:  # (finite)
                return self._fixed.pack(_DOUBLES, *values)
        known = self._memo.get(id(state))
        if known is not None and known[0] is state:
            return known[1]
        packed = _FLAG.pack(_JSON) + sized_json(self._text(state).encode())
        if len(self._memo) >= 50_000:
            self._memo.clear()
        self._memo[id(state)] = (state, packed)
        return packed

    def unpack(self, blob: bytes, at: int) -> tuple[dict[str, Any], int]:
        if blob[at] == _DOUBLES:
            values = self._fixed.unpack_from(blob, at)[1:]
            return dict(zip(self.names, values, strict=True)), at + self._fixed.size
        return json_at(blob, at + 1)


def _all_floats(count: int) -> Callable[[tuple[Any, ...]], bool]:
    """``values -> bool``: whether a tuple of ``count`` values holds floats only (written
    out for the count: a set of their types costs twice as much)."""
    if count == 0:
        return lambda values: True
    test = " and ".join(f"type(values[{i}]) is float" for i in range(count))
    return cast(Callable[[tuple[Any, ...]], bool], eval(f"lambda values: {test}"))


def _plain_states(count: int) -> Callable[[Any, Any, Any, Any], bool]:
    """``(four states) -> bool``: whether each is a tuple of ``count`` floats of
    magnitude below 1e300 (written out for four states of ``count`` fields).

    Such a state is one :class:`_StatePacker` packs as doubles: its fields are floats
    and their sum, in any order of addition, is finite. A state this refuses may still
    be one (a field of 1e301): the caller then takes the general steps, which decide."""
    states = ("a", "b", "c", "d")
    fields = [f"{s}[{i}]" for s in states for i in range(count)]
    tests = [
        " is ".join(f"type({s})" for s in states) + " is tuple",
        " == ".join(f"len({s})" for s in states) + f" == {count}",
    ]
    if fields:
        tests.append(" is ".join(f"type({f})" for f in fields) + " is float")
        tests += [f"-1e300 < {f} < 1e300" for f in fields]
    # (the builtins as defaults: local names, where a global name looks in two dicts)
    head = "lambda a, b, c, d, type=type, tuple=tuple, len=len, float=float"
    return cast(Callable[[Any, Any, Any, Any], bool], eval(f"{head}: {' and '.join(tests)}"))


def sized_json(text: bytes) -> bytes:
    """JSON ``text`` after its length (one byte below 255, else 255 and four bytes), as a
    packed report keeps a text and a store may keep one beside it."""
    if len(text) < 255:
        return bytes((len(text),)) + text
    return b"\xff" + _COUNT.pack(len(text)) + text


def json_at(blob: bytes, at: int) -> tuple[Any, int]:
    """The JSON value whose :func:`sized_json` text starts at ``at``, and the next offset."""
    length, start = blob[at], at + 1
    if length == 255:
        (length,) = _COUNT.unpack_from(blob, start)
        start += _COUNT.size
    return json.loads(blob[start : start + length]), start + length


class ReportPacker:
    """Packs a rated match's report into bytes, and reads it back as the dict form of
    :meth:`ReportWriter.report_text` (what ``json.loads`` of that text gives).

    The match id, its time and the player ids are not repeated: the reader is handed
    the match. Floats are IEEE doubles, so a value read back is the value written, bit
    for bit; a state with a field that is not a finite float, and a change's factors,
    are kept as their JSON text.
    """

    def __init__(self, writer: ReportWriter) -> None:
        self._skill = _StatePacker(writer.skill_names, writer.skill_text)
        self._rank = _StatePacker(writer.rank_names, writer.rank_text)
        self._factors: tuple[dict[str, float], bytes] | None = None
        count = len(writer.skill_names)
        self._plain = _plain_states(count)
        # the common 1-v-1 report in one struct: the head, then per change its flags,
        # both states as doubles and its factors' text (``0s``: none), by the texts' lengths
        self._duel_format = f"<BH2dIBB{count}dB{count}d%dsBB{count}dB{count}d%ds"
        self._duels: dict[tuple[int, int], Callable[..., bytes]] = {}

    def pack(self, entry: Rated) -> bytes:
        """The packed report of ``entry``.

        The common 1-v-1 report (two expected values, no decay, no rank slot, every
        skill state a tuple of finite floats) is written out in one ``struct`` call;
        any other takes the general steps (:meth:`_pack`). Both give the same bytes
        (tests/test_rated.py compares them on random reports)."""
        match, changes = entry[0], entry[2]
        teams = match.teams
        if len(teams) == 2 and len(changes) == 2 and len(teams[0]) == len(teams[1]) == 1:
            first, second = changes
            if first[0] != teams[0][0] or second[0] != teams[1][0]:
                raise ValueError(f"match {match.id!r}: the changes do not follow its players")
            _, _, before, used, after, _, rank, factors = first
            _, _, before_2, used_2, after_2, _, rank_2, factors_2 = second
            expected = entry[1]
            if (
                used is before
                and used_2 is before_2
                and rank is None
                and rank_2 is None
                and len(expected) == 2
                and self._plain(before, after, before_2, after_2)
            ):
                # (self._text's remembered text read here: equal factors in a row share
                # a dict; another dict's text is made by self._text)
                text = text_2 = b""
                if factors:
                    known = self._factors
                    text = known[1] if known and known[0] is factors else self._text(factors)
                if factors_2:
                    known = self._factors
                    text_2 = known[1] if known and known[0] is factors_2 else self._text(factors_2)
                sizes = (len(text), len(text_2))
                duel = self._duels.get(sizes) or self._duel(sizes)
                return duel(
                    PACKED,
                    2,
                    *expected,
                    2,
                    _FACTORS if text else 0,
                    _DOUBLES,
                    *before,
                    _DOUBLES,
                    *after,
                    text,
                    _FACTORS if text_2 else 0,
                    _DOUBLES,
                    *before_2,
                    _DOUBLES,
                    *after_2,
                    text_2,
                )
            return self._pack(match, expected, changes)
        if [c[0] for c in changes] != [p for team in teams for p in team]:
            raise ValueError(f"match {match.id!r}: the changes do not follow its players")
        return self._pack(match, entry[1], changes)

    def _duel(self, sizes: tuple[int, int]) -> Callable[..., bytes]:
        """The ``pack`` of the written-out 1-v-1 report whose factors' texts have
        ``sizes`` bytes."""
        packer = self._duels[sizes] = struct.Struct(self._duel_format % sizes).pack
        return packer

    def _pack(
        self, match: Match, expected: tuple[float, ...], changes: tuple[tuple[Any, ...], ...]
    ) -> bytes:
        """The general steps of :meth:`pack` (the changes checked against the players)."""
        count = len(expected)
        head = _HEADS.get(count) or _head(count)
        out = [head.pack(PACKED, count, *expected, len(changes))]
        skill, rank = self._skill.pack, self._rank.pack
        for _, _, before, used, after, rank_before, rank_after, factors in changes:
            if used is before and rank_after is None:  # (the common change, written out)
                if factors:
                    out += (_FLAGS[_FACTORS], skill(before), skill(after), self._text(factors))
                else:
                    out += (_FLAGS[0], skill(before), skill(after))
                continue
            flags = (
                (_USED if used is not before else 0)
                | (_RANK if rank_after is not None else 0)
                | (_FACTORS if factors else 0)
            )
            out += (_FLAGS[flags], skill(before), skill(after))
            if flags & _USED:
                out.append(skill(used))
            if flags & _RANK:
                out += (rank(rank_before), rank(rank_after))
            if flags & _FACTORS:
                out.append(self._text(factors))
        return b"".join(out)

    def _text(self, factors: dict[str, float]) -> bytes:
        """The packed text of a change's factors (equal factors in a row share a dict,
        whose text is remembered)."""
        known = self._factors
        if known is None or known[0] is not factors:
            known = self._factors = (factors, sized_json(compact_json(factors).encode()))
        return known[1]

    def unpack(self, blob: bytes, match: Match) -> dict[str, Any]:
        """The report dict of the packed ``blob`` of ``match``."""
        version, count = _HEAD.unpack_from(blob, 0)
        if version != PACKED:
            raise ValueError(f"not a packed report (version byte {version})")
        at = _HEAD.size
        expected = list(_doubles(count).unpack_from(blob, at))
        at += 8 * count
        (n_changes,) = _COUNT.unpack_from(blob, at)
        at += _COUNT.size
        seats = [(player, side) for side, team in enumerate(match.teams) for player in team]
        if n_changes != len(seats):
            raise ValueError(f"a packed report of {n_changes} changes for {len(seats)} players")
        changes = []
        skill, rank = self._skill.unpack, self._rank.unpack
        for player, side in seats:
            flags = blob[at]
            change: dict[str, Any] = {"player": player, "side": side}
            change["skill_before"], at = skill(blob, at + 1)
            change["skill_after"], at = skill(blob, at)
            if flags & _USED:
                change["skill_used"], at = skill(blob, at)
            if flags & _RANK:
                change["rank_before"], at = rank(blob, at)
                change["rank_after"], at = rank(blob, at)
            if flags & _FACTORS:
                change["factors"], at = json_at(blob, at)
            changes.append(change)
        return {
            "match_id": match.id,
            "played_at": format_time(match.played_at),
            "expected": expected,
            "changes": changes,
        }
