"""The ``consume`` command: a league fed from NATS JetStream (:mod:`rankcraft.consume`)."""

from __future__ import annotations

import argparse
from typing import TextIO

from ..consume import ConsumeOptions, check_options, consume, preflight, status
from ..engine import League
from ..jetstream import nats_client
from ..store import mask_url
from .options import Commands, db_path
from .output import emit_json


def _options(args: argparse.Namespace) -> ConsumeOptions:
    return ConsumeOptions(
        nats=args.nats,
        stream=args.stream,
        subject=args.subject,
        batch=args.batch,
        durable=args.durable,
        dead_letter=args.dead_letter,
        events=args.events,
        max_messages=args.max_messages,
        idle_exit=args.idle_exit,
        ack_wait=args.ack_wait,
        pack=args.pack,
        relay=not args.no_relay,
    )


def cmd_consume(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    db = db_path(args)
    options = _options(args)
    check_options(options)  # (bad options change nothing: checked before the league opens)
    nats_client()
    if args.status:
        with League.open(db, create=False) as league:
            found = status(league, options, db)
        if args.json:
            emit_json(found, out)
        else:
            out.write(
                f"{found['stream']} {found['subject']} ({found['durable']}): lag "
                f"{found['lag']:,} messages, {found['acked']:,} acknowledged, "
                f"{found['ack_pending']:,} awaiting acknowledgement; the league has "
                f"{found['matches']:,} matches, {found['outbox']:,} events to publish\n"
            )
        return 0
    preflight(options)
    with League.open(db, args.ruleset) as league:
        counts = consume(league, options, db, err)
        done = {**counts.to_dict(), "matches": league.match_count, "db": mask_url(db)}
    if args.json:
        emit_json(done, out)
    else:
        out.write(
            f"consumed {done['consumed']:,} messages in {done['seconds']:.1f} s "
            f"({done['per_second']:,.0f}/s): {done['rated']:,} rated, {done['skipped']:,} "
            f"passed over, {done['dead']:,} dead-lettered; {done['matches']:,} matches in "
            f"{mask_url(db)}\n"
        )
    return 0


def add_consume_command(c: Commands) -> None:
    """consume."""
    p = c.add("consume", cmd_consume, "rate a league's matches from a NATS JetStream stream")
    c.db(p)
    p.add_argument("--nats", default="nats://127.0.0.1:4222", help="the NATS server's URL")
    p.add_argument("--stream", required=True, help="the JetStream stream holding the matches")
    p.add_argument("--subject", required=True, help="the league's subject of matches")
    p.add_argument("--ruleset", help="the ruleset of a new league (an existing one keeps its own)")
    p.add_argument(
        "--batch",
        type=int,
        default=10_000,
        help="matches per transaction, at most (10000: a batch is what has arrived)",
    )
    p.add_argument(
        "--durable", help="the durable consumer's name (default: from --db and --subject)"
    )
    p.add_argument("--dead-letter", help="where invalid matches go (default: SUBJECT.dead)")
    p.add_argument("--events", help="where rating changes go (default: SUBJECT.ratings)")
    p.add_argument("--max-messages", type=int, help="stop after N messages")
    p.add_argument(
        "--idle-exit", type=float, metavar="SECONDS", help="stop when nothing arrives for that long"
    )
    p.add_argument(
        "--ack-wait",
        type=float,
        default=30.0,
        metavar="SECONDS",
        help="redeliver what a dead consumer left unacknowledged after this long (30)",
    )
    p.add_argument(
        "--pack",
        type=int,
        default=1,
        metavar="N",
        help="events per published message, one JSON text a line (1: one event a message)",
    )
    p.add_argument(
        "--no-relay",
        action="store_true",
        help="publish the events from the consumer's own process (default: a second "
        "process publishes them while the consumer rates, on Linux)",
    )
    p.add_argument(
        "--status", action="store_true", help="print the lag and the league's count, and exit"
    )
