"""The OpenAPI 3.1 document of ``rankcraft serve``, generated from what the service runs.

Nothing here is written twice. The paths come from the service's table of operations
(:data:`rankcraft.serve.OPERATIONS`, which also builds its routes and token checks); a
request body's schema from the :class:`~rankcraft.fields.Body` that checks it; the match
schema from :data:`rankcraft.io.MATCH` (the keys :func:`~rankcraft.io.parse_match`
allows); the player and report schemas from the league's state classes
(:func:`~rankcraft.fields.state_schema`); the limits from the service's settings.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from .fields import Body, Field, state_schema
from .forecast import Forecast
from .version import __version__

if TYPE_CHECKING:
    from .engine import League

__all__ = ["ERROR_TEXT", "Operation", "build_document", "state_schemas"]

ERROR_TEXT = {
    400: "bad input or a limit passed; `field` names what was wrong",
    401: "no token, or one that is malformed, unknown or revoked",
    403: "the token's scope does not allow this",
    404: "unknown player, match or path",
    405: "this method is not served on this path",
    408: "the request body did not arrive in time",
    409: "the match id is already recorded, or the match is earlier than one of "
    "its players' last match",
    413: "the request body is larger than the limit",
    415: "the request body is not declared application/json",
    429: "too many lab jobs queued or running, for this client or in all (Retry-After)",
    500: "an error of the service itself",
    503: "the job was cancelled, or ran past its time limit",
}
"""Every error status the service answers, as the document explains it."""

_PATH_PARAM = re.compile(r"{(\w+)}")


@attrs.frozen(kw_only=True)
class Operation:
    """One endpoint of the service: what routes it, guards it and documents it.

    Attributes:
        method, path: e.g. ``POST``, ``/matches/{match_id}`` (a path parameter takes the
            rest of the path, slashes included).
        handler: the name of the service's handler method.
        scope: the token scope it needs (``read``: only with ``auth_reads``), or None.
        summary: one line for the document.
        answer: (status, description, name of the answer's schema) on success.
        body: the name of the request body's :class:`~rankcraft.fields.Body`, if any.
        query: the names of its query parameters (fields of the service's parameters).
        errors: the statuses it answers for its own reasons (bad input 400, unknown 404,
            conflict 409); 401/403 (token), 400/408/413/415 (body), 405 and 500 are added.
    """

    method: str
    path: str
    handler: str
    scope: str | None
    summary: str
    answer: tuple[int, str, str]
    body: str | None = None
    query: tuple[str, ...] = ()
    errors: tuple[int, ...] = ()

    @property
    def route_path(self) -> str:
        """The path as Starlette routes it (``{match_id:path}``)."""
        return _PATH_PARAM.sub(r"{\1:path}", self.path)

    def statuses(self, auth_reads: bool) -> list[int]:
        """The error statuses this operation can answer (503 past the service's
        ``--limit-concurrency``, everywhere; 429 and 503 for a body decoded in a busy or
        late worker process)."""
        codes = {*self.errors, 405, 500, 503}
        if self.needs_token(auth_reads):
            codes |= {401, 403}
        if self.body is not None:
            codes |= {400, 408, 413, 415, 429}
        return sorted(codes)

    def needs_token(self, auth_reads: bool) -> bool:
        return self.scope is not None and (self.scope != "read" or auth_reads)


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


def _answer(description: str, schema: Mapping[str, Any]) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


def _parameter(field: Field, where: str) -> dict[str, Any]:
    schema = field.schema()
    description = schema.pop("description", "")
    out = {"name": field.name, "in": where, "required": field.required or where == "path"}
    return {**out, "schema": schema, **({"description": description} if description else {})}


def _operation(
    op: Operation, auth_reads: bool, parameters: Mapping[str, Field], bodies: Mapping[str, Body]
) -> dict[str, Any]:
    out: dict[str, Any] = {"summary": op.summary, "operationId": op.handler}
    if op.needs_token(auth_reads):
        out["summary"] += f" (token scope: {op.scope})"
        out["security"] = [{"bearer": [op.scope]}]
    params = [
        _parameter(Field(name, "string", description=f"the {name.split('_')[0]}'s id"), "path")
        for name in _PATH_PARAM.findall(op.path)
    ] + [_parameter(parameters[name], "query") for name in op.query]
    if params:
        out["parameters"] = params
    if op.body is not None:
        bodies[op.body]  # (a KeyError here is a body the table names and nobody declared)
        content = {"application/json": {"schema": _ref(op.body)}}
        out["requestBody"] = {"required": True, "content": content}
    status, description, schema = op.answer
    out["responses"] = {
        str(status): _answer(description, _ref(schema)),
        **{str(c): _answer(ERROR_TEXT[c], _ref("Error")) for c in op.statuses(auth_reads)},
    }
    return out


def state_schemas(league: League) -> dict[str, dict[str, Any]]:
    """The schemas of a player's entry of the state document and of a match's report, for
    the league's state classes (``Skill``, ``Rank``, ``Player``, ``Change``, ``Report``)."""
    rank: dict[str, Any] = {"type": "null", "description": "the ruleset has no rank slot"}
    if league.rank_class is not None:
        rank = state_schema(league.rank_class)
    before_after = {
        "skill_before": _ref("Skill"),
        "skill_after": _ref("Skill"),
        "skill_used": {**_ref("Skill"), "description": "when not skill_before"},
    }
    if league.rank_class is not None:
        before_after |= {"rank_before": _ref("Rank"), "rank_after": _ref("Rank")}
    return {
        "Skill": state_schema(league.skill_class),
        "Rank": rank,
        "Player": _closed(
            "a player's entry of the state document of docs/design.md",
            ["id", "skill", "rank", "matches", "last_played"],
            {
                "id": {"type": "string"},
                "skill": _ref("Skill"),
                "rank": _ref("Rank") if league.rank_class is None else _nullable_ref("Rank"),
                "matches": {"type": "integer", "minimum": 0},
                "last_played": {"type": ["string", "null"], "description": "ISO-8601, UTC"},
                "open": _open_period(),
            },
        ),
        "Change": _closed(
            "what one match changed for one player",
            ["player", "side", "skill_before", "skill_after"],
            {
                "player": {"type": "string"},
                "side": {"type": "integer", "minimum": 0},
                **before_after,
                "factors": {"type": "object", "description": "the plugins' own factors"},
            },
        ),
        "Report": _closed(
            "what the league expected of a match and what it changed",
            ["match_id", "played_at", "expected", "changes"],
            {
                "match_id": {"type": "string"},
                "played_at": {"type": "string", "description": "ISO-8601, UTC"},
                "expected": {
                    "type": "array",
                    "items": {"type": "number", "minimum": 0, "maximum": 1},
                    "description": "each side's expected result",
                },
                "changes": {"type": "array", "items": _ref("Change")},
            },
        ),
    }


def _nullable_ref(name: str) -> dict[str, Any]:
    return {"oneOf": [_ref(name), {"type": "null"}]}


def _closed(
    description: str, required: Sequence[str], properties: dict[str, Any]
) -> dict[str, Any]:
    return {
        "type": "object",
        "description": description,
        "required": list(required),
        "properties": properties,
        "additionalProperties": False,
    }


def _open_period() -> dict[str, Any]:
    pairing = {
        "type": "array",
        "prefixItems": [_ref("Skill"), {"type": "number"}, {"type": "number"}],
        "minItems": 3,
        "maxItems": 3,
        "description": "[opponent's skill, score, weight]",
    }
    return _closed(
        "an open rating period (rulesets that rate by periods)",
        ["period", "period_matches", "base", "pending"],
        {
            "period": {"type": ["integer", "null"]},
            "period_matches": {"type": "integer", "minimum": 0},
            "base": _nullable_ref("Skill"),
            "pending": {"type": "array", "items": pairing},
        },
    )


def _answers() -> dict[str, dict[str, Any]]:
    """The schemas of the answers that do not depend on the league."""
    string_list = {"type": "array", "items": {"type": "string"}}
    return {
        "Recorded": _closed(
            "a recorded match with its report (seq: its place in the league's order)",
            ["match", "report"],
            {"seq": {"type": "integer"}, "match": _ref("Match"), "report": _ref("Report")},
        ),
        **_player_answers(),
        "Leaderboard": {"type": "array", "items": _ref("Place")},
        "BatchRecorded": _closed(
            "how many matches were recorded, and each one's report, in order",
            ["recorded", "reports"],
            {
                "recorded": {"type": "integer", "minimum": 1},
                "reports": {"type": "array", "items": _ref("Report")},
            },
        ),
        "Predicted": _predicted(string_list),
        **_matchmaking_answers(string_list),
        **_league_answers(),
        "Error": _error(),
    }


def _player_answers() -> dict[str, dict[str, Any]]:
    """The schemas of a player's answer: the player with its standing, and how it is shown."""
    return {
        "Standing": _closed(
            "the player, their league-wide label (null without standings) and how they are shown",
            ["player", "standing", "display"],
            {
                "player": _ref("Player"),
                "standing": {"type": ["string", "null"]},
                "display": _ref("Shown"),
            },
        ),
        "Shown": _closed(
            "the value leaderboards sort by (rank points, else skill location less the "
            "ruleset's [display] conservative times spread; null without a location) and "
            "the skill's 95% interval, location ± 1.96 spread (null without a spread), and "
            "the skill's location and spread by the names players see them as; all on the "
            "scale players see (Glicko-2's rating and RD, not its mu and phi)",
            ["value", "interval", "skill"],
            {
                "value": {"type": ["number", "null"]},
                "skill": {"type": "object", "additionalProperties": {"type": "number"}},
                "interval": {
                    "oneOf": [
                        {
                            "type": "array",
                            "items": {"type": "number"},
                            "minItems": 2,
                            "maxItems": 2,
                        },
                        {"type": "null"},
                    ]
                },
            },
        ),
    }


def _league_answers() -> dict[str, dict[str, Any]]:
    """The schemas of the answers about the league itself: its ruleset, a season event
    run, and the service's health."""
    return {
        "Ruleset": _closed(
            "name, description, the ruleset as a table and as TOML",
            ["name", "description", "ruleset", "toml"],
            {
                "name": {"type": "string"},
                "description": {"type": "string"},
                "ruleset": {"type": "object"},
                "toml": {"type": "string"},
            },
        ),
        "SeasonEventDone": _closed(
            "the event and how many players it changed",
            ["kind", "changed"],
            {"kind": {"type": "string"}, "changed": {"type": "integer", "minimum": 0}},
        ),
        "Health": _closed(
            "the service is up (consumer: where a consumer feeds the league from a log, "
            "what it said after its last batch)",
            ["ok", "rankcraft", "matches"],
            {
                "ok": {"type": "boolean"},
                "rankcraft": {"type": "string"},
                "matches": {"type": "integer", "minimum": 0},
                "consumer": {"type": "object"},
            },
        ),
    }


def _error() -> dict[str, Any]:
    """The schema of every error answer (a refused batch lists each refused match)."""
    return _closed(
        "why a request was refused",
        ["error"],
        {
            "error": _closed(
                "status, the error's type, a message, and the field that was wrong",
                ["status", "type", "message", "field"],
                {
                    "status": {"type": "integer"},
                    "type": {"type": "string"},
                    "message": {"type": "string"},
                    "field": {"type": ["string", "null"]},
                    "index": {
                        "type": "integer",
                        "description": "a ruleset of the lab refused: its index",
                    },
                    "at": {
                        "type": ["string", "null"],
                        "description": "the field within the refused ruleset",
                    },
                    "line": {
                        "type": ["integer", "null"],
                        "description": "the line of the refused ruleset's TOML",
                    },
                },
            ),
            "errors": {
                "type": "array",
                "description": "a refused batch: every refused match, by its 0-based "
                "index in the batch",
                "items": _closed(
                    "one refused match of a batch",
                    ["index", "status", "type", "message", "field"],
                    {
                        "index": {"type": "integer", "minimum": 0},
                        "status": {"type": "integer"},
                        "type": {"type": "string"},
                        "message": {"type": "string"},
                        "field": {"type": ["string", "null"]},
                    },
                ),
            },
        },
    )


def _matchmaking_answers(string_list: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The answers of the ``/match/...`` endpoints (:mod:`rankcraft.matchmaking`)."""
    unit = {"type": "number", "minimum": 0, "maximum": 1}
    percentile = {"type": "number", "description": "100 x (active players lower) / N"}
    candidate = _closed(
        "an active player the filter lets in",
        ["id", "value", "percentile"],
        {"id": {"type": "string"}, "value": {"type": "number"}, "percentile": percentile},
    )
    return {
        "Opponents": _closed(
            "the band of percentiles a rank filter lets in, and the players in it",
            [
                "party",
                "percentiles",
                "width",
                "low",
                "high",
                "candidates",
                "found",
                "enough",
                "active",
            ],
            {
                "party": string_list,
                "percentiles": {"type": "array", "items": percentile},
                "width": {"type": "number", "description": "the width used, percentiles"},
                "low": {"type": "number"},
                "high": {"type": "number"},
                "candidates": {"type": "array", "items": candidate},
                "found": {"type": "integer", "minimum": 0},
                "enough": {"type": "boolean"},
                "active": {"type": "integer", "minimum": 0},
            },
        ),
        "Quality": _closed(
            "the match quality of the sides, how it was judged, and the win probabilities",
            ["sides", "quality", "judged_by", "probabilities"],
            {
                "sides": {"type": "array", "items": string_list},
                "quality": unit,
                "judged_by": {"type": "string", "description": "a plugin, or closeness"},
                "probabilities": {"type": "array", "items": unit},
            },
        ),
        "Balanced": _closed(
            "fair teams and their quality",
            ["teams", "quality", "method", "judged_by", "splits"],
            {
                "teams": {"type": "array", "items": string_list},
                "quality": unit,
                "method": {"type": "string", "enum": ["exact", "swaps"]},
                "judged_by": {"type": "string"},
                "splits": {"type": "integer", "minimum": 1},
            },
        ),
    }


def _predicted(string_list: Mapping[str, Any]) -> dict[str, Any]:
    """The answer of ``/predict``: the sides, ``League.predict``'s probabilities and the
    fields of :class:`rankcraft.Forecast`, described by that class (its annotations and
    docstring, as state classes are)."""
    forecast = state_schema(Forecast)
    forecast.pop("x-state-class", None)
    return _closed(
        "the forecast of a match: probabilities (what League.predict gives: the expected "
        "scores of two sides, P(finishing first) of more), summing to 1, and the Forecast",
        ["sides", "probabilities", *forecast["required"], "new_players"],
        {
            "sides": {"type": "array", "items": string_list},
            "probabilities": {
                "type": "array",
                "items": {"type": "number", "minimum": 0, "maximum": 1},
            },
            **forecast["properties"],
            "new_players": {
                "type": "array",
                "description": "players the league has never seen, predicted as new "
                "players, each with the known ids most like it (a misspelling?)",
                "items": _closed(
                    "a player new to the league",
                    ["id", "similar"],
                    {"id": {"type": "string"}, "similar": string_list},
                ),
            },
        },
    )


def _place(player: Mapping[str, Any]) -> dict[str, Any]:
    """A leaderboard entry: the player's entry with its place and standing."""
    place = {"type": "integer", "minimum": 1}
    return {
        **player,
        "description": "a player's place, standing, display value and state",
        "required": ["place", "standing", "display", *player["required"]],
        "properties": {
            "place": place,
            "standing": {"type": ["string", "null"]},
            "display": _ref("Shown"),
        }
        | player["properties"],
    }


def build_document(
    league: League,
    operations: Sequence[Operation],
    bodies: Mapping[str, Body],
    parameters: Mapping[str, Field],
    auth_reads: bool,
    answers: Mapping[str, dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """The OpenAPI 3.1 document of a service running ``operations`` over ``league``,
    checking its request bodies with ``bodies`` and its query parameters per
    ``parameters``; ``answers``: further schemas of answers (the lab's)."""
    paths: dict[str, dict[str, Any]] = {}
    for op in operations:
        paths.setdefault(op.path, {})[op.method.lower()] = _operation(
            op, auth_reads, parameters, bodies
        )
    schemas = state_schemas(league)
    schemas["Place"] = _place(schemas["Player"])
    schemas |= {name: body.schema() for name, body in bodies.items()} | _answers()
    schemas |= answers or {}
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "rankcraft",
            "version": __version__,
            "description": f"A league rated by the ruleset {league.ruleset.name!r}. "
            "Generated from the service's own operations, request checks and the "
            "league's state classes.",
        },
        "paths": paths,
        "components": {
            "securitySchemes": {
                "bearer": {
                    "type": "http",
                    "scheme": "bearer",
                    "description": "an API token of the league (`rankcraft token create "
                    "--scope read|record|admin`); scopes nest: read < record < admin",
                }
            },
            "schemas": dict(sorted(schemas.items())),
        },
    }
