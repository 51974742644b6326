"""The ``reset`` command: a season event of the ruleset's reset plugin, run on every player."""

from __future__ import annotations

import argparse
from typing import TextIO

from .options import Commands, check_at, open_existing
from .output import emit_json


def cmd_reset(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    with open_existing(args) as league:
        # a season event dated before the last match would rewrite what came after it
        check_at(league, args.at, "a season event cannot rewrite the matches after it")
        # the reset plugin refuses a kind it does not offer before anything changes
        changed = league.reset(args.kind, at=args.at)
    if args.json:
        emit_json({"kind": args.kind, "changed": changed}, out)
    else:
        out.write(f"{args.kind} reset: {changed:,} players changed\n")
    return 0


def add_reset_command(c: Commands) -> None:
    """reset."""
    p = c.add("reset", cmd_reset, "run a season event of the ruleset's reset plugin")
    p.add_argument("kind", help="the event, e.g. soft or hard")
    p.add_argument("--at", help="when the event happens (ISO-8601)")
    c.db(p)
