"""Commands of the HTTP service: ``serve`` (the league over HTTP, run by uvicorn) and
``token`` (the API tokens it accepts).
"""

from __future__ import annotations

import argparse
import os
import re
from collections.abc import Callable
from types import ModuleType
from typing import Any, TextIO

from ..engine import League
from ..errors import InputError
from ..extras import missing
from ..store import creating, mask_url, open_store
from ..terminal import print_table
from .options import Commands, database_exists, db_path
from .output import emit_json

SHUTDOWN_GRACE = 30
"""Seconds a stopping service waits for the requests under way before it cancels them (a
plugin that never returns must not keep SIGTERM from stopping the service)."""


def _serve_settings(args: argparse.Namespace, settings_class: Any) -> Any:
    """The service's settings from ``serve``'s options (errors name the option)."""
    try:
        settings = settings_class(
            auth_reads=args.auth_reads,
            cors_origins=args.cors_origin or (),
            max_body=args.max_body,
            max_sides=args.max_sides,
            max_players=args.max_players,
            max_future=args.max_future,
            max_batch=args.max_batch,
            header_timeout=args.header_timeout,
            body_timeout=args.body_timeout,
            lab_workers=args.lab_workers,
            lab_jobs_per_client=args.lab_jobs_per_client,
            lab_max_replays=args.lab_max_replays,
            lab_keep=args.lab_keep,
            lab_timeout=args.lab_timeout,
            lab_processes=args.lab_processes,
            challenger=args.challenger,
        )
    except InputError as exc:  # name the option, not the attribute
        named = re.sub(r"'(\w+)'", lambda m: f"'--{m[1].replace('_', '-')}'", str(exc), count=1)
        raise InputError(named) from None
    return settings


def cmd_serve(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    try:
        import uvicorn

        from .. import serve
    except ImportError:
        raise missing("the HTTP service needs", "Starlette and uvicorn", "serve") from None
    _check_serve_options(args)
    settings = _serve_settings(args, serve.Settings)
    db = db_path(args)
    if settings.challenger is not None and not database_exists(settings.challenger):
        raise InputError(f"'--challenger': no league at {mask_url(settings.challenger)!r}")
    # open (and create or migrate) the league once here, so that a bad database or
    # ruleset fails before any worker starts, with exit status 2
    with creating(db) as creation:
        League.open(creation.target, args.ruleset).close()
    os.environ[serve.DB_ENV] = db
    os.environ.pop(serve.RULESET_ENV, None)
    os.environ[serve.SETTINGS_ENV] = settings.to_json()
    options = _uvicorn_options(args, serve)
    err.write(
        f"rankcraft serve: starting {mask_url(db)} on http://{args.host}:{args.port} "
        f"({args.workers} worker{'s' if args.workers > 1 else ''})\n"
    )
    err.flush()

    def say(line: str) -> None:
        err.write(line + "\n")
        err.flush()

    serve.announce_when_ready(args.host, args.port, say)
    app = "rankcraft.serve:app_from_env"
    if args.workers == 1:
        uvicorn.run(app, factory=True, host=args.host, port=args.port, **options)
        return 0
    _run_workers(app, args, options)
    return 0


def _check_serve_options(args: argparse.Namespace) -> None:
    """Refuse a ``--workers``, ``--timeout-keep-alive`` or ``--limit-concurrency`` below 1."""
    if args.workers < 1:
        raise InputError(f"'--workers' must be at least 1: {args.workers}")
    for option in ("timeout_keep_alive", "limit_concurrency"):
        if getattr(args, option) < 1:
            raise InputError(
                f"'--{option.replace('_', '-')}' must be at least 1: {getattr(args, option)}"
            )


def _uvicorn_options(args: argparse.Namespace, serve: ModuleType) -> dict[str, Any]:
    """uvicorn's options: our h11 protocol (read deadlines), idle keep-alive connections
    closed after --timeout-keep-alive s, 503 beyond --limit-concurrency connections per
    worker, X-Forwarded-For/-Proto believed only from --forwarded-allow-ips (a TLS proxy),
    the access log unless --no-access-log, and at most :data:`SHUTDOWN_GRACE` seconds
    for the requests under way when it is told to stop (SIGTERM, SIGINT)."""
    options: dict[str, Any] = {
        "http": serve.GuardedH11Protocol,
        "timeout_graceful_shutdown": SHUTDOWN_GRACE,
        "timeout_keep_alive": args.timeout_keep_alive,
        "limit_concurrency": args.limit_concurrency,
        "proxy_headers": True,
        "forwarded_allow_ips": args.forwarded_allow_ips,
    }
    options["log_config"] = serve.log_config(args.access_log)
    return options


def _run_workers(app: str, args: argparse.Namespace, options: dict[str, Any]) -> None:
    """uvicorn's ``--workers`` processes, sharing one listening socket made here."""
    import socket

    import uvicorn
    from uvicorn.supervisors import Multiprocess

    # uvicorn's own shared socket is made with protocol 0, for which asyncio leaves
    # Nagle's algorithm on: every answer then waits ~40 ms for the client's delayed ACK.
    # A socket made as TCP keeps TCP_NODELAY on the workers' connections.
    family = socket.AF_INET6 if ":" in args.host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((args.host, args.port))
    except OSError as exc:
        raise InputError(f"cannot listen on {args.host}:{args.port}: {exc}") from None
    sock.set_inheritable(True)
    config = uvicorn.Config(
        app,
        factory=True,
        host=args.host,
        port=args.port,
        workers=args.workers,
        **options,
    )
    Multiprocess(config, sockets=[sock]).run()


def cmd_token(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from ..tokens import create_token, list_tokens, revoke_token

    db = db_path(args)
    store = open_store(db, create=False)  # (migrates an older database: tokens need v4)
    try:
        if args.token_command == "create":
            token, text = create_token(store, scope=args.scope, name=args.name)
            if args.json:
                emit_json({**token.to_dict(), "token": text}, out)
            else:
                err.write(
                    f"token {token.name!r} (scope {token.scope}) for {store.label}; it is "
                    "shown this once, keep it now:\n"
                )
                out.write(text + "\n")
        elif args.token_command == "list":
            tokens = list_tokens(store)
            if args.json:
                emit_json([t.to_dict() for t in tokens], out)
            elif tokens:
                rows = [[t.name, t.scope, t.created_at, f"rk_{t.key}_..."] for t in tokens]
                print_table(rows, ["name", "scope", "created", "token"], out)
            else:
                out.write(f"no tokens in {store.label}\n")
        else:
            token = revoke_token(store, args.name)
            if args.json:
                emit_json({"revoked": token.to_dict()}, out)
            else:
                out.write(f"revoked token {token.name!r} (scope {token.scope})\n")
    finally:
        store.close()
    return 0


def _add_token_commands(sub: Any, db: Callable[[argparse.ArgumentParser], None]) -> None:
    from ..tokens import SCOPES

    text = "create, list and revoke the API tokens of `rankcraft serve`"
    token = sub.add_parser("token", help=text, description=text)
    token.set_defaults(func=cmd_token)
    actions = token.add_subparsers(dest="token_command", required=True, metavar="ACTION")

    def action(name: str, help_: str) -> argparse.ArgumentParser:
        p: argparse.ArgumentParser = actions.add_parser(name, help=help_, description=help_)
        p.add_argument("--json", action="store_true", help="machine-readable output")
        db(p)
        return p

    p = action("create", "make a token and print it (once: only its digest is kept)")
    p.add_argument(
        "--scope",
        required=True,
        choices=SCOPES,
        help="read: reads (with serve --auth-reads); record: also POST /matches; "
        "admin: also the admin endpoints",
    )
    p.add_argument("--name", help="how list and revoke name it (default token-KEY)")
    action("list", "list the tokens (names, scopes, dates; never the tokens)")
    p = action("revoke", "revoke a token: it is refused from the next request on")
    p.add_argument("name", help="the token's name")


def add_serve_commands(c: Commands) -> None:
    """serve and token."""
    _add_serve(c)
    _add_token_commands(c.sub, c.db)


def _add_serve(c: Commands) -> None:
    p = c.add("serve", cmd_serve, "serve the league over HTTP (needs rankcraft[serve])")
    p.add_argument("--ruleset", help="bundled ruleset name or TOML file (required for a new db)")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    p.add_argument(
        "--workers", type=int, default=1, help="worker processes (default 1); see docs/deploy.md"
    )
    p.add_argument("--auth-reads", action="store_true", help="reads need a token of scope read too")
    p.add_argument(
        "--no-access-log",
        dest="access_log",
        action="store_false",
        help="no line per request on standard output (the access log is on by default)",
    )
    p.add_argument(
        "--cors-origin",
        action="append",
        metavar="URL",
        help="let web pages of this origin call the service (repeatable; default none)",
    )
    p.add_argument(
        "--max-body", type=int, default=1 << 20, help="most bytes in a request body (1048576)"
    )
    c.limits(p)
    p.add_argument(
        "--max-batch", type=int, default=10_000, help="most matches in POST /matches/batch (10000)"
    )
    c.max_future(p, "how far past the server's clock played_at may be")
    p.add_argument(
        "--header-timeout",
        type=float,
        default=10.0,
        metavar="SECONDS",
        help="close a connection whose request headers are not in after this (10)",
    )
    p.add_argument(
        "--body-timeout",
        type=float,
        default=30.0,
        metavar="SECONDS",
        help="408 for a request body not in after this (30)",
    )
    _add_lab_options(p)
    _add_connection_options(p)
    c.db(p)
    p.add_argument(
        "--challenger",
        metavar="DB",
        help="a challenger league fed the same matches (database file or postgresql:// URL): "
        "the page compares it with this one (GET /web/compare-live)",
    )


def _add_lab_options(p: argparse.ArgumentParser) -> None:
    """``serve``'s options of the ruleset lab's jobs, in a group of their own."""
    lab = p.add_argument_group("the ruleset lab's jobs (docs/web.md)")
    for option, kind, default, meta, text in (
        ("--lab-workers", int, 1, None, "lab jobs running at once, per worker"),
        ("--lab-jobs-per-client", int, 2, None, "lab jobs one client may have queued or running"),
        ("--lab-max-replays", int, 600_000, None, "most matches x rulesets one lab job replays"),
        ("--lab-keep", float, 600.0, "SECONDS", "how long a lab job's result stays readable"),
        ("--lab-timeout", float, 3600.0, "SECONDS", "a lab job running longer is ended"),
    ):
        lab.add_argument(
            option, type=kind, default=default, metavar=meta, help=f"{text} ({default:g})"
        )
    lab.add_argument(
        "--lab-processes",
        type=int,
        metavar="N",
        help="processes one lab job replays its rulesets in at once (default: one per core)",
    )


def _add_connection_options(p: argparse.ArgumentParser) -> None:
    """``serve``'s options of uvicorn's connections: keep-alive, concurrency, proxies."""
    p.add_argument(
        "--timeout-keep-alive",
        type=int,
        default=5,
        metavar="SECONDS",
        help="close idle keep-alive connections after this (5)",
    )
    p.add_argument(
        "--limit-concurrency",
        type=int,
        default=100,
        metavar="N",
        help="answer 503 beyond N open connections per worker (100)",
    )
    p.add_argument(
        "--forwarded-allow-ips",
        metavar="IPS",
        help="proxies whose X-Forwarded-For/-Proto are believed (comma-separated; "
        "default $FORWARDED_ALLOW_IPS or 127.0.0.1)",
    )
