"""Champion against challenger (rankcraft.livecompare): the comparison of two leagues fed
the same matches equals ``rankcraft evaluate`` of both rulesets on the matches both hold;
the ``compare-live`` command and the service's ``GET /web/compare-live``."""

from __future__ import annotations

import io
import json
import random
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

import rankcraft
from rankcraft.cli import main
from rankcraft.comparison import differences, report
from rankcraft.errors import InputError
from rankcraft.evaluate import evaluate_ruleset
from rankcraft.livecompare import compare_live
from rankcraft.serve import Settings, create_app

PLAYERS = [f"p{i}" for i in range(12)]


def history(n: int, *, seed: int = 1, draws: bool = False) -> list[dict[str, Any]]:
    """``n`` random two-sided matches, two a day from 2024-01-01 (a third drawn)."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        a, b = rng.sample(PLAYERS, 2)
        scores = rng.choice([[2, 1], [0, 3], [1, 1]] if draws else [[1, 0], [0, 1]])
        day, hour = divmod(i, 2)
        out.append(
            {
                "id": f"m{i}",
                "played_at": f"2024-{1 + day // 28:02d}-{1 + day % 28:02d}T{10 + hour}:00:00Z",
                "teams": [[a], [b]],
                "scores": scores,
            }
        )
    return out


def league_with(ruleset: str, matches: list[dict[str, Any]], db: Path | None = None) -> Any:
    league = rankcraft.League.open(str(db), ruleset) if db else rankcraft.League(ruleset)
    league.record_many(matches)
    return league


def expected(
    champion: str, challenger: str, matches: list[dict[str, Any]], test_from: str
) -> dict[str, Any]:
    """What ``rankcraft evaluate --json`` reports for the two rulesets on ``matches``."""
    results = {
        name: evaluate_ruleset(rankcraft.load_ruleset(name), matches, test_from=test_from)
        for name in (champion, challenger)
    }
    return report(results, champion, differences(results, champion), test_from=test_from)


def test_the_comparison_is_evaluate_of_both_rulesets_on_the_same_matches() -> None:
    matches = history(300)
    champion, challenger = league_with("elo", matches), league_with("glicko1", matches)
    result = compare_live(champion, challenger).to_dict()
    want = expected("elo", "glicko1", matches, "2024-01-01T10:00:00Z")
    assert (result["champion"], result["challenger"], result["common"]) == ("elo", "glicko1", 300)
    assert (result["champion_only"], result["challenger_only"]) == (0, 0)
    assert {k: result[k] for k in want} == want
    assert result["results"]["elo"]["n"] == 300 and result["results"]["elo"]["warmup"] == 0
    scores = [d["score"] for d in result["differences"]]
    assert scores == ["log-loss", "brier"]
    late = compare_live(champion, challenger, test_from="2024-03-01").to_dict()
    assert {k: late[k] for k in want} == expected("elo", "glicko1", matches, "2024-03-01T00:00:00Z")
    assert late["results"]["glicko1"]["warmup"] == 112


def test_draws_are_scored_three_ways_where_both_forecast_them() -> None:
    matches = history(200, seed=2, draws=True)
    champion = league_with("football", matches)
    challenger = league_with("football-goals", matches)
    result = compare_live(champion, challenger, test_from="2024-02-15").to_dict()
    want = expected("football", "football-goals", matches, "2024-02-15T00:00:00Z")
    assert {k: result[k] for k in want} == want
    assert result["results"]["football"]["three_way"]["n"] == 116
    scores = [d["score"] for d in result["differences"]]
    assert scores == ["log-loss", "three-way", "rps", "brier"]


def test_only_the_matches_both_hold_are_compared() -> None:
    matches = history(120, seed=3)
    champion = league_with("elo", matches[:100])  # the challenger is behind...
    challenger = league_with("elo", [m for m in matches if m["id"] != "m7"])  # ...or ahead
    result = compare_live(champion, challenger)
    both = [m for m in matches[:100] if m["id"] != "m7"]
    assert (result.common, result.champion_only, result.challenger_only) == (99, 1, 20)
    assert (result.champion, result.challenger) == ("elo", "elo (challenger)")
    only = evaluate_ruleset(rankcraft.load_ruleset("elo"), both, test_from=both[0]["played_at"])
    assert result.results["elo"] == only == result.results["elo (challenger)"]
    assert [d.difference for d in result.differences] == [0.0, 0.0]
    with pytest.raises(InputError, match="no match in common"):
        compare_live(champion, league_with("elo", []))


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def test_the_command_prints_what_evaluate_prints(tmp_path: Path) -> None:
    matches = history(160, seed=4)
    league_with("elo", matches, tmp_path / "champion.sqlite").close()
    league_with("glicko1", matches[:150], tmp_path / "challenger.sqlite").close()
    db, other = str(tmp_path / "champion.sqlite"), str(tmp_path / "challenger.sqlite")
    code, out, err = run("compare-live", "--db", db, "--challenger", other, "--json")
    assert code == 0, err
    document = json.loads(out)
    want = expected("elo", "glicko1", matches[:150], "2024-01-01T10:00:00Z")
    assert {k: document[k] for k in want} == json.loads(json.dumps(want))
    assert (document["common"], document["champion_only"]) == (150, 10)
    code, out, _ = run("compare-live", "--db", db, "--challenger", other)
    assert code == 0
    first, rest = out.split("\n", 1)
    assert first == (
        f"{db} against {other}: 150 matches both hold (left out: 10 only the champion "
        "holds, 0 only the challenger), one step ahead from 2024-01-01T10:00:00Z"
    )
    path = tmp_path / "both.jsonl"
    path.write_text("".join(json.dumps(m) + "\n" for m in matches[:150]))
    code, evaluated, _ = run(
        "evaluate", str(path), "--ruleset", "elo", "--ruleset", "glicko1", "--jobs", "1",
        "--test-from", "2024-01-01T10:00:00Z",
    )  # fmt: skip
    assert code == 0 and "glicko1  log-loss     +0.0754" in rest
    assert rest == evaluated.split("\n", 1)[1]  # (the same tables, every figure)


def test_the_command_refuses_a_missing_league_or_no_common_match(tmp_path: Path) -> None:
    league_with("elo", history(10), tmp_path / "a.sqlite").close()
    league_with("elo", [], tmp_path / "b.sqlite").close()
    a, b = str(tmp_path / "a.sqlite"), str(tmp_path / "b.sqlite")
    code, out, err = run("compare-live", "--db", a, "--challenger", str(tmp_path / "no"))
    assert (code, out) == (2, "")
    assert f"'--challenger': no league at '{tmp_path / 'no'}'" in err
    code, _, err = run("compare-live", "--db", str(tmp_path / "none"), "--challenger", a)
    assert code == 2 and "'--db': no league at" in err
    code, _, err = run("compare-live", "--db", a, "--challenger", b)
    assert code == 2 and "hold no match in common (10 and 0 matches)" in err
    code, _, err = run("compare-live", "--db", a, "--challenger", a, "--test-from", "soon")
    assert code == 2 and "--test-from" in err and "'soon'" in err
    assert not (tmp_path / "no").exists() and not (tmp_path / "none").exists()


def test_the_page_compares_the_league_with_its_challenger(tmp_path: Path) -> None:
    matches = history(140, seed=5)
    champion = league_with("elo", matches[:130], tmp_path / "champion.sqlite")
    league_with("glicko1", matches[:120], tmp_path / "challenger.sqlite").close()
    settings = Settings(challenger=str(tmp_path / "challenger.sqlite"))
    app = create_app(champion, settings, db=str(tmp_path / "champion.sqlite"))
    with TestClient(app) as client:
        answer = client.get("/web/compare-live")
        assert answer.status_code == 200, answer.text
        body = answer.json()
        want = expected("elo", "glicko1", matches[:120], "2024-01-01T10:00:00Z")
        assert {k: body[k] for k in want} == json.loads(json.dumps(want))
        assert (body["common"], body["champion_only"]) == (120, 10)
        assert client.get("/web/compare-live").json() == body  # (kept: nothing new)
        assert client.get("/web/meta").json()["challenger"] is True
        with rankcraft.League.open(settings.challenger or "") as challenger:
            challenger.record_many(matches[120:130])  # (the challenger catches up)
        again = client.get("/web/compare-live").json()
        assert (again["common"], again["champion_only"]) == (130, 0)
        assert again["results"]["glicko1"]["n"] == 130
        paths = client.get("/openapi.json").json()["paths"]
        assert "get" in paths["/web/compare-live"]


def test_the_page_answers_404_without_a_challenger() -> None:
    with TestClient(create_app(league_with("elo", history(10)))) as client:
        answer = client.get("/web/compare-live")
        assert client.get("/web/meta").json()["challenger"] is False
    assert answer.status_code == 404
    assert "--challenger" in answer.json()["error"]["message"]


def test_an_in_memory_league_is_compared_on_its_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from rankcraft.serve import livecompare

    replays = []

    def counted(*args: Any, **kwargs: Any) -> Any:
        replays.append(1)
        return compare_live(*args, **kwargs)

    monkeypatch.setattr(livecompare, "compare_live", counted)
    matches = history(60, seed=6)
    league_with("glicko1", matches, tmp_path / "challenger.sqlite").close()
    champion = league_with("elo", matches[:50])
    settings = Settings(challenger=str(tmp_path / "challenger.sqlite"))
    with TestClient(create_app(champion, settings)) as client:
        body = client.get("/web/compare-live").json()
        assert body["common"] == 50 and body["challenger_only"] == 10
        assert client.get("/web/compare-live").json() == body and len(replays) == 1
        champion.record_many(matches[50:])
        again = client.get("/web/compare-live").json()
    assert again["common"] == 60 and again["challenger_only"] == 0 and len(replays) == 2
    assert again == compare_live(champion, league_with("glicko1", matches)).to_dict()


def test_the_page_shows_champion_and_challenger_in_a_browser(tmp_path: Path) -> None:
    import os
    import threading
    import time

    from .test_web import CHROMIUM

    if not os.path.exists(CHROMIUM):
        pytest.skip(f"no Chromium at {CHROMIUM} (apt-get install chromium)")
    sync_api = pytest.importorskip("playwright.sync_api", reason="needs Playwright")
    import uvicorn

    matches = history(100, seed=7)
    league_with("glicko1", matches[:90], tmp_path / "challenger.sqlite").close()
    settings = Settings(challenger=str(tmp_path / "challenger.sqlite"))
    app = create_app(league_with("elo", matches), settings)
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="error"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        assert time.monotonic() < deadline, "the server did not start"
        time.sleep(0.02)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        with sync_api.sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
            page = browser.new_page()
            page.goto(f"http://127.0.0.1:{port}/#league")
            section = page.locator("#live")
            sync_api.expect(section).to_be_visible()
            sync_api.expect(page.locator("#live h2")).to_have_text("Champion vs challenger")
            sync_api.expect(page.locator("#live-summary")).to_contain_text(
                "90 matches both hold (left out: 10 only the champion holds"
            )
            rows = page.locator("#live-scores tbody tr")
            sync_api.expect(rows).to_have_count(2)
            sync_api.expect(rows.nth(1).locator("td").first).to_have_text("glicko1")
            sync_api.expect(page.locator("#live-differences tbody tr")).to_have_count(2)
            browser.close()
    finally:
        server.should_exit = True
        thread.join(5)


def test_the_challenger_setting_is_checked_and_handed_to_workers() -> None:
    with pytest.raises(InputError, match="'challenger' must be a database file or URL"):
        Settings(challenger=" ")
    assert Settings.from_json(Settings(challenger="x.sqlite").to_json()).challenger == "x.sqlite"


def test_serve_refuses_a_challenger_that_is_not_there(tmp_path: Path) -> None:
    db, other = tmp_path / "champion.sqlite", tmp_path / "challenger.sqlite"
    code, out, err = run("serve", "--db", str(db), "--ruleset", "elo", "--challenger", str(other))
    assert (code, out) == (2, "")
    assert f"'--challenger': no league at '{other}'" in err
    assert not db.exists() and not other.exists()  # (nothing made)


def test_a_league_in_postgresql_against_one_in_sqlite(db_url: str, tmp_path: Path) -> None:
    from rankcraft.livecompare import compare_dbs

    matches = history(80, seed=8)
    with rankcraft.League.open(db_url, "elo") as champion:
        champion.record_many(matches)
    league_with("glicko1", matches[:70], tmp_path / "challenger.sqlite").close()
    document = compare_dbs(db_url, str(tmp_path / "challenger.sqlite"))
    want = expected("elo", "glicko1", matches[:70], "2024-01-01T10:00:00Z")
    assert {k: document[k] for k in want} == want
    assert (document["common"], document["champion_only"]) == (70, 10)
    with pytest.raises(InputError, match="the challenger league: "):
        compare_dbs(db_url, str(tmp_path / "none.sqlite"))
    assert not (tmp_path / "none.sqlite").exists()
