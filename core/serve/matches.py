"""The matches' routes: ``POST /matches`` (record one), ``POST /matches/batch`` (record many
in one transaction, all or none) and ``GET /matches/{match_id}``."""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator
from typing import Any

import attrs

from ..errors import InputError
from ..extras import missing
from ..fields import Body
from ..io import parse_match, past_the_clock
from ..model import Match
from ..openapi import Operation
from .auth import token_name
from .errors import LimitError, NotFoundError, error_body, item_error
from .parsing import check_sides, json_body
from .resource import Resource

try:
    from starlette.requests import Request
    from starlette.responses import JSONResponse
except ImportError:  # pragma: no cover - checked by cli.cmd_serve before use
    raise missing("the HTTP service needs", "Starlette and uvicorn", "serve") from None


class _ItemwiseJSON(JSONResponse):
    """JSONResponse's bytes, with the items of the answer's lists (or iterators, read
    as lists) encoded one by one. ``json.dumps`` of a whole answer is one C call that
    holds the GIL: a batch's 9,000 Skyweaver reports (30 MB) held it for 0.8 s, while
    the service's loop, on another thread, answered nothing. Between two items the loop
    gets its turn; and items made by an iterator are dropped once encoded (9,000
    reports as dicts are 1.1 million objects, which the garbage collector walks)."""

    def render(self, content: dict[str, Any]) -> bytes:
        encode = functools.partial(
            json.dumps, ensure_ascii=False, allow_nan=False, separators=(",", ":")
        )
        pieces = []
        for key, value in content.items():
            if isinstance(value, list | Iterator):
                pieces.append(f"{encode(key)}:[{','.join(map(encode, value))}]")
            else:
                pieces.append(f"{encode(key)}:{encode(value)}")
        return ("{" + ",".join(pieces) + "}").encode("utf-8")


class MatchRoutes(Resource):
    """The endpoints of the league's matches."""

    def parse(self, body: Any) -> Match:
        """A match of a request, within the service's limits."""
        if not isinstance(body, dict):
            raise InputError(f"a match must be a JSON object, got {type(body).__name__}")
        check_sides(body.get("teams"), "teams", self.settings)
        match = parse_match(body)
        late = past_the_clock(match.played_at, self.settings.max_future, "played_at")
        if late is not None:
            raise LimitError(late, field="played_at")
        return match

    def batch_shape(self) -> Body:
        """The batch's body spec without its matches' own check: each match is checked by
        :meth:`parse` (a match that is not an object too), so that every refused one is
        answered, not only the first."""
        spec = self.bodies["MatchBatch"]
        return attrs.evolve(spec, fields=[attrs.evolve(f, items=None) for f in spec.fields])

    async def post_match(self, request: Request) -> JSONResponse:
        match = self.parse(await json_body(request, self.settings))
        report = self.league.record(match, by=token_name(request))
        return JSONResponse(
            {"match": match.to_dict(), "report": self.codec.report_to_dict(report)},
            status_code=201,
        )

    async def post_batch(self, request: Request) -> JSONResponse:
        """Every match is checked first (all errors answered, each with its ``index``);
        then all are recorded in one transaction, or none (the first refused match's
        error, with its index)."""
        body = await json_body(request, self.settings)
        if isinstance(body, list):
            body = {"matches": body}
        items = self.batch_shape().check(body)["matches"]
        errors: list[dict[str, Any]] = []
        matches: list[Match] = []
        for index, item in enumerate(items):
            try:
                matches.append(self.parse(item))
            except InputError as exc:
                errors.append(item_error(index, exc))
        if not errors and self.league.ruleset.history.late == "rerate":
            return self._record_placed(matches)
        if not errors:
            reports = []
            try:
                with self.league.batch():
                    for index, match in enumerate(matches):
                        try:
                            reports.append(self.league.record(match))
                        except InputError as exc:
                            errors.append(item_error(index, exc))
                            raise
            except InputError:
                pass
            else:
                return _ItemwiseJSON(
                    {
                        "recorded": len(reports),
                        "reports": (self.codec.report_to_dict(r) for r in reports),
                    },
                    status_code=201,
                )
        first = errors[0]
        status = first["status"]
        answer = error_body(
            status,
            first["type"],
            f"matches[{first['index']}]: {first['message']}"
            + (f" (and {len(errors) - 1} more errors)" if len(errors) > 1 else "")
            + "; nothing was recorded",
            f"matches[{first['index']}]" + (f".{first['field']}" if first["field"] else ""),
        )
        answer["errors"] = errors
        return _ItemwiseJSON(answer, status_code=status)

    def _record_placed(self, matches: list[Match]) -> JSONResponse:
        """A batch under ``[history] late = "rerate"``: recorded in one call, each late
        match placed at its time (every later match rated again), or none (the refused
        match's error, with its index)."""
        try:
            self.league.record_many(matches)
        except InputError as exc:
            error = item_error(getattr(exc, "item", None) or 0, exc)
            message = f"matches[{error['index']}]: {error['message']}; nothing was recorded"
            answer = error_body(
                error["status"], error["type"], message, f"matches[{error['index']}]"
            )
            answer["errors"] = [error]
            return _ItemwiseJSON(answer, status_code=error["status"])
        reports = [self.league.report(m.id) for m in matches]
        return _ItemwiseJSON(
            {"recorded": len(reports), "reports": (self.codec.report_to_dict(r) for r in reports)},
            status_code=201,
        )

    async def get_match(self, request: Request) -> JSONResponse:
        match_id = request.path_params["match_id"]
        row = self.league.store.match(match_id)
        if row is None:
            raise NotFoundError(f"unknown match {match_id!r}")
        return JSONResponse(
            {
                "seq": row.seq,
                "match": row.match.to_dict(),
                "report": self.codec.report_to_dict(row.report),
            }
        )


OPERATIONS = (
    Operation(
        method="POST",
        path="/matches",
        handler="post_match",
        scope="record",
        summary="Record one match",
        answer=(201, "the match as stored, with its report", "Recorded"),
        body="Match",
        errors=(409,),
    ),
    Operation(
        method="POST",
        path="/matches/batch",
        handler="post_batch",
        scope="record",
        summary="Record many matches in one transaction (all or none)",
        answer=(201, "how many were recorded, and each match's report", "BatchRecorded"),
        body="MatchBatch",
        errors=(409,),
    ),
    Operation(
        method="GET",
        path="/matches/{match_id}",
        handler="get_match",
        scope="read",
        summary="A recorded match with its report",
        answer=(200, "the match", "Recorded"),
        errors=(404,),
    ),
)
"""The matches' endpoints (handlers of :class:`MatchRoutes`)."""
