"""Commands that move players' states in and out of a league as JSON documents: ``export``
(written whole or not at all) and ``import`` (the file read as strict JSON, ``--max-future``
checked; the document itself is validated by ``League.import_state``).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TextIO

from .._files import write_atomically
from ..engine import League
from ..errors import InputError
from ..io import MAX_SECONDS_AHEAD
from ..jsontext import loads_strict
from ..ruleset import loads_stored_ruleset
from ..store import creating, mask_url
from ..terminal import plural
from .options import Commands, database_exists, db_path, open_existing
from .output import emit_json


def cmd_export(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    with open_existing(args, read_only=True) as league:
        document = league.export()
    if args.out:
        # never a truncated backup: a temporary file beside it, renamed over it when whole
        write_atomically(args.out, json.dumps(document, indent=2, ensure_ascii=False) + "\n")
        count = len(document.get("players", ()))
        if args.json:
            emit_json({"out": args.out, "players": count}, out)
        else:
            out.write(f"wrote {plural(count, 'player')} to {args.out}\n")
    else:
        emit_json(document, out)
    return 0


def cmd_import(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    try:
        text = sys.stdin.read() if args.file == "-" else Path(args.file).read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read {args.file!r}: {exc.strerror}") from None
    document = loads_strict(text, what=args.file)
    ruleset = args.ruleset
    db = db_path(args)
    if ruleset is None and not database_exists(db) and isinstance(document, dict):
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
        emit_json({"imported": count, "db": mask_url(db)}, out)
    else:
        out.write(f"imported {count:,} players into {mask_url(db)}\n")
    return 0


def add_import_export_commands(c: Commands) -> None:
    """export and import."""
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
