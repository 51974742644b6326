"""The corrections' routes (docs/corrections.md): ``POST /matches/{match_id}/void``,
``POST /matches/{match_id}/correct`` (token scope ``record``; the audit keeps the
token's name as ``by``) and ``GET /edits`` (the audit, oldest first); and the league as
it stood at a time, which ``GET /leaderboard?at=`` and ``GET /players/{id}?at=`` answer
from (:func:`league_at`)."""

from __future__ import annotations

from typing import Any

from ..engine import League
from ..errors import InputError
from ..extras import missing
from ..io import parse_time, past_the_clock
from ..openapi import Operation
from .auth import bearer, token_name
from .errors import Conflict, LimitError, NotFoundError, RequestError
from .parsing import check_sides, json_body, read_query
from .resource import Resource

try:
    from starlette.requests import Request
    from starlette.responses import JSONResponse
except ImportError:  # pragma: no cover - checked by cli.cmd_serve before use
    raise missing("the HTTP service needs", "Starlette and uvicorn", "serve") from None

CORRECTABLE: tuple[str, ...] = ("played_at", "teams", "scores", "ranks", "seconds_played")
CORRECTABLE += ("quit", "weight", "meta", "home", "id")
"""The keys of a correction's ``fields`` (``id`` only as the match's own)."""


def league_at(league: League, text: str | None, request: Request) -> League:
    """``league`` itself (refreshed) without a time, else the league as it stood at
    ``text`` (:meth:`League.as_of`, in memory). That replays the history up to then on
    the league's thread, so it needs a token of scope ``read`` even where reads need
    none: an anonymous visitor cannot make the league replay its history at will.
    :raises InputError: a bad time, naming ``at``; no token (401)."""
    if text is None:
        league.refresh()
        return league
    try:
        when = parse_time(text, field="at")
    except InputError as exc:
        raise RequestError(str(exc), field="at") from None
    bearer(request, league, "read")
    return league.as_of(when)


class CorrectionRoutes(Resource):
    """The endpoints of the league's corrections."""

    def recorded(self, request: Request) -> str:
        """The match of the request's path, recorded and not void.

        :raises NotFoundError: a match the league never held (404).
        :raises Conflict: a voided match (409)."""
        match_id: str = request.path_params["match_id"]
        if self.league.store.match(match_id) is None:
            if any(e.kind == "void" for e in self.league.edits(match_id)):
                raise Conflict(f"match {match_id!r} is void already", field="match_id")
            raise NotFoundError(f"unknown match {match_id!r}")
        return match_id

    def fields(self, match_id: str, fields: dict[str, Any]) -> dict[str, Any]:
        """A correction's fields, within the keys it may change and the service's limits
        (the corrected match itself is checked by the league)."""
        if fields.get("id", match_id) != match_id:
            raise RequestError(
                f"a correction keeps the match's id ({match_id!r}), not {fields['id']!r}"[:300],
                field="fields.id",
            )
        unknown = sorted(set(fields) - set(CORRECTABLE))
        if unknown:
            raise RequestError(
                f"a correction cannot change {unknown[0][:40]!r}; it may change "
                f"{', '.join(CORRECTABLE[:-1])}",
                field=f"fields.{unknown[0][:40]}",
            )
        if not fields:
            raise RequestError("'fields' must name at least one field to change", field="fields")
        if "teams" in fields:
            check_sides(fields["teams"], "fields.teams", self.settings)
        if "played_at" in fields:
            when = parse_time(fields["played_at"], field="fields.played_at")
            late = past_the_clock(when, self.settings.max_future, "fields.played_at")
            if late is not None:
                raise LimitError(late, field="fields.played_at")
        return fields

    async def post_void(self, request: Request) -> JSONResponse:
        match_id = self.recorded(request)
        body = self.bodies["Void"].check(await json_body(request, self.settings))
        edit = self.league.void(match_id, body["reason"], by=token_name(request))
        return JSONResponse(edit.to_dict())

    async def post_correct(self, request: Request) -> JSONResponse:
        match_id = self.recorded(request)
        body = self.bodies["Correction"].check(await json_body(request, self.settings))
        fields = self.fields(match_id, body["fields"])
        # (a corrected match that is not valid: the error POST /matches answers for it)
        edit = self.league.correct(match_id, fields, body["reason"], by=token_name(request))
        return JSONResponse(edit.to_dict())

    async def get_edits(self, request: Request) -> JSONResponse:
        match_id = read_query(request, self.query["match"])
        player = read_query(request, self.query["player"])
        edits = self.league.edits(match_id, player=player)
        return JSONResponse([e.to_dict() for e in edits])


OPERATIONS = (
    Operation(
        method="POST",
        path="/matches/{match_id}/void",
        handler="post_void",
        scope="record",
        summary="Void a recorded match and rate every later one again",
        answer=(200, "the edit, as the league's audit keeps it", "Edit"),
        body="Void",
        errors=(404, 409),
    ),
    Operation(
        method="POST",
        path="/matches/{match_id}/correct",
        handler="post_correct",
        scope="record",
        summary="Correct a recorded match and rate every later one again",
        answer=(200, "the edit, as the league's audit keeps it", "Edit"),
        body="Correction",
        errors=(404, 409),
    ),
    Operation(
        method="GET",
        path="/edits",
        handler="get_edits",
        scope="read",
        summary="The league's edits (voids, corrections, late matches), oldest first",
        answer=(200, "the edits", "Edits"),
        query=("match", "player"),
        errors=(400,),
    ),
)
"""The corrections' endpoints (handlers of :class:`CorrectionRoutes`)."""


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    return {"oneOf": [schema, {"type": "null"}]}


def correction_schemas() -> dict[str, dict[str, Any]]:
    """The schemas of the corrections' answers: an edit (``Edit.to_dict``) and a list."""
    shown = {
        "type": "object",
        "description": "what the player showed: value, skill (as players see it), tier, matches",
        "required": ["value", "skill", "tier", "matches"],
        "properties": {
            "value": {"type": ["number", "null"]},
            "skill": {"type": "object", "additionalProperties": {"type": "number"}},
            "tier": {"type": ["string", "null"]},
            "matches": {"type": "integer", "minimum": 0},
        },
        "additionalProperties": False,
    }
    change = {
        "type": "object",
        "description": "a player the edit moved (before / after: null for a player the "
        "league did not have then)",
        "required": ["player", "before", "after"],
        "properties": {"player": {"type": "string"}, "before": _nullable(shown)}
        | {"after": _nullable(shown)},
        "additionalProperties": False,
    }
    match = {"$ref": "#/components/schemas/Match"}
    properties = {
        "n": {"type": "integer", "minimum": 1, "description": "its number in the audit"},
        "kind": {"type": "string", "enum": ["void", "correct", "late"]},
        "match_id": {"type": "string"},
        "reason": {"type": "string"},
        "by": {"type": ["string", "null"], "description": "the API token's name"},
        "made_at": {"type": "string", "description": "ISO-8601, UTC"},
        "old": _nullable(match) | {"description": "the match before (null: a late match)"},
        "new": _nullable(match) | {"description": "the match after (null: voided)"},
        "rerated": {"type": "integer", "minimum": 0, "description": "matches rated again"},
        "changes": {"type": "array", "items": change},
    }
    return {
        "Edit": {
            "type": "object",
            "description": "an edit of the league's history, as its audit keeps it",
            "required": list(properties),
            "properties": properties,
            "additionalProperties": False,
        },
        "Edits": {"type": "array", "items": {"$ref": "#/components/schemas/Edit"}},
    }
