"""The ``rankcraft`` command line (docs/cli.md): :func:`main` and :func:`build_parser`, the
parser assembled from the command groups, each a module that adds its subcommands:

- ``replay``: demo, sample, replay; ``reads``: leaderboard, player, predict;
  ``import_export``: export, import; ``reset``; ``corrections``: void, correct, edits;
  ``evaluate``; ``tune``;
  ``rulesets``: rulesets, plugins; ``serve``: serve, token; ``match``; ``check``;
  ``consume`` (a league fed from NATS JetStream);
- shared by them: ``options`` (the options every group uses, their checks, the league
  ``--db`` names), ``output`` (tables, ``--json``, warnings, errors) and ``match_files``
  (match files read with their lines, held to ``--max-sides`` and ``--max-players``).

Errors go to standard error; the exit status is 2 for bad input, 1 for anything else.
A command that fails on bad input leaves the database exactly as it was (and does not
create it).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import warnings
from collections.abc import Iterator, Sequence
from typing import NoReturn, TextIO

from ..contract1 import FirstContractWarning
from ..errors import InputError, PluginError, RankcraftError
from ..manager import PLUGINS_DIR_ENV
from ..ruleset import ImportedRulesetWarning, RulesetMigrationWarning
from ..version import __version__
from . import (
    check,
    consume,
    corrections,
    evaluate,
    import_export,
    live,
    match,
    reads,
    replay,
    reset,
    rulesets,
    serve,
    tune,
)
from .options import DB_ENV, DEFAULT_DB, Commands
from .output import emit_json, error_hint, error_json, json_error, show_warning, without_password
from .replay import DEMO_DB

__all__ = ["DB_ENV", "DEFAULT_DB", "DEMO_DB", "UsageError", "build_parser", "error_json", "main"]


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


class UsageError(Exception):
    """A command line that argparse refuses (its message; exit status 2)."""

    def __init__(self, message: str, usage: str) -> None:
        super().__init__(message)
        self.usage = usage


class _Parser(argparse.ArgumentParser):
    """argparse, raising :class:`UsageError` instead of exiting, so that ``--json``
    can report a bad command line as a JSON error too; an argument no command takes is
    refused with the usage of the command it was given to (``evaluate --score rps``:
    evaluate's), not the top level's."""

    commands: dict[str, argparse.ArgumentParser]  # (set by build_parser)

    def error(self, message: str) -> NoReturn:
        raise UsageError(message, self.format_usage())

    def parse_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: None = None
    ) -> argparse.Namespace:
        found, extra = self.parse_known_args(args, namespace)
        if extra:
            commands = getattr(self, "commands", {})
            command = commands.get(getattr(found, "command", None) or "", self)
            command.error(f"unrecognized arguments: {' '.join(extra)}")
        return found


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

    commands = Commands(sub)
    parser.commands = commands.parsers
    for group in (  # (in the order of the help's list of commands)
        replay.add_replay_commands,  # demo, sample, replay
        reads.add_read_commands,  # leaderboard, player, predict
        import_export.add_import_export_commands,  # export, import
        reset.add_reset_command,
        corrections.add_correction_commands,  # void, correct, edits
        evaluate.add_evaluate_command,
        live.add_compare_live_command,
        tune.add_tune_command,
        rulesets.add_ruleset_commands,  # rulesets, plugins
        serve.add_serve_commands,  # serve, token
        match.add_match_command,
        check.add_check_command,
        consume.add_consume_command,
    ):
        group(commands)
    return parser


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
            emit_json(error_json(exc, None, 2), out)
        return 2
    try:
        with _plugin_dirs(args.plugins_dir), warnings.catch_warnings():
            warnings.simplefilter("always", RulesetMigrationWarning)  # said, not raised
            warnings.simplefilter("always", ImportedRulesetWarning)
            warnings.simplefilter("always", FirstContractWarning)
            warnings.showwarning = show_warning(args.command, err, warnings.showwarning)
            return int(args.func(args, out, err))
    except PluginError as exc:  # (a plugin that failed or broke its contract: named)
        err.write(f"rankcraft {args.command}: error: {without_password(str(exc), args)}\n")
        json_error(args, exc, out, 2)
        return 2
    except InputError as exc:
        hint = error_hint(exc, args)
        err.write(f"rankcraft {args.command}: error: {without_password(str(exc), args)}{hint}\n")
        json_error(args, exc, out, 2)
        return 2
    except RankcraftError as exc:
        err.write(f"rankcraft {args.command}: error: {without_password(str(exc), args)}\n")
        json_error(args, exc, out, 1)
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
            f"{without_password(str(exc), args)} "
            "(set RANKCRAFT_DEBUG=1 for a traceback)\n"
        )
        json_error(args, exc, out, 1)
        return 1
