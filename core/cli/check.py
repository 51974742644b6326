"""The ``check`` command: a ruleset validated (and shown with every default) without rating."""

from __future__ import annotations

import argparse
from typing import TextIO

from ..engine import League
from ..ruleset import dumps, load_ruleset, to_dict
from .options import Commands
from .output import emit_json


def cmd_check(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    ruleset = load_ruleset(args.ruleset)
    League(ruleset)  # (its plugins' hooks bound and their states' forms made: nothing rated)
    if args.json:
        emit_json({"ok": True, "name": ruleset.name, "ruleset": to_dict(ruleset)}, out)
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


def add_check_command(c: Commands) -> None:
    """check."""
    p = c.add("check", cmd_check, "validate a ruleset without rating anything")
    p.add_argument("ruleset", help="ruleset TOML file or bundled name")
    p.add_argument("--show", action="store_true", help="print the ruleset with every default")
