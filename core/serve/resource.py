"""What the routes of every resource share: the league, the service's settings, the league's
thread, its worker processes, and the specs that check request bodies and query
parameters."""

from __future__ import annotations

from ..engine import League
from ..fields import Body, Field
from ..jobs import LeagueThread, Worker
from . import parsing
from .settings import Settings


class Resource:
    """The endpoints of one resource of an application, over one league (a subclass
    holds them, and their :data:`OPERATIONS` in its module). ``bodies`` and ``query``:
    the application's specs (default: made from ``settings``, :mod:`.parsing`);
    ``worker``: where CPU work an anonymous request causes runs (None: right here);
    ``db``: the league's database, which that work may open (None: an in-memory league)."""

    def __init__(
        self,
        league: League,
        settings: Settings,
        thread: LeagueThread | None = None,
        bodies: dict[str, Body] | None = None,
        query: dict[str, Field] | None = None,
        worker: Worker | None = None,
        db: str | None = None,
    ) -> None:
        self.league = league
        self.settings = settings
        self.thread = thread or LeagueThread()
        self.codec = league.codec
        self.bodies = parsing.request_bodies(settings) if bodies is None else bodies
        self.query = parsing.query_parameters(settings) if query is None else query
        self.worker = worker
        self.db = db
