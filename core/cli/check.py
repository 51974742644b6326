"""The ``check`` command: a ruleset validated (and shown with every default) without
rating anything, its scheduled season events each run once on a scratch league."""

from __future__ import annotations

import argparse
import contextlib
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TextIO

from ..errors import InputError, PluginError, RulesetError
from ..ruleset import Ruleset, dumps, load_ruleset, to_dict
from ..rulesetlines import with_line
from ..scratch import scratch_league
from .options import Commands
from .output import emit_json

REHEARSAL_AT = datetime(2000, 1, 3, tzinfo=UTC)
"""When the scratch league's one match is played (its events run a day later)."""


def rehearse_events(ruleset: Ruleset, source: str) -> list[str]:
    """Run each ``[[resets]]`` entry's event once on a scratch league in memory (one
    match between two made-up players first, where the ruleset rates one, so that the
    event has players to move); return the kinds that ran.

    :param source: the ruleset's file or name, for the error.
    :raises RulesetError: an event fails, naming the entry, its kind and the plugin's
        message (a kind the plugin does not run, a missing param it needs).
    """
    league = scratch_league(ruleset)
    with contextlib.suppress(InputError):  # (a ruleset for other shapes of match:
        league.record(  # the events then run on no players)
            {"id": "check", "played_at": REHEARSAL_AT, "teams": [["a"], ["b"]], "scores": [1, 0]}
        )
    ran = []
    for index, schedule in enumerate(ruleset.resets):
        try:
            league.reset(schedule.kind, REHEARSAL_AT + timedelta(days=1 + index))
        except (InputError, PluginError) as exc:
            raise RulesetError(
                f"{source}: the scheduled event {schedule.kind!r} fails when run on a "
                f"scratch league: {exc} @ ruleset.resets[{index}]"
            ) from None
        ran.append(schedule.kind)
    return ran


def cmd_check(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    ruleset = load_ruleset(args.ruleset)
    path = Path(args.ruleset)
    try:  # (its plugins' hooks bound and its events run)
        ran = rehearse_events(ruleset, str(path) if path.is_file() else ruleset.name)
    except RulesetError as exc:
        raise with_line(exc, path.read_text("utf-8") if path.is_file() else "") from None
    if args.json:
        emit_json(
            {"ok": True, "name": ruleset.name, "events_ran": ran, "ruleset": to_dict(ruleset)}, out
        )
    elif args.show:
        out.write(dumps(ruleset))
    else:
        slots = ", ".join(
            f"{slot}={spec.plugin}"
            for slot in ("update", "initial", "decay", "expectation", "team", "rank", "reset")
            if (spec := getattr(ruleset, slot)) is not None
        )
        events = f"; each scheduled event ran once on a scratch league: {', '.join(ran)}"
        out.write(f"ok: ruleset {ruleset.name!r} ({slots}){events if ran else ''}\n")
    return 0


def add_check_command(c: Commands) -> None:
    """check."""
    p = c.add(
        "check",
        cmd_check,
        "validate a ruleset without rating anything (its scheduled events run once on a "
        "scratch league)",
    )
    p.add_argument("ruleset", help="ruleset TOML file or bundled name")
    p.add_argument("--show", action="store_true", help="print the ruleset with every default")
