"""Commands that rate a match history into a league: ``replay``, ``demo`` (the bundled
football history) and ``sample`` (the README's example files).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any, TextIO

from ..data import DEMO_FILE, SAMPLE_RULESET, demo_matches_path, sample_matches_path
from ..engine import League
from ..errors import InputError, MatchError, RankcraftError
from ..io import MAX_PLAYERS, MAX_SIDES
from ..ruleset import load_ruleset
from ..store import Creation, creating, mask_url
from ..terminal import Bar, Steps, count_lines, plural, print_table, progress_for
from .match_files import LineTracker
from .options import Commands, check_top, checked_limits, database_exists, db_path
from .output import emit_json, leaderboard_rows, record_json, warn_home

DEMO_DB = "rankcraft-demo.sqlite"


def _progress(league: League, err: TextIO, path: str) -> Bar | Steps:
    """A replay's progress: a bar on a terminal (with a second one for a catch-up of
    season events), else a line per 10% of the file."""
    progress = progress_for(err, "replaying", count_lines(path))
    if isinstance(progress, Bar):  # a match long after the last one may make many events due
        league.catch_up_progress = progress.events
    return progress


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
    progress = _progress(league, err, path)
    started = time.perf_counter()
    source = LineTracker(path, home_from, window=max(commit_every, 0), limits=limits)
    try:
        summary = league.record_many(
            source, skip_seen=skip_seen, progress=progress, commit_every=commit_every
        )
        progress(summary.recorded + summary.skipped)  # (the last count: piped, its 100%)
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
    warn_home(league.ruleset, source.count, source.homes, path, err)
    return {
        "recorded": summary.recorded,
        "skipped": summary.skipped,
        "players": len(league),
        "matches": league.match_count,
        "seconds": round(seconds, 3),
    }


def _fitted_for_replay(
    args: argparse.Namespace, db: str, limits: tuple[int, int]
) -> tuple[Any, Any]:
    """The ruleset ``replay`` opens the league with, and the draw fit made first: a new
    league whose ruleset asks for its draw parameters to be fitted (docs/forecasts.md)
    gets them fitted on the whole file (each match held to ``limits`` before its work,
    errors naming their line); an existing one keeps the fitted ruleset it was made
    with, and refuses a ruleset of another name. From standard input (read once) the
    ruleset's own values are used."""
    from ..drawfit import fit_draws, wants_fit

    if args.ruleset is None:
        return None, None
    ruleset = load_ruleset(args.ruleset)
    if not wants_fit(ruleset):
        return args.ruleset, None
    if database_exists(db):  # the stored ruleset, fitted when the league was made
        with League.open(db) as league:
            stored = league.ruleset.name
        if stored != ruleset.name:
            raise InputError(
                f"'--ruleset' {ruleset.name!r} is not the league's ruleset {stored!r} ({db})"
            )
        return None, None
    if args.matches == "-":  # (read once: nothing to fit on first)
        return ruleset, None
    source = LineTracker(args.matches, args.home_from, limits=limits)
    try:
        return fit_draws(ruleset, source, before="9999-12-31")
    except MatchError as exc:
        line = source.line_of(exc.item)
        if exc.line is not None or line is None:
            raise
        raise exc.at_line(line) from None


def _check_late(args: argparse.Namespace, db: str) -> None:
    """``--late rerate|refuse`` asserts what the league's ruleset does with a late match
    (its ``[history] late``; the ruleset decides, the flag does not override it): a
    ruleset that says otherwise is refused before anything is written."""
    if args.late is None:
        return
    if database_exists(db):
        with League.open(db, create=False) as league:
            ruleset = league.ruleset
    elif args.ruleset is not None:
        ruleset = load_ruleset(args.ruleset)
    else:
        return  # (League.open refuses a new league without a ruleset)
    said = ruleset.history.late
    if said != args.late:
        raise InputError(
            f"'--late' must be what the ruleset {ruleset.name!r} says in its [history] "
            f"table, late = {said!r} (the ruleset decides what a late match does; to have "
            f"{args.late!r}, set late = {args.late!r} in the ruleset's [history] table): "
            f"{args.late}"
        )


def cmd_replay(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    db = db_path(args)
    limits = checked_limits(args)
    _check_late(args, db)
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
        emit_json({**result, "db": mask_url(db), **extra}, out)
    else:
        out.write(
            f"recorded {plural(result['recorded'], 'match')}"
            + (f" (skipped {result['skipped']:,} already recorded)" if result["skipped"] else "")
            + f" in {result['seconds']:.1f} s into {mask_url(db)}: "
            f"{plural(result['players'], 'player')}, {plural(result['matches'], 'match')} in all\n"
        )
    return 0


def cmd_demo(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    check_top(args.top)
    db = str(args.db or DEMO_DB)
    source = demo_matches_path()
    with creating(db) as creation, League.open(creation.target, "elo") as league:
        result = _replay_into(league, str(source), skip_seen=True, err=err)
    with League.open(db, create=False) as league:
        top = league.leaderboard(args.top)
        if args.json:
            emit_json(
                {
                    **result,
                    "db": db,
                    "ruleset": league.ruleset.name,
                    "leaderboard": [record_json(league, r) for r in top],
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
        headers, rows = leaderboard_rows(league, list(enumerate(top, 1)))
        print_table(rows, headers, out)
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
    if args.football:  # (the demo's history, to evaluate and tune on)
        files[folder / DEMO_FILE] = demo_matches_path().read_bytes()
    present = [str(p) for p in files if p.exists()]
    if present and not args.force:
        raise InputError(f"{', '.join(present)} already there: --force writes over them")
    for path, data in files.items():
        path.write_bytes(data)
    if args.json:
        emit_json({"written": [str(p) for p in files]}, out)
    else:
        go = "" if folder.resolve() == Path.cwd().resolve() else f"cd {folder} && "
        out.write(
            f"wrote {', '.join(str(p) for p in files)}: 120 made-up games of alice, bob, "
            f"carol, dan and four more (try: {go}rankcraft replay matches.jsonl.gz "
            "--ruleset elo --db league.sqlite)"
            + (
                f"; and the demo's 49,520 football matches (try: {go}rankcraft evaluate "
                f"{DEMO_FILE} --ruleset elo --ruleset football --test-from 2018-01-01)"
                if args.football
                else ""
            )
            + "\n"
        )
    return 0


def add_replay_commands(c: Commands) -> None:
    """demo, sample and replay."""
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
    p.add_argument(
        "--football",
        action="store_true",
        help=f"also write the demo's history, {DEMO_FILE} (49,520 international football "
        "matches, CC0), to evaluate and tune on",
    )
    p = c.add("replay", cmd_replay, "rate the matches of a JSON Lines or CSV file")
    c.matches(p, stdin=True)
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
    p.add_argument(
        "--late",
        choices=("rerate", "refuse"),
        default=None,
        help="assert what a match earlier than its players' latest does: rerate (placed at "
        'its time, every later match rated again) needs the ruleset\'s [history] late = "rerate"; '
        "refuse (the default of rulesets) an error; the ruleset decides, the flag checks it",
    )
    c.limits(p)
    c.home_from(p)
    c.db(p)
