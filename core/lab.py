"""The ruleset lab of ``rankcraft serve`` as jobs (:class:`rankcraft.jobs.JobPool`).

A comparison replays a whole history once per ruleset: minutes on a large league. The
service never runs it on its event loop nor on the league's thread. ``POST
/web/lab/jobs`` checks the request (the rulesets load, the history fits the service's
limits: ``--max-sides`` and ``--max-players`` on each match, ``--lab-max-replays`` on
matches x rulesets) and queues a job; the job's process reads the league's matches
itself (from its database) or takes the uploaded ones, and replays them
(:func:`rankcraft.web.compare`), its rulesets in up to ``--lab-processes`` processes at
once (children of the job's process, ended with it), telling its progress.
``GET /web/lab/jobs/{job_id}`` answers its state, progress (``done`` of ``total``
matches replayed) and, once done, its result, kept ``--lab-keep`` seconds; ``POST
/web/lab/jobs/{job_id}/cancel`` ends it.
A client (its token with ``--auth-reads``, else its address) may have
``--lab-jobs-per-client`` jobs queued or running (429 beyond).

>>> import time
>>> from starlette.testclient import TestClient
>>> from rankcraft.serve import create_app
>>> league = League("elo")
>>> _ = league.record_many(
...     [{"id": f"g{i}", "played_at": f"2024-05-0{i + 1}", "teams": [["ann"], ["bo"]],
...       "scores": [1, 0]} for i in range(3)])
>>> with TestClient(create_app(league)) as client:
...     job = client.post("/web/lab/jobs", json={"rulesets": ["elo", "glicko1"]})
...     while (state := client.get(f"/web/lab/jobs/{job.json()['id']}").json())["state"] in (
...             "queued", "running"):
...         time.sleep(0.05)
>>> job.status_code, state["state"], state["done"], state["total"]
(202, 'done', 6, 6)
>>> [r["name"] for r in state["result"]["results"]]
['elo', 'glicko1']
"""

from __future__ import annotations

import hashlib
from collections.abc import Awaitable, Callable
from typing import Any

import attrs

from .advice import HomeSeen, home_warning
from .engine import League
from .errors import InputError, MatchError, RulesetError
from .evaluate import with_home
from .extras import missing
from .fields import Body, Field, FieldError
from .io import parse_match, parse_time, read_match_text
from .jobs import Job, JobPool, Refused, Worker
from .jsontext import loads_strict
from .model import Match
from .openapi import Operation
from .ruleset import Ruleset, bundled_names, load_ruleset, loads_ruleset
from .web import LAB_MAX_MATCHES, LAB_MAX_RULESETS, compare, league_matches, ruleset_error

__all__ = [
    "OPERATIONS",
    "LabHandlers",
    "LabHistory",
    "check_toml",
    "checked_request",
    "lab_body",
    "lab_schemas",
    "run_lab",
]

try:
    from starlette.requests import Request
    from starlette.responses import JSONResponse
except ImportError:  # pragma: no cover - serve checks first
    raise missing("the lab needs", "Starlette", "serve") from None


@attrs.frozen
class LabLimits:
    """The limits a lab history must fit: a match's sides and players (the service's
    ``--max-sides``, ``--max-players``) and matches x rulesets (``--lab-max-replays``)."""

    max_sides: int
    max_players: int
    max_replays: int


UPLOAD_FIELDS = (
    Field(
        "history",
        ("string", "null"),
        must="a match file's text",
        description="the history as a match file's text (uploaded by the page), read "
        "as the command line reads a file: JSON Lines, or CSV with a header row of "
        "match keys (docs/matches.md); instead of 'matches'",
    ),
    Field(
        "history_name",
        ("string", "null"),
        max_length=300,
        must="a file name",
        description="the uploaded file's name (a name ending in .csv is read as CSV); "
        "errors name it",
    ),
    Field(
        "home_from",
        ("string", "null"),
        max_length=300,
        must="a dotted field path such as meta.home_team_index",
        description="take each uploaded match's home side from this field, as the "
        "command line's --home-from does (a missing or null field: a neutral venue)",
    ),
)
"""The fields of a lab request that upload a match file (its text, its name) and say
where its home side is (``home_from``, as ``--home-from``)."""


def lab_body(limits: LabLimits) -> Body:
    """The body of ``POST /web/lab/jobs`` (and ``/web/lab/compare``)."""
    return Body(
        "a lab request",
        (
            Field(
                "rulesets",
                "array",
                required=True,
                min_items=1,
                max_items=LAB_MAX_RULESETS,
                items=Field(
                    "ruleset",
                    ("string", "object"),
                    must='a bundled name, {"name": NAME} or {"toml": TEXT}',
                ),
                must=f"a list of 1 to {LAB_MAX_RULESETS} rulesets",
                description='bundled names, {"name": NAME} or {"toml": TEXT}; the first '
                f"is the baseline; at most {LAB_MAX_RULESETS}",
            ),
            Field(
                "matches",
                ("array", "null"),
                max_items=LAB_MAX_MATCHES,
                items=Field("match", "object", description="a match (schema Match)"),
                must=f"a list of at most {LAB_MAX_MATCHES:,} matches",
                description="the history to replay (schema Match each; at most "
                f"{limits.max_sides} sides and {limits.max_players} players a match); "
                "absent: the league's own matches",
            ),
            *UPLOAD_FIELDS,
            Field(
                "test_from",
                ("string", "null"),
                must="an ISO-8601 time",
                description="the scored part starts here; default: the match half-way",
            ),
        ),
        description="rulesets to compare on a history: at most "
        f"{limits.max_replays:,} matches x rulesets (--lab-max-replays)",
    )


LAB_RESULT: dict[str, Any] = {
    "type": "object",
    "description": "the comparison (docs/web.md): the history's size, where scoring "
    "started, the baseline, per ruleset its scores (evaluate's report), "
    "distributions, tiers (best first, with their tier system), seasons and top "
    "20, the paired differences against the baseline, and warnings",
    "required": ["matches", "test_from", "baseline", "results"],
    "properties": {
        "matches": {"type": "integer", "minimum": 0},
        "test_from": {"type": "string"},
        "baseline": {"type": "string"},
        "results": {"type": "array", "items": {"type": "object"}},
        "differences": {
            "type": "array",
            "items": {"type": "object"},
            "description": "each other ruleset's paired difference from the "
            "baseline, score by score, with its 95 % interval (as evaluate --json)",
        },
        "warnings": {
            "type": "array",
            "items": {"type": "string"},
            "description": "a ruleset's home advantage unused (no match names a "
            "home side), as the command line warns",
        },
    },
}
"""The schema of a lab comparison's result (``LabResult``)."""


def lab_schemas() -> dict[str, dict[str, Any]]:
    """The schemas of the lab's answers (the OpenAPI document's components)."""
    count = {"type": "integer", "minimum": 0}
    return {
        "LabJob": {
            "type": "object",
            "description": "a lab job: its state, progress and, once done, its result",
            "required": ["id", "state", "done", "total", "stage", "queued_behind", "error"],
            "properties": {
                "id": {
                    "type": "string",
                    "description": "the job's id (whoever has it may read or cancel the job)",
                },
                "state": {
                    "type": "string",
                    "enum": ["queued", "running", "done", "failed", "cancelled"],
                },
                "done": {**count, "description": "matches replayed so far, all rulesets"},
                "total": {**count, "description": "matches x rulesets (0 while unknown)"},
                "stage": {"type": "string"},
                "queued_behind": {
                    **count,
                    "description": "while queued: the jobs ahead of it, running or queued",
                },
                "seconds": {"type": "number", "minimum": 0, "description": "running time"},
                "error": {"oneOf": [{"type": "null"}, {"$ref": "#/components/schemas/JobError"}]},
                "result": {"oneOf": [{"type": "null"}, {"$ref": "#/components/schemas/LabResult"}]},
            },
            "additionalProperties": False,
        },
        "JobError": {
            "type": "object",
            "description": "why a job failed",
            "required": ["status", "type", "message", "field"],
            "properties": {
                "status": {"type": "integer"},
                "type": {"type": "string"},
                "message": {"type": "string"},
                "field": {"type": ["string", "null"]},
            },
            "additionalProperties": False,
        },
        "LabResult": LAB_RESULT,
    }


OPERATIONS = (
    Operation(
        method="POST",
        path="/web/lab/jobs",
        handler="submit",
        scope="read",
        summary="Queue a ruleset lab comparison (a job; poll it for progress and result)",
        answer=(202, "the job, queued or running", "LabJob"),
        body="LabJobRequest",
        errors=(400, 429),
    ),
    Operation(
        method="GET",
        path="/web/lab/jobs/{job_id}",
        handler="status",
        scope="read",
        summary="A lab job's state, progress and (once done) result",
        answer=(200, "the job", "LabJob"),
        errors=(404,),
    ),
    Operation(
        method="POST",
        path="/web/lab/jobs/{job_id}/cancel",
        handler="cancel",
        scope="read",
        summary="Cancel a lab job (a running one's process is ended)",
        answer=(200, "the job, cancelled (or already ended)", "LabJob"),
        errors=(404,),
    ),
    Operation(
        method="POST",
        path="/web/lab/compare",
        handler="compare",
        scope="read",
        summary="Run a lab comparison as a job and answer its result when it ends",
        answer=(200, "the comparison", "LabResult"),
        body="LabJobRequest",
        errors=(400, 429, 503),
    ),
)
"""The lab's endpoints, routed and documented as the service's own are."""


def _ruleset_spec(item: Any, index: int) -> tuple[dict[str, str], Ruleset]:
    """A lab request's ruleset as a picklable spec (``{"name"}`` or ``{"toml"}``) and
    the ruleset it loads."""
    where = f"rulesets[{index}]"
    if isinstance(item, str):
        item = {"name": item}
    if not isinstance(item, dict) or not (("name" in item) ^ ("toml" in item)) or len(item) != 1:
        raise FieldError(
            f'\'{where}\' must be a bundled name or {{"name"}} or {{"toml"}}: {item!r}'[:300],
            field=where,
        )
    if "name" in item:
        if item["name"] not in bundled_names():
            raise FieldError(
                f"'{where}' is not a bundled ruleset: {item['name']!r}"[:300], field=where
            )
        return {"name": item["name"]}, load_ruleset(item["name"])
    if not isinstance(item["toml"], str):
        raise FieldError(f"'{where}.toml' must be TOML text", field=f"{where}.toml")
    return {"toml": item["toml"]}, loads_ruleset(item["toml"], source=where)


def _load(spec: dict[str, str], index: int) -> Ruleset:
    if "name" in spec:
        return load_ruleset(spec["name"])
    return loads_ruleset(spec["toml"], source=f"rulesets[{index}]")


def _checked(raw: list[Any], check_sides: Callable[[Any, str], None]) -> list[Match]:
    """Uploaded matches, each within the limits and checked as a match."""
    matches = []
    for i, item in enumerate(raw):
        try:
            check_sides(item.get("teams") if isinstance(item, dict) else None, "teams")
            matches.append(parse_match(item))
        except InputError as exc:
            raise FieldError(f"matches[{i}]: {exc}", field=f"matches[{i}]") from None
    return matches


def _replays(matches: int, rulesets: int, limits: LabLimits) -> None:
    if matches * rulesets > limits.max_replays:
        raise FieldError(
            f"{matches:,} matches x {rulesets} rulesets = {matches * rulesets:,} replays, more "
            f"than the limit of {limits.max_replays:,} (--lab-max-replays): compare fewer "
            "rulesets or upload a shorter history",
            field="rulesets",
        )
    if matches < 2:
        raise FieldError(f"the lab needs at least 2 matches: {matches}", field="matches")


@attrs.frozen
class LabHistory:
    """Where a lab job's matches come from: the request's ``body`` (its ``matches``,
    checked when the job was submitted, or its uploaded file's text, named ``name``,
    read in the job's process), else match ``documents`` (a league in memory), else the
    league's database ``db``; ``home_from``: the field an uploaded match's home side is
    taken from (``--home-from``)."""

    body: bytes | None = None
    documents: list[dict[str, Any]] | None = None
    name: str = "the history"
    db: str | None = None
    home_from: str | None = None


def check_toml(raw: bytes) -> dict[str, Any]:
    """The answer of ``POST /web/lab/check`` to the body ``raw`` (``{"toml": TEXT}``),
    decoded and its ruleset loaded in one of the service's worker processes."""
    body = loads_strict(raw, what="the request body")
    text = body.get("toml") if isinstance(body, dict) else None
    if not isinstance(text, str):
        raise FieldError("'toml' must be the ruleset's TOML text", field="toml")
    try:
        ruleset = loads_ruleset(text, source="the ruleset")
    except RulesetError as exc:
        return {"ok": False, "error": ruleset_error(exc, text)}
    return {"ok": True, "name": ruleset.name, "error": None}


def checked_request(
    raw: bytes, limits: LabLimits, check_sides: Callable[[Any, str], None]
) -> dict[str, Any]:
    """A lab request's body ``raw`` decoded and checked, in one of the service's worker
    processes (the job's process reads it again): its rulesets as picklable specs, its
    ``test_from``, ``home_from``, and what it uploads (``uploaded``: ``"matches"``, a
    file's text, ``"history"``, named ``name``; None: the league's are replayed).

    :raises Refused: a ruleset that does not load (its 400 answer: :func:`_ruleset_refused`).
    :raises InputError: anything else the request breaks.
    """
    body = lab_body(limits).check(loads_strict(raw, what="the request body"))
    specs = []
    for i, item in enumerate(body["rulesets"]):
        try:
            specs.append(_ruleset_spec(item, i)[0])
        except RulesetError as exc:
            raise Refused(_ruleset_refused(i, exc, item)) from None
    test_from = body.get("test_from")
    if test_from:
        test_from = parse_time(test_from, field="test_from").isoformat()
    matches, text = body.get("matches"), body.get("history")
    if matches is not None and text is not None:
        raise FieldError("give 'matches' or 'history', not both", field="history")
    home_from = body.get("home_from") or None
    if matches is not None:
        _replays(len(matches), len(specs), limits)
        _checked(_home_of(matches, home_from), check_sides)
    uploaded = "matches" if matches is not None else "history" if text is not None else None
    return {
        "specs": specs,
        "test_from": test_from or None,
        "home_from": home_from,
        "uploaded": uploaded,
        "name": body.get("history_name") or "the uploaded file",
    }


def _home_of(matches: list[Any], home_from: str | None) -> list[Any]:
    """Uploaded match documents with ``home`` taken from the field ``home_from``."""
    if not home_from:
        return matches
    return [next(with_home([m], home_from)) if isinstance(m, dict) else m for m in matches]


def run_lab(
    specs: list[dict[str, str]],
    history: LabHistory,
    test_from: str | None,
    limits: LabLimits,
    check_sides: Callable[[Any, str], None],
    processes: int,
    progress: Callable[[int, int, str], None],
) -> dict[str, Any]:
    """A lab job (in its own process): the rulesets loaded from ``specs``, the history
    (:class:`LabHistory`: the request's matches, checked when the job was submitted, or
    its uploaded file's text, read here; else the league's matches; held to ``limits``),
    replayed with each (:func:`rankcraft.web.compare`), in up to ``processes`` processes
    at once, children of this one (forked: the history is not copied again). The result
    warns where a ruleset has a home advantage and no match names a home side."""
    rulesets = [_load(spec, i) for i, spec in enumerate(specs)]
    if history.body is not None:
        progress(0, 0, f"reading {history.name}")
        body = loads_strict(history.body, what="the request body")
        if body.get("matches") is not None:
            matches = [parse_match(d) for d in _home_of(body["matches"], history.home_from)]
        else:
            matches = _read_upload(body["history"], history, check_sides)
            _replays(len(matches), len(rulesets), limits)
    elif history.documents is not None:
        matches = [parse_match(d) for d in history.documents]
    else:
        if history.db is None:
            raise InputError("the lab job has no history")
        progress(0, 0, "reading the league's matches")
        with League.open(history.db, create=False) as league:
            matches = league_matches(league)
        for match in matches:
            try:
                check_sides([list(side) for side in match.teams], "teams")
            except InputError as exc:
                raise FieldError(f"the league's match {match.id!r}: {exc}", field="teams") from None
        _replays(len(matches), len(rulesets), limits)
    result = compare(rulesets, matches, test_from, progress, processes=processes)
    result["warnings"] = _home_warnings(rulesets, matches, history)
    return result


def _read_upload(
    text: str, history: LabHistory, check_sides: Callable[[Any, str], None]
) -> list[Match]:
    """An uploaded file's ``text`` read as the command line reads a file
    (:func:`rankcraft.io.read_match_text`, ``home`` from ``home_from``), each match held to
    the service's limits; an error names the file and its line."""
    matches = []
    try:
        for line, data in read_match_text(text, history.name):
            if history.home_from and isinstance(data, dict):
                (data,) = with_home([data], history.home_from)
            try:
                if isinstance(data, dict):
                    check_sides(data.get("teams"), "teams")
                matches.append(parse_match(data, line=line))
            except MatchError:
                raise
            except InputError as exc:
                raise MatchError(str(exc), line=line) from None
    except MatchError as exc:
        raise FieldError(f"{history.name} {exc}", field="history") from None
    except InputError as exc:
        raise FieldError(f"{history.name}: {exc}", field="history") from None
    return matches


def _home_warnings(rulesets: list[Ruleset], matches: list[Match], history: LabHistory) -> list[str]:
    """The lab's warning for each ruleset with a home advantage when no match names a
    home side (:func:`rankcraft.advice.home_warning`, as the command line warns)."""
    seen = HomeSeen(matches)
    for _ in seen:
        pass
    found = (home_warning(r, seen, history.name, option="home_from") for r in rulesets)
    return [w for w in found if w is not None]


@attrs.define(eq=False)
class LabHandlers:
    """The lab's endpoints (:data:`OPERATIONS`) over one league and one job pool.

    ``db``: the league's database, which a job opens itself (None: an in-memory league,
    whose matches are read here, on the league's thread); ``check_sides(sides, field)``:
    the service's limits on a match's sides (:func:`rankcraft.serve.parsing.check_sides`);
    ``auth_reads``: reads need a token, so a client is its token (else its address);
    ``read_body(request)``: a request's body as it came (its size and time limited);
    ``worker``: where a request is decoded and checked (:func:`checked_request`), off
    the league's thread; ``processes``: the most processes one job replays its rulesets
    in at once."""

    league: League
    pool: JobPool
    limits: LabLimits
    check_sides: Callable[[Any, str], None]
    db: str | None = attrs.field(kw_only=True)
    auth_reads: bool = attrs.field(kw_only=True)
    read_body: Callable[[Request], Awaitable[bytes]] = attrs.field(kw_only=True)
    worker: Worker = attrs.field(kw_only=True)
    processes: int = attrs.field(kw_only=True, default=1)

    def _client(self, request: Request) -> str:
        """Whom the per-client limit counts a job for: the token (checked, with
        ``--auth-reads``), else the address (a header anyone can make up is no one)."""
        header = request.headers.get("authorization")
        if self.auth_reads and header:
            # the token itself, however the header spells 'Bearer' and its spaces (the
            # service takes them all): one token is one client
            presented = header.strip().partition(" ")[2].strip()
            return "token:" + hashlib.sha256(presented.encode()).hexdigest()[:16]
        return "address:" + (request.client.host if request.client else "?")

    async def _job(self, request: Request) -> Job:
        """The request's job, queued: its body read here, decoded and checked in a worker
        process (:func:`checked_request`), the league's matches counted here."""
        raw = await self.read_body(request)
        checked = await self.worker.run(checked_request, raw, self.limits, self.check_sides)
        specs = checked["specs"]
        home_from = checked["home_from"]
        if checked["uploaded"] == "matches":
            history = LabHistory(body=raw, name="the uploaded matches", home_from=home_from)
        elif checked["uploaded"] == "history":
            history = LabHistory(body=raw, name=checked["name"], home_from=home_from)
        else:
            self.league.refresh()
            _replays(self.league.match_count, len(specs), self.limits)
            if self.db is None:
                documents = [m.to_dict() for m in league_matches(self.league)]
                history = LabHistory(documents=documents, name="the league")
            else:
                history = LabHistory(db=self.db, name="the league")
        return self.pool.submit(
            self._client(request),
            run_lab,
            specs,
            history,
            checked["test_from"],
            self.limits,
            self.check_sides,
            self.processes,
        )

    async def submit(self, request: Request) -> JSONResponse:
        job = await self._job(request)
        return JSONResponse(job.to_dict(), status_code=202)

    async def status(self, request: Request) -> JSONResponse:
        return JSONResponse(self.pool.snapshot(request.path_params["job_id"]))

    async def cancel(self, request: Request) -> JSONResponse:
        return JSONResponse(self.pool.cancel_anywhere(request.path_params["job_id"]))

    async def compare(self, request: Request) -> JSONResponse:
        """A job waited for (the league's thread is free meanwhile): its result, or its
        error with the job's status."""
        job = await self.pool.wait((await self._job(request)).id)
        if job.state == "done":
            return JSONResponse(job.result)
        error = job.error or {
            "status": 503,
            "type": "Cancelled",
            "message": "the job was cancelled",
            "field": None,
        }
        return JSONResponse({"error": error}, status_code=error["status"])


def _ruleset_refused(index: int, exc: RulesetError, item: Any) -> dict[str, Any]:
    """The lab's error for a ruleset that does not load: 400, with the ruleset's index,
    the field within it (``at``) and its TOML line."""
    text = item.get("toml", "") if isinstance(item, dict) else ""
    found = ruleset_error(exc, text if isinstance(text, str) else "")
    error = {
        "status": 400,
        "type": "RulesetError",
        "message": found["message"],
        "field": f"rulesets[{index}]",
        "index": index,
        "at": found["field"],
        "line": found["line"],
    }
    return error
