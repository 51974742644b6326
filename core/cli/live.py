"""The ``compare-live`` command: a champion league and a challenger league fed the same
matches, scored on the matches both hold as ``rankcraft evaluate`` scores two rulesets
(:func:`rankcraft.livecompare.compare_live`)."""

from __future__ import annotations

import argparse
from typing import TextIO

from ..errors import InputError
from ..io import parse_time
from ..store import mask_url
from .evaluate import add_bootstrap_options, check_bootstrap, evaluation_tables
from .options import Commands, database_exists, db_path, open_existing
from .output import emit_json


def cmd_compare_live(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from ..livecompare import compare_live

    if args.test_from is not None:
        parse_time(args.test_from, field="--test-from")
    check_bootstrap(args)
    champion_db = db_path(args)
    for option, db in (("--db", champion_db), ("--challenger", args.challenger)):
        if not database_exists(db):
            raise InputError(f"'{option}': no league at {mask_url(db)!r}")
    with (
        open_existing(args, read_only=True) as champion,
        open_existing(argparse.Namespace(db=args.challenger), read_only=True) as challenger,
    ):
        result = compare_live(
            champion,
            challenger,
            test_from=args.test_from,
            samples=args.bootstrap,
            seed=args.seed,
            block_days=args.block_days,
        )
    if args.json:
        emit_json(result.to_dict(), out)
        return 0
    left_out = ""
    if result.champion_only or result.challenger_only:
        left_out = (
            f" (left out: {result.champion_only:,} only the champion holds, "
            f"{result.challenger_only:,} only the challenger)"
        )
    out.write(
        f"{mask_url(champion_db)} against {mask_url(args.challenger)}: "
        f"{result.common:,} matches both hold{left_out}, one step ahead from "
        f"{result.test_from}\n\n"
    )
    evaluation_tables(result.results, result.champion, result.differences, out)
    return 0


def add_compare_live_command(c: Commands) -> None:
    """compare-live."""
    p = c.add(
        "compare-live",
        cmd_compare_live,
        "score a champion league and a challenger league on the matches both hold",
    )
    c.db(p)
    p.add_argument(
        "--challenger",
        required=True,
        metavar="DB",
        help="the challenger league: SQLite database file or postgresql:// URL",
    )
    p.add_argument(
        "--test-from",
        metavar="DATE",
        help="score matches played on or after this ISO-8601 date or date-time (UTC; "
        "default: the first match both hold, every match scored)",
    )
    add_bootstrap_options(p)
