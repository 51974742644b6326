"""What the SQLite and PostgreSQL stores share: the tables, the statements, the codec.

Layout (schema version 7; :mod:`rankcraft.store.migrations` builds and migrates it)::

    meta(key, value)                      schema_version, ruleset_name, ruleset_toml, ...
    players(id, skill, rank, matches, last_played, open, tier, sort_key)
                                          skill/rank/open as JSON objects; sort_key: the
                                          leaderboard's key, indexed with id
    matches(seq, id, played_at, match, report)           match as a JSON object; report
                                          packed (rankcraft.rated.ReportPacker: doubles),
                                          or JSON text in rows older than version 6
    participants(bucket, player, seq)     index of who played which match; bucket:
                                          seq // PARTICIPANT_BUCKET (see migrations)
    schema_history(version, applied_at, rankcraft, summary)   one row per version applied
    api_tokens(name, key, digest, scope, created_at)     rankcraft.tokens: digests only

Statements are written with ``?`` placeholders; a dialect turns them into its driver's.
Each batch of matches is one transaction; the engine rolls a failed batch back whole.

A dialect whose writers run in parallel (``parallel_writers``: PostgreSQL) also offers
``begin_shared`` and ``lock_players``, for one-match transactions that lock only their
players; SQLite has one writer at a time.
"""

from __future__ import annotations

import contextlib
import json
from bisect import bisect_left
from collections.abc import Collection, Iterable, Iterator, Sequence
from datetime import datetime
from typing import Any

from ..errors import DuplicateMatchError, StateError
from ..io import parse_match, parse_time
from ..model import PlayerRecord, PlayerScope, fold_ascii, format_time
from .base import Codec, Entry, MatchRow, compact_json
from .migrations import PARTICIPANT_BUCKET, SCHEMA_VERSION, Dialect, upgrade

WALKED_ROWS = 10_000
"""The most players :meth:`SQLStore.count_below` passes along the key index (reading
their rows: about 15 ms) to count the keys near the top without a read of them all."""
COUNTED_KEYS = 200
"""The most distinct keys :meth:`SQLStore.count_below` counts in SQL, one ``FILTER``
each, in one read; past that it reads the players' keys and counts them itself."""
_PLAYER_COLUMNS = "id, skill, rank, matches, last_played, open"
_CAPITALS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
_TO_CAPITALS = str.maketrans(_CAPITALS.lower(), _CAPITALS)

_UPSERT_PLAYERS = (
    "INSERT INTO players "
    "(id, skill, rank, matches, last_played, open, sort_key, tier, last_epoch) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) "
    "ON CONFLICT (id) DO UPDATE SET skill = excluded.skill, rank = excluded.rank, "
    "matches = excluded.matches, last_played = excluded.last_played, "
    "open = excluded.open, sort_key = excluded.sort_key, tier = excluded.tier, "
    "last_epoch = excluded.last_epoch"
)
_INSERT_MATCH = "INSERT INTO matches (seq, id, played_at, match, report) VALUES (?, ?, ?, ?, ?)"
_INSERT_PARTICIPANT = "INSERT INTO participants (bucket, player, seq) VALUES (?, ?, ?)"

_SORT_KEY_META = "sort_key"
"""meta key naming the function the kept ``players.sort_key`` values were computed by."""


def _after(prefix: str) -> str | None:
    """The least text after every text that starts with ``prefix`` (code-point order,
    never a surrogate), or None when there is none (``prefix`` is all U+10FFFF)."""
    while prefix:
        last = ord(prefix[-1])
        if last != 0x10FFFF:
            return prefix[:-1] + chr(0xE000 if last == 0xD7FF else last + 1)
        prefix = prefix[:-1]
    return None


def _capitals(text: str) -> str:
    """``text`` with its ASCII small letters a-z made capitals, every other character kept."""
    return text.translate(_TO_CAPITALS)


_FILL_EVERY = 5000
"""Players whose sort key is computed again per statement when a league is opened."""


def _epoch(record: PlayerRecord) -> float | None:
    """A record's last match time in seconds since 1970 (UTC), or None."""
    last = record.last_played
    return None if last is None else last.timestamp()


def _board_ranges(
    above: tuple[float, str] | None, below: tuple[float, str], ids: str
) -> list[tuple[list[str], list[Any]]]:
    """The players from ``above`` (a board position, (key, id): counted; None: the
    top) down to just before ``below``, as conditions that are each one range of the
    ``players_by_key`` index (key descending, then ``ids`` ascending), so that a count
    seeks within a key shared by many players instead of reading all of them."""
    key, pid = below
    if above is None:
        return [(["sort_key > ?"], [key]), (["sort_key = ?", f"{ids} < ?"], [key, pid])]
    top, first = above
    if top == key:
        return [(["sort_key = ?", f"{ids} >= ?", f"{ids} < ?"], [key, first, pid])]
    return [
        (["sort_key = ?", f"{ids} >= ?"], [top, first]),
        (["sort_key < ?", "sort_key > ?"], [top, key]),
        (["sort_key = ?", f"{ids} < ?"], [key, pid]),
    ]


class SQLStore:
    """A store in SQL tables; subclasses give the connection and the dialect.

    :param label: how messages name the database (a path or a URL without password).
    """

    label: str
    dialect: Dialect
    parallel_writers = False
    _read_begin: str
    """The statement that starts a read transaction (:meth:`reading`)."""
    shared = True
    _db: Any
    _new: bool
    _codec: Codec | None
    _next_seq: int

    # -- the dialect --------------------------------------------------------------------

    def _execute(self, sql: str, params: Sequence[Any] = ()) -> Any:
        raise NotImplementedError

    def _executemany(self, sql: str, rows: list[tuple[Any, ...]]) -> None:
        raise NotImplementedError

    def _begin_write(self) -> None:
        """Start a transaction that holds the league's writer lock."""
        raise NotImplementedError

    def _in_transaction(self) -> bool:
        raise NotImplementedError

    def _prepare_new(self) -> None:
        """Dialect settings for a new database (before its schema is created)."""

    def _has_meta(self) -> bool:
        """Whether the league's ``meta`` table exists (a league has been made here)."""
        raise NotImplementedError

    def _take_seqs(self, n: int) -> list[int]:
        """``n`` increasing commit-order numbers for new matches (inside a write)."""
        first = self._next_seq
        self._next_seq = first + n
        return list(range(first, first + n))

    def _decode(self, row: Sequence[Any]) -> PlayerRecord:
        pid, skill, rank, matches, last, open_ = row
        data = {
            "id": pid,
            "skill": json.loads(skill),
            "rank": None if rank is None else json.loads(rank),
            "matches": matches,
            "last_played": last,
        }
        if open_ is not None:
            data["open"] = json.loads(open_)
        return self.codec.record_from_dict(data)

    def _check_version(self) -> None:
        """Refuse a database of an unknown or newer layout; migrate an older one."""
        found = self._version()
        if found == SCHEMA_VERSION:
            return
        from .. import __version__

        self._begin_write()
        try:
            found = self._version()  # another process may have migrated it meanwhile
            if found < SCHEMA_VERSION:
                upgrade(self._execute, self.dialect, found, __version__)
            self._execute("COMMIT")
        except BaseException:
            self._undo()
            self.close()
            raise

    def _undo(self) -> None:
        """Roll back the transaction that failed, unless the database already did: SQLite
        rolls back by itself on a full disk or an I/O error, and a ROLLBACK then would
        fail ("no transaction is active") in place of the error that says what happened."""
        if self._in_transaction():
            self._execute("ROLLBACK")

    def _version(self) -> int:
        text = self._meta("schema_version")
        try:
            version = int(text or "")
        except ValueError:
            version = 0
        if version > SCHEMA_VERSION:
            self.close()
            raise StateError(
                f"{self.label!r} has rankcraft schema version {version}, written by a newer "
                f"rankcraft; this one reads versions up to {SCHEMA_VERSION}: upgrade rankcraft"
            )
        if version < 1:
            self.close()
            raise StateError(
                f"{self.label!r} has rankcraft schema version {text!r}, which no rankcraft "
                f"wrote; it is not read (versions 1 to {SCHEMA_VERSION} are)"
            )
        return version

    # -- shared ---------------------------------------------------------------------------

    def _meta(self, key: str) -> str | None:
        row = self._execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    @property
    def codec(self) -> Codec:
        assert self._codec is not None, "attach() first"
        return self._codec

    def attach(self, ruleset_name: str, ruleset_toml: str, codec: Codec) -> tuple[str, str] | None:
        self._codec = codec
        if self._new:
            self._prepare_new()
            from .. import __version__

            self._begin_write()
            if self._has_meta():  # (another process made the league since this one looked)
                self._execute("ROLLBACK")
                self._new = False
                self._check_version()
                return self.attach(ruleset_name, ruleset_toml, codec)
            try:
                upgrade(self._execute, self.dialect, None, __version__)
                self._executemany(
                    "INSERT INTO meta (key, value) VALUES (?, ?)",
                    [
                        ("ruleset_name", ruleset_name),
                        ("ruleset_toml", ruleset_toml),
                        ("created_with", __version__),
                        (_SORT_KEY_META, codec.sort_key_name),
                    ],
                )
                self._execute("COMMIT")
            except BaseException:
                self._undo()
                raise
            self._new = False
            return None
        row = self._execute("SELECT max(seq) FROM matches").fetchone()
        self._next_seq = (row[0] or 0) + 1
        if self._meta(_SORT_KEY_META) != codec.sort_key_name:
            self._fill_sort_keys()
        return (self._meta("ruleset_name") or "", self._meta("ruleset_toml") or "")

    def _fill_sort_keys(self) -> None:
        """Compute every player's ``sort_key`` and ``tier`` again (a database migrated
        from before schema 5, or kept under another key function): once, under the
        writer lock. A store opened read-only leaves them and sorts in SQL by what is
        kept (the league then orders as when they were written)."""
        if getattr(self, "read_only", False):
            return
        codec = self.codec
        self._begin_write()
        try:
            if self._meta(_SORT_KEY_META) != codec.sort_key_name:  # (another process?)
                decode, key, tier = self._decode, codec.sort_key, codec.tier
                after = ""
                while rows := self._execute(
                    f"SELECT {_PLAYER_COLUMNS} FROM players WHERE {self._id_order()} > ? "
                    f"AND matches >= 0 ORDER BY {self._id_order()} LIMIT {_FILL_EVERY}",
                    (after,),
                ).fetchall():
                    records = [decode(row) for row in rows]
                    self._update_keys([(key(r), tier(r), _epoch(r), r.id) for r in records])
                    after = records[-1].id
                self.set_meta(_SORT_KEY_META, codec.sort_key_name)
            self._execute("COMMIT")
        except BaseException:
            self.rollback()
            raise

    def _update_keys(self, rows: list[tuple[Any, ...]]) -> None:
        self._executemany(
            "UPDATE players SET sort_key = ?, tier = ?, last_epoch = ? WHERE id = ?", rows
        )

    def stored_ruleset(self) -> tuple[str, str] | None:
        """(name, toml) of the ruleset the database was created with, or None if new."""
        if self._new:
            return None
        return (self._meta("ruleset_name") or "", self._meta("ruleset_toml") or "")

    def load_players(self) -> dict[str, PlayerRecord]:
        decode = self._decode
        return {
            row[0]: decode(row) for row in self._execute(f"SELECT {_PLAYER_COLUMNS} FROM players")
        }

    def load_player(self, player: str) -> PlayerRecord | None:
        """One player's stored record, or None."""
        row = self._execute(
            f"SELECT {_PLAYER_COLUMNS} FROM players WHERE id = ?", (player,)
        ).fetchone()
        return None if row is None else self._decode(row)

    def _in_list(self, column: str, ids: Collection[str | int]) -> tuple[str, Any]:
        """A condition ``column`` is one of ``ids``, with its one parameter."""
        if self.dialect == "postgres":
            return f"{column} = ANY(?)", list(ids)
        # one parameter whatever the number of ids: a JSON array
        return f"{column} IN (SELECT value FROM json_each(?))", compact_json(list(ids))

    def load_many(self, players: Collection[str]) -> dict[str, PlayerRecord]:
        """The stored records of those of ``players`` the database has, in one query."""
        if not players:
            return {}
        condition, arg = self._in_list("id", players)
        decode = self._decode
        return {
            row[0]: decode(row)
            for row in self._execute(
                f"SELECT {_PLAYER_COLUMNS} FROM players WHERE {condition} AND matches >= 0",
                (arg,),
            )
        }

    def load_where(self, scope: PlayerScope) -> dict[str, PlayerRecord]:
        """The records of the players in ``scope``, in one query: each condition reads an
        indexed column (``last_epoch``, ``sort_key``) or ``tier``."""
        played_since, sort_key_from, tiers = scope.played_since, scope.sort_key_from, scope.tiers
        conditions: list[str] = []
        args: list[Any] = []
        if played_since is not None:
            conditions.append("last_epoch >= ?")
            args.append(played_since.timestamp())
        if sort_key_from is not None:
            conditions.append("sort_key >= ?")
            args.append(sort_key_from)
        if tiers:
            condition, arg = self._in_list("tier", tiers)
            conditions.append(condition)
            args.append(arg)
        if not conditions:
            return {}
        decode = self._decode
        return {
            row[0]: decode(row)
            for row in self._execute(
                f"SELECT {_PLAYER_COLUMNS} FROM players WHERE ({' OR '.join(conditions)}) "
                "AND matches >= 0",
                args,
            )
        }

    def count_players(self) -> int:
        return int(self._execute("SELECT count(*) FROM players WHERE matches >= 0").fetchone()[0])

    def _id_order(self) -> str:
        # Python's str order is by code point: PostgreSQL's "C" collation, SQLite's BINARY
        return 'id COLLATE "C"' if self.dialect == "postgres" else "id"

    def _holding(self, text: str, prefix: bool = False) -> tuple[str, str]:
        """A condition: the id holds ``text`` (starts with it: ``prefix``), ASCII letters
        in either case (:func:`rankcraft.model.id_holds`); with its one parameter."""
        escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        pattern = f"{escaped}%" if prefix else f"%{escaped}%"
        if self.dialect == "postgres":  # (lower() and ILIKE fold more than ASCII)
            return f"translate(id, '{_CAPITALS}', '{_CAPITALS.lower()}') LIKE ? ESCAPE '\\'", (
                fold_ascii(pattern)
            )
        return "id LIKE ? ESCAPE '\\'", pattern  # (SQLite's LIKE folds ASCII alone)

    def _board(
        self,
        since: datetime | None,
        tier: str | None,
        holding: str | None = None,
        time: str = "last_epoch",
    ) -> tuple[list[str], list[Any]]:
        """The leaderboard's conditions (ANDed) and their parameters; ``time``: how the
        condition names the time column (``+last_epoch`` keeps SQLite off its index)."""
        # (PostgreSQL: a one-match transaction's placeholder rows have no key; a condition
        # on the index's own column keeps the skipped places an index-only scan)
        where = ["sort_key IS NOT NULL"] if self.dialect == "postgres" else []
        args: list[Any] = []
        if since is not None:
            where.append(f"{time} >= ?")
            args.append(since.timestamp())
        if tier is not None:
            where.append("tier = ?")
            args.append(tier)
        if holding:
            condition, pattern = self._holding(holding)
            where.append(condition)
            args.append(pattern)
        return where, args

    def leaderboard(
        self,
        limit: int | None,
        offset: int = 0,
        since: datetime | None = None,
        tier: str | None = None,
        holding: str | None = None,
    ) -> list[PlayerRecord]:
        """A page of the leaderboard, read along the ``players_by_key`` index: the page's
        ids first (the places skipped are read from the index alone; ``holding`` is
        checked on the index's ids), then their rows."""
        where, args = self._board(since, tier, holding)
        order = f"ORDER BY sort_key DESC, {self._id_order()}"
        condition = f"WHERE {' AND '.join(where)} " if where else ""
        if limit is None and not offset:
            sql = f"SELECT {_PLAYER_COLUMNS} FROM players {condition}{order}"
        else:
            sql = (
                f"SELECT {_PLAYER_COLUMNS} FROM players WHERE id IN (SELECT id FROM players "
                f"{condition}{order} LIMIT ? OFFSET ?) {order}"
            )
            args += [-1 if limit is None and self.dialect == "sqlite" else limit, offset]
        decode = self._decode
        return [decode(row) for row in self._execute(sql, args)]

    def places(
        self,
        records: Sequence[PlayerRecord],
        since: datetime | None = None,
        tier: str | None = None,
    ) -> list[int]:
        """Each record's place - 1 on the board of ``since`` and ``tier``: the players
        ahead of it, ``records`` in board order. Counted along the ``players_by_key``
        index, each count starting where the last one ended (one pass down to the last
        record; with ``since``, reading each passed player's row for its time); or, with
        ``since`` when fewer players are active than would be passed, the active
        players' keys read once along the time index and counted here."""
        if not records:
            return []
        key, ids = self.codec.sort_key, self._id_order()
        along_time = since is not None and self._fewer_active(since, key(records[-1]))
        # (else the count walks the key index between two places and reads each row's
        # time there, instead of every active player's along the time index: '+' says so)
        where, args = self._board(since, tier, time="last_epoch" if along_time else "+last_epoch")
        if along_time:
            sql = f"SELECT sort_key, id FROM players WHERE {' AND '.join(where)} AND sort_key >= ?"
            board = sorted((-k, i) for k, i in self._execute(sql, [*args, key(records[-1])]))
            return [bisect_left(board, (-key(r), r.id)) for r in records]
        counted, above = 0, None
        places = []
        for record in records:
            here = (key(record), record.id)
            for between, bounds in _board_ranges(above, here, ids):
                sql = f"SELECT count(*) FROM players WHERE {' AND '.join(where + between)}"
                counted += int(self._execute(sql, [*args, *bounds]).fetchone()[0])
            places.append(counted)
            above = here
        return places

    def _fewer_active(self, since: datetime, lowest: float) -> bool:
        """Whether fewer players played since ``since`` than have a key of at least
        ``lowest`` (two counts, each along its own index without reading rows)."""
        active, passed = (
            self._execute(sql, (value,)).fetchone()[0]
            for sql, value in (
                ("SELECT count(*) FROM players WHERE last_epoch >= ?", since.timestamp()),
                ("SELECT count(*) FROM players WHERE sort_key >= ?", lowest),
            )
        )
        return int(active) < int(passed)

    def count_below(
        self, keys: Sequence[float], since: datetime | None, matches_from: int
    ) -> tuple[int, list[int]]:
        """The players who played at or after ``since`` with at least ``matches_from``
        matches, and for each key those of them below it. The total is one read of
        those players' rows (with ``since``: along the time index when few are active,
        else a scan of the table, :meth:`_time_column`). Keys near the top (at most
        :data:`WALKED_ROWS` players at or above the lowest) are counted along
        ``players_by_key`` from the top, each count a slice between two keys reading the
        passed players' rows; others in the total's read (``count(*) FILTER``, one per
        distinct key; past :data:`COUNTED_KEYS` keys, the keys read and bisected here)."""
        where, args = self._counted(since, matches_from, self._time_column(since))
        players = f"FROM players WHERE {' AND '.join(where)}"
        distinct = sorted(set(keys))
        if len(distinct) > COUNTED_KEYS:
            board = sorted(k for (k,) in self._execute(f"SELECT sort_key {players}", args))
            return len(board), [bisect_left(board, k) for k in keys]
        if distinct and self._near_top(distinct[0]):
            total = int(self._execute(f"SELECT count(*) {players}", args).fetchone()[0])
            # (the walk reads each passed player's time from its row, off the time index)
            at_least = self._walk_down(distinct, *self._counted(since, matches_from, "+last_epoch"))
            return total, [total - at_least[k] for k in keys]
        counts = ["count(*)"] + ["count(*) FILTER (WHERE sort_key < ?)"] * len(distinct)
        sql = f"SELECT {', '.join(counts)} {players}"
        total, *below = self._execute(sql, distinct + args).fetchone()
        of_key = dict(zip(distinct, below, strict=True))
        return int(total), [int(of_key[k]) for k in keys]

    def _near_top(self, key: float) -> bool:
        """Whether at most :data:`WALKED_ROWS` players have a key of ``key`` or more (an
        index-only count that stops past that)."""
        sql = "SELECT count(*) FROM (SELECT 1 FROM players WHERE sort_key >= ? LIMIT ?) AS top"
        return int(self._execute(sql, (key, WALKED_ROWS + 1)).fetchone()[0]) <= WALKED_ROWS

    def _walk_down(self, keys: list[float], where: list[str], args: list[Any]) -> dict[float, int]:
        """For each of ``keys`` (ascending), the players of ``where`` with at least that
        key, counted along ``players_by_key`` from the highest key down."""
        at_least: dict[float, int] = {}
        counted, above = 0, None
        for key in reversed(keys):
            between, bounds = ["sort_key >= ?"], [key]
            if above is not None:
                between.append("sort_key < ?")
                bounds.append(above)
            sql = f"SELECT count(*) FROM players WHERE {' AND '.join(where + between)}"
            counted += int(self._execute(sql, args + bounds).fetchone()[0])
            at_least[key], above = counted, key
        return at_least

    def active_keys(self, since: datetime, until: datetime) -> list[tuple[str, float]]:
        """Ids and keys of the players whose last match is in [``since``, ``until``], read
        along the time index when they are few, else by a scan (:meth:`_time_column`)."""
        time = self._time_column(since)
        sql = f"SELECT id, sort_key FROM players WHERE {time} >= ? AND {time} <= ? AND matches >= 0"
        return [
            (pid, float(k)) for pid, k in self._execute(sql, (since.timestamp(), until.timestamp()))
        ]

    def rank_documents(self) -> Iterator[tuple[str, Any]]:
        """Each player's rank column, parsed from its JSON and nothing more (about 3 us
        a row, where a record costs 11 or more)."""
        sql = "SELECT id, rank FROM players WHERE rank IS NOT NULL AND matches >= 0"
        for pid, rank in self._execute(sql):
            yield pid, json.loads(rank)

    def tiers(self) -> list[str]:
        """Each tier's best key in one grouped read of the tier column (a scan of the
        table); tiers whose best keys are equal are ordered by the first id, in board
        order, that holds that key in that tier."""
        sql = (
            "SELECT tier, max(sort_key) FROM players WHERE tier IS NOT NULL AND matches >= 0 "
            "GROUP BY tier"
        )
        best = {tier: float(key) for tier, key in self._execute(sql)}
        keys = list(best.values())
        first = f"SELECT min({self._id_order()}) FROM players WHERE tier = ? AND sort_key = ?"

        def first_id(tier: str) -> str:
            if keys.count(best[tier]) == 1:
                return ""
            return str(self._execute(first, (tier, best[tier])).fetchone()[0])

        return sorted(best, key=lambda t: (-best[t], first_id(t)))

    @staticmethod
    def _counted(
        since: datetime | None, matches_from: int, time: str
    ) -> tuple[list[str], list[Any]]:
        """The conditions of :meth:`count_below`'s players and their parameters; ``time``:
        how they name the time column."""
        where: list[str] = ["matches >= ?"]
        args: list[Any] = [matches_from]
        if since is not None:
            where.append(f"{time} >= ?")
            args.append(since.timestamp())
        return where, args

    def _time_column(self, since: datetime | None) -> str:
        """How a read of the players who played since ``since`` names the time column:
        SQLite reads them along its index when they are fewer than a twentieth of the
        players (a row found through an index cost about 20 rows of a scan: 1.5 us
        against 0.07 on 864,605 players), else scans the table (``+last_epoch``: off
        the index); PostgreSQL's planner, which keeps statistics, chooses for itself."""
        if self.dialect != "sqlite" or since is None:
            return "last_epoch"
        active, players = (
            int(self._execute(sql, args).fetchone()[0])
            for sql, args in (
                ("SELECT count(*) FROM players WHERE last_epoch >= ?", (since.timestamp(),)),
                ("SELECT count(*) FROM players", ()),
            )
        )
        return "last_epoch" if active * 20 < players else "+last_epoch"

    @contextlib.contextmanager
    def reading(self) -> Iterator[None]:
        """The reads inside see one committed state of the league, whatever other
        processes commit meanwhile: a read transaction (SQLite: a snapshot of its WAL
        from the first read; PostgreSQL: ``REPEATABLE READ, READ ONLY``). Inside an
        open transaction, that transaction's own state."""
        if self._in_transaction():
            yield
            return
        self._execute(self._read_begin)
        try:
            yield
        finally:
            if self._in_transaction():
                self._execute("COMMIT")

    def search(self, text: str, limit: int) -> list[str]:
        """Up to ``limit`` ids that start with ``text``, then those that hold it, each
        in id order (ASCII letters in either case), read along an index of the ids in
        that order and stopping at ``limit``: SQLite's primary key; on PostgreSQL, whose
        primary key has the database's collation, ``players_by_id`` (schema 7)."""
        players, _ = self._board(None, None)
        starts, first = self._holding(text, prefix=True)
        holds, anywhere = self._holding(text)
        holding = ([holds, f"NOT {starts}"], [anywhere, first])
        found: list[str] = []
        for where, args in [*self._prefix_ranges(text, starts, first), holding]:
            if len(found) < limit:
                sql = (
                    f"SELECT id FROM players WHERE {' AND '.join(players + where)} "
                    f"ORDER BY {self._id_order()} LIMIT ?"
                )
                found += [row[0] for row in self._execute(sql, [*args, limit - len(found)])]
        return found

    def _prefix_ranges(
        self, text: str, starts: str, first: str
    ) -> list[tuple[list[str], list[Any]]]:
        """The conditions (and parameters) of the ids that start with ``text``, as index
        ranges in id order: one per case of its first character (capitals sort first),
        each from the smallest case of the rest to the code point after its largest."""
        ids = self._id_order()
        head, rest = text[0], text[1:]
        ranges = []
        for case in dict.fromkeys((_capitals(head), fold_ascii(head))):
            low, high = case + _capitals(rest), case + fold_ascii(rest)
            where, args = [starts, f"{ids} >= ?"], [first, low]
            if (after := _after(high)) is not None:
                where.append(f"{ids} < ?")
                args.append(after)
            ranges.append((where, args))
        return ranges

    def latest_played(self) -> datetime | None:
        """The latest ``last_played`` of any player (along the ``last_epoch`` index)."""
        row = self._execute(
            "SELECT last_played FROM players WHERE last_epoch = "
            "(SELECT max(last_epoch) FROM players) LIMIT 1"  # (placeholders have none)
        ).fetchone()
        return None if row is None or row[0] is None else parse_time(row[0], field="last_played")

    def recorded(self, ids: Collection[str]) -> set[str]:
        if not ids:
            return set()
        condition, arg = self._in_list("id", ids)
        return {r[0] for r in self._execute(f"SELECT id FROM matches WHERE {condition}", (arg,))}

    def count_matches(self) -> int:
        return int(self._execute("SELECT count(*) FROM matches").fetchone()[0])

    def begin(self) -> None:
        self._begin_write()
        row = self._execute("SELECT max(seq) FROM matches").fetchone()
        self._next_seq = (row[0] or 0) + 1

    def begin_shared(self) -> None:
        """One match in SQLite: the writer lock alone, as :meth:`begin` (this class's:
        a store's league-wide settings, such as SQLite's batch page cache, stay out)."""
        SQLStore.begin(self)

    def lock_players(
        self, players: list[str], match_id: str | None = None
    ) -> dict[str, PlayerRecord]:
        """The committed records of ``players`` (the writer lock holds them already)."""
        if match_id is not None and self.recorded((match_id,)):
            raise DuplicateMatchError(
                f"match id {match_id!r} is already recorded", match_id=match_id
            )
        return {p: r for p in players if (r := self.load_player(p)) is not None}

    def generation(self) -> int:
        """How many batches were ever committed (read inside a transaction)."""
        value = self._meta("generation")
        return 0 if value is None else int(value)

    def bump_generation(self) -> int:
        """Count this batch (inside its transaction); returns the new generation."""
        new = self.generation() + 1
        self.set_meta("generation", str(new))
        return new

    def write(self, players: Iterable[PlayerRecord], matches: Iterable[Entry]) -> None:
        self._write_players(players)
        entries = matches if isinstance(matches, list) else list(matches)
        if entries:
            self._write_matches(entries)

    def _write_players(self, players: Iterable[PlayerRecord]) -> None:
        codec = self.codec
        texts, key, tier = codec.record_texts, codec.sort_key, codec.tier
        rows = []
        for record in players:
            skill, rank, last_played, open_ = texts(record)
            rows.append(
                (
                    record.id,
                    skill,
                    rank,
                    record.matches,
                    last_played,
                    open_,
                    key(record),
                    tier(record),
                    _epoch(record),
                )
            )
        if rows:
            rows.sort()  # (in key order: each page of the table is visited once)
            self._executemany(_UPSERT_PLAYERS, rows)

    def _write_matches(self, entries: list[Entry]) -> None:
        """The rows of ``entries`` (their match and participants rows), numbered by
        :meth:`_take_seqs`."""
        match_rows = []
        part_rows = []
        entry_row = self.codec.entry_row
        for seq, entry in zip(self._take_seqs(len(entries)), entries, strict=True):
            match_text, report = entry_row(entry)
            match = entry.match
            match_rows.append((seq, match.id, format_time(match.played_at), match_text, report))
            bucket = seq // PARTICIPANT_BUCKET
            part_rows += [(bucket, player, seq) for side in match.teams for player in side]
        self._insert_matches(match_rows)
        self._insert_participants(part_rows)

    @staticmethod
    def _bucket_size() -> int:
        """:data:`PARTICIPANT_BUCKET` as this module reads it (a test shrinks it here)."""
        return PARTICIPANT_BUCKET

    def _insert_participants(self, rows: list[tuple[Any, ...]]) -> None:
        rows.sort()  # (in key order: each page of the tree is visited once)
        self._executemany(_INSERT_PARTICIPANT, rows)

    def _insert_matches(self, rows: list[tuple[Any, ...]]) -> None:
        self._executemany(_INSERT_MATCH, rows)

    def commit(self) -> None:
        self._execute("COMMIT")

    def rollback(self) -> None:
        if self._in_transaction():
            self._execute("ROLLBACK")

    def _row(self, seq: int, match_text: str, report: str | bytes) -> MatchRow:
        match = parse_match(json.loads(match_text))
        return MatchRow(seq=seq, match=match, report=self.codec.report_of(match, report))

    def player_matches(self, player: str, limit: int | None) -> list[MatchRow]:
        """The player's matches, newest first: one seek of the participants index per
        bucket (:data:`~rankcraft.store.migrations.PARTICIPANT_BUCKET`), the player's
        seqs sorted and cut to ``limit`` before any match row is read (a player with
        many matches costs a sort of their index entries, not a read of every match)."""
        last = self._execute("SELECT max(seq) FROM matches").fetchone()[0]
        if last is None:
            return []
        buckets, arg = self._in_list("bucket", list(range(last // PARTICIPANT_BUCKET + 1)))
        newest = f"SELECT seq FROM participants WHERE {buckets} AND player = ? ORDER BY seq DESC"
        args: tuple[Any, ...] = (arg, player)
        if limit is not None:
            newest += " LIMIT ?"
            args = (*args, limit)
        sql = (
            f"SELECT m.seq, m.match, m.report FROM ({newest}) p JOIN matches m ON m.seq = p.seq "
            "ORDER BY p.seq DESC"
        )
        return [self._row(*r) for r in self._execute(sql, args)]

    def match(self, match_id: str) -> MatchRow | None:
        row = self._execute(
            "SELECT seq, match, report FROM matches WHERE id = ?", (match_id,)
        ).fetchone()
        return None if row is None else self._row(*row)

    def get_meta(self, key: str) -> str | None:
        return None if self._new else self._meta(key)

    def set_meta(self, key: str, value: str) -> None:
        self._execute(
            "INSERT INTO meta (key, value) VALUES (?, ?) "
            "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            (key, value),
        )

    # -- API tokens (rankcraft.tokens): single statements, each its own transaction ------

    def add_token(self, name: str, key: str, digest: str, scope: str, created_at: str) -> bool:
        """Keep a token's digest; False when ``name`` is taken."""
        cursor = self._execute(
            "INSERT INTO api_tokens (name, key, digest, scope, created_at) "
            "VALUES (?, ?, ?, ?, ?) ON CONFLICT (name) DO NOTHING",
            (name, key, digest, scope, created_at),
        )
        return bool(cursor.rowcount == 1)

    def token_rows(self) -> list[tuple[str, str, str, str]]:
        """(name, key, scope, created_at) of every token, by name."""
        rows = self._execute(
            "SELECT name, key, scope, created_at FROM api_tokens ORDER BY name"
        ).fetchall()
        return [tuple(r) for r in rows]

    def token_by_key(self, key: str) -> tuple[str, str, str, str] | None:
        """(name, digest, scope, created_at) of the token with public ``key``, or None."""
        row = self._execute(
            "SELECT name, digest, scope, created_at FROM api_tokens WHERE key = ?", (key,)
        ).fetchone()
        return None if row is None else tuple(row)

    def remove_token(self, name: str) -> bool:
        """Forget the token ``name``; False when there is none."""
        return bool(self._execute("DELETE FROM api_tokens WHERE name = ?", (name,)).rowcount == 1)

    def close(self) -> None:
        self._db.close()
