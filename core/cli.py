"""The ``rankcraft`` command line (docs/cli.md).

Errors go to standard error; the exit status is 2 for bad input, 1 for anything else.
A command that fails on bad input leaves the database exactly as it was (and does not
create it).
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import itertools
import json
import math
import os
import re
import sys
import time
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TextIO

from . import __version__
from ._files import write_atomically
from .contract1 import FirstContractWarning
from .data import SAMPLE_RULESET, demo_matches_path, sample_matches_path
from .engine import League, UnknownPlayerError
from .errors import DuplicateMatchError, InputError, MatchError, RankcraftError, RulesetError
from .evaluate import SCORES
from .io import (
    MAX_FUTURE,
    MAX_PLAYERS,
    MAX_SECONDS_AHEAD,
    MAX_SIDES,
    over_limits,
    parse_time,
    read_match_dicts,
)
from .jsontext import finite, loads_strict
from .manager import PLUGINS_DIR_ENV, Plugins
from .model import Match, PlayerRecord, format_time
from .processes import can_fork, default_processes, run_each
from .ruleset import (
    ImportedRulesetWarning,
    RulesetMigrationWarning,
    bundled_names,
    dumps,
    load_ruleset,
    loads_stored_ruleset,
    to_dict,
)
from .store import Creation, SQLiteStore, creating, is_postgres_url, mask_url, open_store
from .suggest import did_you_mean, player_candidates
from .terminal import Bar, Steps, count_lines, plural, print_table, progress_for

if TYPE_CHECKING:
    from .evaluate import Difference, Evaluation

DEFAULT_DB = "rankcraft.sqlite"
DEMO_DB = "rankcraft-demo.sqlite"
DB_ENV = "RANKCRAFT_DB"


class _LineTracker:
    """The match dicts of a file, streamed, remembering the lines of the last ``window``
    handed out (the league reads a chunk ahead; its errors give the item's position).

    Dicts, not parsed matches: the league validates them itself, on its fused 1-v-1
    path when it can, and raises the same errors otherwise."""

    def __init__(
        self,
        path: str,
        home_from: str | None = None,
        window: int = 0,
        limits: tuple[int, int] = (MAX_SIDES, MAX_PLAYERS),
    ) -> None:
        self.path = path
        self.home_from = home_from
        self.limits = limits  # (most sides, most players) of a match
        self.count = 0  # items handed out
        self.homes = 0  # items naming a home side (for the home-advantage warning)
        self.lines: collections.deque[int] = collections.deque(maxlen=window + 10_000)

    def __iter__(self) -> Iterator[Any]:
        from .evaluate import with_home

        for number, data in read_match_dicts(self.path):
            if self.home_from and type(data) is dict:
                (data,) = with_home([data], self.home_from)
            if type(data) is dict:
                _within_limits(data, number, self.limits)
                if data.get("home") is not None:
                    self.homes += 1
            self.lines.append(number)
            self.count += 1
            yield data

    def line_of(self, item: int | None) -> int | None:
        """The line of the ``item``-th match handed out (0-based), if still remembered."""
        if item is None:
            return None
        index = item - (self.count - len(self.lines))
        return self.lines[index] if 0 <= index < len(self.lines) else None


def _within_limits(data: dict[str, Any], line: int, limits: tuple[int, int]) -> None:
    """Refuse a match of more sides or players than ``limits`` (``--max-sides``,
    ``--max-players``) before its work, which grows as sides²; the error names the line."""
    beyond = over_limits(data.get("teams"), "teams", *limits)
    if beyond is not None:
        mid = data.get("id")
        raise MatchError(beyond, match_id=mid if isinstance(mid, str) else None, line=line)


def _database_exists(db: str) -> bool:
    """Whether a league is already kept at ``db`` (a file path or a PostgreSQL URL)."""
    if not is_postgres_url(db):
        return Path(db).exists()
    try:
        League.open(db, create=False).close()
    except InputError:
        return False
    return True


def _db_path(args: argparse.Namespace) -> str:
    return str(args.db or os.environ.get(DB_ENV) or DEFAULT_DB)


def _skill_columns(league: League) -> list[str]:
    from .model import field_of_role

    cols = []
    for role in ("location", "spread"):
        name = field_of_role(league.skill_class, role)
        if name:
            cols.append(name)
    return cols


def _rank_columns(league: League) -> list[str]:
    from .model import field_of_role

    if league.rank_class is None:
        return []
    name = field_of_role(league.rank_class, "location")
    return [name] if name else []


def _record_json(league: League, record: PlayerRecord) -> dict[str, Any]:
    return league.codec.record_to_dict(record)


_print_table = print_table


def _leaderboard_rows(
    league: League, placed: Sequence[tuple[int, PlayerRecord]]
) -> tuple[list[str], list[list[str]]]:
    skill_cols = _skill_columns(league)
    rank_cols = _rank_columns(league)
    standings = league.standings(r.id for _, r in placed)
    extra = ["standing"] if league.has_standings else []
    # [display] conservative: the value the table is sorted by, beside the skill
    conservative = ["conservative"] if league.ruleset.display.conservative else []
    headers = [
        "#",
        "player",
        *extra,
        *rank_cols,
        *conservative,
        *skill_cols,
        "matches",
        "last played",
    ]
    rows = []
    for place, r in placed:
        rows.append(
            [
                str(place),
                r.id,
                *([standings.get(r.id, "-")] if extra else []),
                *(_num(getattr(r.rank, c)) for c in rank_cols),
                *([_num(league.shown(r).value or 0.0)] if conservative else []),
                *(_num(getattr(r.skill, c)) for c in skill_cols),
                str(r.matches),
                r.last_played.date().isoformat() if r.last_played else "-",
            ]
        )
    return headers, rows


def _num(value: float) -> str:
    """A state value for a table: 1 decimal for rating points, 3 for small scales."""
    if isinstance(value, int):
        return str(value)
    return f"{value:.3f}" if abs(value) < 100 else f"{value:.1f}"


def _emit_json(data: Any, out: TextIO) -> None:
    """Strict JSON (RFC 8259): a NaN or infinity is written as null."""
    out.write(json.dumps(finite(data), indent=2, ensure_ascii=False, allow_nan=False) + "\n")


def _did_you_mean_player(league: League, player: str) -> str:
    """:func:`did_you_mean` for an unknown player id (:func:`player_candidates`)."""
    return did_you_mean(player, player_candidates(league, player))


def _known_player(league: League, player: str) -> PlayerRecord:
    """The player's record; an unknown id is refused with the ids most like it."""
    if player in league:
        return league.player(player)
    raise UnknownPlayerError(f"unknown player {player!r}{_did_you_mean_player(league, player)}")


# -- commands ------------------------------------------------------------------------------


def _replay_into(
    league: League,
    path: str,
    *,
    skip_seen: bool,
    err: TextIO,
    home_from: str | None = None,
    commit_every: int = 0,
    creation: Creation | None = None,
    limits: tuple[int, int] = (MAX_SIDES, MAX_PLAYERS),
) -> dict[str, Any]:
    """Replay the file at ``path`` into ``league``; errors name the file's line.
    ``limits``: the most sides and players of a match (``--max-sides``, ``--max-players``)."""
    progress = Bar(err, "replaying", count_lines(path) if err.isatty() else None)
    if progress.enabled:  # a match long after the last one may make many events due
        league.catch_up_progress = progress.events
    started = time.perf_counter()
    source = _LineTracker(path, home_from, window=max(commit_every, 0), limits=limits)
    try:
        summary = league.record_many(
            source, skip_seen=skip_seen, progress=progress, commit_every=commit_every
        )
    except RankcraftError as exc:
        progress.done()
        if commit_every > 0:  # the chunks before the failing one are committed, and stay
            kept = exc.committed or 0  # what this replay committed, not other processes
            if kept and creation is not None:
                creation.keep_on_failure = True
            # a bad line is the user's to fix; a store's failure (a full disk, a lock) not
            went_on = (
                "fix the line and rerun with --skip-seen to go on"
                if isinstance(exc, InputError)
                else f"the database failed ({type(exc).__name__}, below), not the file: once "
                "it can be written again, rerun with --skip-seen to go on"
            )
            err.write(
                f"rankcraft: kept the {kept:,} matches this command committed before the "
                f"error; {went_on}\n"
                if kept
                else "rankcraft: kept no matches: the error came before the first commit\n"
            )
        if not isinstance(exc, MatchError):
            raise
        # the league's errors (bad match, repeated id, time going back) get the file's line
        line = source.line_of(exc.item)
        if exc.line is not None or line is None:
            raise
        raise exc.at_line(line) from None
    finally:
        progress.done()
        league.catch_up_progress = None
    seconds = time.perf_counter() - started
    _warn_home(league.ruleset, source.count, source.homes, path, err)
    return {
        "recorded": summary.recorded,
        "skipped": summary.skipped,
        "players": len(league),
        "matches": league.match_count,
        "seconds": round(seconds, 3),
    }


def _warn_home(ruleset: Any, matches: int, homes: int, path: str, err: TextIO) -> None:
    """Warn when the ruleset has a home advantage and no match named a home side."""
    from .advice import HomeSeen, home_warning

    seen = HomeSeen(())
    seen.matches, seen.with_home = matches, homes
    warning = home_warning(ruleset, seen, path)
    if warning is not None:
        err.write(f"rankcraft: warning: {warning}\n")


def _limits(args: argparse.Namespace) -> tuple[int, int]:
    """``--max-sides`` and ``--max-players``, checked as the service checks them."""
    for option, least in (("max_sides", 2), ("max_players", 1)):
        value = getattr(args, option)
        if not least <= value <= 1_000_000:
            raise InputError(
                f"'--{option.replace('_', '-')}' must be a whole number in "
                f"[{least}, 1000000]: {value}"
            )
    return args.max_sides, args.max_players


def _fitted_for_replay(
    args: argparse.Namespace, db: str, limits: tuple[int, int]
) -> tuple[Any, Any]:
    """The ruleset ``replay`` opens the league with, and the draw fit made first: a new
    league whose ruleset asks for its draw parameters to be fitted (docs/forecasts.md)
    gets them fitted on the whole file (each match held to ``limits`` before its work,
    errors naming their line); an existing one keeps the fitted ruleset it was made
    with, and refuses a ruleset of another name. From standard input (read once) the
    ruleset's own values are used."""
    from .drawfit import fit_draws, wants_fit

    if args.ruleset is None:
        return None, None
    ruleset = load_ruleset(args.ruleset)
    if not wants_fit(ruleset):
        return args.ruleset, None
    if _database_exists(db):  # the stored ruleset, fitted when the league was made
        with League.open(db) as league:
            stored = league.ruleset.name
        if stored != ruleset.name:
            raise InputError(
                f"'--ruleset' {ruleset.name!r} is not the league's ruleset {stored!r} ({db})"
            )
        return None, None
    if args.matches == "-":  # (read once: nothing to fit on first)
        return ruleset, None
    source = _LineTracker(args.matches, args.home_from, limits=limits)
    try:
        return fit_draws(ruleset, source, before="9999-12-31")
    except MatchError as exc:
        line = source.line_of(exc.item)
        if exc.line is not None or line is None:
            raise
        raise exc.at_line(line) from None


def cmd_replay(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    db = _db_path(args)
    limits = _limits(args)
    ruleset, fit = _fitted_for_replay(args, db, limits)
    if fit is not None:
        values = ", ".join(f"{k} {v:.4g}" for k, v in fit.values.items())
        err.write(
            f"draw parameters fitted on {plural(fit.matches, 'match')} "
            f"({fit.draws:,} draws): {values}\n"
        )
    with creating(db) as creation, League.open(creation.target, ruleset) as league:
        result = _replay_into(
            league,
            args.matches,
            skip_seen=args.skip_seen,
            err=err,
            home_from=args.home_from,
            commit_every=args.commit_every,
            creation=creation,
            limits=limits,
        )
    if args.json:
        extra = {} if fit is None else {"draw_fit": fit.to_dict()}
        _emit_json({**result, "db": mask_url(db), **extra}, out)
    else:
        out.write(
            f"recorded {plural(result['recorded'], 'match')}"
            + (f" (skipped {result['skipped']:,} already recorded)" if result["skipped"] else "")
            + f" in {result['seconds']:.1f} s into {mask_url(db)}: "
            f"{plural(result['players'], 'player')}, {plural(result['matches'], 'match')} in all\n"
        )
    return 0


def cmd_demo(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    _check_top(args.top)
    db = str(args.db or DEMO_DB)
    source = demo_matches_path()
    with creating(db) as creation, League.open(creation.target, "elo") as league:
        result = _replay_into(league, str(source), skip_seen=True, err=err)
    with League.open(db, create=False) as league:
        top = league.leaderboard(args.top)
        if args.json:
            _emit_json(
                {
                    **result,
                    "db": db,
                    "ruleset": league.ruleset.name,
                    "leaderboard": [_record_json(league, r) for r in top],
                },
                out,
            )
            return 0
        out.write(
            f"rankcraft demo: {result['matches']:,} international football matches "
            f"(1872-2026, CC0) rated with the 'elo' ruleset into {mask_url(db)}"
            + (f" ({result['recorded']:,} new)" if result["skipped"] else "")
            + "\n\n"
        )
        headers, rows = _leaderboard_rows(league, list(enumerate(top, 1)))
        _print_table(rows, headers, out)
    return 0


SAMPLE_FOLDER = "rankcraft-sample"
"""Where ``rankcraft sample`` writes when given no folder (made if missing): a folder of
its own, never the current one (which may be the repository's root)."""


def cmd_sample(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    folder = Path(args.folder)
    if not folder.is_dir():
        if folder.exists() or not folder.parent.is_dir():
            raise InputError(f"no folder {args.folder!r} to write the sample files into")
        folder.mkdir()
    files = {
        folder / "matches.jsonl.gz": sample_matches_path().read_bytes(),
        folder / "my-ruleset.toml": SAMPLE_RULESET.encode(),
    }
    present = [str(p) for p in files if p.exists()]
    if present and not args.force:
        raise InputError(f"{', '.join(present)} already there: --force writes over them")
    for path, data in files.items():
        path.write_bytes(data)
    if args.json:
        _emit_json({"written": [str(p) for p in files]}, out)
    else:
        go = "" if folder.resolve() == Path.cwd().resolve() else f"cd {folder} && "
        out.write(
            f"wrote {', '.join(str(p) for p in files)}: 120 made-up games of alice, bob, "
            f"carol, dan and four more (try: {go}rankcraft replay matches.jsonl.gz "
            "--ruleset elo --db league.sqlite)\n"
        )
    return 0


def _open_existing(args: argparse.Namespace, *, read_only: bool = False) -> League:
    """The league at ``--db``; ``read_only`` for commands that only read: an SQLite file is
    then opened read-only (``mode=ro``), so they work on a file or folder they cannot write."""
    db = _db_path(args)
    ruleset = getattr(args, "ruleset", None)
    if not read_only or is_postgres_url(db):
        return League.open(db, ruleset, create=False)
    # League.open with a read-only store (League.open itself takes no store)
    store = SQLiteStore(db, create=False, read_only=True)
    try:
        if ruleset is None:
            stored = store.stored_ruleset()
            if stored is None:
                raise InputError(f"no database at {db!r}")
            ruleset = loads_stored_ruleset(stored[1], source=f"the ruleset stored in {db!r}")
        return League(ruleset, store=store)
    except BaseException:
        store.close()
        raise


def _check_top(top: int | None) -> None:
    """Refuse a ``--top`` that is not a count of players (-3 listed all but 3, 0 none)."""
    if top is not None and top < 1:
        raise InputError(f"'--top' must be a whole number >= 1: {top}")


def cmd_leaderboard(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    _check_top(args.top)
    if args.offset < 0:
        raise InputError(f"'--offset' must be a whole number >= 0: {args.offset}")
    if args.active_days is not None and not args.active_days >= 0:
        raise InputError(f"'--active-days' must be a number of days >= 0: {args.active_days}")
    with _open_existing(args, read_only=True) as league:
        top = league.placed(
            args.top,
            offset=args.offset,
            active_days=args.active_days,
            tier=args.tier,
            everyone=args.all,
            holding=args.holding,
        )
        if args.tier is not None and not top:
            _check_tier(league, args.tier)
        if args.json:
            standings = league.standings(r.id for _, r in top)
            _emit_json(
                [
                    {
                        "place": place,
                        "standing": standings.get(r.id),
                        "display": league.shown(r).to_dict(),
                        **_record_json(league, r),
                    }
                    for place, r in top
                ],
                out,
            )
        else:
            headers, rows = _leaderboard_rows(league, top)
            _print_table(rows, headers, out)
    return 0


def _check_tier(league: League, tier: str) -> None:
    """Refuse a ``--tier`` no player holds (an empty table said nothing), naming the
    tiers the players hold, best first."""
    held = league.tiers()
    if tier in held:
        return
    if not held:
        raise InputError(
            f"unknown tier {tier!r}: the ruleset {league.ruleset.name!r} gives no player a tier"
        )
    raise InputError(
        f"unknown tier {tier!r}: no player holds it{did_you_mean(tier, held)} "
        f"(tiers held, best first: {', '.join(held)})"
    )


def _fmt_state(state: Any) -> str:
    if state is None:
        return "-"
    import attrs

    parts = []
    for f in attrs.fields(type(state)):
        value = getattr(state, f.name)
        if isinstance(value, float):
            parts.append(f"{f.name} {value:.2f}")
        elif isinstance(value, tuple) and len(value) > 3:
            shown = "; ".join(map(_fmt_item, value[-3:]))
            parts.append(f"{f.name} {len(value)} (latest: {shown})")
        elif isinstance(value, tuple):
            parts.append(f"{f.name} {'; '.join(map(_fmt_item, value)) or 'none'}")
        else:
            parts.append(f"{f.name} {value}")
    return ", ".join(parts)


def _fmt_item(item: Any) -> str:
    """One item of a state's list, as words: ``Trainee III 510`` for a pair, never a
    Python tuple's text."""
    if isinstance(item, tuple | list):
        return " ".join(map(_fmt_item, item))
    if isinstance(item, float):
        return f"{item:g}" if item.is_integer() else f"{item:.2f}"
    return str(item)


def cmd_player(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    with _open_existing(args, read_only=True) as league:
        record = _known_player(league, args.id)
        if args.plot:
            from .plots import plot_player

            written = plot_player(league, args.id, args.plot)
            if not args.json:
                err.write(f"wrote the plot of {args.id!r} to {written.resolve()}\n")
        rows = league.history(args.id, args.last)
        codec = league.codec
        standing = league.standings([args.id]).get(args.id)
        if args.json:
            _emit_json(
                {
                    "player": _record_json(league, record),
                    "standing": standing,
                    "display": league.shown(record).to_dict(),
                    "history": [
                        {
                            "seq": row.seq,
                            "match": row.match.to_dict(),
                            "report": codec.report_to_dict(row.report),
                        }
                        for row in rows
                    ],
                },
                out,
            )
            return 0
        last = format_time(record.last_played) if record.last_played else "-"
        out.write(f"{record.id}: {plural(record.matches, 'match')}, last played {last}\n")
        out.write(f"  skill: {_fmt_state(record.skill)}\n")
        if record.rank is not None:
            out.write(f"  rank:  {_fmt_state(record.rank)}\n")
        if standing is not None:
            out.write(f"  standing: {standing}\n")
        shown = league.shown(record)
        if shown.interval is not None:
            low, high = shown.interval
            value = "" if shown.value is None else f"{_num(shown.value)}; "
            # (the interval is the skill's: beside a rank layer's points it would read as theirs)
            out.write(f"  shown: {value}skill's 95% interval {_num(low)} to {_num(high)}\n")
        resets = _resets_before(rows, args.id)
        if rows:
            out.write(
                f"\nlast {plural(len(rows), 'match')}"
                + (", newest first" if len(rows) > 1 else "")
                + (" (* after a season reset)" if resets else "")
                + ":\n"
            )
        loc = _skill_columns(league)[:1]
        for row in rows:
            change = row.report.change(args.id)
            m = row.match
            opponents = " / ".join(
                ",".join(side) for i, side in enumerate(m.teams) if i != change.side
            )
            mates = [p for p in m.teams[change.side] if p != args.id]
            if mates:
                opponents = f"{','.join(mates)} vs {opponents}"
            expected = row.report.expected[change.side]
            side_result = _side_result(m, change.side)
            if side_result is None:
                result = f"placed {m.places[change.side]} of {len(m.teams)}"
            else:
                result = {1.0: "won", 0.5: "drew", 0.0: "lost"}[side_result]
            parts = [f"expected {expected:.3f}"]
            if loc:
                parts.append(_delta(loc[0], change.skill_used, change.skill_after))
            rank_loc = _rank_columns(league)[:1]
            if rank_loc and change.rank_after is not None:
                parts.append(_delta(rank_loc[0], change.rank_before, change.rank_after))
            if change.factors:
                parts.append("why: " + ", ".join(f"{k} {v:.4g}" for k, v in change.factors.items()))
            out.write(
                f"{'*' if row.seq in resets else ' '} {m.played_at.date().isoformat()}  "
                f"{m.id}: {result} {'with' if mates else 'vs'} {opponents}; "
                + "; ".join(parts)
                + "\n"
            )
    return 0


def _resets_before(rows: Sequence[Any], player: str) -> set[int]:
    """The ``seq`` of each of ``rows`` (newest first) before which the player's stored
    state changed outside a match: a season reset (or an import)."""
    out = set()
    for newer, older in itertools.pairwise(rows):
        before = newer.report.change(player)
        after = older.report.change(player)
        if before.skill_before != after.skill_after or before.rank_before != after.rank_after:
            out.add(newer.seq)
    return out


def _delta(field: str, before: Any, after: Any) -> str:
    old, new = getattr(before, field), getattr(after, field)
    return (
        f"{field} {_num(old)} -> {_num(new)} ({'+' if new >= old else '-'}{_num(abs(new - old))})"
    )


def _side_result(match: Match, side: int) -> float | None:
    if len(match.teams) != 2:
        return None
    from .model import pair_score

    return pair_score(match.places, side, 1 - side)


def _season_value(text: str) -> str | int:
    """A season given on the command line: a whole number as a number, else the text."""
    return int(text) if re.fullmatch(r"-?[0-9]+", text) else text


def cmd_predict(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    sides = [[p for p in side.split(",") if p] for side in args.sides]
    db = _db_path(args)
    stored = _database_exists(db)  # (without a database every player is new)
    if stored:
        league = _open_existing(args, read_only=True)
    else:
        if args.ruleset is None:
            raise InputError(
                f"no database at {mask_url(db)!r}: give --ruleset to predict for new players"
            )
        league = League(args.ruleset)
    with league:
        _check_at(league, args.at, "the forecast is made from the ratings after it")
        if stored and not args.new_ok:
            for player in (p for side in sides for p in side):
                if player not in league:
                    raise UnknownPlayerError(
                        f"unknown player {player!r}{_did_you_mean_player(league, player)}; "
                        "--new-ok predicts them as new players"
                    )
        forecast = league.forecast(sides, at=args.at, home=args.home, season=args.season)
    if args.json:
        document = {"sides": sides, "probabilities": list(forecast.probabilities)}
        _emit_json({**document, **forecast.to_dict()}, out)
        return 0
    names = [",".join(side) for side in sides]
    score = [f"{p:.4f}" for p in forecast.expected_score]
    if forecast.places is not None and forecast.win is not None:
        expected_place = [
            f"{math.fsum((k + 1) * p for k, p in enumerate(row)):.2f}" for row in forecast.places
        ]
        rows = [
            [f"{w:.4f}", place, s, name]
            for w, place, s, name in zip(forecast.win, expected_place, score, names, strict=True)
        ]
        _print_table(rows, ["P(first)", "expected place", "expected score", "side"], out)
        out.write("predicted order: " + ", ".join(names[i] for i in forecast.order) + "\n")
    elif forecast.win is not None and forecast.draw is not None:
        draw = f"{forecast.draw:.4f}"
        rows = [
            [f"{w:.4f}", draw, s, name]
            for w, s, name in zip(forecast.win, score, names, strict=True)
        ]
        _print_table(rows, ["P(win)", "P(draw)", "expected score", "side"], out)
    else:
        _print_table(
            [[s, name] for s, name in zip(score, names, strict=True)],
            ["expected score", "side"],
            out,
        )
        out.write(
            "(the ruleset has no draw model: a draw counts half a win, so this is a win "
            "probability only where draws cannot happen)\n"
        )
    return 0


def cmd_export(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    with _open_existing(args, read_only=True) as league:
        document = league.export()
    if args.out:
        # never a truncated backup: a temporary file beside it, renamed over it when whole
        write_atomically(args.out, json.dumps(document, indent=2, ensure_ascii=False) + "\n")
        count = len(document.get("players", ()))
        if args.json:
            _emit_json({"out": args.out, "players": count}, out)
        else:
            out.write(f"wrote {plural(count, 'player')} to {args.out}\n")
    else:
        _emit_json(document, out)
    return 0


def cmd_import(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    try:
        text = sys.stdin.read() if args.file == "-" else Path(args.file).read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read {args.file!r}: {exc.strerror}") from None
    document = loads_strict(text, what=args.file)
    ruleset = args.ruleset
    db = _db_path(args)
    if ruleset is None and not _database_exists(db) and isinstance(document, dict):
        # a new database: the ruleset the document carries (else its bundled name)
        toml = document.get("ruleset_toml")
        ruleset = (
            loads_stored_ruleset(toml, source=f"the ruleset in {args.file!r}")
            if isinstance(toml, str)
            else document.get("ruleset")
        )
    if not 0 <= args.max_future <= MAX_SECONDS_AHEAD:
        raise InputError(
            f"'--max-future' must be a number of seconds in [0, {MAX_SECONDS_AHEAD:g}]: "
            f"{args.max_future:g}"
        )
    with creating(db) as creation, League.open(creation.target, ruleset) as league:
        count = league.import_state(
            document, accept_ruleset=args.accept_ruleset, max_future=args.max_future
        )
    if args.json:
        _emit_json({"imported": count, "db": mask_url(db)}, out)
    else:
        out.write(f"imported {count:,} players into {mask_url(db)}\n")
    return 0


def _check_at(league: League, at: str | None, why: str) -> None:
    """Refuse an ``--at`` earlier than the league's last match, saying ``why``."""
    if at is None:
        return
    when = parse_time(at, field="--at")
    last = league.latest_played()
    if last is not None and when < last:
        raise InputError(
            f"'--at' is earlier than the league's last match, {format_time(last)} ({why}): {at}"
        )


def cmd_reset(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    with _open_existing(args) as league:
        # a season event dated before the last match would rewrite what came after it
        _check_at(league, args.at, "a season event cannot rewrite the matches after it")
        # the reset plugin refuses a kind it does not offer before anything changes
        changed = league.reset(args.kind, at=args.at)
    if args.json:
        _emit_json({"kind": args.kind, "changed": changed}, out)
    else:
        out.write(f"{args.kind} reset: {changed:,} players changed\n")
    return 0


def _source(path: str, home_from: str | None, limits: tuple[int, int]) -> Any:
    """Match dicts of a file, with ``home`` taken from a field when asked, each held to
    ``limits`` (the most sides and players of a match)."""
    from .evaluate import with_home

    def dicts() -> Iterator[Any]:
        for number, data in read_match_dicts(path):
            if type(data) is dict:
                _within_limits(data, number, limits)
            yield data

    return with_home(dicts(), home_from) if home_from else dicts()


def _counted(items: Iterable[Any], bar: Callable[[int], None], every: int = 500) -> Iterator[Any]:
    """``items`` as they are, telling ``bar`` the count every ``every`` items."""
    count = 0
    for count, item in enumerate(items, 1):
        if count % every == 0:
            bar(count)
        yield item
    bar(count)


def cmd_evaluate(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from .advice import HomeSeen
    from .evaluate import differences, evaluate_field, evaluate_ruleset

    test_from = parse_time(args.test_from, field="--test-from")
    from .evaluate import MAX_SAMPLES

    if not 1 <= args.bootstrap <= MAX_SAMPLES:
        raise InputError(
            f"'--bootstrap' must be a whole number in [1, {MAX_SAMPLES}]: {args.bootstrap}"
        )
    if args.block_days < 1:
        raise InputError(f"'--block-days' must be at least 1: {args.block_days}")
    limits = _limits(args)
    rulesets = []
    labels: dict[str, str] = {}  # what --ruleset said -> the label of the result
    for name in args.ruleset:
        ruleset = load_ruleset(name)
        label = ruleset.name if ruleset.name not in labels.values() else name
        labels.setdefault(name, label)
        rulesets.append((label, ruleset))
    results = {}
    if args.baseline_field is not None:
        labels[args.baseline_field] = args.baseline_field
        results[args.baseline_field] = evaluate_field(
            _source(args.matches, args.home_from, limits), args.baseline_field, test_from=test_from
        )
    baseline = args.baseline_field or rulesets[0][0]
    if args.baseline is not None:
        if args.baseline not in labels and args.baseline not in labels.values():
            raise InputError(
                f"'--baseline' must be one of the rulesets evaluated "
                f"({', '.join(labels.values())}): {args.baseline!r}"
            )
        baseline = labels.get(args.baseline, args.baseline)
    total = count_lines(args.matches)
    jobs = _jobs(args.jobs, len(rulesets))
    if jobs > 1 and can_fork():  # (else one after another, with the same results)
        evaluated = _evaluate_parallel(args, rulesets, test_from, total, jobs, err, limits)
        for (label, ruleset), (result, matches, homes) in zip(rulesets, evaluated, strict=True):
            results[label] = result
            _warn_home(ruleset, matches, homes, args.matches, err)
    else:
        for label, ruleset in rulesets:
            seen = HomeSeen(_source(args.matches, args.home_from, limits))
            with progress_for(err, f"evaluating {label}", total) as bar:
                every = 500 if isinstance(bar, Bar) else 1  # (a line exactly at each 10%)
                results[label] = evaluate_ruleset(
                    ruleset,
                    _counted(seen, bar, every),
                    test_from=test_from,
                    warmup=_source(args.matches, args.home_from, limits),
                )
            _warn_home(ruleset, seen.matches, seen.with_home, args.matches, err)
    paired = differences(
        results, baseline, samples=args.bootstrap, seed=args.seed, block_days=args.block_days
    )
    if args.plot:
        from .plots import plot_calibration

        plot_calibration(results, args.plot)
    if args.json:
        document: dict[str, Any] = {
            "test_from": args.test_from,
            "results": {k: v.to_dict() for k, v in results.items()},
        }
        if paired:
            document["baseline"] = baseline
            document["differences"] = [d.to_dict() for d in paired]
        _emit_json(document, out)
        return 0
    out.write(f"{args.matches}: one step ahead from {args.test_from}\n\n")
    _evaluation_tables(results, baseline, paired, out)
    if args.plot:
        out.write(f"\nplot written to {args.plot}\n")
    return 0


def _jobs(jobs: int | None, rulesets: int) -> int:
    """``evaluate --jobs``, checked: the processes the rulesets are replayed in (default:
    one per core), never more than there are rulesets."""
    if jobs is None:
        jobs = default_processes()
    elif jobs < 1:
        raise InputError(f"'--jobs' must be a whole number >= 1: {jobs}")
    return min(jobs, rulesets)


def _evaluate_parallel(
    args: argparse.Namespace,
    rulesets: list[tuple[str, Any]],
    test_from: Any,
    total: int | None,
    jobs: int,
    err: TextIO,
    limits: tuple[int, int],
) -> list[tuple[Evaluation, int, int]]:
    """Each ruleset's evaluation in a forked process of its own, at most ``jobs`` at once
    (:func:`rankcraft.processes.run_each`), with one progress display over them all:
    (the evaluation, the matches read, those that named a home side), in order."""
    from .advice import HomeSeen
    from .evaluate import evaluate_ruleset

    def one(index: int, tick: Callable[[int], None]) -> tuple[Evaluation, int, int]:
        seen = HomeSeen(_source(args.matches, args.home_from, limits))
        result = evaluate_ruleset(
            rulesets[index][1],
            _counted(seen, tick, 500),
            test_from=test_from,
            warmup=_source(args.matches, args.home_from, limits),
        )
        return result, seen.matches, seen.with_home

    names = ", ".join(label for label, _ in rulesets)
    what = f"evaluating {names} in {jobs} processes"
    bar: list[Bar | Steps] = []  # (made once every process is forked: a bar has a thread)

    def told(done: Sequence[int], finished: int) -> None:
        if not bar:
            bar.append(progress_for(err, what, None if total is None else total * len(rulesets)))
        bar[0](sum(done))

    try:
        return run_each(one, len(rulesets), processes=jobs, progress=told)
    finally:
        if bar:
            bar[0].done()


def _figure(value: float | None, digits: int = 4) -> str:
    """A figure for a table: ``-`` where it has no value."""
    return "-" if value is None or not math.isfinite(value) else f"{value:.{digits}f}"


def _evaluation_tables(
    results: dict[str, Evaluation], baseline: str, differences: list[Difference], out: TextIO
) -> None:
    """The text of ``rankcraft evaluate``: the scores, the differences, the calibration."""
    figure = _figure
    three = any(r.three_way is not None for r in results.values())
    rows = []
    for name, r in results.items():
        row = [
            name,
            f"{r.n:,}",
            f"{r.matches:,}",
            figure(r.log_loss),
            figure(r.brier),
            figure(r.accuracy),
            f"{r.decisive:,}",
            f"{r.draws:,}",
        ]
        if three:
            t = r.three_way
            row += ["-", "-"] if t is None else [figure(t.log_loss), figure(t.rps)]
        rows.append(row)
    headers = ["ruleset", "scored", "matches", "log loss", "Brier", "accuracy", "decisive"]
    headers.append("draws")
    if three:
        headers += ["3-way log loss", "RPS"]
    _print_table(rows, headers, out)
    for name, r in results.items():
        if r.draw_fit is not None:
            fit = r.draw_fit
            values = ", ".join(f"{k} {v:.4g}" for k, v in fit.values.items())
            out.write(
                f"\ndraw parameters of {name} fitted on {fit.matches:,} warm-up matches "
                f"({fit.draws:,} draws, {plural(fit.rounds, 'replay')}): {values}\n"
            )
    if differences:
        first = differences[0]
        out.write(
            f"\nagainst {baseline}, the same items (95% interval: {first.samples:,} bootstrap "
            f"resamples of {first.block_days}-day blocks, seed {first.seed}; negative: "
            "better):\n"
        )
        _print_table(
            [
                [
                    d.ruleset,
                    d.score,
                    f"{d.difference:+.4f}",
                    f"{d.low:+.4f}",
                    f"{d.high:+.4f}",
                    f"{d.blocks:,}",
                ]
                for d in differences
            ],
            ["ruleset", "score", "difference", "low", "high", "blocks"],
            out,
        )
    for name, r in results.items():
        out.write(
            f"\ncalibration of {name} (predicted vs observed score of each item's first "
            "side; a draw counts ½):\n"
        )
        _print_table(
            [
                [
                    f"{b.low:.1f}-{b.high:.1f}",
                    f"{b.n:,}",
                    figure(b.predicted, 3),
                    figure(b.observed, 3),
                ]
                for b in r.calibration
            ],
            ["bin", "n", "predicted", "observed"],
            out,
        )


def cmd_tune(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from .advice import HomeSeen
    from .tune import Trial, has_optuna, parse_param, tune, tuned_toml

    ruleset = load_ruleset(args.ruleset)
    params = [parse_param(text, ruleset) for text in args.param]
    # the whole file read once first: a match past the limits is refused before any trial
    seen = HomeSeen(_source(args.matches, args.home_from, _limits(args)))
    for _ in seen:
        pass
    _warn_home(ruleset, seen.matches, seen.with_home, args.matches, err)
    method = args.method or ("optuna" if has_optuna() else "random")
    if args.method is None and method == "random":
        err.write(
            "rankcraft: Optuna is not installed: tuning by the seeded random search "
            "(pip install 'rankcraft[tune]' for Optuna's TPE with pruning)\n"
        )
    bars: list[Bar] = []  # (made at the first trial: a bar runs a thread, and tune forks)

    def progress(done: int, total: int, best: float, trial: Trial) -> None:
        if not bars:
            bars.append(Bar(err, f"tuning ({method})", total))
        bar = bars[0]
        if bar.enabled:
            bar(done)
            if done >= total:  # (its thread ends: the chosen ruleset's scores may fork)
                bar.done()
            return
        values = ", ".join(
            f"{p.name}={_param_text(v, p.integer)}"
            for p, v in zip(params, trial.values, strict=True)
        )
        state = "pruned at" if trial.pruned else "scored"
        err.write(f"trial {done}/{total}: {values}: {state} {trial.value:.5f} (best {best:.5f})\n")
        err.flush()

    result = tune(
        args.matches,
        ruleset,
        params,
        test_from=args.test_from,
        trials=args.trials,
        seed=args.seed,
        validation=args.validation,
        jobs=args.jobs,
        home_from=args.home_from,
        progress=progress,
        method=method,
        storage=args.storage,
        study_name=args.study,
        score=args.score,
    )
    for bar in bars:
        bar.done()
    write_atomically(args.out, tuned_toml(result, ruleset, args.ruleset, args.out))
    document = result.to_dict()
    chosen = document["chosen"]
    if args.json:
        _emit_json({**document, "out": args.out}, out)
        return 0
    _tune_text(result, ruleset.name, args, chosen, out)
    return 0


def _tune_text(
    result: Any, name: str, args: argparse.Namespace, chosen: dict[str, Any], out: TextIO
) -> None:
    """The text of ``rankcraft tune``: the search, the choice, every score of the start
    and the tuned ruleset on the validation slice and the test part."""
    pruned = sum(1 for t in result.trials if t.pruned)
    how = "Optuna's TPE" if result.method == "optuna" else "the seeded random search"
    out.write(
        f"tuned {name!r} by {result.score} on matches before {args.test_from} "
        f"({how}, {plural(len(result.trials), 'trial')} run"
        f"{f', {pruned:,} pruned' if pruned else ''}; validation from "
        f"{result.validation_from}):\n"
    )
    for name, value in chosen.items():
        out.write(f"  {name} = {_param_text(value, isinstance(value, int))}\n")
    if result.kept_start:
        out.write("  (no trial beat the start on the validation slice: the start is kept)\n")
    assert result.start_validation is not None and result.start_test is not None
    assert result.validation is not None
    rows = [
        [label, *(_figure(e.figure(score)) for score in SCORES)]
        for label, e in (
            ("start, validation", result.start_validation),
            ("tuned, validation", result.validation),
            ("start, test", result.start_test),
            ("tuned, test", result.test),
        )
    ]
    _print_table(rows, ["ruleset, part", *SCORES], out)
    if result.worse_on_test:
        out.write(
            f"warning: the tuned ruleset scores worse than the start on the test part "
            f"({result.score}): the validation slice chose on noise, or the test part "
            "differs\n"
        )
    out.write(f"written to {args.out}\n")


def _param_text(value: float, integer: bool) -> str:
    return str(round(value)) if integer else f"{value:.6g}"


def cmd_rulesets(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    plugins = Plugins()
    rows = []
    for name in bundled_names():
        try:
            ruleset = load_ruleset(name, plugins=plugins)
            rows.append(
                {
                    "name": name,
                    "description": ruleset.description,
                    "plugins": {
                        k: v["plugin"]
                        for k, v in to_dict(ruleset).items()
                        if isinstance(v, dict) and "plugin" in v
                    },
                }
            )
        except RankcraftError as exc:
            rows.append({"name": name, "error": str(exc)})
    if args.json:
        _emit_json(rows, out)
    else:
        for row in rows:
            out.write(f"{row['name']:<12} {row.get('description') or row.get('error')}\n")
    return 0


def cmd_plugins(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    infos = Plugins().info()
    if args.json:
        _emit_json(
            [
                {
                    "name": i.name,
                    "module": i.module,
                    "distribution": i.distribution,
                    "version": i.version,
                    "slots": list(i.slots),
                    "error": i.error,
                    "contract": i.contract,
                }
                for i in infos
            ],
            out,
        )
    else:
        rows = [
            [
                i.name + (" *" if i.contract == 1 else ""),
                f"{i.distribution or '-'} {i.version or ''}".strip(),
                ", ".join(i.slots) if i.error is None else i.error,
            ]
            for i in infos
        ]
        _print_table(rows, ["plugin", "distribution", "slots"], out)
        if any(i.contract == 1 for i in infos):
            out.write(
                "* written for the first hook contract: adapted, at its speed (see "
                "'Migrating to hook contract 2' in docs/plugins.md)\n"
            )
    return 0


def cmd_check(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    ruleset = load_ruleset(args.ruleset)
    League(ruleset)  # (its plugins' hooks bound and their states' forms made: nothing rated)
    if args.json:
        _emit_json({"ok": True, "name": ruleset.name, "ruleset": to_dict(ruleset)}, out)
    elif args.show:
        out.write(dumps(ruleset))
    else:
        slots = ", ".join(
            f"{slot}={spec.plugin}"
            for slot in ("update", "initial", "decay", "expectation", "team", "rank", "reset")
            if (spec := getattr(ruleset, slot)) is not None
        )
        out.write(f"ok: ruleset {ruleset.name!r} ({slots})\n")
    return 0


# -- plumbing ------------------------------------------------------------------------------


# -- API tokens for `rankcraft serve` (rankcraft.tokens) ------------------------------------


def cmd_token(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from .tokens import create_token, list_tokens, revoke_token

    db = _db_path(args)
    store = open_store(db, create=False)  # (migrates an older database: tokens need v4)
    try:
        if args.token_command == "create":
            token, text = create_token(store, scope=args.scope, name=args.name)
            if args.json:
                _emit_json({**token.to_dict(), "token": text}, out)
            else:
                err.write(
                    f"token {token.name!r} (scope {token.scope}) for {store.label}; it is "
                    "shown this once, keep it now:\n"
                )
                out.write(text + "\n")
        elif args.token_command == "list":
            tokens = list_tokens(store)
            if args.json:
                _emit_json([t.to_dict() for t in tokens], out)
            elif tokens:
                rows = [[t.name, t.scope, t.created_at, f"rk_{t.key}_..."] for t in tokens]
                _print_table(rows, ["name", "scope", "created", "token"], out)
            else:
                out.write(f"no tokens in {store.label}\n")
        else:
            token = revoke_token(store, args.name)
            if args.json:
                _emit_json({"revoked": token.to_dict()}, out)
            else:
                out.write(f"revoked token {token.name!r} (scope {token.scope})\n")
    finally:
        store.close()
    return 0


def _widen(text: str) -> tuple[tuple[float, float], ...]:
    """``--widen 30:5,60:10``: (seconds waited, width) steps."""
    steps = []
    for part in (p for p in text.split(",") if p.strip()):
        after, sep, width = part.partition(":")
        try:
            steps.append((float(after), float(width)))
        except ValueError:
            raise InputError(
                f"'--widen' must be SECONDS:WIDTH,... e.g. 30:5,60:10: {text!r}"
            ) from None
        if not sep:
            raise InputError(f"'--widen' must be SECONDS:WIDTH,... e.g. 30:5,60:10: {text!r}")
    return tuple(steps)


def cmd_match(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from .matchmaking import DEFAULT_WIDEN, Opponents, RankFilter

    with _open_existing(args, read_only=True) as league:
        if args.match_command == "opponents":

            def find(width: float) -> Opponents:
                rank_filter = RankFilter(
                    width=width,
                    strict=args.strict,
                    widen=DEFAULT_WIDEN if args.widen is None else _widen(args.widen),
                )
                return league.find_opponents(
                    args.players,
                    rank_filter,
                    needed=args.needed,
                    waited=args.waited,
                    limit=args.limit,
                    active_days=args.active_days,
                )

            found = find(OPPONENTS_WIDTH if args.width is None else args.width)
            if args.width is None and found.active and 100.0 / found.active > found.width:
                # in a league of fewer than 50 active players, 2 percentiles is less than
                # one place (48 players: 2.08 percentiles apart): the band is one place
                found = find(100.0 / found.active)
            if args.json:
                _emit_json(found.to_dict(), out)
                return 0
            mark = "" if found.enough else f" (fewer than the {args.needed} needed)"
            out.write(
                f"{found.found} of {found.active} active players within {found.width:.3g} "
                f"percentiles: [{found.low:.2f}, {found.high:.2f}]{mark}\n"
            )
            rows = [[c.id, f"{c.value:.2f}", f"{c.percentile:.2f}"] for c in found.candidates]
            _print_table(rows, ["player", "value", "percentile"], out)
        elif args.match_command == "quality":
            from .matchmaking import quality

            sides = [[p for p in side.split(",") if p] for side in args.sides]
            value, judged_by = quality(league, sides, at=args.at, home=args.home)
            if args.json:  # (the answer of POST /match/quality)
                chances = league.predict(sides, at=args.at, home=args.home)
                answer = {"quality": value, "judged_by": judged_by, "probabilities": chances}
                _emit_json({"sides": sides, **answer}, out)
            else:
                out.write(f"{value:.4f}\n")
        else:
            teams = league.balance(args.players, args.teams, at=args.at)
            if args.json:
                _emit_json(teams.to_dict(), out)
            else:
                for team in teams.teams:
                    out.write(",".join(team) + "\n")
                out.write(f"quality {teams.quality:.4f} ({teams.method}, {teams.judged_by})\n")
    return 0


OPPONENTS_WIDTH = 2.0
"""``match opponents``' width in percentiles when ``--width`` is not given (at least one
place: 100/N percentiles among N active players)."""


def _add_match_commands(sub: Any, db: Callable[[argparse.ArgumentParser], None]) -> None:
    text = "matchmaking: rank filters, match quality and balanced teams (docs/matchmaking.md)"
    match = sub.add_parser("match", help=text, description=text)
    match.set_defaults(func=cmd_match)
    actions = match.add_subparsers(dest="match_command", required=True, metavar="ACTION")

    def action(name: str, help_: str) -> argparse.ArgumentParser:
        p: argparse.ArgumentParser = actions.add_parser(name, help=help_, description=help_)
        p.add_argument("--json", action="store_true", help="machine-readable output")
        db(p)
        return p

    p = action("opponents", "active players within a rank filter of a player or party")
    p.add_argument("players", nargs="+", help="the player, or every player of the party")
    p.add_argument(
        "--width",
        type=float,
        default=None,
        help=f"percentiles either side (default {OPPONENTS_WIDTH:g}, or one place, 100/N "
        "percentiles, among fewer than 50 active players)",
    )
    p.add_argument("--strict", action="store_true", help="never widen (default: loose)")
    p.add_argument(
        "--widen", metavar="S:W,...", help="loose steps, seconds waited:width (30:5,60:10)"
    )
    p.add_argument("--waited", type=float, default=0.0, help="seconds the party has waited (0)")
    p.add_argument("--needed", type=int, default=1, help="players that make enough (1)")
    p.add_argument("--limit", type=int, default=20, help="most players listed (20)")
    p.add_argument("--active-days", type=float, help="who is active (default: the ruleset's)")
    p = action("quality", "how good a match the sides would make, in [0, 1]")
    p.add_argument("sides", nargs="+", help="one argument per side: comma-separated player ids")
    p.add_argument("--at", help="as of this time (ISO-8601): decays idle players")
    p.add_argument("--home", type=int, help="the index of the side at home")
    p = action("balance", "split players into fair teams")
    p.add_argument("players", nargs="+", help="the players to split")
    p.add_argument("--teams", type=int, default=2, help="how many teams (2)")
    p.add_argument("--at", help="as of this time (ISO-8601): decays idle players")


def _add_token_commands(sub: Any, db: Callable[[argparse.ArgumentParser], None]) -> None:
    from .tokens import SCOPES

    text = "create, list and revoke the API tokens of `rankcraft serve`"
    token = sub.add_parser("token", help=text, description=text)
    token.set_defaults(func=cmd_token)
    actions = token.add_subparsers(dest="token_command", required=True, metavar="ACTION")

    def action(name: str, help_: str) -> argparse.ArgumentParser:
        p: argparse.ArgumentParser = actions.add_parser(name, help=help_, description=help_)
        p.add_argument("--json", action="store_true", help="machine-readable output")
        db(p)
        return p

    p = action("create", "make a token and print it (once: only its digest is kept)")
    p.add_argument(
        "--scope",
        required=True,
        choices=SCOPES,
        help="read: reads (with serve --auth-reads); record: also POST /matches; "
        "admin: also the admin endpoints",
    )
    p.add_argument("--name", help="how list and revoke name it (default token-KEY)")
    action("list", "list the tokens (names, scopes, dates; never the tokens)")
    p = action("revoke", "revoke a token: it is refused from the next request on")
    p.add_argument("name", help="the token's name")


def _serve_settings(args: argparse.Namespace, settings_class: Any) -> Any:
    """The service's settings from ``serve``'s options (errors name the option)."""
    try:
        settings = settings_class(
            auth_reads=args.auth_reads,
            cors_origins=args.cors_origin or (),
            max_body=args.max_body,
            max_sides=args.max_sides,
            max_players=args.max_players,
            max_future=args.max_future,
            max_batch=args.max_batch,
            header_timeout=args.header_timeout,
            body_timeout=args.body_timeout,
            lab_workers=args.lab_workers,
            lab_jobs_per_client=args.lab_jobs_per_client,
            lab_max_replays=args.lab_max_replays,
            lab_keep=args.lab_keep,
            lab_timeout=args.lab_timeout,
            lab_processes=args.lab_processes,
        )
    except InputError as exc:  # name the option, not the attribute
        named = re.sub(r"'(\w+)'", lambda m: f"'--{m[1].replace('_', '-')}'", str(exc), count=1)
        raise InputError(named) from None
    return settings


def cmd_serve(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    try:
        import uvicorn

        from . import serve
    except ImportError:
        raise InputError(
            "the HTTP service needs Starlette and uvicorn: pip install 'rankcraft[serve]'"
        ) from None
    if args.workers < 1:
        raise InputError(f"'--workers' must be at least 1: {args.workers}")
    for option in ("timeout_keep_alive", "limit_concurrency"):
        if getattr(args, option) < 1:
            raise InputError(
                f"'--{option.replace('_', '-')}' must be at least 1: {getattr(args, option)}"
            )
    settings = _serve_settings(args, serve.Settings)
    db = _db_path(args)
    # open (and create or migrate) the league once here, so that a bad database or
    # ruleset fails before any worker starts, with exit status 2
    with creating(db) as creation:
        League.open(creation.target, args.ruleset).close()
    os.environ[serve.DB_ENV] = db
    os.environ.pop(serve.RULESET_ENV, None)
    os.environ[serve.SETTINGS_ENV] = settings.to_json()
    # uvicorn: our h11 protocol (read deadlines), idle keep-alive connections closed after
    # --timeout-keep-alive s, 503 beyond --limit-concurrency connections per worker, and
    # X-Forwarded-For/-Proto believed only from --forwarded-allow-ips (a TLS proxy)
    options: dict[str, Any] = {
        "http": serve.GuardedH11Protocol,
        "timeout_keep_alive": args.timeout_keep_alive,
        "limit_concurrency": args.limit_concurrency,
        "proxy_headers": True,
        "forwarded_allow_ips": args.forwarded_allow_ips,
    }
    options["log_config"] = serve.log_config(args.access_log)
    err.write(
        f"rankcraft serve: starting {mask_url(db)} on http://{args.host}:{args.port} "
        f"({args.workers} worker{'s' if args.workers > 1 else ''})\n"
    )
    err.flush()

    def say(line: str) -> None:
        err.write(line + "\n")
        err.flush()

    serve.announce_when_ready(args.host, args.port, say)
    app = "rankcraft.serve:app_from_env"
    if args.workers == 1:
        uvicorn.run(app, factory=True, host=args.host, port=args.port, **options)
        return 0
    import socket

    from uvicorn.supervisors import Multiprocess

    # uvicorn's own shared socket is made with protocol 0, for which asyncio leaves
    # Nagle's algorithm on: every answer then waits ~40 ms for the client's delayed ACK.
    # A socket made as TCP keeps TCP_NODELAY on the workers' connections.
    family = socket.AF_INET6 if ":" in args.host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((args.host, args.port))
    except OSError as exc:
        raise InputError(f"cannot listen on {args.host}:{args.port}: {exc}") from None
    sock.set_inheritable(True)
    config = uvicorn.Config(
        app,
        factory=True,
        host=args.host,
        port=args.port,
        workers=args.workers,
        **options,
    )
    Multiprocess(config, sockets=[sock]).run()
    return 0


@contextlib.contextmanager
def _plugin_dirs(dirs: list[str]) -> Iterator[None]:
    """``--plugins-dir``: the folders join ``RANKCRAFT_PLUGINS_DIR`` while the command runs."""
    if not dirs:
        yield
        return
    before = os.environ.get(PLUGINS_DIR_ENV)
    os.environ[PLUGINS_DIR_ENV] = os.pathsep.join([*dirs, *([before] if before else [])])
    try:
        yield
    finally:
        if before is None:
            del os.environ[PLUGINS_DIR_ENV]
        else:
            os.environ[PLUGINS_DIR_ENV] = before


class _Commands:
    """Adds subcommands to the parser (the helpers every command group shares)."""

    def __init__(self, sub: Any) -> None:
        self.sub = sub

    def add(self, name: str, func: Callable[..., int], help_: str) -> argparse.ArgumentParser:
        p: argparse.ArgumentParser = self.sub.add_parser(name, help=help_, description=help_)
        p.set_defaults(func=func)
        p.add_argument("--json", action="store_true", help="machine-readable output")
        return p

    @staticmethod
    def home_from(p: argparse.ArgumentParser) -> None:
        p.add_argument(
            "--home-from",
            metavar="FIELD",
            help="take each match's home side from this field, e.g. meta.home_team_index",
        )

    @staticmethod
    def limits(p: argparse.ArgumentParser) -> None:
        p.add_argument(
            "--max-sides",
            type=int,
            default=MAX_SIDES,
            metavar="N",
            help=f"most sides in a match ({MAX_SIDES})",
        )
        p.add_argument(
            "--max-players",
            type=int,
            default=MAX_PLAYERS,
            metavar="N",
            help=f"most players in a match, all sides ({MAX_PLAYERS})",
        )

    @staticmethod
    def max_future(p: argparse.ArgumentParser, what: str) -> None:
        p.add_argument(
            "--max-future",
            type=float,
            default=MAX_FUTURE,
            metavar="SECONDS",
            help=f"{what} ({MAX_FUTURE:g})",
        )

    @staticmethod
    def db(p: argparse.ArgumentParser) -> None:
        p.add_argument(
            "--db",
            help=f"SQLite database file or postgresql:// URL (default: ${DB_ENV} or {DEFAULT_DB})",
        )


def _replay_commands(c: _Commands) -> None:
    """demo and replay."""
    p = c.add("demo", cmd_demo, "replay the bundled football history and print the top 20")
    p.add_argument("--db", help=f"SQLite database file (default: {DEMO_DB})")
    p.add_argument("--top", type=int, default=20, help="how many teams to list (default 20)")

    p = c.add("sample", cmd_sample, "write the README's example files: a match history, a ruleset")
    p.add_argument(
        "folder",
        nargs="?",
        default=SAMPLE_FOLDER,
        help=f"where to write them, made if missing (default: {SAMPLE_FOLDER})",
    )
    p.add_argument("--force", action="store_true", help="write over files already there")
    p = c.add("replay", cmd_replay, "rate the matches of a .jsonl or .jsonl.gz file")
    p.add_argument("matches", help="match file (.jsonl, .jsonl.gz, or - for standard input)")
    p.add_argument("--ruleset", help="bundled ruleset name or TOML file (required for a new db)")
    p.add_argument("--skip-seen", action="store_true", help="pass over match ids already recorded")
    p.add_argument(
        "--commit-every",
        type=int,
        default=0,
        metavar="N",
        help="commit every N matches, so that a crash keeps what was done (default "
        "0: the whole file is one transaction, all or nothing)",
    )
    c.limits(p)
    c.home_from(p)
    c.db(p)


def _read_commands(c: _Commands) -> None:
    """leaderboard, player, predict, export, import, reset."""
    p = c.add("leaderboard", cmd_leaderboard, "list players best first")
    p.add_argument("--top", type=int, default=None, help="only the first N players")
    p.add_argument(
        "--all",
        action="store_true",
        help="list inactive players too (rulesets with [display] active_days)",
    )
    p.add_argument(
        "--offset",
        type=int,
        default=0,
        metavar="N",
        help="skip the first N places (a page: --offset 100 --top 50 lists places 101-150)",
    )
    p.add_argument(
        "--active-days",
        type=float,
        default=None,
        metavar="DAYS",
        help="only players whose last match is at most DAYS before the league's latest",
    )
    p.add_argument(
        "--tier", default=None, help="only players of this tier (a rank layer's tier, e.g. Gold)"
    )
    p.add_argument(
        "--holding",
        default=None,
        metavar="TEXT",
        help="only players whose id holds TEXT (ASCII letters in either case), at their "
        "places on the board",
    )
    c.db(p)

    p = c.add("player", cmd_player, "one player's state and latest matches, explained")
    p.add_argument("id", help="player id")
    p.add_argument("--last", type=int, default=10, help="how many matches to show (default 10)")
    p.add_argument("--plot", metavar="FILE.png", help="draw skill, uncertainty and rank over time")
    c.db(p)

    p = c.add(
        "predict",
        cmd_predict,
        "forecast a match: expected scores; P(win), P(draw) with a draw model; "
        "P(first) and places for more than two sides",
    )
    p.add_argument("sides", nargs="+", help="one argument per side: comma-separated player ids")
    p.add_argument("--ruleset", help="ruleset (needed when there is no database)")
    p.add_argument("--at", help="predict for this time (ISO-8601): decays idle players")
    p.add_argument(
        "--home", type=int, metavar="INDEX", help="the index of the side at home (0 = first)"
    )
    p.add_argument(
        "--season",
        type=_season_value,
        metavar="VALUE",
        help="the match's season, for a ruleset whose [[resets]] follow a season field "
        "(a new season applies its event first; a whole number is read as a number)",
    )
    p.add_argument(
        "--new-ok",
        action="store_true",
        help="predict unknown players as new players (else an unknown id is an error)",
    )
    c.db(p)

    p = c.add("export", cmd_export, "write every player's state as a JSON document")
    p.add_argument("--out", help="file to write (default: standard output)")
    c.db(p)

    p = c.add("import", cmd_import, "load players from an export document")
    p.add_argument("file", help="JSON document (or - for standard input)")
    p.add_argument("--ruleset", help="ruleset for a new database (default: the document's)")
    accept = "import from a document whose ruleset differs from the league's, with a warning"
    p.add_argument("--accept-ruleset", action="store_true", help=accept)
    c.max_future(p, "how far past this machine's clock a player's last_played may be")
    c.db(p)

    p = c.add("reset", cmd_reset, "run a season event of the ruleset's reset plugin")
    p.add_argument("kind", help="the event, e.g. soft or hard")
    p.add_argument("--at", help="when the event happens (ISO-8601)")
    c.db(p)


def _model_commands(c: _Commands) -> None:
    """evaluate and tune."""
    p = c.add("evaluate", cmd_evaluate, "score rulesets one step ahead on a history's test part")
    p.add_argument("matches", help="match file (.jsonl or .jsonl.gz)")
    p.add_argument(
        "--ruleset",
        action="append",
        required=True,
        help="bundled name or TOML file; repeat to compare several",
    )
    p.add_argument(
        "--test-from",
        required=True,
        metavar="DATE",
        help="score matches played on or after this ISO-8601 date or date-time (UTC)",
    )
    p.add_argument("--plot", metavar="FILE.png", help="draw calibration curves")
    p.add_argument(
        "--baseline",
        metavar="RULESET",
        help="compare every other ruleset's scores with this one (default: the "
        "--baseline-field, else the first ruleset)",
    )
    p.add_argument(
        "--baseline-field",
        metavar="PATH",
        help="score a published forecast read from each match as a row named PATH: "
        "P(side 0 wins) (e.g. forecast.p_team0_wins), or three probabilities (a list, or "
        "three paths joined by commas: win, draw, loss)",
    )
    p.add_argument(
        "--bootstrap",
        type=int,
        default=2000,
        metavar="N",
        help="bootstrap resamples for the 95%% interval of a difference (2000; <= 100000)",
    )
    p.add_argument(
        "--block-days",
        type=int,
        default=7,
        metavar="N",
        help="days per bootstrap block (default 7)",
    )
    p.add_argument("--seed", type=int, default=0, help="the bootstrap's seed (default 0)")
    p.add_argument(
        "--jobs",
        type=int,
        metavar="N",
        help="replay the rulesets in up to N processes at once (default: one per core; "
        "1: one after another in this process)",
    )
    c.limits(p)
    c.home_from(p)
    _tune_command(c)
    c.add("rulesets", cmd_rulesets, "list the bundled rulesets")
    c.add("plugins", cmd_plugins, "list installed plugins with versions and slots")


def _tune_command(c: _Commands) -> None:
    """tune."""
    p = c.add("tune", cmd_tune, "search ruleset parameters on the warm-up part")
    p.add_argument("matches", help="match file (.jsonl or .jsonl.gz)")
    p.add_argument("--ruleset", required=True, help="bundled name or TOML file to start from")
    p.add_argument(
        "--test-from",
        required=True,
        metavar="DATE",
        help="the test part starts here; tuning only sees earlier matches",
    )
    p.add_argument(
        "--param",
        action="append",
        required=True,
        metavar="NAME=LOW:HIGH",
        help="a parameter and its range, e.g. update.params.k_factor=10:40",
    )
    p.add_argument("--out", required=True, metavar="FILE.toml", help="the tuned ruleset")
    p.add_argument(
        "--trials",
        type=int,
        default=24,
        help="trials to run (default 24; the random search then adds a finer round of half "
        "as many)",
    )
    p.add_argument(
        "--score",
        choices=SCORES,
        default="log-loss",
        help="the validation score that chooses (default log-loss, binary with a draw "
        "counting ½; three-way: log loss over win/draw/loss; rps; brier)",
    )
    p.add_argument("--seed", type=int, default=0, help="search seed (default 0)")
    p.add_argument(
        "--validation",
        type=float,
        default=0.2,
        help="share of warm-up matches, the latest, scored (default 0.2)",
    )
    p.add_argument("--jobs", type=int, default=2, help="worker processes (default 2)")
    p.add_argument(
        "--method",
        choices=("optuna", "random"),
        default=None,
        help="Optuna's seeded TPE with pruning (default when installed: rankcraft[tune]) "
        "or the seeded random search",
    )
    p.add_argument(
        "--storage",
        metavar="URL",
        help="Optuna storage shared by several processes or machines "
        "(sqlite:///study.db, postgresql://user@host/db)",
    )
    p.add_argument(
        "--study", metavar="NAME", help="the study's name in --storage (default: the ruleset's)"
    )
    c.limits(p)
    c.home_from(p)


def _serve_command(c: _Commands) -> None:
    """serve."""
    p = c.add("serve", cmd_serve, "serve the league over HTTP (needs rankcraft[serve])")
    p.add_argument("--ruleset", help="bundled ruleset name or TOML file (required for a new db)")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    p.add_argument(
        "--workers", type=int, default=1, help="worker processes (default 1); see docs/deploy.md"
    )
    p.add_argument("--auth-reads", action="store_true", help="reads need a token of scope read too")
    p.add_argument(
        "--no-access-log",
        dest="access_log",
        action="store_false",
        help="no line per request on standard output (the access log is on by default)",
    )
    p.add_argument(
        "--cors-origin",
        action="append",
        metavar="URL",
        help="let web pages of this origin call the service (repeatable; default none)",
    )
    p.add_argument(
        "--max-body", type=int, default=1 << 20, help="most bytes in a request body (1048576)"
    )
    c.limits(p)
    p.add_argument(
        "--max-batch", type=int, default=10_000, help="most matches in POST /matches/batch (10000)"
    )
    c.max_future(p, "how far past the server's clock played_at may be")
    p.add_argument(
        "--header-timeout",
        type=float,
        default=10.0,
        metavar="SECONDS",
        help="close a connection whose request headers are not in after this (10)",
    )
    p.add_argument(
        "--body-timeout",
        type=float,
        default=30.0,
        metavar="SECONDS",
        help="408 for a request body not in after this (30)",
    )
    lab = p.add_argument_group("the ruleset lab's jobs (docs/web.md)")
    for option, kind, default, meta, text in (
        ("--lab-workers", int, 1, None, "lab jobs running at once, per worker"),
        ("--lab-jobs-per-client", int, 2, None, "lab jobs one client may have queued or running"),
        ("--lab-max-replays", int, 600_000, None, "most matches x rulesets one lab job replays"),
        ("--lab-keep", float, 600.0, "SECONDS", "how long a lab job's result stays readable"),
        ("--lab-timeout", float, 3600.0, "SECONDS", "a lab job running longer is ended"),
    ):
        lab.add_argument(
            option, type=kind, default=default, metavar=meta, help=f"{text} ({default:g})"
        )
    lab.add_argument(
        "--lab-processes",
        type=int,
        metavar="N",
        help="processes one lab job replays its rulesets in at once (default: one per core)",
    )
    p.add_argument(
        "--timeout-keep-alive",
        type=int,
        default=5,
        metavar="SECONDS",
        help="close idle keep-alive connections after this (5)",
    )
    p.add_argument(
        "--limit-concurrency",
        type=int,
        default=100,
        metavar="N",
        help="answer 503 beyond N open connections per worker (100)",
    )
    p.add_argument(
        "--forwarded-allow-ips",
        metavar="IPS",
        help="proxies whose X-Forwarded-For/-Proto are believed (comma-separated; "
        "default $FORWARDED_ALLOW_IPS or 127.0.0.1)",
    )
    c.db(p)


def _other_commands(c: _Commands) -> None:
    """token, check, rulesets, plugins."""
    _add_token_commands(c.sub, c.db)
    _add_match_commands(c.sub, c.db)

    p = c.add("check", cmd_check, "validate a ruleset without rating anything")
    p.add_argument("ruleset", help="ruleset TOML file or bundled name")
    p.add_argument("--show", action="store_true", help="print the ruleset with every default")


class UsageError(Exception):
    """A command line that argparse refuses (its message; exit status 2)."""

    def __init__(self, message: str, usage: str) -> None:
        super().__init__(message)
        self.usage = usage


class _Parser(argparse.ArgumentParser):
    """argparse, raising :class:`UsageError` instead of exiting, so that ``--json``
    can report a bad command line as a JSON error too."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(message, self.format_usage())


def error_json(exc: BaseException, command: str | None, status: int) -> dict[str, Any]:
    """The ``--json`` form of an error: its type, message, the field and value it names
    (when it does) and the line of the input file (when known), and the exit status.

    A ruleset's error names its place after ``@`` (``... @ ruleset.update.params``): the
    field is then that path within the ruleset, with the key the message names
    (``update.params.k_factor``), and the value is the one the message quotes."""
    message = str(exc)
    field = getattr(exc, "field", None)
    line = getattr(exc, "line", None)
    value = None
    where = _WHERE.search(message)
    text = message[: where.start()] + message[where.end() :] if where else message
    found = _VALUE.search(text)
    if found:
        field = field or found.group(1)
        value = found.group(2)
    unknown = _UNKNOWN.search(text)
    if unknown and value is None:
        field, value = field or unknown.group(1), unknown.group(2)
    if where:
        field, value = _ruleset_field(text, where.group(1), field, value)
    if line is None and (at := _AT_LINE.search(message)):
        line = int(at.group(1))
    return {
        "error": {
            "type": type(exc).__name__,
            "command": command,
            "message": message,
            "field": field,
            "value": _unquoted(value),
            "line": line,
            "status": status,
        }
    }


def _ruleset_field(
    text: str, path: str, field: str | None, value: str | None
) -> tuple[str | None, str | None]:
    """The field and value of a ruleset's error at ``path`` (``update.params``)."""
    keys = _UNKNOWN_KEYS.search(text)
    if keys:  # the (first) key the table may not have
        return ".".join(p for p in (path, keys.group(1)) if p), None
    got = _GOT.search(text)
    if got:  # "expected a number, got '24' @ ruleset.update.params.k_factor"
        return path or field, got.group(1)
    if field and field != path and not path.endswith(f".{field}"):
        return ".".join(p for p in (path, field) if p), value
    return path or field, value


def _unquoted(value: str | None) -> str | None:
    """A value the message quotes as a Python string (``'24'``) without the quotes."""
    if value is not None and len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value


_WHERE = re.compile(r" @ ruleset\.?([\w.\[\]]*)")
_UNKNOWN_KEYS = re.compile(r"unknown key\(s\) '([^']*)'")
_GOT = re.compile(r"\bgot (.+?)(?: \(|;|$)")
_UNKNOWN = re.compile(r"unknown (\w+) '([^']*)'")
_VALUE = re.compile(
    r"'([^']+)' (?:must|is not|is later|is earlier)(?:[^:]|:(?! ))*: (.+?)(?: \(|$)"
)  # (a colon without a space after it, as in a time, is not the value's colon)
_AT_LINE = re.compile(r"\bline (\d+)")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``rankcraft``."""
    parser = _Parser(
        prog="rankcraft",
        description="Skill ratings and player-facing ranks from match histories.",
    )
    parser.add_argument("--version", action="version", version=f"rankcraft {__version__}")
    parser.add_argument(
        "--plugins-dir",
        action="append",
        default=[],
        metavar="DIR",
        help="load every module in DIR as a plugin, named after its file (repeatable; "
        f"also ${PLUGINS_DIR_ENV})",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    commands = _Commands(sub)
    for group in (
        _replay_commands,
        _read_commands,
        _model_commands,
        _serve_command,
        _other_commands,
    ):
        group(commands)
    return parser


def _without_password(text: str, args: argparse.Namespace) -> str:
    """``text`` with the command's database URL masked (``mask_url``): messages raised
    elsewhere (League.open) may quote the URL as given, password included."""
    db = getattr(args, "db", None) or os.environ.get(DB_ENV)
    if db and is_postgres_url(db):
        return text.replace(db, mask_url(db))
    return text


def _show_warning(command: str, err: TextIO, others: Callable[..., None]) -> Callable[..., None]:
    """``warnings.showwarning`` for a command: a migrated stored ruleset is said as
    ``rankcraft COMMAND: warning: ...`` on ``err``; other warnings as Python shows them."""

    def show(message: Warning | str, category: type[Warning], *rest: Any, **kw: Any) -> None:
        if issubclass(
            category, RulesetMigrationWarning | ImportedRulesetWarning | FirstContractWarning
        ):
            err.write(f"rankcraft {command}: warning: {message}\n")
        else:
            others(message, category, *rest, **kw)

    return show


def main(
    argv: Sequence[str] | None = None, *, out: TextIO | None = None, err: TextIO | None = None
) -> int:
    """Run ``rankcraft`` with ``argv``; return the exit status."""
    out = out or sys.stdout
    err = err or sys.stderr
    parser = build_parser()
    words = list(sys.argv[1:] if argv is None else argv)
    try:
        args = parser.parse_args(words)
    except SystemExit as exc:
        return int(exc.code or 0)
    except UsageError as exc:
        sys.stderr.write(f"{exc.usage}rankcraft: error: {exc}\n")  # (where argparse writes)
        if "--json" in words:
            _emit_json(error_json(exc, None, 2), out)
        return 2
    try:
        with _plugin_dirs(args.plugins_dir), warnings.catch_warnings():
            warnings.simplefilter("always", RulesetMigrationWarning)  # said, not raised
            warnings.simplefilter("always", ImportedRulesetWarning)
            warnings.simplefilter("always", FirstContractWarning)
            warnings.showwarning = _show_warning(args.command, err, warnings.showwarning)
            return int(args.func(args, out, err))
    except InputError as exc:
        hint = _hint(exc, args)
        err.write(f"rankcraft {args.command}: error: {_without_password(str(exc), args)}{hint}\n")
        _json_error(args, exc, out, 2)
        return 2
    except RankcraftError as exc:
        err.write(f"rankcraft {args.command}: error: {_without_password(str(exc), args)}\n")
        _json_error(args, exc, out, 1)
        return 1
    except KeyboardInterrupt:
        err.write(f"rankcraft {args.command}: interrupted; nothing of the open batch was kept\n")
        return 130
    except BrokenPipeError:
        return 0
    except Exception as exc:
        if os.environ.get("RANKCRAFT_DEBUG"):
            raise
        err.write(
            f"rankcraft {args.command}: internal error: {type(exc).__name__}: "
            f"{_without_password(str(exc), args)} "
            "(set RANKCRAFT_DEBUG=1 for a traceback)\n"
        )
        _json_error(args, exc, out, 1)
        return 1


def _hint(exc: InputError, args: argparse.Namespace) -> str:
    """What to do about an error, said after its message on standard error."""
    if isinstance(exc, DuplicateMatchError) and getattr(args, "skip_seen", None) is False:
        return " (--skip-seen passes over matches already recorded)"
    if isinstance(exc, RulesetError) and "unknown plugin '" in str(exc):
        # a league made with --plugins-dir needs the folder on every later command
        return (
            "; a plugin loaded from a folder needs that folder on every command: "
            f"rankcraft --plugins-dir DIR {args.command} ..., or set ${PLUGINS_DIR_ENV}"
        )
    return ""


def _json_error(args: argparse.Namespace, exc: BaseException, out: TextIO, status: int) -> None:
    """With ``--json``, the error as JSON on standard output too (its text stays on
    standard error)."""
    if getattr(args, "json", False):
        document = error_json(exc, args.command, status)
        document["error"]["message"] = _without_password(document["error"]["message"], args)
        with contextlib.suppress(BrokenPipeError, ValueError):
            _emit_json(document, out)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
