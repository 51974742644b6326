"""The fused 1-v-1 path of the engine: plain 1-v-1 matches rated on tuples of floats.

A replay spends most of its time in per-match objects (a validated :class:`Match`, a
record per player, a context per player, a report), not in arithmetic. When every slot of
a ``match``-mode ruleset offers a kernel (:func:`rankcraft.hookspecs.rankcraft_kernel`),
:meth:`League.record_many <rankcraft.League.record_many>` rates the matches that need
nothing more than two single players and their scores through those kernels: states stay
tuples in a dict while the batch runs, reports are kept as one compact :class:`FastEntry`
each and only built into :class:`Report` objects when read. Any other match (teams, home,
weight, quits, ranks, a player with pending results, a malformed line) goes through the
ordinary hooks, which also raise the errors. Both paths give the same numbers bit for bit
(tests/test_fast.py replays random histories both ways).
"""

from __future__ import annotations

import json
import math
import operator
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime
from operator import itemgetter
from typing import TYPE_CHECKING, Any

from .errors import MatchError, PluginError
from .io import _time_cache, parse_time
from .model import Match, PlayerChange, PlayerRecord, Report, State, format_time
from .store.base import Codec, compact_json

if TYPE_CHECKING:
    from .engine import League

__all__ = ["FastEntry", "FastPath", "packer", "solo_side"]

_KEYS = frozenset({"id", "played_at", "teams", "scores", "meta", "seconds_played"})
_isfinite = math.isfinite


def solo_side(state: State) -> State:
    """The ``"team"`` kernel a team plugin returns to promise that a one-player side plays
    as its player: aggregates to that player's state, and pairs with the other side's
    single player at the match's score and weight. Returns ``state`` unchanged."""
    return state


class FastEntry(tuple):  # type: ignore[type-arg]
    """One match rated on the fused path, kept compactly: a tuple of the values the match
    and its report are made of (no object per player or per change); ``match`` and
    ``report`` build the ordinary objects on demand (each call builds new ones).

    Scores are kept as given (an ``int`` costs nothing) and each player's report factors
    as a tuple of values beside a tuple of names shared by every entry alike: a replay of
    200,000 matches in memory keeps about half the bytes per match that dicts and floats
    would take."""

    __slots__ = ()

    _fast: FastPath = property(itemgetter(0))  # type: ignore[assignment]
    id: str = property(itemgetter(1))  # type: ignore[assignment]
    played_at: datetime = property(itemgetter(2))  # type: ignore[assignment]
    a: str = property(itemgetter(3))  # type: ignore[assignment]
    b: str = property(itemgetter(4))  # type: ignore[assignment]
    meta: Mapping[str, Any] | None = property(itemgetter(7))  # type: ignore[assignment]
    p: float = property(itemgetter(8))  # type: ignore[assignment]
    a_before: tuple[Any, ...] = property(itemgetter(9))  # type: ignore[assignment]
    a_used: tuple[Any, ...] = property(itemgetter(10))  # type: ignore[assignment]
    a_after: tuple[Any, ...] = property(itemgetter(11))  # type: ignore[assignment]
    b_before: tuple[Any, ...] = property(itemgetter(12))  # type: ignore[assignment]
    b_used: tuple[Any, ...] = property(itemgetter(13))  # type: ignore[assignment]
    b_after: tuple[Any, ...] = property(itemgetter(14))  # type: ignore[assignment]
    ra_before: tuple[Any, ...] | None = property(itemgetter(15))  # type: ignore[assignment]
    ra_after: tuple[Any, ...] | None = property(itemgetter(16))  # type: ignore[assignment]
    rb_before: tuple[Any, ...] | None = property(itemgetter(17))  # type: ignore[assignment]
    rb_after: tuple[Any, ...] | None = property(itemgetter(18))  # type: ignore[assignment]

    @property
    def sa(self) -> float:
        """Side a's score."""
        return float(self[5])

    @property
    def sb(self) -> float:
        """Side b's score."""
        return float(self[6])

    @property
    def seconds_played(self) -> tuple[tuple[int], tuple[int]] | None:
        """Seconds each player played, as the match gave them (``seconds_played``)."""
        secs = self[23]
        return None if secs is None else ((secs[0],), (secs[1],))

    @property
    def fa(self) -> dict[str, float]:
        """Player a's report factors."""
        return dict(zip(self[19], self[20], strict=True))

    @property
    def fb(self) -> dict[str, float]:
        """Player b's report factors."""
        return dict(zip(self[21], self[22], strict=True))

    @property
    def teams(self) -> tuple[tuple[str, ...], ...]:
        """The player ids per side: ``((a,), (b,))``."""
        return ((self.a,), (self.b,))

    @property
    def match(self) -> Match:
        """The match as :func:`rankcraft.io.parse_match` would have built it."""
        sa, sb = self.sa, self.sb
        return Match(
            id=self.id,
            played_at=self.played_at,
            teams=((self.a,), (self.b,)),
            scores=(sa, sb),
            places=(1 if sa >= sb else 2, 1 if sb >= sa else 2),
            seconds_played=self.seconds_played,
            meta=self.meta if self.meta is not None else {},
        )

    def json_texts(self, codec: Codec) -> tuple[str, str]:
        """The match and the report as :func:`~rankcraft.store.base.compact_json` of
        ``match.to_dict()`` and ``codec.report_to_dict(report)`` gives them, written
        directly from the values (a store writes every entry; no objects are built)."""
        return self._fast.encode(self)

    @property
    def report(self) -> Report:
        """The match's report, equal to the one the ordinary path gives."""
        skill = self._fast.skill_class
        rank = self._fast.rank_class

        def state(values: tuple[Any, ...]) -> State:
            return skill(*values)

        def rank_state(values: tuple[Any, ...] | None) -> State | None:
            return None if values is None or rank is None else rank(*values)

        a_before = state(self.a_before)
        b_before = state(self.b_before)
        changes = (
            PlayerChange(
                player=self.a,
                side=0,
                skill_before=a_before,
                skill_used=a_before if self.a_used is self.a_before else state(self.a_used),
                skill_after=state(self.a_after),
                rank_before=rank_state(self.ra_before),
                rank_after=rank_state(self.ra_after),
                factors=self.fa,
            ),
            PlayerChange(
                player=self.b,
                side=1,
                skill_before=b_before,
                skill_used=b_before if self.b_used is self.b_before else state(self.b_used),
                skill_after=state(self.b_after),
                rank_before=rank_state(self.rb_before),
                rank_after=rank_state(self.rb_after),
                factors=self.fb,
            ),
        )
        return Report(
            match_id=self.id,
            played_at=self.played_at,
            expected=(self.p, 1.0 - self.p),
            changes=changes,
        )


_text: Callable[[str], str] = json.encoder.encode_basestring_ascii
_float_repr = float.__repr__


def _number(value: Any) -> str:
    """A state value as JSON text, as ``compact_json`` writes it (NaN and infinity refused)."""
    if type(value) is float:
        if value - value != 0.0:  # NaN or infinity
            return compact_json(value)  # raises ValueError, as json.dumps does
        return _float_repr(value)
    return compact_json(value)


_FLOAT = {float}


def _object_writer(
    names: tuple[str, ...], memo: dict[int, tuple[Any, str]]
) -> Callable[[tuple[Any, ...]], str]:
    """A function writing a state tuple as the JSON object of its ``names`` fields.

    ``memo`` remembers the text of the tuples written last (a player's state after one
    match is its state before the next), keyed by identity and holding the tuple so that
    its identity stays its own."""
    template = "{" + ",".join(f"{_text(n)}:%s" for n in names) + "}"
    template = template.replace("%s", "\0").replace("%", "%%").replace("\0", "%s")
    floats = template.replace("%s", "%r")  # repr of a finite float is its JSON text

    def write(values: tuple[Any, ...]) -> str:
        known = memo.get(id(values))
        if known is not None and known[0] is values:
            return known[1]
        if set(map(type, values)) == _FLOAT and _isfinite(sum(values)):
            text = floats % values
        else:
            text = template % tuple(map(_number, values))
        if len(memo) >= 50_000:
            memo.clear()
        memo[id(values)] = (values, text)
        return text

    return write


def packer(names: tuple[str, ...]) -> Callable[[Any], tuple[Any, ...]]:
    """A function turning a state into the tuple of its ``names`` fields, in order."""
    if len(names) > 1:
        return operator.attrgetter(*names)
    if len(names) == 1:
        get = operator.attrgetter(names[0])
        return lambda state: (get(state),)
    return lambda state: ()


class FastPath:
    """The fused path of one league (built by the league when its ruleset allows it).

    ``states`` maps player id to ``[skill, rank, matches, last_played]`` for the players
    the open run has touched; :meth:`settle` writes them back as records.
    """

    def __init__(
        self,
        league: League,
        decay: Callable[[tuple[Any, ...], float], tuple[Any, ...]] | None,
        expect: Callable[[tuple[Any, ...], tuple[Any, ...]], float],
        update: Callable[..., tuple[Any, ...]],
        rank: Callable[..., tuple[Any, ...]] | None,
        skill_names: tuple[str, ...],
        rank_names: tuple[str, ...],
    ) -> None:
        self.league = league
        self.decay = decay
        self.expect = expect
        self.update = update
        self.rank = rank
        self.skill_class: type = league.skill_class
        self.rank_class: type | None = league.rank_class
        self.skill_names = skill_names
        self.rank_names = rank_names
        self.pack_skill = packer(skill_names)
        self.pack_rank = packer(rank_names)
        memo: dict[int, tuple[Any, str]] = {}
        self._skill_json = _object_writer(skill_names, memo)
        self._rank_json = _object_writer(rank_names, memo)
        self._factor_json: dict[tuple[str, ...], Callable[[tuple[Any, ...]], str]] = {}
        self._memo = memo
        self.states: dict[str, list[Any]] = {}
        self._factor_names: dict[tuple[str, ...], tuple[str, ...]] = {}

    def _load(self, pid: str) -> list[Any] | None:
        record = self.league._players.get(pid)
        if record is None:
            league = self.league
            rank = league._initial_rank() if league._initial_rank is not None else None
            return [
                self.pack_skill(league._initial_skill()),
                None if rank is None else self.pack_rank(rank),
                0,
                None,
            ]
        if record.pending or record.period is not None or record.base is not None:
            return None
        return [
            self.pack_skill(record.skill),
            None if record.rank is None else self.pack_rank(record.rank),
            record.matches,
            record.last_played,
        ]

    def encode(self, entry: FastEntry) -> tuple[str, str]:
        """``entry``'s match and report as compact JSON text (see
        :meth:`FastEntry.json_texts`)."""
        (
            _,
            mid,
            at,
            a,
            b,
            sa,
            sb,
            meta,
            p,
            a_before,
            a_used,
            a_after,
            b_before,
            b_used,
            b_after,
            ra_before,
            ra_after,
            rb_before,
            rb_after,
            ka,
            va,
            kb,
            vb,
            secs,
        ) = entry
        skill = self._skill_json
        rank = self._rank_json
        writers = self._factor_json
        when = _text(format_time(at))
        ja, jb = _text(a), _text(b)
        match = (
            f'{{"id":{_text(mid)},"played_at":{when},"teams":[[{ja}],[{jb}]],'
            f'"scores":[{_number(float(sa))},{_number(float(sb))}]'
            + (f',"seconds_played":[[{secs[0]}],[{secs[1]}]]' if secs is not None else "")
            + (f',"meta":{compact_json(meta)}}}' if meta else "}")
        )
        changes = []
        for player, side, before, used, after, r_before, r_after, keys, values in (
            (ja, 0, a_before, a_used, a_after, ra_before, ra_after, ka, va),
            (jb, 1, b_before, b_used, b_after, rb_before, rb_after, kb, vb),
        ):
            text = (
                f'{{"player":{player},"side":{side},"skill_before":{skill(before)},'
                f'"skill_after":{skill(after)}'
            )
            if used is not before:
                text += f',"skill_used":{skill(used)}'
            if r_after is not None:
                text += f',"rank_before":{rank(r_before)},"rank_after":{rank(r_after)}'
            if keys:
                factors = writers.get(keys)
                if factors is None:
                    factors = writers[keys] = _object_writer(keys, self._memo)
                text += f',"factors":{factors(values)}'
            changes.append(text + "}")
        report = (
            f'{{"match_id":{_text(mid)},"played_at":{when},'
            f'"expected":[{_number(p)},{_number(1.0 - p)}],'
            f'"changes":[{changes[0]},{changes[1]}]}}'
        )
        return match, report

    def settle(self, players: Iterable[str] | None = None) -> None:
        """Write the touched players (or those of ``players`` among them) back into the
        league as records (undo-logged), and forget them here."""
        league = self.league
        skill, rank = self.skill_class, self.rank_class
        put = league._put
        if players is None:
            items = list(self.states.items())
            self.states.clear()  # in place: a runner holds this dict
        else:
            items = [(p, self.states.pop(p)) for p in players if p in self.states]
        for pid, (s, r, n, last) in items:
            put(
                PlayerRecord(
                    id=pid,
                    skill=skill(*s),
                    rank=None if r is None or rank is None else rank(*r),
                    matches=n,
                    last_played=last,
                )
            )

    def discard(self) -> None:
        """Forget the open run (its batch was rolled back)."""
        self.states.clear()

    def runner(self, seen: set[str], pending: list[Any]) -> Callable[[Any], bool]:
        """A function that rates one item if it is a plain, valid 1-v-1 match dict, adds
        its id to ``seen`` and its :class:`FastEntry` to ``pending``, and
        returns True; for anything else it changes nothing and returns False (the ordinary
        path then takes the item and raises any error). Built per batch: it holds the
        league's current sets and lists."""
        league = self.league
        states = self.states
        load = self._load
        decay = self.decay
        expect = self.expect
        update = self.update
        rank = self.rank
        periods_of = league.ruleset.period.periods
        keys = _KEYS
        isfinite = _isfinite
        time_cache = _time_cache
        entry_class = FastEntry
        add_seen = seen.add
        add_pending = pending.append
        new_entry = tuple.__new__
        names_of = self._factor_names.setdefault
        last: list[Any] = [None, (), ()]  # the last factors: dict, names, values

        def run(m: Any) -> bool:
            if type(m) is not dict or not keys.issuperset(m):
                return False
            mid = m.get("id")
            teams = m.get("teams")
            scores = m.get("scores")
            if (
                type(mid) is not str
                or not mid
                or type(teams) is not list
                or len(teams) != 2
                or type(scores) is not list
                or len(scores) != 2
            ):
                return False
            side_a, side_b = teams
            if (
                type(side_a) is not list
                or type(side_b) is not list
                or len(side_a) != 1
                or len(side_b) != 1
            ):
                return False
            a = side_a[0]
            b = side_b[0]
            if type(a) is not str or type(b) is not str or not a or not b or a == b:
                return False
            sa, sb = scores
            ta = type(sa)
            if ta is float:
                if not isfinite(sa):
                    return False
            elif ta is not int:
                return False
            tb = type(sb)
            if tb is float:
                if not isfinite(sb):
                    return False
            elif tb is not int:
                return False
            meta = m.get("meta")
            if meta is not None and type(meta) is not dict:
                return False
            secs = m.get("seconds_played")
            if secs is not None:  # carried with the match; no kernel reads it
                if type(secs) is not list or len(secs) != 2:
                    return False
                time_a, time_b = secs
                if (
                    type(time_a) is not list
                    or type(time_b) is not list
                    or len(time_a) != 1
                    or len(time_b) != 1
                ):
                    return False
                time_a = time_a[0]
                time_b = time_b[0]
                if type(time_a) is not int or type(time_b) is not int or time_a < 0 or time_b < 0:
                    return False
                secs = (time_a, time_b)
            text = m.get("played_at")
            at = time_cache.get(text) if type(text) is str else None
            if at is None:
                if type(text) is not str:
                    return False
                try:
                    at = parse_time(text)
                except MatchError:
                    return False
            if mid in seen:
                return False
            st_a = states.get(a)
            if st_a is None:
                st_a = load(a)
                if st_a is None:
                    return False
            st_b = states.get(b)
            if st_b is None:
                st_b = load(b)
                if st_b is None:
                    return False
            last_a = st_a[3]
            last_b = st_b[3]
            if (last_a is not None and at < last_a) or (last_b is not None and at < last_b):
                return False
            a_before = a_used = st_a[0]
            b_before = b_used = st_b[0]
            if decay is not None:
                if last_a is not None and last_a != at:
                    periods = periods_of((at - last_a).total_seconds() / 86400.0)
                    if periods > 0:
                        a_used = decay(a_before, periods)
                if last_b is not None and last_b != at:
                    periods = periods_of((at - last_b).total_seconds() / 86400.0)
                    if periods > 0:
                        b_used = decay(b_before, periods)
            p = expect(a_used, b_used)
            if not 0.0 <= p <= 1.0:
                raise PluginError(
                    f"expectation plugin returned a probability outside [0, 1]: {[p, 1.0 - p]!r}"
                )
            s = 1.0 if sa > sb else 0.0 if sa < sb else 0.5
            games_a = st_a[2]
            games_b = st_b[2]
            fa: dict[str, float] = {}
            fb: dict[str, float] = {}
            a_after = update(a_used, b_used, s, games_a, fa)
            b_after = update(b_used, a_used, 1.0 - s, games_b, fb)
            ra_before = ra_after = st_a[1]
            rb_before = rb_after = st_b[1]
            if rank is not None:
                ra_after = rank(ra_before, a_used, a_after, b_used, s, p, games_a, fa)
                rb_after = rank(rb_before, b_used, b_after, a_used, 1.0 - s, 1.0 - p, games_b, fb)
            states[a] = [a_after, ra_after, games_a + 1, at]
            states[b] = [b_after, rb_after, games_b + 1, at]
            add_seen(mid)
            # factors as (shared names, values); factors equal to the last ones share them
            ka: tuple[Any, ...]
            va: tuple[Any, ...]
            kb: tuple[Any, ...]
            vb: tuple[Any, ...]
            if not fa:
                ka = va = ()
            elif fa == last[0]:
                ka, va = last[1], last[2]
            else:
                ka = tuple(fa)
                ka = names_of(ka, ka)
                va = tuple(fa.values())
                last[:] = fa, ka, va
            if not fb:
                kb = vb = ()
            elif fb == last[0]:
                kb, vb = last[1], last[2]
            else:
                kb = tuple(fb)
                kb = names_of(kb, kb)
                vb = tuple(fb.values())
                last[:] = fb, kb, vb
            add_pending(
                new_entry(
                    entry_class,
                    (
                        self,
                        mid,
                        at,
                        a,
                        b,
                        sa,
                        sb,
                        meta,
                        p,
                        a_before,
                        a_used,
                        a_after,
                        b_before,
                        b_used,
                        b_after,
                        ra_before,
                        ra_after,
                        rb_before,
                        rb_after,
                        ka,
                        va,
                        kb,
                        vb,
                        secs,
                    ),
                )
            )
            return True

        return run
