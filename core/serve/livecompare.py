"""``GET /web/compare-live``: the service's league (the champion) against a challenger
league fed the same matches (``rankcraft serve --challenger DB``), scored as ``rankcraft
evaluate`` scores two rulesets on the matches both hold (:mod:`rankcraft.livecompare`).

The replays run in the service's worker processes (off the league's thread, which goes
on answering while they run), and the answer is kept per (champion's generation,
challenger's generation): a request after no new batch in either league replays nothing.
"""

from __future__ import annotations

from typing import Any

from ..engine import League
from ..errors import InputError
from ..extras import missing
from ..livecompare import compare_dbs, compare_live
from ..openapi import Operation
from .errors import ServiceError
from .resource import Resource

try:
    from starlette.requests import Request
    from starlette.responses import JSONResponse
except ImportError:  # pragma: no cover - checked by cli.cmd_serve before use
    raise missing("the HTTP service needs", "Starlette and uvicorn", "serve") from None


class NoChallenger(ServiceError):
    """The service was started without a challenger league (404)."""

    status = 404


class LiveCompareRoutes(Resource):
    """The champion-against-challenger endpoint (its handler runs on the league's
    thread; the challenger league is opened there, once, to read its generation)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.challenger: League | None = None
        self.cached: tuple[tuple[int, int], dict[str, Any]] | None = None

    def _challenger(self) -> League:
        db = self.settings.challenger
        if db is None:
            raise NoChallenger(
                "this service has no challenger league: start it with --challenger DB "
                "(a league fed the same matches) to compare the two"
            )
        if self.challenger is None:
            try:
                self.challenger = League.open(db, create=False)
            except InputError as exc:
                raise ServiceError(f"the challenger league cannot be opened: {exc}") from None
        return self.challenger

    async def compare_live(self, request: Request) -> JSONResponse:
        challenger = self._challenger()
        key = (self.league.store.generation(), challenger.store.generation())
        if self.cached is not None and self.cached[0] == key:
            return JSONResponse(self.cached[1])
        if self.db is not None and self.worker is not None:
            answer = await self.worker.run(compare_dbs, self.db, self.settings.challenger)
        else:  # (an in-memory league: replayed here, on the league's thread)
            answer = compare_live(self.league, challenger).to_dict()
        self.cached = (key, answer)
        return JSONResponse(answer)

    def close(self) -> None:
        """Close the challenger league, if it was opened."""
        if self.challenger is not None:
            self.challenger.close()
            self.challenger = None


OPERATIONS = (
    Operation(
        method="GET",
        path="/web/compare-live",
        handler="compare_live",
        scope="read",
        summary="The league (champion) against the challenger league on the matches both hold",
        answer=(200, "both rulesets' scores and the paired differences", "LiveComparison"),
        errors=(400, 404),
    ),
)
"""The comparison's endpoint, routed and documented as the service's own are."""


def live_schemas() -> dict[str, dict[str, Any]]:
    """The schema of the comparison's answer (``LiveComparison``)."""
    count = {"type": "integer", "minimum": 0}
    return {
        "LiveComparison": {
            "type": "object",
            "description": "the report rankcraft evaluate --json prints for the two rulesets "
            "(the champion the baseline), with the labels and the matches compared",
            "required": [
                "champion",
                "challenger",
                "common",
                "champion_only",
                "challenger_only",
                "test_from",
                "results",
            ],
            "properties": {
                "champion": {"type": "string"},
                "challenger": {"type": "string"},
                "common": {**count, "description": "matches both leagues hold"},
                "champion_only": {**count, "description": "matches only the champion holds"},
                "challenger_only": {**count, "description": "matches only the challenger holds"},
                "test_from": {"type": "string"},
                "results": {"type": "object", "additionalProperties": {"type": "object"}},
                "baseline": {"type": "string"},
                "differences": {"type": "array", "items": {"type": "object"}},
            },
            "additionalProperties": False,
        }
    }
