"""What a service allows (:class:`Settings`: who may read, from where, and how much), and
the environment through which ``rankcraft serve --workers N`` hands it to its workers."""

from __future__ import annotations

import json
import os

import attrs

from ..errors import InputError
from ..io import MAX_FUTURE, MAX_PLAYERS, MAX_SIDES

DB_ENV = "RANKCRAFT_SERVE_DB"
RULESET_ENV = "RANKCRAFT_SERVE_RULESET"
SETTINGS_ENV = "RANKCRAFT_SERVE_SETTINGS"
"""How ``rankcraft serve --workers N`` tells each worker process which league to open,
and with which :class:`Settings` (as JSON)."""


@attrs.frozen(kw_only=True)
class Settings:
    """What the service allows: who may read, from where, and how much.

    Attributes:
        auth_reads: reads need a ``read`` token too (writes always need a token).
        cors_origins: web origins allowed to call the service from a browser (none:
            browsers get no CORS headers, so other sites cannot read answers).
        max_body: the most bytes a request body may have (413 beyond).
        max_sides: the most sides a match or prediction may have.
        max_players: the most players a match or prediction may have, all sides together.
        max_batch: the most matches a batch (``POST /matches/batch``) may have.
        max_future: how many seconds past the server's clock a match's ``played_at`` may be.
        header_timeout: seconds a client has to send a request's line and headers, from
            its first byte (or from connecting); the connection is closed after that.
        body_timeout: seconds a client has to send a request's body once its headers are
            in: 408 after that (and the connection is closed a second later).
        lab_workers: the most ruleset lab jobs running at once (each in its own process).
        lab_jobs_per_client: the most lab jobs one client may have queued or running.
        lab_max_replays: the most matches x rulesets one lab job replays.
        lab_keep: seconds a lab job's result stays readable after it ends.
        lab_timeout: seconds a lab job may run before it is ended.
        lab_processes: the most processes one lab job replays its rulesets in at once
            (each ruleset's replay in one); None: one per core (``os.cpu_count()``).
        challenger: the database of a challenger league fed the same matches (a file or
            ``postgresql://`` URL): ``GET /web/compare-live`` compares the two
            (:mod:`rankcraft.livecompare`); None: no challenger.
    """

    auth_reads: bool = False
    cors_origins: tuple[str, ...] = attrs.field(default=(), converter=tuple)
    max_body: int = 1 << 20
    max_sides: int = MAX_SIDES
    max_players: int = MAX_PLAYERS
    max_future: float = MAX_FUTURE
    max_batch: int = 10_000
    header_timeout: float = 10.0
    body_timeout: float = 30.0
    lab_workers: int = 1
    lab_jobs_per_client: int = 2
    lab_max_replays: int = 600_000
    lab_keep: float = 600.0
    lab_timeout: float = 3600.0
    lab_processes: int | None = None
    challenger: str | None = None

    def __attrs_post_init__(self) -> None:
        for name in (
            "max_body",
            "max_sides",
            "max_players",
            "max_batch",
            "lab_workers",
            "lab_jobs_per_client",
            "lab_max_replays",
        ):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise InputError(f"'{name}' must be a whole number >= 1: {value!r}")
        processes = self.lab_processes
        if processes is not None and (
            not isinstance(processes, int) or isinstance(processes, bool) or processes < 1
        ):
            raise InputError(f"'lab_processes' must be a whole number >= 1: {processes!r}")
        for name in ("max_future", "header_timeout", "body_timeout", "lab_keep", "lab_timeout"):
            value = getattr(self, name)
            if not isinstance(value, int | float) or not 0 < value < 1e9:
                raise InputError(f"'{name}' must be a number of seconds > 0: {value!r}")
        if self.challenger is not None and (
            not isinstance(self.challenger, str) or not self.challenger.strip()
        ):
            raise InputError(f"'challenger' must be a database file or URL: {self.challenger!r}")
        if self.max_sides < 2:
            raise InputError(f"'max_sides' must be at least 2: {self.max_sides}")
        for origin in self.cors_origins:
            if not origin.startswith(("http://", "https://")) or origin.endswith("/"):
                raise InputError(
                    f"'cors_origin' must be an origin such as https://example.org "
                    f"(scheme and host, no path): {origin!r}"
                )

    def to_json(self) -> str:
        return json.dumps(attrs.asdict(self))

    @classmethod
    def from_json(cls, text: str) -> Settings:
        return cls(**json.loads(text))

    @classmethod
    def from_env(cls) -> Settings:
        text = os.environ.get(SETTINGS_ENV)
        return cls.from_json(text) if text else cls()
