"""Commands that list what is installed: ``rulesets`` (the bundled ones) and ``plugins``."""

from __future__ import annotations

import argparse
from typing import TextIO

from ..errors import RankcraftError
from ..installed import installed_plugins
from ..ruleset import bundled_names, load_ruleset, to_dict
from ..terminal import print_table
from .options import Commands
from .output import emit_json


def cmd_rulesets(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    plugins = installed_plugins()
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
        emit_json(rows, out)
    else:
        for row in rows:
            out.write(f"{row['name']:<12} {row.get('description') or row.get('error')}\n")
    return 0


def cmd_plugins(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    infos = installed_plugins().info()
    if args.json:
        emit_json(
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
        print_table(rows, ["plugin", "distribution", "slots"], out)
        if any(i.contract == 1 for i in infos):
            out.write(
                "* written for the first hook contract: adapted, at its speed (see "
                "'Migrating to hook contract 2' in docs/plugins.md)\n"
            )
    return 0


def add_ruleset_commands(c: Commands) -> None:
    """rulesets and plugins."""
    c.add("rulesets", cmd_rulesets, "list the bundled rulesets")
    c.add("plugins", cmd_plugins, "list installed plugins with versions and slots")
