"""The HTTP API tested from its own OpenAPI document by Schemathesis (issue 31, item 10).

Every operation of ``/openapi.json``, with requests that fit the document (``positive``)
and requests that break it (``negative``: bodies, parameters and headers of the wrong
shape), on a league in SQLite and in PostgreSQL. Each answer must be no 5xx, of a status
and a content type the document lists, match the document's schema, and a write must
refuse a request without its token (Schemathesis's ``ignored_auth`` sends it again
without one).

The run here is seeded (Hypothesis ``derandomize``) and bounded (:data:`EXAMPLES` per
operation and mode), so that it takes a few seconds; ``benchmarks/schemathesis_long.py``
runs the same checks with many more examples."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis import checks
from schemathesis.generation import GenerationMode

import rankcraft
import rankcraft.tokens
from rankcraft import lab
from rankcraft.serve import OPERATIONS, Settings, create_app

EXAMPLES = int(os.environ.get("RANKCRAFT_SCHEMATHESIS_EXAMPLES", "6"))
"""Examples per operation and generation mode (``RANKCRAFT_SCHEMATHESIS_EXAMPLES``)."""

CHECKS: list[Callable[..., Any]] = [
    checks.not_a_server_error,
    checks.status_code_conformance,
    checks.content_type_conformance,
    checks.response_schema_conformance,
    checks.ignored_auth,
]
"""What every answer is checked for. Not ``positive_data_acceptance``: the document's
schemas cannot say everything a match must be (a ``played_at`` that parses, players
that appear once), so a request that fits them may rightly get a 400."""

SEED_MATCHES = [
    {"id": f"s{i}", "played_at": f"2024-05-{i + 1:02d}", "teams": [[a], [b]], "scores": [1, 0]}
    for i, (a, b) in enumerate([("0", "a"), ("a", "b"), ("b", "0"), ("c", "a")])
]


def serve(url: str) -> tuple[rankcraft.League, Any, dict[str, str]]:
    """A Skyweaver league (ranks, tiers, season events) at ``url`` with a few matches,
    its application and the headers of an admin token."""
    league = rankcraft.League.open(url, "skyweaver")
    league.record_many(SEED_MATCHES)
    _, token = rankcraft.tokens.create_token(league.store, scope="admin")
    app = create_app(league, Settings(max_body=1 << 16))
    return league, app, {"Authorization": f"Bearer {token}"}


@pytest.fixture(params=["sqlite", "postgres"])
def service(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Any, dict[str, str]]]:
    if request.param == "sqlite":
        url = str(tmp_path / "league.sqlite")
    else:
        url = request.getfixturevalue("pg_url")
    league, app, headers = serve(url)
    try:
        yield app, headers
    finally:
        league.close()


def exercise(app: Any, headers: dict[str, str], key: str, mode: str, examples: int) -> None:
    """Send ``examples`` seeded requests of ``mode`` to the operation ``key`` ("GET
    /path") of ``app``, each checked by :data:`CHECKS`."""
    schema = schemathesis.openapi.from_asgi("/openapi.json", app)
    method, path = key.split(" ", 1)
    operation = schema[path][method.lower()]

    @given(operation.as_strategy(GenerationMode(mode)))
    @settings(
        max_examples=examples,
        derandomize=True,
        database=None,
        deadline=None,
        suppress_health_check=list(HealthCheck),
    )
    def one(case: Any) -> None:
        response = case.call(headers=headers)
        case.validate_response(response, checks=CHECKS, headers=headers)

    one()


ALL = OPERATIONS + lab.OPERATIONS
KEYS = [f"{op.method} {op.path}" for op in ALL]
CASES = [(key, "positive") for key in KEYS] + [
    (f"{op.method} {op.path}", "negative") for op in ALL if op.body or op.query
]
"""Every operation with requests that fit; those with a body or query parameters with
requests that break them too (a path's id is any text: nothing there can be broken)."""


@pytest.mark.parametrize(("key", "mode"), CASES)
def test_every_operation_answers_as_its_document_says(
    service: tuple[Any, dict[str, str]], key: str, mode: str
) -> None:
    app, headers = service
    exercise(app, headers, key, mode, EXAMPLES)


def test_the_document_lists_every_operation() -> None:
    league = rankcraft.League("skyweaver")
    schema = schemathesis.openapi.from_asgi("/openapi.json", create_app(league))
    found = sorted(f"{op.ok().method.upper()} {op.ok().path}" for op in schema.get_all_operations())
    assert found == sorted(KEYS) and len(found) == 21
