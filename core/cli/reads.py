"""Commands that read a league: ``leaderboard``, ``player`` (a player's state and matches,
explained) and ``predict`` (a match's forecast).
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import math
import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, TextIO

from ..corrections import Edit
from ..engine import League, UnknownPlayerError
from ..errors import InputError
from ..io import parse_time
from ..model import Match, PlayerRecord, format_time, item_names, shown_state
from ..predictions import meta_match
from ..store import mask_url
from ..suggest import did_you_mean, player_candidates
from ..terminal import plural, print_table
from .corrections import correction_line
from .options import Commands, check_at, check_top, database_exists, db_path, open_existing
from .output import (
    column,
    emit_json,
    leaderboard_rows,
    rank_columns,
    record_json,
    skill_columns,
)


def _did_you_mean_player(league: League, player: str) -> str:
    """:func:`did_you_mean` for an unknown player id (:func:`player_candidates`)."""
    return did_you_mean(player, player_candidates(league, player))


def _known_player(league: League, player: str) -> PlayerRecord:
    """The player's record; an unknown id is refused with the ids most like it."""
    if player in league:
        return league.player(player)
    raise UnknownPlayerError(f"unknown player {player!r}{_did_you_mean_player(league, player)}")


@contextlib.contextmanager
def _league_at(args: argparse.Namespace) -> Iterator[tuple[League, League]]:
    """The league at ``--db`` (read-only) and the league the command answers from: the
    same one, or with ``--at`` the league as it stood then (:meth:`League.as_of`)."""
    with open_existing(args, read_only=True) as league:
        if args.at is None:
            yield league, league
            return
        then = league.as_of(parse_time(args.at, field="--at"))
        try:
            yield league, then
        finally:
            then.close()


def _player_then(league: League, then: League, args: argparse.Namespace) -> PlayerRecord:
    """``player``'s record in ``then``; an id unknown then, or unknown now but named by
    the audit (a player whom only voided matches made), is refused saying so."""
    if args.id in then:
        return then.player(args.id)
    if args.id in league:  # (``then`` is the league at --at)
        raise UnknownPlayerError(
            f"unknown player {args.id!r} at '--at' {args.at}: no match of theirs by then"
        )
    if league.edits(player=args.id):
        raise UnknownPlayerError(
            f"unknown player {args.id!r}: the league has no match of theirs now "
            f"(their edits: rankcraft edits --player {args.id})"
        )
    return _known_player(league, args.id)


def cmd_leaderboard(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    check_top(args.top)
    if args.offset < 0:
        raise InputError(f"'--offset' must be a whole number >= 0: {args.offset}")
    if args.active_days is not None and not args.active_days >= 0:
        raise InputError(f"'--active-days' must be a number of days >= 0: {args.active_days}")
    with _league_at(args) as (_, league):
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
            emit_json(
                [
                    {
                        "place": place,
                        "standing": standings.get(r.id),
                        "display": league.shown(r).to_dict(),
                        **record_json(league, r),
                    }
                    for place, r in top
                ],
                out,
            )
        else:
            headers, rows = leaderboard_rows(league, top)
            print_table(rows, headers, out)
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


SHOWN_ITEMS = 8
"""A state's tuple field of at most this many items is shown whole (one value per surface,
per context); a longer one (a history) by its length and its last three items."""


def _fmt_state(state: Any) -> str:
    if state is None:
        return "-"
    parts = []
    for name, value in shown_state(state):  # (on the scale players see: Glicko-2's rating)
        if isinstance(value, float):
            parts.append(f"{name} {value:.2f}")
        elif isinstance(value, tuple) and len(value) > SHOWN_ITEMS:  # (a history: its end)
            shown = "; ".join(map(_fmt_item, value[-3:]))
            parts.append(f"{name} {len(value)} (latest: {shown})")
        elif isinstance(value, tuple):
            named = item_names(type(state), name)  # ("base -0.01; rho 0.06; home 0.34; 0.34")
            items = [
                f"{named[k]} {_fmt_item(item)}" if k < len(named) else _fmt_item(item)
                for k, item in enumerate(value)
            ]
            parts.append(f"{name} {'; '.join(items) or 'none'}")
        else:
            parts.append(f"{name} {value}")
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
    if args.plot and args.at is not None:
        raise InputError(f"'--plot' draws the whole history, not the league at '--at': {args.at}")
    with _league_at(args) as (now, league):
        record = _player_then(now, league, args)
        if args.plot:
            from ..plots import plot_player

            written = plot_player(league, args.id, args.plot)
            if not args.json:
                err.write(f"wrote the plot of {args.id!r} to {written.resolve()}\n")
        rows = league.history(args.id, args.last) if args.at is None else []
        standing = league.standings([args.id]).get(args.id)
        edits = now.edits(player=args.id)
        curve = _curve(league, args) if args.curve else []
        if args.json:
            document = _player_json(league, record, standing, rows)
            document["corrections"] = [e.to_dict() for e in edits]
            if args.curve:
                document["curve"] = curve
            emit_json(document, out)
            return 0
        _write_player_state(league, record, standing, out)
        _write_rows(league, rows, args.id, out)
        _write_corrections(edits, out)
        _write_curve(curve, out)
    return 0


def _curve(league: League, args: argparse.Namespace) -> list[dict[str, Any]]:
    """``player --curve``: the smoothed skill of a whole-history model, one point per day
    the player played (refused for a ruleset without one)."""
    if league.ruleset.fit is None:
        raise InputError(
            f"'--curve' needs a ruleset with a whole-history model (a [fit] slot); "
            f"{league.ruleset.name!r} rates forward only"
        )
    if not league.has_curve:
        raise InputError(
            f"'--curve': the whole-history model of {league.ruleset.name!r} (plugin "
            f"{league.ruleset.fit.plugin!r}) gives no smoothed curve, only the fit as it "
            "stands (its players' records)"
        )
    skill = league.display.skill
    return [{"at": format_time(at), "skill": skill(state)} for at, state in league.curve(args.id)]


def _write_curve(curve: Sequence[Mapping[str, Any]], out: TextIO) -> None:
    """The smoothed skill's lines, oldest first."""
    if curve:
        out.write(f"\nsmoothed skill (the whole-history fit), {plural(len(curve), 'point')}:\n")
    for point in curve:
        shown = ", ".join(f"{k} {_fmt_item(v)}" for k, v in point["skill"].items())
        out.write(f"  {point['at']}  {shown}\n")


def _write_rows(league: League, rows: Sequence[Any], player: str, out: TextIO) -> None:
    """The player's latest matches, newest first, each change explained."""
    resets = _resets_before(rows, player, refitted=league.ruleset.fit is not None)
    if rows:
        out.write(
            f"\nlast {plural(len(rows), 'match')}"
            + (", newest first" if len(rows) > 1 else "")
            + (" (* after a season reset)" if resets else "")
            + ":\n"
        )
    for row in rows:
        out.write(_history_line(league, row, player, resets))


def _write_corrections(edits: Sequence[Edit], out: TextIO) -> None:
    """The corrections of the player's matches, oldest first: voided, corrected, late."""
    if edits:
        out.write(f"\n{plural(len(edits), 'correction')} of their matches, oldest first:\n")
    for edit in edits:
        out.write(correction_line(edit))


def _player_json(
    league: League, record: PlayerRecord, standing: str | None, rows: Sequence[Any]
) -> dict[str, Any]:
    """``player --json``: the record, standing, shown value and latest matches."""
    codec = league.codec
    return {
        "player": record_json(league, record),
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
    }


def _write_player_state(
    league: League, record: PlayerRecord, standing: str | None, out: TextIO
) -> None:
    """The lines of ``player`` above its matches: the player's states, standing, shown value."""
    last = format_time(record.last_played) if record.last_played else "-"
    out.write(f"{record.id}: {plural(record.matches, 'match')}, last played {last}\n")
    out.write(f"  skill: {_fmt_state(record.skill)}\n")
    if record.rank is not None:
        out.write(f"  rank:  {_fmt_state(record.rank)}\n")
    if standing is not None:
        out.write(f"  standing: {standing}\n")
    shown = league.shown(record)
    if shown.interval is not None:
        points = league.display.rank_location
        if shown.value is None:
            low, high = column(shown.interval)
            value = ""
        elif points is not None and record.rank is not None:  # (the rank's points)
            low, high = column(shown.interval)
            value = column([getattr(record.rank, points)])[0] + "; "
        else:
            value, low, high = column([shown.value, *shown.interval])
            value += "; "
        # (the interval is the skill's: beside a rank layer's points it would read as theirs)
        out.write(f"  shown: {value}skill's 95% interval {low} to {high}\n")


def _history_line(league: League, row: Any, player: str, resets: set[int]) -> str:
    """One of the player's matches as ``player`` lists it: the result, the opponents, the
    expected score, the changes of skill and rank, and why (a ``*`` after a reset)."""
    change = row.report.change(player)
    m = row.match
    opponents = " / ".join(",".join(side) for i, side in enumerate(m.teams) if i != change.side)
    mates = [p for p in m.teams[change.side] if p != player]
    if mates:
        opponents = f"{','.join(mates)} vs {opponents}"
    expected = row.report.expected[change.side]
    side_result = _side_result(m, change.side)
    if side_result is None:
        result = f"placed {m.places[change.side]} of {len(m.teams)}"
    else:
        result = {1.0: "won", 0.5: "drew", 0.0: "lost"}[side_result]
    parts = [f"expected {expected:.3f}"]
    loc = skill_columns(league)[:1]
    if loc:
        skill = league.display.skill
        before, after = skill(change.skill_used)[loc[0]], skill(change.skill_after)[loc[0]]
        parts.append(_delta(loc[0], before, after))
    rank_loc = rank_columns(league)[:1]
    if rank_loc and change.rank_after is not None:
        field = rank_loc[0]
        before, after = getattr(change.rank_before, field), getattr(change.rank_after, field)
        parts.append(_delta(field, before, after))
    if change.factors:
        parts.append("why: " + ", ".join(f"{k} {v:.4g}" for k, v in change.factors.items()))
    return (
        f"{'*' if row.seq in resets else ' '} {m.played_at.date().isoformat()}  "
        f"{m.id}: {result} {'with' if mates else 'vs'} {opponents}; " + "; ".join(parts) + "\n"
    )


def _resets_before(rows: Sequence[Any], player: str, refitted: bool) -> set[int]:
    """The ``seq`` of each of ``rows`` (newest first) before which the player's stored
    state changed outside a match: a season reset (or an import). With ``refitted`` (a
    whole-history model, whose refits move skills between matches) the rank only."""
    out = set()
    for newer, older in itertools.pairwise(rows):
        before = newer.report.change(player)
        after = older.report.change(player)
        moved = before.skill_before != after.skill_after and not refitted
        if moved or before.rank_before != after.rank_after:
            out.add(newer.seq)
    return out


def _delta(name: str, old: float, new: float) -> str:
    """``rating 1723.1 -> 1744.2 (+21.1)``: the three numbers written alike."""
    text = column([old, new, abs(new - old)])
    return f"{name} {text[0]} -> {text[1]} ({'+' if new >= old else '-'}{text[2]})"


def _side_result(match: Match, side: int) -> float | None:
    if len(match.teams) != 2:
        return None
    from ..model import pair_score

    return pair_score(match.places, side, 1 - side)


def _season_value(text: str) -> str | int:
    """A season given on the command line: a whole number as a number, else the text."""
    return int(text) if re.fullmatch(r"-?[0-9]+", text) else text


def cmd_predict(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    sides = [[p for p in side.split(",") if p] for side in args.sides]
    db = db_path(args)
    stored = database_exists(db)  # (without a database every player is new)
    if stored:
        league = open_existing(args, read_only=True)
    else:
        if args.ruleset is None:
            raise InputError(
                f"no database at {mask_url(db)!r}: give --ruleset to predict for new players"
            )
        league = League(args.ruleset)
    with league:
        check_at(league, args.at, "the forecast is made from the ratings after it")
        if stored and not args.new_ok:
            for player in (p for side in sides for p in side):
                if player not in league:
                    raise UnknownPlayerError(
                        f"unknown player {player!r}{_did_you_mean_player(league, player)}; "
                        "--new-ok predicts them as new players"
                    )
        if args.meta is None:
            forecast = league.forecast(sides, at=args.at, home=args.home, season=args.season)
        else:
            forecast = league.forecast(sides, match=_meta_match(args, league, sides))
    if args.json:
        document = {"sides": sides, "probabilities": list(forecast.probabilities)}
        emit_json({**document, **forecast.to_dict()}, out)
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
        print_table(rows, ["P(first)", "expected place", "expected score", "side"], out)
        out.write("predicted order: " + ", ".join(names[i] for i in forecast.order) + "\n")
    elif forecast.win is not None and forecast.draw is not None:
        draw = f"{forecast.draw:.4f}"
        rows = [
            [f"{w:.4f}", draw, s, name]
            for w, s, name in zip(forecast.win, score, names, strict=True)
        ]
        print_table(rows, ["P(win)", "P(draw)", "expected score", "side"], out)
    else:
        print_table(
            [[s, name] for s, name in zip(score, names, strict=True)],
            ["expected score", "side"],
            out,
        )
        out.write(
            "(the ruleset has no draw model: a draw counts half a win, so this is a win "
            "probability only where draws cannot happen)\n"
        )
    return 0


def add_read_commands(c: Commands) -> None:
    """leaderboard, player and predict."""
    _add_leaderboard(c)
    _add_player(c)
    _add_predict(c)


def _add_leaderboard(c: Commands) -> None:
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
    _add_at(p, "the board")
    c.db(p)


def _add_at(p: argparse.ArgumentParser, what: str) -> None:
    p.add_argument(
        "--at",
        metavar="TIME",
        help=f"{what} as the league stood at TIME (ISO-8601): a replay of the matches "
        "played by then, as corrected now",
    )


def _add_player(c: Commands) -> None:
    p = c.add("player", cmd_player, "one player's state and latest matches, explained")
    p.add_argument("id", help="player id")
    p.add_argument("--last", type=int, default=10, help="how many matches to show (default 10)")
    p.add_argument("--plot", metavar="FILE.png", help="draw skill, uncertainty and rank over time")
    p.add_argument(
        "--curve",
        action="store_true",
        help="the smoothed skill through time of a whole-history model ([fit] slot)",
    )
    _add_at(p, "the player's state (no matches listed)")
    c.db(p)


def _meta_match(args: argparse.Namespace, league: League, sides: list[list[str]]) -> Match:
    """The match ``predict --meta`` forecasts (:func:`rankcraft.predictions.meta_match`):
    ``sides`` at ``--at`` or the league's latest match, ``--home``, ``--meta``'s object."""
    try:
        meta = json.loads(args.meta)
    except json.JSONDecodeError as exc:
        raise InputError(f"'--meta' is not JSON ({exc.msg}): {args.meta!r}"[:300]) from None
    if not isinstance(meta, dict):
        raise InputError(f"'--meta' must be a JSON object: {args.meta!r}"[:300])
    latest = league.latest_played()
    return meta_match(sides, meta, args.at, args.home, latest, prefix="--", season=args.season)


def _add_predict(c: Commands) -> None:
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
    p.add_argument(
        "--meta",
        metavar="JSON",
        help="the match's meta as a JSON object, for a ruleset that reads it in a match of "
        "two sides (a surface: "
        '\'{"surface": "Clay"}\'); the match is at --at, else at the league\'s latest match',
    )
    c.db(p)
