"""The ``match`` command: matchmaking (rank filters, match quality, balanced teams)."""

from __future__ import annotations

import argparse
from typing import TextIO

from ..errors import InputError
from ..terminal import print_table
from .options import Commands, open_existing
from .output import column, emit_json

OPPONENTS_WIDTH = 2.0
"""``match opponents``' width in percentiles when ``--width`` is not given (at least one
place: 100/N percentiles among N active players)."""


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
    from ..matchmaking import DEFAULT_WIDEN, Opponents, RankFilter

    with open_existing(args, read_only=True) as league:
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
                emit_json(found.to_dict(), out)
                return 0
            mark = "" if found.enough else f" (fewer than the {args.needed} needed)"
            out.write(
                f"{found.found} of {found.active} active players within {found.width:.3g} "
                f"percentiles: [{found.low:.2f}, {found.high:.2f}]{mark}\n"
            )
            picked = found.candidates  # (the value as the leaderboard writes it)
            values = column(c.value for c in picked)
            rows = [[c.id, v, f"{c.percentile:.2f}"] for c, v in zip(picked, values, strict=True)]
            print_table(rows, ["player", "value", "percentile"], out)
        elif args.match_command == "quality":
            from ..matchmaking import quality

            sides = [[p for p in side.split(",") if p] for side in args.sides]
            value, judged_by = quality(league, sides, at=args.at, home=args.home)
            if args.json:  # (the answer of POST /match/quality)
                chances = league.predict(sides, at=args.at, home=args.home)
                answer = {"quality": value, "judged_by": judged_by, "probabilities": chances}
                emit_json({"sides": sides, **answer}, out)
            else:
                out.write(f"{value:.4f}\n")
        else:
            teams = league.balance(args.players, args.teams, at=args.at)
            if args.json:
                emit_json(teams.to_dict(), out)
            else:
                for team in teams.teams:
                    out.write(",".join(team) + "\n")
                out.write(f"quality {teams.quality:.4f} ({teams.method}, {teams.judged_by})\n")
    return 0


def add_match_command(c: Commands) -> None:
    """match, with its actions opponents, quality and balance."""
    text = "matchmaking: rank filters, match quality and balanced teams (docs/matchmaking.md)"
    match = c.sub.add_parser("match", help=text, description=text)
    match.set_defaults(func=cmd_match)
    actions = match.add_subparsers(dest="match_command", required=True, metavar="ACTION")

    def action(name: str, help_: str) -> argparse.ArgumentParser:
        p: argparse.ArgumentParser = actions.add_parser(name, help=help_, description=help_)
        p.add_argument("--json", action="store_true", help="machine-readable output")
        c.db(p)
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
