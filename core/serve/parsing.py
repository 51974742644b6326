"""Request parsing: a request's JSON body (declared, within the size and time limits), its
query parameters, and the specs both are checked by (:func:`request_bodies`,
:func:`query_parameters`), from which the OpenAPI document writes their schemas too."""

from __future__ import annotations

import asyncio
import re
from typing import Any

import attrs

from ..errors import InputError
from ..extras import missing
from ..fields import Body, Field
from ..io import MATCH, over_limits
from ..jsontext import loads_strict
from .errors import LimitError, PayloadTooLarge, RequestError, RequestTimeout, UnsupportedMediaType
from .settings import Settings

try:
    from starlette.requests import Request
except ImportError:  # pragma: no cover - checked by cli.cmd_serve before use
    raise missing("the HTTP service needs", "Starlette and uvicorn", "serve") from None


INLINE_BODY = 64 << 10
"""Request bodies up to this many bytes (64 KiB, 7 ms) are decoded where they arrive;
larger ones in one of the service's worker processes (1 MiB: 0.1 s of the interpreter)."""


async def read_body(request: Request, settings: Settings) -> bytes:
    """The request's body: declared JSON, no larger than the limit, arrived in time."""
    declared = request.headers.get("content-type")
    media, _, parameters = (declared or "").partition(";")
    charset = parameters.strip().lower().replace(" ", "")
    if media.strip().lower() != "application/json" or charset not in ("", "charset=utf-8"):
        raise UnsupportedMediaType(
            f"'Content-Type' must be application/json (UTF-8): {declared!r}",
            field="Content-Type",
        )
    limit = settings.max_body
    close = {"Connection": "close"}
    length = request.headers.get("content-length")
    if length is not None and length.isdigit() and int(length) > limit:
        raise PayloadTooLarge(
            f"the request body is {int(length):,} bytes, more than the limit of {limit:,} "
            "(--max-body)",
            headers=close,
        )
    chunks = []
    size = 0
    try:
        async with asyncio.timeout(settings.body_timeout):
            async for chunk in request.stream():
                size += len(chunk)
                if size > limit:
                    raise PayloadTooLarge(
                        f"the request body is more than the limit of {limit:,} bytes (--max-body)",
                        headers=close,
                    )
                chunks.append(chunk)
    except TimeoutError:
        raise RequestTimeout(
            f"the request body did not arrive within {settings.body_timeout:g} s "
            f"({size:,} bytes came; --body-timeout)",
            headers=close,
        ) from None
    return b"".join(chunks)


async def json_body(request: Request, settings: Settings) -> Any:
    """The request's body (:func:`read_body`), decoded (:func:`decode_body`): here, or in
    the application's worker processes (``app.state.worker``) when larger than
    :data:`INLINE_BODY`."""
    raw = await read_body(request, settings)
    worker = getattr(request.app.state, "worker", None) if "app" in request.scope else None
    if worker is not None and len(raw) > INLINE_BODY:
        return await worker.run(decode_body, raw)
    return decode_body(raw)


def decode_body(raw: bytes) -> Any:
    """A request's body decoded, strictly (:func:`rankcraft.jsontext.loads_strict`)."""
    return loads_strict(raw, what="the request body")


def read_query(request: Request, spec: Field) -> Any:
    """A query parameter read as its spec's JSON type and checked by the spec (the same
    spec the OpenAPI document lists): an ``array`` is the repeated parameter, an
    ``integer`` whole-number text; absent: None (the spec says whether that is allowed)."""
    name = spec.name
    if "array" in spec.type:
        value: Any = request.query_params.getlist(name) or None
    else:
        value = request.query_params.get(name)
        if value is not None:
            value = _query_value(value, spec)
    if value is None:
        if spec.required:
            raise InputError(f"'{name}' must be given: it is required")
        return None
    spec.check(value, name)
    return value


_NUMBER = re.compile(r"[+-]?(\d{1,18}(\.\d{0,18})?|\.\d{1,18})")


def _query_value(text: str, spec: Field) -> Any:
    """A query parameter's text as its spec's JSON type: an ``integer`` from whole-number
    text, a ``number`` from decimal text (no exponent, NaN or infinity), a ``boolean``
    from ``true`` or ``false``; else the text itself."""
    name = spec.name
    if "integer" in spec.type:
        digits = text[1:] if text.startswith("-") else text
        if not (digits.isascii() and digits.isdigit()) or len(digits) > 18:
            raise InputError(f"'{name}' must be {spec.wanted}: {text!r}"[:300])
        return int(text)
    if "number" in spec.type:
        if not (text.isascii() and _NUMBER.fullmatch(text)):
            raise InputError(f"'{name}' must be {spec.wanted}: {text!r}"[:300])
        return float(text)
    if "boolean" in spec.type:
        if text not in ("true", "false"):
            raise InputError(f"'{name}' must be {spec.wanted}: {text!r}"[:300])
        return text == "true"
    return text


def check_sides(sides: Any, field: str, settings: Settings) -> None:
    """Refuse more sides or players than the limits, before any other work."""
    beyond = over_limits(sides, field, settings.max_sides, settings.max_players)
    if beyond is not None:
        raise LimitError(beyond, field=field)


def _sides(name: str, settings: Settings) -> Field:
    """The sides of a prediction: lists of player ids, within the service's limits."""
    player = Field("player", "string", min_length=1, must="a player id (a non-empty string)")
    return Field(
        name,
        "array",
        required=True,
        min_items=2,
        max_items=settings.max_sides,
        must="a list of at least two sides",
        items=Field("side", "array", min_items=1, must="a list of player ids", items=player),
        limit=lambda value, path: check_sides(value, path, settings),
        description=f"one list of player ids per side; at most {settings.max_sides} sides "
        f"(--max-sides) and {settings.max_players} players in all (--max-players)",
    )


def _at(what: str, kinds: tuple[str, ...] = ("string", "null")) -> Field:
    return Field(
        "at",
        kinds,
        must="an ISO-8601 time",
        description=f"{what} (an ISO-8601 date or date-time; no zone means UTC)",
    )


def _home(
    kinds: str | tuple[str, ...] = ("integer", "null"),
    description: str = "the index of the side at home (below the number of sides)",
) -> Field:
    """The side playing at home: an index of the sides (a body's, or a query's)."""
    return Field("home", kinds, minimum=0, must="the index of a side", description=description)


def request_bodies(settings: Settings) -> dict[str, Body]:
    """The request bodies, by their schema's name: each checks a body (``Body.check``)
    and describes it (``Body.schema``). ``Match`` only describes: :func:`parse_match`
    checks matches, after :func:`check_sides` has applied the limits."""
    return {
        "Match": _match_body(settings),
        "MatchBatch": _batch_body(settings),
        "Prediction": _prediction_body(settings),
        **matchmaking_bodies(settings),
        "SeasonEvent": _season_event_body(),
        **correction_bodies(),
    }


def _match_body(settings: Settings) -> Body:
    """The match declaration (:data:`rankcraft.io.MATCH`) with the service's limits told."""
    teams = MATCH.field("teams")
    played_at = MATCH.field("played_at")
    match_fields = {
        "teams": attrs.evolve(
            teams,
            max_items=settings.max_sides,
            description=f"{teams.description}; at most {settings.max_sides} sides "
            f"(--max-sides) and {settings.max_players} players in all (--max-players)",
        ),
        "played_at": attrs.evolve(
            played_at,
            description=f"{played_at.description}; at most {settings.max_future:g} s past "
            "the server's clock (--max-future)",
        ),
    }
    return attrs.evolve(MATCH, fields=[match_fields.get(f.name, f) for f in MATCH.fields])


def _batch_body(settings: Settings) -> Body:
    """The body of ``POST /matches/batch``: matches recorded all together, or none."""
    return Body(
        "a batch of matches",
        (
            Field(
                "matches",
                "array",
                required=True,
                min_items=1,
                max_items=settings.max_batch,
                must=f"a list of 1 to {settings.max_batch} matches",
                items=Field("match", "object", description="a match (schema Match)"),
                description="the matches, in time order (schema Match each); at most "
                f"{settings.max_batch} (--max-batch)",
            ),
        ),
        description="matches recorded in one transaction: all of them, or none "
        "(a bare JSON array of matches is taken too)",
        unknown_error=RequestError,
    )


def _prediction_body(settings: Settings) -> Body:
    """The body of ``POST /predict``: the sides, and when, where and in which season."""
    return Body(
        "a prediction",
        (
            _sides("sides", settings),
            _at("predict for this time (decays idle players); default: now"),
            _home(),
            Field(
                "season",
                ("string", "integer", "null"),
                description="the season the match belongs to, for a ruleset whose "
                "[[resets]] follow a season field: a new season applies its event first",
            ),
            Field(
                "meta",
                ("object", "null"),
                description="the match's meta, for a ruleset that reads it (a surface: "
                '{"surface": "Clay"}): the forecast is then that match\'s, at \'at\' or else '
                "at the league's latest match (a season then goes in meta too)",
            ),
        ),
        description="the sides to predict (player ids may hold commas here)",
        unknown_error=RequestError,
    )


def _reason(value: Any, path: str) -> None:
    """Refuse a reason that is only blanks (an edit needs one)."""
    if not value.strip():
        raise RequestError(f"{path!r} must be a non-empty text: {value!r}", field=path)


def correction_bodies() -> dict[str, Body]:
    """The bodies of ``POST /matches/{id}/void`` and ``POST /matches/{id}/correct``: why,
    and for a correction the match's fields to change (docs/corrections.md)."""
    reason = Field(
        "reason",
        "string",
        required=True,
        min_length=1,
        max_length=1000,
        must="a non-empty text of at most 1000 characters",
        limit=_reason,
        description="why (kept in the league's audit of edits)",
    )
    fields = Field(
        "fields",
        "object",
        required=True,
        must="a JSON object of the match's fields to change",
        description="the fields to change, in the match format (any of played_at, teams, "
        "scores, ranks, seconds_played, quit, weight, meta, home; the id stays)",
    )
    return {
        "Void": Body(
            "a void",
            (reason,),
            description="void a recorded match: it counts for nothing, every later "
            "match is rated again",
            unknown_error=RequestError,
        ),
        "Correction": Body(
            "a correction",
            (fields, reason),
            description="correct a recorded match: the fields given replace its own, "
            "every later match is rated again",
            unknown_error=RequestError,
        ),
    }


def _season_event_body() -> Body:
    """The body of ``POST /reset``: a season event of the ruleset's reset plugin."""
    return Body(
        "a season event",
        (
            Field(
                "kind",
                "string",
                required=True,
                must="the name of a season event such as 'soft'",
                description="a season event of the ruleset's reset plugin, e.g. soft or hard",
            ),
            _at("run it as of this time; default: now"),
        ),
        closed=False,
        description="a season event to run now",
    )


BALANCE_PLAYERS = 64
"""The most players ``POST /match/balance`` splits (its swaps grow with the square of the
players; a service answers in well under a second up to this)."""


def _players(name: str, most: int, fewest: int, description: str) -> Field:
    player = Field("player", "string", min_length=1, must="a player id (a non-empty string)")
    return Field(
        name,
        "array",
        required=True,
        min_items=fewest,
        max_items=most,
        unique=True,
        must=f"a list of {fewest} to {most} distinct player ids",
        items=player,
        description=description,
    )


def _opponents_body(settings: Settings) -> Body:
    """The body of ``POST /match/opponents``: a rank filter and the party it is for."""
    number = ("number", "null")
    return Body(
        "an opponents query",
        (
            _players(
                "players",
                settings.max_players,
                1,
                "the player, or every player of the party (known to the league)",
            ),
            *_filter_fields(),
            Field(
                "waited",
                number,
                minimum=0,
                default=0.0,
                must="seconds >= 0",
                description="seconds the party has waited",
            ),
            Field(
                "needed",
                ("integer", "null"),
                minimum=1,
                default=1,
                must="a whole number >= 1",
                description="how many other players make enough",
            ),
            Field(
                "limit",
                ("integer", "null"),
                minimum=0,
                maximum=10_000,
                default=100,
                must="a whole number in [0, 10000]",
                description="the most players in the answer",
            ),
            Field(
                "active_days",
                number,
                minimum=0,
                must="a number of days >= 0",
                description="who is active; default: the ruleset's (else 30 days)",
            ),
        ),
        description="a rank filter: the active players within some percentiles of a "
        "player or party",
        unknown_error=RequestError,
    )


def _filter_fields() -> tuple[Field, ...]:
    """A rank filter's fields: its width in percentiles, and whether and how it widens."""
    number = ("number", "null")
    step = Field(
        "step",
        "array",
        min_items=2,
        max_items=2,
        items=Field("value", "number", minimum=0),
        must="a pair [seconds waited, width]",
    )
    return (
        Field(
            "width",
            number,
            minimum=0,
            maximum=100,
            default=2.0,
            must="a number of percentiles in [0, 100]",
            description="percentiles either side of the party's span",
        ),
        Field(
            "strict",
            ("boolean", "null"),
            default=False,
            description="true: never widen; false: a loose filter",
        ),
        Field(
            "widen",
            ("array", "null"),
            items=step,
            max_items=32,
            description="a loose filter's steps [seconds waited, width], both "
            "growing; default [[30, 5], [60, 10]]",
        ),
    )


def matchmaking_bodies(settings: Settings) -> dict[str, Body]:
    """The request bodies of the ``/match/...`` endpoints (:mod:`rankcraft.matchmaking`)."""
    return {
        "OpponentsQuery": _opponents_body(settings),
        "QualityQuery": Body(
            "a quality query",
            (
                _sides("sides", settings),
                _at("as of this time (decays idle players); default: now"),
                _home(),
            ),
            description="proposed sides, whose match quality is asked",
            unknown_error=RequestError,
        ),
        "BalanceQuery": Body(
            "a balance query",
            (
                _players(
                    "players",
                    min(BALANCE_PLAYERS, settings.max_players),
                    2,
                    f"the players to split; at most {BALANCE_PLAYERS}",
                ),
                Field(
                    "teams",
                    ("integer", "null"),
                    minimum=2,
                    default=2,
                    must="a whole number >= 2",
                    description="how many teams (at most the number of players)",
                ),
                _at("as of this time (decays idle players); default: now"),
            ),
            description="players to split into fair teams",
            unknown_error=RequestError,
        ),
    }


def query_parameters(settings: Settings) -> dict[str, Field]:
    """The query parameters of the GET endpoints, by name: the handlers read and check
    them with these specs (``read_query``), and the OpenAPI document lists them."""
    return {**_board_parameters(), **_predict_parameters(settings), **_edit_parameters()}


def _edit_parameters() -> dict[str, Field]:
    """The query parameters of the corrections: ``at`` of ``GET /leaderboard`` and
    ``GET /players/{id}`` (key ``as_of``: the league as it stood then), and the filters
    of ``GET /edits``."""
    return {
        "as_of": Field(
            "at",
            "string",
            min_length=1,
            must="an ISO-8601 time",
            description="the league as it stood at this time: its matches played then or "
            "before, rated again (an ISO-8601 date or date-time; no zone means UTC); "
            "default: now",
        ),
        "match": Field(
            "match",
            "string",
            min_length=1,
            must="a match id",
            description="only the edits of this match",
        ),
        "player": Field(
            "player",
            "string",
            min_length=1,
            must="a player id",
            description="only the edits of matches this player played in (old or new version)",
        ),
    }


def _board_parameters() -> dict[str, Field]:
    """The query parameters of ``GET /leaderboard``: a page of the board, filtered."""
    return {
        "top": Field(
            "top",
            "integer",
            minimum=1,
            must="a whole number >= 1",
            description="only the first N players (after offset)",
        ),
        "offset": Field(
            "offset",
            "integer",
            minimum=0,
            must="a whole number >= 0",
            default=0,
            description="skip the first N places: ?offset=100&top=50 lists places 101-150",
        ),
        "active_days": Field(
            "active_days",
            "number",
            minimum=0,
            must="a number of days >= 0",
            description="only players whose last match is at most this many days before "
            "the league's latest match; default: the ruleset's [display] active_days "
            "(no limit without it)",
        ),
        "tier": Field(
            "tier",
            "string",
            min_length=1,
            must="a tier's name",
            description="only players of this tier (the rank state's tier, e.g. Master); "
            "a tier nobody holds lists nobody",
        ),
        "all": Field(
            "all",
            "boolean",
            must="true or false",
            default=False,
            description="true: ignore the ruleset's [display] active_days (an explicit "
            "active_days still applies)",
        ),
        "holding": Field(
            "holding",
            "string",
            max_length=100,
            must="a text of at most 100 characters",
            description="only players whose id holds this text (ASCII letters in either "
            "case); they keep their places on the board",
        ),
    }


def _predict_parameters(settings: Settings) -> dict[str, Field]:
    """The query parameters of ``GET /predict``: the sides, when, and which is at home."""
    return {
        "side": Field(
            "side",
            "array",
            required=True,
            min_items=2,
            max_items=settings.max_sides,
            items=Field("side", "string", description="a side's player ids, comma-separated"),
            description=f"once per side: ?side=a,b&side=c; at most {settings.max_sides} "
            f"sides and {settings.max_players} players in all",
        ),
        "at": _at("predict for this time (decays idle players); default: now", ("string",)),
        "home": _home("integer", "the index of the side at home"),
    }
