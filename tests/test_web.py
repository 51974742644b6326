"""The web page of ``rankcraft serve`` in a real browser (headless Chromium driven by
Playwright), and the JSON endpoints it reads.

The browser tests run the service in a thread on loopback over a small Skyweaver league
(tiers, weekly soft and four-weekly hard resets) and use the system's Chromium
(``apt-get install chromium``); they skip, saying so, where it or Playwright is missing.
"""

from __future__ import annotations

import itertools
import math
import os
import random
import re
import shutil
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from typing import Any

import attrs
import pytest
from starlette.testclient import TestClient

import rankcraft
from rankcraft.serve import create_app
from rankcraft.tokens import create_token
from rankcraft.web import compare, league_matches, ruleset_error, season_archive

CHROMIUM = os.environ.get("RANKCRAFT_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"


def history(n: int = 48) -> list[dict[str, Any]]:
    """``n`` games of four players, one a day from 2024-01-01 (six weeks and more)."""
    players = ["ann", "bo", "cy", "di"]
    out = []
    for i in range(n):
        a, b = players[i % 4], players[(i + 1 + i // 4) % 4]
        if a == b:
            b = players[(i + 2) % 4]
        day = f"2024-{1 + i // 28:02d}-{1 + i % 28:02d}T12:00:00Z"
        out.append(
            {
                "id": f"g{i}",
                "played_at": day,
                "teams": [[a], [b]],
                "scores": [i % 3 != 0, i % 3 == 0],
            }
        )
    for m in out:
        m["scores"] = [int(s) for s in m["scores"]]
    return out


def skyweaver_league() -> rankcraft.League:
    league = rankcraft.League("skyweaver")
    league.record_many(history())
    return league


# -- the page's JSON -----------------------------------------------------------------------


def test_player_history_marks_resets_and_explains_changes() -> None:
    league = skyweaver_league()
    with TestClient(create_app(league)) as client:
        data = client.get("/web/players/ann").json()
        matches = data["matches"]
        assert len(matches) == league.player("ann").matches == 24
        assert [m["played_at"] for m in matches] == sorted(m["played_at"] for m in matches)
        assert data["fields"] == {"location": "rating", "spread": "deviation", "rank": "points"}
        # weekly soft resets move the deviation between matches: marked
        assert sum(m["reset_before"] for m in matches) >= 5
        assert not matches[0]["reset_before"]
        last = matches[-1]
        assert last["skill_after"] == league.player("ann").skill.rating
        assert last["rank_after"] == league.player("ann").rank.points
        assert "mmr_change" in last["factors"]
        assert client.get("/web/players/nobody").status_code == 404
        assert client.get("/web/search", params={"q": "D"}).json() == ["di"]
        meta = client.get("/web/meta").json()  # the tiers ?tier= matches, best first
        assert (meta["tiers"], meta["active_days"]) == (["Trainee II"], None)
        seasons = client.get("/web/seasons").json()
    assert seasons == season_archive(league)
    assert seasons and {r["id"] for r in seasons[0]["players"]} <= {"ann", "bo", "cy", "di"}
    # after the hard reset of Feb 26, a newcomer (243 RP) starts below the others (>= 316)
    later = skyweaver_league()
    later.record(
        {"id": "n1", "played_at": "2024-03-01", "teams": [["new"], ["ann"]], "scores": [1, 0]}
    )
    assert later.tiers() == ["Trainee I", "Wanderer"]


GLICKO = 400.0 / math.log(10.0)
"""Glickman's conversion: rating = 1500 + GLICKO * mu, RD = GLICKO * phi."""


def test_the_page_and_the_lab_show_glicko2_on_the_glicko_scale() -> None:
    # issue 39, item 4: glicko2's docs promise "rating - 2 RD", not mu and phi
    league = rankcraft.League("glicko2")
    league.record_many(history(40))
    ann = league.player("ann").skill
    rating, rd = 1500.0 + GLICKO * ann.mu, GLICKO * ann.phi
    with TestClient(create_app(league)) as client:
        data = client.get("/web/players/ann").json()
        meta = client.get("/web/meta").json()
        lab = client.post("/web/lab/compare", json={"rulesets": ["glicko2", "glicko1"]}).json()
    assert data["fields"] == meta["fields"] == {"location": "rating", "spread": "RD", "rank": None}
    assert data["display"]["skill"] == pytest.approx({"rating": rating, "RD": rd})
    last = data["matches"][-1]
    assert (last["skill_after"], last["spread_after"]) == pytest.approx((rating, rd))
    assert data["player"]["skill"]["mu"] == ann.mu  # (the state as kept, named as kept)
    assert meta["scales"] == {
        "location": {"field": "mu", "factor": GLICKO, "offset": 1500.0},
        "spread": {"field": "phi", "factor": GLICKO, "offset": 0.0},
    }
    glicko2, glicko1 = lab["results"]
    assert (glicko2["location"], glicko2["value"]) == ("rating", "conservative")
    top = glicko2["top"][0]
    best = league.player(top["id"]).skill
    assert top["rating"] == pytest.approx(1500.0 + GLICKO * best.mu)
    assert top["value"] == pytest.approx(1500.0 + GLICKO * (best.mu - 2 * best.phi))
    # both on one scale: the two Glicko rulesets' ratings are comparable in the lab
    assert 1000 < glicko2["ratings"]["low"] < 1500 < glicko2["ratings"]["high"] < 2000
    assert 1000 < glicko1["ratings"]["low"] < 1500 < glicko1["ratings"]["high"] < 2000


def test_ruleset_errors_name_their_field_and_line() -> None:
    text = 'name = "x"\nextends = "elo"\n\n[update.params]\nk_factor = 20.0\nkk = 3\n'
    with TestClient(create_app(rankcraft.League("elo"))) as client:
        answer = client.post("/web/lab/check", json={"toml": text}).json()
        assert answer["ok"] is False
        assert answer["error"]["field"] == "update.params.kk"
        assert answer["error"]["line"] == 6
        broken = client.post("/web/lab/check", json={"toml": 'name = "x"\n[update\n'}).json()
        assert broken["error"]["line"] == 2
        good = client.post("/web/lab/check", json={"toml": text.replace("kk = 3\n", "")})
        assert good.json() == {"ok": True, "name": "x", "error": None}
    try:
        rankcraft.ruleset.loads_ruleset('name = "y"\n[update]\nplugin = "nope"\n')
    except rankcraft.errors.RulesetError as exc:
        assert ruleset_error(exc, 'name = "y"\n[update]\nplugin = "nope"\n')["line"] == 3


def test_the_lab_compares_rulesets_on_the_leagues_matches() -> None:
    league = rankcraft.League("elo")
    league.record_many(history(40))
    assert [m.id for m in league_matches(league)] == [f"g{i}" for i in range(40)]
    with TestClient(create_app(league)) as client:
        data = client.post(
            "/web/lab/compare", json={"rulesets": ["elo", "skyweaver"], "test_from": "2024-01-21"}
        ).json()
        bad = client.post(
            "/web/lab/compare", json={"rulesets": ["elo", {"toml": 'name = "z"\n[update]\n'}]}
        )
    assert data["matches"] == 40 and data["baseline"] == "elo"
    elo, sky = data["results"]
    # the lab's figures are evaluate's on the same history
    direct = rankcraft.evaluate.evaluate(
        rankcraft.League("elo"), history(40), test_from="2024-01-21"
    )
    assert elo["evaluation"]["log_loss"] == pytest.approx(direct.log_loss)
    # and its differences are evaluate's: skyweaver against elo, the first (the baseline)
    other = rankcraft.evaluate.evaluate(
        rankcraft.League("skyweaver"), history(40), test_from="2024-01-21"
    )
    paired = rankcraft.evaluate.differences({"elo": direct, "skyweaver": other}, "elo")
    assert data["differences"] == [d.to_dict() for d in paired]
    assert [d["score"] for d in data["differences"]] == ["log-loss", "brier"]
    assert sum(sky["tiers"].values()) == 4 and elo["tiers"] == {}
    # Skyweaver's seasons are its four-weekly hard resets' (from Jan 1 12:00: 28 matches,
    # then 12); elo has no [[resets]]: its season is the calendar year
    assert [(x["matches"], sum(x["tiers"].values())) for x in sky["seasons"]] == [(28, 4), (12, 4)]
    assert [(x["start"], x["matches"], x["tiers"]) for x in elo["seasons"]] == [
        ("2024-01-01T00:00:00Z", 40, {})
    ]
    assert sum(elo["ratings"]["counts"]) == 4
    assert [r["id"] for r in elo["top"]] == [r.id for r in direct_top(40)]
    assert bad.status_code == 400 and bad.json()["error"]["index"] == 1


def test_the_lab_gives_each_calendar_year_its_distribution() -> None:
    # Elo (K = 32), no [[resets]]: seasons are calendar years. 2023: a beats b (1516,
    # 1484). 2024: c beats d (1516, 1484); a beats b again: E = 1 / (1 + 10^(-32/400))
    # = 0.545922, so a gains 32 x 0.454078 = 14.5305 (1530.5305) and b falls to 1469.4695
    played = [("m1", "a", "b", "2023-06-01"), ("m2", "c", "d", "2024-03-01")]
    played.append(("m3", "a", "b", "2024-04-01"))
    matches = [
        rankcraft.parse_match({"id": i, "played_at": t, "teams": [[a], [b]], "scores": [1, 0]})
        for i, a, b, t in played
    ]
    (elo,) = compare([rankcraft.load_ruleset("elo")], matches, "2024-01-01")["results"]
    first, second = elo["seasons"]
    assert (first["season"], first["start"], first["end"]) == (
        1,
        "2023-01-01T00:00:00Z",
        "2024-01-01T00:00:00Z",
    )
    assert (first["matches"], first["players"], second["matches"], second["players"]) == (
        1,
        2,
        2,
        4,
    )
    # one span for both seasons: 1469.4695 to 1530.5305 in 20 bins of 3.0531
    for season in (first, second):
        assert season["ratings"]["low"] == pytest.approx(1469.4695, abs=1e-4)
        assert season["ratings"]["high"] == pytest.approx(1530.5305, abs=1e-4)
    counts = [
        [i for i, c in enumerate(s["ratings"]["counts"]) for _ in range(c)] for s in (first, second)
    ]
    # 1484 -> bin 4 ((1484 - 1469.47) / 3.053 = 4.76), 1516 -> bin 15, the ends -> 0 and 19
    assert counts == [[4, 15], [0, 4, 15, 19]]
    assert first["tiers"] == second["tiers"] == {}
    # the last year a date holds ends with it (no year 10000)
    late = [attrs.evolve(m, played_at=m.played_at.replace(year=9999)) for m in matches]
    (elo,) = compare([rankcraft.load_ruleset("elo")], late, "9999-04-01")["results"]
    assert [(s["start"][:10], s["end"][:10], s["matches"]) for s in elo["seasons"]] == [
        ("9999-01-01", "9999-12-31", 3)
    ]


def test_a_season_of_resets_ends_before_its_reset() -> None:
    """Each season's figures are the league's state after its last match, before the
    event that ends it: what a league fed the season's matches alone holds."""
    (sky,) = compare(
        [rankcraft.load_ruleset("skyweaver")],
        [rankcraft.parse_match(m) for m in history(48)],
        "2024-01-15",
    )["results"]
    assert [(s["start"], s["end"], s["matches"]) for s in sky["seasons"]] == [
        ("2024-01-01T12:00:00Z", "2024-01-29T12:00:00Z", 28),
        ("2024-01-29T12:00:00Z", "2024-02-26T12:00:00Z", 20),
    ]
    for season, count in zip(sky["seasons"], (28, 48), strict=True):
        alone = rankcraft.League("skyweaver")
        alone.record_many(history(count))
        tiers: dict[str, int] = {}
        for standing in alone.standings().values():
            tier = standing.rsplit(" ", 1)[0] if standing[-1] in "IVX" else standing
            tiers[tier] = tiers.get(tier, 0) + 1
        assert season["tiers"] == tiers
        low, high = season["ratings"]["low"], season["ratings"]["high"]
        width = (high - low) / 20
        binned = [0] * 20
        for record in alone.players():
            binned[min(int((record.skill.rating - low) / width), 19)] += 1
        assert season["ratings"]["counts"] == binned and season["players"] == 4


def direct_top(n: int) -> list[rankcraft.PlayerRecord]:
    league = rankcraft.League("elo")
    league.record_many(history(n))
    return league.leaderboard(20)


def test_compare_needs_matches() -> None:
    with pytest.raises(rankcraft.errors.InputError, match="at least 2 matches"):
        compare([rankcraft.load_ruleset("elo")], [])


# -- the batch endpoint --------------------------------------------------------------------


def test_a_batch_is_recorded_whole_or_not_at_all() -> None:
    league = rankcraft.League("elo")
    _, token = create_token(league.store, scope="record")
    games = history(6)
    with TestClient(create_app(league), headers={"Authorization": f"Bearer {token}"}) as client:
        done = client.post("/matches/batch", json={"matches": games[:3]})
        assert done.status_code == 201
        assert done.json()["recorded"] == 3
        assert [r["match_id"] for r in done.json()["reports"]] == ["g0", "g1", "g2"]
        # checks first: every malformed item is listed with its index; nothing recorded
        bad = client.post(
            "/matches/batch", json=[games[3], {"id": "x"}, {**games[4], "scores": [1]}]
        )
        assert bad.status_code == 400
        assert [e["index"] for e in bad.json()["errors"]] == [1, 2]
        assert bad.json()["error"]["field"] == "matches[1].played_at"
        # a refusal while rating (a repeated id at index 1) undoes the whole batch
        again = client.post("/matches/batch", json=[games[3], games[0]])
        assert again.status_code == 409
        assert again.json()["errors"][0]["index"] == 1
        assert league.match_count == 3 and league.player("ann").matches == 1  # g3 undone
        assert client.post("/matches/batch", json=[]).status_code == 400
        anonymous = client.post("/matches/batch", json=games[3:], headers={"Authorization": ""})
        assert anonymous.status_code == 401
        assert client.post("/matches/batch", json=games[3:]).status_code == 201
    assert league.match_count == 6


# -- in a real browser ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not os.path.exists(CHROMIUM):
        pytest.skip(
            f"no Chromium at {CHROMIUM} (apt-get install chromium; or set RANKCRAFT_CHROMIUM)"
        )
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("needs Playwright (pip install playwright; the test extra has it)")
    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield chromium
        chromium.close()


@contextmanager
def serving(league: rankcraft.League) -> Iterator[str]:
    """The service over ``league`` in a thread on loopback; its base URL."""
    import uvicorn

    config = uvicorn.Config(create_app(league), host="127.0.0.1", port=0, log_level="error")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        assert time.monotonic() < deadline, "the server did not start"
        time.sleep(0.02)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(5)


@pytest.fixture(scope="module")
def served() -> Iterator[tuple[str, str, rankcraft.League]]:
    league = skyweaver_league()
    _, token = create_token(league.store, scope="record")
    with serving(league) as base:
        yield base, token, league


def test_a_late_answer_does_not_overwrite_a_newer_check(
    browser: Any, served: tuple[str, str, rankcraft.League]
) -> None:
    """The lab checks the editor's text as it changes; the check of the editor's starting
    text (valid), answered after the check of the text typed since, must not clear its
    error."""
    import json

    base, _, _ = served
    page = browser.new_page()
    held: list[Any] = []

    def hold_the_first_check(route: Any, request: Any) -> None:
        if "kk" not in json.loads(request.post_data or "{}").get("toml", ""):
            held.append(route)  # (answered below, after the newer check)
        else:
            route.continue_()

    page.route("**/web/lab/check", hold_the_first_check)
    page.goto(f"{base}/#lab")
    page.click("#lab-add")
    page.fill(".editor textarea", 'name = "mine"\nextends = "elo"\n[update.params]\nkk = 3\n')
    page.wait_for_selector(".field-error[data-field='update.params.kk']")
    assert held, "the starting text's check was not asked"
    with page.expect_response("**/web/lab/check"):
        held[0].continue_()
    page.wait_for_timeout(200)
    error = page.locator(".editor .field-error")
    assert error.get_attribute("data-field") == "update.params.kk"
    page.close()


def test_the_page_in_a_browser(browser: Any, served: tuple[str, str, rankcraft.League]) -> None:
    from playwright.sync_api import expect

    base, token, league = served
    page = browser.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    asked: list[str] = []
    page.on("request", lambda request: asked.append(request.url.removeprefix(base)))

    # League: every player, with their tier and rank points
    page.goto(f"{base}/#league")
    page.wait_for_selector("body[data-ready='1'] #leaderboard tbody tr")
    rows = page.locator("#leaderboard tbody tr")
    assert rows.count() == 4
    best = league.leaderboard(1)[0]
    first = rows.nth(0).inner_text()
    assert best.id in first and league.standings()[best.id] in first
    assert str(best.rank.points) in first
    page.fill("#league-search", "d")
    expect(page.locator("#leaderboard tbody tr")).to_have_count(1)
    page.fill("#league-search", "")
    expect(page.locator("#leaderboard tbody tr")).to_have_count(4)
    expect(page.locator("#seasons")).to_be_visible()
    # the season archive (every player's rank read) is asked for after the board
    board = next(i for i, url in enumerate(asked) if url.startswith("/leaderboard"))
    assert asked.index("/web/seasons") > board
    # Player: rating with its band, resets marked, each match with its factors
    page.goto(f"{base}/#player/ann")
    page.wait_for_selector("#player-matches tbody tr")
    assert page.locator("#player-title").inner_text() == "ann"
    assert page.locator("#rating-chart path.series").count() == 1
    assert page.locator("#rating-chart polygon.band").count() == 1
    assert page.locator("#rating-chart line.reset-mark").count() >= 5
    assert page.locator("#rank-chart path.series").count() == 1
    assert page.locator("#player-matches tbody tr").count() == 24
    assert "mmr_change" in page.locator("#player-matches tbody tr").nth(0).inner_text()

    # Ruleset lab: an error shows at its field; two bundled rulesets compared
    page.goto(f"{base}/#lab")
    page.check(".lab-bundled[value='skyweaver']")
    page.check(".lab-bundled[value='glicko1']")
    page.click("#lab-add")
    page.fill(".editor textarea", 'name = "mine"\nextends = "elo"\n[update.params]\nkk = 3\n')
    error = page.wait_for_selector(".field-error[data-field='update.params.kk']")
    assert "line 4" in error.inner_text() and "unknown key" in error.inner_text()
    page.fill(
        ".editor textarea", 'name = "mine"\nextends = "elo"\n[update.params]\nk_factor = 16.0\n'
    )
    page.wait_for_selector(".editor:not(.invalid)")
    page.click("#lab-run")
    page.wait_for_selector("#lab-results:not([hidden]) #lab-scores tbody tr")
    scores = page.locator("#lab-scores").inner_text()
    assert "log loss" in scores and "mine" in scores
    assert page.locator("#lab-calibration path.series").count() == 4  # ideal + 3 rulesets
    assert page.locator("table.lab-top").count() == 3
    # each season's ratings drawn per ruleset: skyweaver's two four-week seasons, glicko1's year
    seasons = page.locator("table.lab-seasons[data-ruleset='skyweaver'] tbody tr")
    assert seasons.count() == 2
    assert seasons.nth(0).locator("td").nth(3).inner_text() == "28"
    assert seasons.nth(0).locator("td.season-ratings svg rect").count() == 20
    assert page.locator("table.lab-seasons[data-ruleset='glicko1'] tbody tr").count() == 1

    # Matches: recording a match from the page updates the leaderboard
    page.goto(f"{base}/#matches")
    page.fill("#token", token)
    page.fill("#rec-id", "web-1")
    page.fill("#rec-at", "2024-03-01T12:00:00Z")
    page.fill("#rec-teams", "newcomer\nann")
    page.fill("#rec-scores", "1,0")
    page.click("#record-form button")
    # (a locator's wait, not wait_for_function: the page's CSP forbids evaluating strings)
    expect(page.locator("#record-result")).to_contain_text("recorded web-1", timeout=30_000)
    expect(page.locator("#league-size")).to_have_text("5 players, 49 matches")  # updated
    page.fill("#pred-teams", "newcomer\nann")
    page.click("#predict-form button")
    page.wait_for_selector("#predict-result tbody tr")
    assert page.locator("#predict-result tbody tr").count() == 2
    page.goto(f"{base}/#league")
    page.wait_for_selector("#leaderboard tbody tr[data-player='newcomer']")
    assert page.locator("#leaderboard tbody tr").count() == 5
    # the tier filter is the service's (GET /leaderboard?tier=), not the script's: after
    # the hard reset of Feb 26, the newcomer is the one Wanderer
    asked: list[str] = []
    page.on("request", lambda r: asked.append(r.url) if "/leaderboard?" in r.url else None)
    tiers = {r.id: r.rank.tier for r in league.players()}
    assert tiers["newcomer"] == "Wanderer" and list(tiers.values()).count("Wanderer") == 1
    page.select_option("#league-tier", "Wanderer")
    expect(page.locator("#leaderboard tbody tr")).to_have_count(1)
    assert page.locator("#leaderboard tbody tr").get_attribute("data-player") == "newcomer"
    assert any("tier=Wanderer" in url for url in asked)
    page.select_option("#league-tier", "")
    expect(page.locator("#leaderboard tbody tr")).to_have_count(5)
    assert errors == []
    page.close()


def test_the_conservative_column_in_a_browser(browser: Any) -> None:
    """glicko1's ``[display] conservative = 2.0``: the board sorts by rating - 2 RD and
    shows it in its own column, next to the rating."""
    league = rankcraft.League("glicko1")
    league.record_many(history(8))
    page = browser.new_page()
    with serving(league) as base:
        page.goto(f"{base}/#league")
        page.wait_for_selector("body[data-ready='1'] #leaderboard tbody tr")
        head = page.locator("#leaderboard thead th").all_inner_texts()
        assert head[2:5] == ["conservative", "rating", "± deviation"]
        cells = page.locator("#leaderboard tbody tr").evaluate_all(
            "rows => rows.map((r) => [r.dataset.player, r.cells[2].textContent,"
            " r.cells[3].textContent, r.cells[4].textContent])"
        )
    page.close()
    board = league.leaderboard()
    assert [c[0] for c in cells] == [r.id for r in board]
    for (_, conservative, rating, deviation), record in zip(cells, board, strict=True):
        value = record.skill.rating - 2 * record.skill.deviation
        assert league.shown(record).value == pytest.approx(value)
        assert conservative == f"{value:.1f}"
        assert (rating, deviation) == (
            f"{record.skill.rating:.1f}",
            f"{record.skill.deviation:.1f}",
        )
    # the order is the conservative value's, which is not the rating's here (cy's RD is
    # lower than di's: cy passes di, whose rating is higher)
    assert [float(c[1]) for c in cells] == sorted((float(c[1]) for c in cells), reverse=True)
    assert [float(c[2]) for c in cells] != sorted((float(c[2]) for c in cells), reverse=True)


def _decimals(text: str) -> set[int]:
    """The numbers of decimals of the numbers in ``text``."""
    import re

    return {len(m.group(1) or "") for m in re.finditer(r"\d+(?:\.(\d+))?", text)}


def test_glicko2_on_the_page_in_a_browser(browser: Any) -> None:
    """issue 39, items 4 and 5: glicko2's board and player page show Glickman's rating and
    RD (not mu and phi), each column's numbers written one way, a whole factor whole."""
    from playwright.sync_api import expect

    from rankcraft.cli.output import column

    league = rankcraft.League("glicko2")
    league.record_many(history(8))
    _, token = create_token(league.store, scope="record")
    shown = [league.shown(r) for r in league.leaderboard()]
    ann = league.shown("ann").skill
    page = browser.new_page()
    with serving(league) as base:
        page.goto(f"{base}/#league")
        page.wait_for_selector("body[data-ready='1'] #leaderboard tbody tr")
        head = page.locator("#leaderboard thead th").all_inner_texts()
        cells = page.locator("#leaderboard tbody tr").evaluate_all(
            "rows => rows.map((r) => [...r.cells].slice(2, 5).map((c) => c.textContent))"
        )
        page.goto(f"{base}/#player/ann")
        page.wait_for_selector("#player-matches tbody tr")
        summary = page.locator("#player-summary").inner_text()
        changes = page.locator("#player-matches tbody td:nth-child(6)").all_inner_texts()
        # a match recorded on the page: ann's change, shown (within 30 days of the
        # league's latest match: the page asks for no confirmation)
        page.goto(f"{base}/#matches")
        page.fill("#token", token)
        page.fill("#rec-id", "web-1")
        page.fill("#rec-at", "2024-01-20T12:00:00Z")
        page.fill("#rec-teams", "ann\nbo")
        page.fill("#rec-scores", "1,0")
        page.click("#record-form button")
        told = page.locator("#record-result")
        expect(told).to_contain_text("recorded web-1", timeout=30_000)
        recorded = told.inner_text()
    page.close()
    after = league.player("ann").skill
    assert f"ann {ann['rating']:.1f} → {1500 + GLICKO * after.mu:.1f}" in recorded
    assert head[2:5] == ["conservative", "rating", "± RD"]
    expected = zip(
        column(s.value for s in shown),
        column(s.skill["rating"] for s in shown),
        column(s.skill["RD"] for s in shown),
        strict=True,
    )
    assert cells == [list(row) for row in expected]
    assert f"rating {ann['rating']:.1f} ± {ann['RD']:.1f} " in summary  # (written alike)
    assert "mu" not in summary
    assert f" → {ann['rating']:.1f} (" in changes[0]  # the newest match first
    assert len(set().union(*map(_decimals, changes))) == 1  # one format in the column


def test_a_whole_factor_and_whole_ratings_in_a_browser(browser: Any) -> None:
    """Elo's first match leaves whole ratings (1500 -> 1484) beside fractional ones, and
    its factor ``k`` is a whole 32: the column is written one way, the factor as 32."""
    league = rankcraft.League("elo")
    league.record_many(history(8))
    page = browser.new_page()
    with serving(league) as base:
        page.goto(f"{base}/#player/ann")
        page.wait_for_selector("#player-matches tbody tr")
        changes = page.locator("#player-matches tbody td:nth-child(6)").all_inner_texts()
        factors = page.locator("#player-matches tbody td.factors").all_inner_texts()
    page.close()
    assert changes[-1] == "1500.0 → 1484.0 (-16.0)"  # (the oldest: whole, beside x.y)
    assert _decimals(" ".join(changes)) == {1}
    assert set(factors) == {"k 32"}


def test_the_board_pages_through_the_service(browser: Any) -> None:
    """106 players: 100 places a page, asked of the service with ?offset=&top=."""
    from playwright.sync_api import expect

    league = rankcraft.League("elo")
    league.record_many(
        {
            "id": f"m{i}",
            "played_at": f"2024-01-01T{i // 60:02d}:{i % 60:02d}:00Z",
            "teams": [[f"w{i:03d}"], [f"l{i:03d}"]],
            "scores": [1, 0],
        }
        for i in range(53)
    )
    asked: list[str] = []
    page = browser.new_page()
    page.on("request", lambda r: asked.append(r.url) if "/leaderboard?" in r.url else None)
    with serving(league) as base:
        page.goto(f"{base}/#league")
        rows = page.locator("#leaderboard tbody tr")
        expect(rows).to_have_count(100)
        assert page.locator("#league-count").inner_text() == "places 1 to 100"
        assert page.locator("#league-prev").is_hidden()
        page.click("#league-next")
        expect(rows).to_have_count(6)
        assert page.locator("#league-count").inner_text() == "places 101 to 106"
        placed = rows.evaluate_all("rows => rows.map((r) => r.dataset.player)")
        assert placed == [r.id for r in league.leaderboard(offset=100)]
        assert page.locator("#league-next").is_hidden()
        page.click("#league-prev")
        expect(rows).to_have_count(100)
        # the search box asks the service to search the board; players keep their places
        page.fill("#league-search", "L04")
        expect(rows).to_have_count(10)
        found = league.placed(holding="l04")
        assert rows.evaluate_all("rows => rows.map((r) => r.dataset.player)") == [
            r.id for _, r in found
        ]
        assert rows.nth(0).locator("td").nth(0).inner_text() == str(found[0][0])
        assert page.locator("#league-count").inner_text() == (
            f"players 1 to 10 holding “L04” (places {found[0][0]} to {found[-1][0]})"
        )
    page.close()
    assert any("offset=100" in url and "top=101" in url for url in asked)
    assert any("holding=L04" in url and "top=101" in url for url in asked)


def test_serve_is_ready_when_a_worker_answers_and_logs_each_request(
    served: tuple[str, str, rankcraft.League],
) -> None:
    from rankcraft.serve import announce_when_ready, log_config

    base, _, _ = served
    port = int(base.rsplit(":", 1)[1])
    said: list[str] = []
    announce_when_ready("127.0.0.1", port, said.append, timeout=5).join(6)
    matches = served[2].match_count  # (48, or 49 after the browser test recorded one)
    assert said == [
        f"rankcraft serve: ready on http://127.0.0.1:{port}/ ({matches} matches; the page "
        "at /, the API at /docs)"
    ]
    closed = free_port()
    announce_when_ready("127.0.0.1", closed, said.append, timeout=0.3).join(2)
    assert said[-1] == "rankcraft serve: no worker answered /health within 0.3 s"
    loggers = log_config()["loggers"]
    assert loggers["uvicorn.access"]["level"] == "INFO"  # the access log is on by default
    assert loggers["uvicorn.error"]["level"] == "WARNING"
    assert log_config(access_log=False)["loggers"]["uvicorn.access"]["level"] == "WARNING"


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_a_database_s_season_archive_is_the_league_in_memory_s(db_url: str) -> None:
    """On a database the archive is read from the rank column alone
    (``League.rank_values``, no record built) and kept ``top`` a season as it streams:
    the same seasons and players as a league in memory, for tops that trim and not."""
    rng = random.Random(5)
    start = datetime(2024, 1, 1, tzinfo=UTC)
    games = [
        {
            "id": f"g{i}",
            "played_at": (start + timedelta(hours=7 * i)).isoformat(),
            "teams": [[f"p{a}"], [f"p{b}"]],
            "scores": [1, 0],
        }
        for i in range(1200)
        for a, b in [rng.sample(range(150), 2)]
    ]
    memory = rankcraft.League("skyweaver")
    memory.record_many(games)
    with rankcraft.League.open(db_url, "skyweaver") as league:
        league.record_many(games)
    with rankcraft.League.open(db_url) as league:
        league.store.load_players = lambda: pytest.fail("built every record")  # type: ignore[method-assign]
        whole = season_archive(memory, top=10**6)
        assert len(whole) >= 2 and max(len(s["players"]) for s in whole) > 2 * 2 + 64
        for top in (0, 2, 10, 10**6):
            found = season_archive(league, top=top)
            assert found == season_archive(memory, top=top)
            assert found == [{**s, "players": s["players"][:top]} for s in whole]


def test_the_season_archive_gives_each_season_s_top_players() -> None:
    league = skyweaver_league()
    whole = season_archive(league, top=10**6)
    assert whole and all(len(s["players"]) == 4 for s in whole)
    top = season_archive(league, top=2)
    assert [s["players"] for s in top] == [s["players"][:2] for s in whole]
    scores = [r["score"] for s in whole for r in s["players"]]
    assert len(set(scores)) > 1  # (the order is by score, best first, ties by id)
    for s in whole:
        assert s["players"] == sorted(s["players"], key=lambda r: (-r["score"], r["id"]))


# -- the page at phone and desktop widths, the lab as a job ------------------------------

WIDTHS = (400, 1400)


def many_years(n: int = 7500, players: int = 40) -> list[dict[str, Any]]:
    """``n`` one-on-one games, 250 a year from 1995 (30 calendar-year seasons)."""
    rng = random.Random(3)
    out = []
    for i in range(n):
        a, b = rng.sample(range(players), 2)
        day = f"{1995 + i // 250}-{1 + (i % 250) // 25:02d}-{1 + i % 25:02d}T12:00:00Z"
        out.append(
            {
                "id": f"y{i}",
                "played_at": day,
                "teams": [[f"p{a:02d}"], [f"p{b:02d}"]],
                "scores": [rng.randint(0, 1), 0],
            }
        )
    for m in out:
        m["scores"][1] = 1 - m["scores"][0]
    return out


@pytest.fixture(scope="module")
def big() -> Iterator[tuple[str, rankcraft.League]]:
    league = rankcraft.League("elo")
    league.record_many(many_years())
    with serving(league) as base:
        yield base, league


def overflow(page: Any) -> tuple[int, int]:
    """(scrollWidth, clientWidth) of the document: wider scrolls sideways."""
    found = page.evaluate(
        "() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]"
    )
    return int(found[0]), int(found[1])


def run_lab(page: Any, names: list[str]) -> None:
    for name in names:
        page.check(f".lab-bundled[value='{name}']")
    page.click("#lab-run")
    page.wait_for_selector("#lab-results:not([hidden]) #lab-scores tbody tr", timeout=120_000)


@pytest.mark.slow(seconds=30)
@pytest.mark.parametrize("width", WIDTHS)
def test_no_page_is_wider_than_a_phone_or_a_desktop(
    browser: Any, served: tuple[str, str, rankcraft.League], width: int
) -> None:
    """Every page, filled (a leaderboard, a player's charts and matches, a lab result, a
    prediction), fits the window's width: wide tables scroll in their own box; charts
    are drawn at the width they are shown at, so that their text is 11 px."""
    base, _, _ = served
    page = browser.new_page(viewport={"width": width, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(f"{base}/#league")
    page.wait_for_selector("body[data-ready='1'] #leaderboard tbody tr")
    assert overflow(page)[0] <= width, "league"
    assert page.locator("header").bounding_box()["height"] < 80  # two lines at most
    page.goto(f"{base}/#player/ann")
    page.wait_for_selector("#player-matches tbody tr")
    assert overflow(page)[0] <= width, "player"
    for chart in ("#rating-chart", "#rank-chart"):
        shown = page.locator(chart).bounding_box()["width"]
        drawn = float(page.locator(chart).get_attribute("viewBox").split()[2])
        assert abs(shown - drawn) <= 2, (chart, shown, drawn)  # 1 unit = 1 px
        assert shown <= width - 10
    page.goto(f"{base}/#lab")
    run_lab(page, ["skyweaver", "glicko1"])
    assert overflow(page)[0] <= width, "lab"
    page.goto(f"{base}/#matches")
    page.fill("#pred-teams", "ann\nbo")
    page.click("#predict-form button")
    page.wait_for_selector("#predict-result tbody tr")
    assert overflow(page)[0] <= width, "matches"
    # the window made narrower: the charts are drawn again at the new width
    if width == 1400:
        page.goto(f"{base}/#player/ann")
        page.wait_for_selector("#player-matches tbody tr")
        page.set_viewport_size({"width": 400, "height": 900})
        page.wait_for_timeout(400)
        assert overflow(page)[0] <= 400
        drawn = float(page.locator("#rating-chart").get_attribute("viewBox").split()[2])
        assert drawn < 400
    assert errors == []
    page.close()


@pytest.mark.slow(seconds=30)
def test_a_lab_job_in_the_browser_while_another_client_is_answered(
    browser: Any, big: tuple[str, rankcraft.League]
) -> None:
    """The page submits a job, shows its progress (a bar with counts) with its button
    disabled, and its result; meanwhile a second client's /health answers within a
    second. The first ruleset picked is the baseline; 30 calendar years are shown as the
    last 12 until asked; cancel ends a job."""
    import http.client

    base, _ = big
    port = int(base.rsplit(":", 1)[1])
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    page.goto(f"{base}/#lab")
    page.wait_for_selector("body[data-ready='1']")
    assert page.locator(".lab-bundled:checked").count() == 0  # nothing picked for the user
    for name in ("glicko1", "elo", "trueskill"):
        page.check(f".lab-bundled[value='{name}']")
    assert page.locator("#lab-baseline").inner_text() == "baseline: glicko1 (the first picked)"
    page.click("#lab-run")
    page.wait_for_selector("#lab-job:not([hidden])")
    assert page.locator("#lab-run").is_disabled()
    from playwright.sync_api import expect

    expect(page.locator("#lab-progress-text")).to_contain_text(
        "of 22,500 matches replayed", timeout=60_000
    )
    answered = []
    for _ in range(5):
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        start = time.perf_counter()
        connection.request("GET", "/health")
        body = connection.getresponse().read()
        answered.append(time.perf_counter() - start)
        connection.close()
        assert b'"matches":7500' in body
    assert max(answered) < 1.0, answered
    done = int(page.locator("#lab-progress").get_attribute("value") or 0)
    assert 0 < done <= 22_500 and page.locator("#lab-progress").get_attribute("max") == "22500"
    page.wait_for_selector("#lab-results:not([hidden]) #lab-scores tbody tr", timeout=120_000)
    assert page.locator("#lab-job").is_hidden() and page.locator("#lab-run").is_enabled()
    head = page.locator("#lab-scores thead th").all_inner_texts()
    assert head[1:] == ["glicko1", "elo", "trueskill"]
    assert "baseline glicko1" in page.locator("#lab-summary").inner_text()
    assert "7,500 matches" in page.locator("#lab-summary").inner_text()
    # no ruleset here has tiers: no table of zeros, a sentence
    assert page.locator("#lab-tiers").is_hidden()
    assert page.locator("#lab-no-tiers").inner_text() == "none of these rulesets has tiers"
    # calibration ticks at 0, 0.2 ... 1 and the legend beside the chart
    ticks = page.locator("#lab-calibration text.tick.y").all_text_contents()
    assert ticks == ["0", "0.2", "0.4", "0.6", "0.8", "1"]
    legend = page.locator("#lab-calibration-legend li").all_inner_texts()
    assert [x.strip() for x in legend] == ["ideal", "glicko1", "elo", "trueskill"]
    # 30 calendar years: the last 12 shown, all on request
    rows = page.locator("table.lab-seasons[data-ruleset='elo'] tbody tr")
    assert rows.count() == 12
    assert rows.nth(11).locator("td").nth(1).inner_text() == "2024-01-01"
    page.locator(".season-block", has=page.locator("[data-ruleset='elo']")).locator(
        "button.more-seasons"
    ).click()
    assert rows.count() == 30
    # the top 20 by what the leaderboard sorts by, best first
    top = page.locator("table.lab-top[data-ruleset='elo'] tbody tr td:nth-child(2)")
    expected = rankcraft.League("elo")
    expected.record_many(many_years())
    assert top.all_inner_texts() == [r.id for r in expected.leaderboard(20)]
    # cancel: the job ends, the button comes back
    page.click("#lab-run")
    page.wait_for_selector("#lab-job:not([hidden])")
    page.click("#lab-cancel")
    expect(page.locator("#lab-error")).to_have_text("the comparison was cancelled", timeout=30_000)
    assert page.locator("#lab-run").is_enabled()
    page.close()


def opened(browser: Any, url: str) -> Any:
    """A new page of ``browser`` at ``url``, once its script is ready."""
    page = browser.new_page()
    page.goto(url)
    page.wait_for_selector("body[data-ready='1']")
    return page


def test_a_csv_file_in_the_lab_is_told_its_format(
    browser: Any, served: tuple[str, str, rankcraft.League]
) -> None:
    from playwright.sync_api import expect

    page = opened(browser, f"{served[0]}/#lab")
    page.check("input[name=lab-source][value=file]")
    page.check(".lab-bundled[value='elo']")
    page.check(".lab-bundled[value='glicko1']")
    error = page.locator("#lab-error")
    header = b"id,played_at,team_a,team_b,score_a,score_b\nm1,2024-05-01,ann,bo,1,0\n"
    # a CSV whose header is not of match keys: the column named, the keys listed
    upload(page, "matches.csv", header)
    page.click("#lab-run")
    expect(error).to_contain_text("matches.csv line 1: the CSV header names an unknown column")
    text = error.inner_text()
    assert "'team_a'" in text and "played_at, quit, ranks, scores" in text
    assert "docs/matches.md#csv" in text
    # the same under another name: neither format, both said (the command line's words:
    # one reader), and where they are written
    upload(page, "matches.txt", header)
    page.click("#lab-run")
    expect(error).to_contain_text("matches.txt line 1: not JSON")
    text = error.inner_text()
    assert "rankcraft reads JSON Lines (one match object per line, .jsonl or .jsonl.gz)" in text
    assert "or CSV with a header row of match keys" in text
    assert "docs/matches.md" in text and error.locator("a").get_attribute("href") == "/docs"
    assert "Unexpected token" not in text  # (the browser's own JSON error, no more)
    page.close()


def upload(page: Any, name: str, data: bytes) -> None:
    page.set_input_files("#lab-file", files=[{"name": name, "mimeType": "", "buffer": data}])


def csv_of(matches: list[dict[str, Any]]) -> bytes:
    """``matches`` as CSV with a header of match keys (docs/matches.md#csv)."""
    import csv
    import io
    import json

    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(["id", "played_at", "teams", "scores"])
    for m in matches:
        writer.writerow([m["id"], m["played_at"], json.dumps(m["teams"]), json.dumps(m["scores"])])
    return out.getvalue().encode()


def test_the_lab_reads_a_csv_history_as_the_command_line_does(
    browser: Any, served: tuple[str, str, rankcraft.League]
) -> None:
    """A CSV of the documented form (here gzipped) is compared as the same matches in
    JSON Lines are: the same scores, to the digit."""
    import gzip
    import json

    games = history()
    shown = []
    for name, data in (
        ("games.jsonl", "".join(json.dumps(m) + "\n" for m in games).encode()),
        ("games.csv.gz", gzip.compress(csv_of(games))),
    ):
        page = opened(browser, f"{served[0]}/#lab")
        page.check("input[name=lab-source][value=file]")
        upload(page, name, data)
        run_lab(page, ["elo", "glicko1"])
        shown.append(
            (page.locator("#lab-summary").inner_text(), page.locator("#lab-scores").inner_text())
        )
        page.close()
    assert shown[0] == shown[1]
    assert shown[0][0].startswith("48 matches")


def test_the_player_page_in_detail(
    browser: Any,
    big: tuple[str, rankcraft.League],
    served: tuple[str, str, rankcraft.League],
) -> None:
    """Every match, a page at a time; no rank column without a rank layer; y ticks at
    nice values; x labels inside the chart; tier labels that do not overlap; reset marks
    in the date column."""
    from playwright.sync_api import expect

    base, league = big
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    player = "p07"
    total = league.player(player).matches
    assert total > 300
    # while the player's matches come, the chart says so (no empty axes)
    held: list[Any] = []
    page.route("**/web/players/**", lambda route: held.append(route))
    page.goto(f"{base}/#player/{player}")
    expect(page.locator("#rating-chart text.chart-note")).to_have_text(
        f"loading {player}'s matches…"
    )
    assert page.locator("#rating-chart text").count() == 1
    assert page.locator("#player-summary").inner_text() == "loading…"
    for route in held:
        route.continue_()
    page.unroute("**/web/players/**")
    page.wait_for_selector("#player-matches tbody tr")
    rows = page.locator("#player-matches tbody tr")
    # at 1400 px no cell wraps: every row is one line high (dates, changes, factors)
    heights = rows.evaluate_all("rows => rows.map((r) => r.getBoundingClientRect().height)")
    assert len(heights) == 100 and max(heights) - min(heights) < 1, sorted(set(heights))
    head = page.locator("#player-matches thead th").all_inner_texts()
    assert head == ["date", "match", "result", "vs", "expected", "rating", "why (factors)"]
    seen = []
    while True:
        seen += rows.evaluate_all("rows => rows.map((r) => r.dataset.match)")
        if page.locator("#player-next").is_hidden():
            break
        page.click("#player-next")
    assert len(seen) == len(set(seen)) == total
    assert seen == [row.match.id for row in league.history(player, None)]  # newest first
    assert page.locator("#player-count").inner_text().endswith(f"of {total}, newest first")
    ticks = [float(t) for t in page.locator("#rating-chart text.tick.y").all_text_contents()]
    steps = {round(b - a, 6) for a, b in itertools.pairwise(ticks)}
    assert len(steps) == 1
    step = steps.pop()
    assert round(step / 10 ** math.floor(math.log10(step)), 6) in (1, 2, 2.5, 5)
    assert all(round(t / step, 6).is_integer() for t in ticks)
    chart = page.locator("#rating-chart").bounding_box()
    for label in page.locator("#rating-chart text").all():
        box = label.bounding_box()
        assert chart["x"] <= box["x"] and box["x"] + box["width"] <= chart["x"] + chart["width"]
    page.close()

    base, _, sky = served
    page = browser.new_page(viewport={"width": 400, "height": 900})
    page.goto(f"{base}/#player/ann")
    page.wait_for_selector("#player-matches tbody tr")
    assert "points" in page.locator("#player-matches thead th").all_inner_texts()
    marked = page.locator("#player-matches tbody td:first-child .reset").count()
    assert marked == sum(m["reset_before"] for m in player_history_of(sky, "ann"))
    assert page.locator("#player-matches tbody tr td:nth-child(9)").count() == 0
    boxes = [b.bounding_box() for b in page.locator("#rank-chart text.chart-label").all()]
    assert boxes
    for a, b in itertools.combinations(boxes, 2):
        apart = (
            a["x"] + a["width"] <= b["x"]
            or b["x"] + b["width"] <= a["x"]
            or a["y"] + a["height"] <= b["y"]
            or b["y"] + b["height"] <= a["y"]
        )
        assert apart, (a, b)
    page.close()


def player_history_of(league: rankcraft.League, player: str) -> list[dict[str, Any]]:
    from rankcraft.web import player_history

    return list(player_history(league, player)["matches"])


def test_the_matches_page_labels_predictions_and_warns_of_new_players(
    browser: Any, served: tuple[str, str, rankcraft.League]
) -> None:
    from playwright.sync_api import expect

    base, _, league = served
    page = opened(browser, f"{base}/#matches")
    page.fill("#pred-teams", "ann\namn")
    page.click("#predict-form button")
    page.wait_for_selector("#predict-result tbody tr")
    head = page.locator("#predict-result thead th").all_inner_texts()
    forecast = league.forecast([["ann"], ["amn"]])
    rows = page.locator("#predict-result tbody tr")
    if forecast.draw is None:  # skyweaver: no draw model, the expected score alone
        assert head == ["side", "expected score"] and rows.count() == 2
        note = "this ruleset has no draw model"
        assert page.locator("#predict-note .muted").inner_text().startswith(note)
    else:
        assert head == ["side", "P(win)", "expected score"] and rows.count() == 3
        assert rows.nth(2).inner_text().split() == ["draw", f"{forecast.draw:.4f}"]
    cells = rows.nth(0).locator("td").all_inner_texts()
    assert cells[0] == "ann" and cells[-1] == f"{forecast.expected_score[0]:.4f}"
    expect(page.locator("#predict-note .warning")).to_have_text(
        "“amn” is new to the league: predicted as a new player (did you mean “ann”?)"
    )
    page.close()


def test_a_ruleset_with_a_draw_model_predicts_a_draw_on_the_page(browser: Any) -> None:
    league = rankcraft.League("football")
    league.record_many(history(8))
    forecast = league.forecast([["ann"], ["bo"]])
    assert forecast.draw is not None and forecast.win is not None
    with serving(league) as base:
        page = opened(browser, f"{base}/#matches")
        page.fill("#pred-teams", "ann\nbo")
        page.click("#predict-form button")
        page.wait_for_selector("#predict-result tbody tr.draw")
        head = page.locator("#predict-result thead th").all_inner_texts()
        rows = [r.split("\t") for r in page.locator("#predict-result tbody tr").all_inner_texts()]
    page.close()
    assert head == ["side", "P(win)", "expected score"]
    assert [r[:2] for r in rows] == [
        ["ann", f"{forecast.win[0]:.4f}"],
        ["bo", f"{forecast.win[1]:.4f}"],
        ["draw", f"{forecast.draw:.4f}"],
    ]
    assert forecast.win[0] + forecast.win[1] + forecast.draw == pytest.approx(1.0)


# -- issue 39, items 3, 7 and 8: the form, the lab and the player page ---------------------


def after_a_gap() -> list[dict[str, Any]]:
    """Eight games in June 2025, over a year after :func:`history`'s (Jan-Feb 2024), one
    of three against four: ann's history has a long idle span."""
    out = []
    for i in range(8):
        teams = [["ann"], ["bo" if i % 2 else "cy"]]
        if i == 3:
            teams = [["ann", "bo", "cy"], ["di", "eve-long-name", "fay-long-name", "gus"]]
        out.append(
            {
                "id": f"late{i}",
                "played_at": f"2025-06-{2 + 2 * i:02d}T12:00:00Z",
                "teams": teams,
                "scores": [i % 3 != 1, i % 3 == 1],
            }
        )
    for m in out:
        m["scores"] = [int(s) for s in m["scores"]]
    return out


def with_draws(n: int = 240) -> list[dict[str, Any]]:
    """``n`` games of eight players every third day from 2023, a quarter of them drawn."""
    rng = random.Random(7)
    start = datetime(2023, 1, 1, 12, tzinfo=UTC)
    out = []
    for i in range(n):
        a, b = rng.sample(range(8), 2)
        draw = rng.random() < 0.25
        won = rng.random() < 0.5 + 0.05 * (b - a)
        out.append(
            {
                "id": f"d{i}",
                "played_at": (start + timedelta(days=3 * i)).isoformat().replace("+00:00", "Z"),
                "teams": [[f"t{a}"], [f"t{b}"]],
                "scores": [1, 1] if draw else [int(won), int(not won)],
            }
        )
    return out


SHOTS = os.environ.get("RANKCRAFT_SCREENSHOTS")
"""A folder to write the pages' screenshots into (to look at them), when set."""


@pytest.mark.slow(seconds=40)
@pytest.mark.parametrize("width", WIDTHS)
def test_the_lab_and_the_player_page_at_a_phone_s_and_a_desktop_s_width(
    browser: Any, width: int
) -> None:
    """Item 7: the lab shows evaluate's report (paired differences against the first
    ruleset, three-way scores for a ruleset with a draw model, one tier table per tier
    system, the upload's progress, the home warning). Item 8: tier labels off the line
    and apart, the matches table one line a row with a cue to its hidden columns, and
    the time axis skipping a year without play."""
    import json

    from playwright.sync_api import expect

    league = skyweaver_league()
    league.record_many(after_a_gap())
    games = with_draws()
    text = "".join(json.dumps(m) + "\n" for m in games)
    names = ["football", "skyweaver", "ladder"]
    direct = compare([rankcraft.load_ruleset(n) for n in names], parsed(games))
    page = browser.new_page(viewport={"width": width, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    with serving(league) as base:
        # -- the player page (item 8)
        page.goto(f"{base}/#player/ann")
        page.wait_for_selector("#player-matches tbody tr")
        page.wait_for_timeout(200)
        shot(page, f"player-{width}")
        chart = page.locator("#rank-chart").bounding_box()
        grid = page.locator("#rank-chart line[stroke='#eee']").evaluate_all(
            "lines => Math.min(...lines.map((l) => Number(l.getAttribute('y1'))))"
        )
        labels = [b.bounding_box() for b in page.locator("#rank-chart text.chart-label").all()]
        assert len(labels) >= 2
        for box in labels:  # in the lane above the plot: never on the line
            assert box["y"] + box["height"] <= chart["y"] + grid + 0.5, (box, grid)
        for a, b in itertools.combinations(labels, 2):
            assert (
                a["x"] + a["width"] <= b["x"]
                or b["x"] + b["width"] <= a["x"]
                or (a["y"] + a["height"] <= b["y"] or b["y"] + b["height"] <= a["y"])
            ), (a, b)
        # a year and more without play is one break, not most of the width
        assert page.locator("#rating-chart rect.axis-break").count() == 1
        xs = [
            float(p.split(",")[0])
            for p in page.locator("#rating-chart path.series").get_attribute("d")[1:].split("L")
        ]
        plot = float(page.locator("#rating-chart").get_attribute("width")) - 66
        assert max(b - a for a, b in itertools.pairwise(xs)) < 0.1 * plot
        assert (
            "no matches for 15 months (2024-02-19 to 2025-06-02)"
            in page.locator("#rating-chart rect.axis-break title").text_content()
        )
        # every row one line high at both widths; the vs cell cut, not wrapped
        rows = page.locator("#player-matches tbody tr")
        heights = rows.evaluate_all("rs => rs.map((r) => r.getBoundingClientRect().height)")
        assert len(heights) == 32 and max(heights) - min(heights) < 1, sorted(set(heights))
        assert max(heights) < 40
        team = page.locator("#player-matches tr[data-match='late3'] td.vs")
        assert team.get_attribute("title") == "with bo, cy vs di, eve-long-name, fay-long-name, gus"
        # the table scrolls in its box where it is wider than the window (at 400 px, and
        # at 1400 px too with Skyweaver's factors): a line under it names the columns out
        # of sight until they are scrolled into view
        table = page.locator("#player-matches")
        wide = table.evaluate("t => t.scrollWidth > t.clientWidth + 1")
        cue = page.locator("#player-scroll-cue")
        assert wide or width == 1400
        assert cue.is_visible() == wide
        if wide:
            assert cue.inner_text().startswith("scroll the table sideways for ")
            assert cue.inner_text().endswith("why (factors) →")
            table.evaluate("t => { t.scrollLeft = t.scrollWidth; }")
            expect(cue).to_be_hidden()
        assert overflow(page)[0] <= width

        # -- the lab (item 7): an uploaded history, its progress while it goes
        page.goto(f"{base}/#lab")
        page.wait_for_selector("body[data-ready='1']")
        page.check("input[name=lab-source][value=file]")
        upload(page, "draws.jsonl", text.encode())
        held: list[Any] = []
        page.route("**/web/lab/jobs", lambda route: held.append(route))
        for name in names:
            page.check(f".lab-bundled[value='{name}']")
        page.click("#lab-run")
        expect(page.locator("#lab-job")).to_be_visible()
        assert page.locator("#lab-run").is_disabled()  # not a dead button while it goes
        expect(page.locator("#lab-progress-text")).to_contain_text(
            re.compile(r"reading draws\.jsonl|sending the request|the service is queueing")
        )
        page.wait_for_timeout(100)
        for route in held:
            route.continue_()
        page.unroute("**/web/lab/jobs")
        page.wait_for_selector("#lab-results:not([hidden]) #lab-scores tbody tr", timeout=120_000)
        page.wait_for_timeout(200)
        shot(page, f"lab-{width}")
        # the paired differences, as evaluate computes them, against football (the first)
        shown = page.locator("#lab-differences tbody tr").evaluate_all(
            "rows => rows.map((r) => [...r.cells].map((c) => c.textContent))"
        )
        want = [
            [
                d["ruleset"],
                d["score"],
                f"{d['difference']:+.4f}",
                f"[{d['low']:+.4f}, {d['high']:+.4f}]",
                str(d["blocks"]),
            ]
            for d in direct["differences"]
        ]
        assert shown == want and len(want) == 4
        assert (
            "each ruleset's score less football's" in page.locator("#lab-paired-note").inner_text()
        )
        # three-way scores where a ruleset forecasts draws (football), a dash elsewhere
        scores = dict(
            (row[0], row[1:])
            for row in page.locator("#lab-scores tbody tr").evaluate_all(
                "rows => rows.map((r) => [...r.cells].map((c) => c.textContent))"
            )
        )
        three = direct["results"][0]["evaluation"]["three_way"]
        assert scores["3-way log loss"] == [f"{three['log_loss']:.4f}", "-", "-"]
        assert scores["RPS"] == [f"{three['rps']:.4f}", "-", "-"]
        assert scores["log loss"][0].startswith(
            f"{direct['results'][0]['evaluation']['log_loss']:.4f}"
        )
        # one tier table per tier system, each ruleset's own tiers
        tables = page.locator("#lab-tiers table.lab-tier-table")
        assert tables.count() == 2
        systems = [r["tier_system"] for r in direct["results"][1:]]
        assert tables.evaluate_all("ts => ts.map((t) => t.dataset.system)") == systems
        for table, result in zip(tables.all(), direct["results"][1:], strict=True):
            assert table.locator("thead th").all_inner_texts() == ["tier", result["name"]]
            tiers = table.locator("tbody td:first-child").all_inner_texts()
            assert tiers == result["tier_order"]
        # football has a home advantage and the file names no home side: said
        warning = page.locator("#lab-warnings .warning")
        expect(warning).to_have_count(1)
        assert warning.inner_text().startswith("ruleset 'football' has a home advantage")
        assert overflow(page)[0] <= width
    assert errors == []
    page.close()


def parsed(games: list[dict[str, Any]]) -> list[Any]:
    return [rankcraft.parse_match(m) for m in games]


def shot(page: Any, name: str) -> None:
    if SHOTS:
        page.screenshot(path=os.path.join(SHOTS, f"{name}.png"), full_page=True)


def test_what_a_match_played_at_a_later_time_would_set_off() -> None:
    """``GET /web/played-at``: the season events a match then would run first (each
    with its runs), and ``far`` past the league's latest match (2024-02-20 here); asking
    changes nothing."""
    league = skyweaver_league()
    schedule = league.store.get_meta("next_resets")
    with TestClient(create_app(league)) as client:
        late = client.get("/web/played-at", params={"at": "2026-11-28T00:00:00Z"}).json()
        near = client.get("/web/played-at", params={"at": "2024-03-01"}).json()
        bad = client.get("/web/played-at", params={"at": "soon"})
    assert late == {
        "at": "2026-11-28T00:00:00Z",
        "latest": "2024-02-20T12:00:00Z",
        "days_after_latest": 1011.5,
        "far": True,
        "events": [
            # weekly soft resets from the first match's week (Jan 1, 12:00), four-weekly hard
            {
                "kind": "soft",
                "runs": 144,
                "first": "2024-02-26T12:00:00Z",
                "last": "2026-11-23T12:00:00Z",
                "every_days": 7.0,
            },
            {
                "kind": "hard",
                "runs": 36,
                "first": "2024-02-26T12:00:00Z",
                "last": "2026-11-02T12:00:00Z",
                "every_days": 28.0,
            },
        ],
    }
    assert near["far"] is False and [e["runs"] for e in near["events"]] == [1, 1]
    assert bad.status_code == 400 and bad.json()["error"]["field"] == "at"
    assert league.store.get_meta("next_resets") == schedule and league.match_count == 48


def test_the_form_asks_before_recording_a_match_far_past_the_league_s_latest(
    browser: Any,
) -> None:
    """'Played at' left empty is now: on this league of early 2024, the form says which
    season events would run and records only when asked again."""
    from playwright.sync_api import expect

    league = skyweaver_league()
    _, token = create_token(league.store, scope="record")
    page = browser.new_page(viewport={"width": 400, "height": 900})
    with serving(league) as base:
        page.goto(f"{base}/#matches")
        page.wait_for_selector("body[data-ready='1']")
        page.fill("#token", token)
        page.fill("#rec-id", "now-1")
        page.fill("#rec-teams", "ann\nbo")
        page.fill("#rec-scores", "1,0")
        page.click("#record-form button")
        box = page.locator("#record-confirm")
        expect(box).to_be_visible()
        text = box.inner_text()
        assert "days after the league's latest match (2024-02-20)" in text
        assert "first runs these season events, which cannot be undone" in text
        events = box.locator("li").all_inner_texts()
        assert events[0].startswith("soft reset ") and events[0].endswith("(every 7 days)")
        assert events[1].startswith("hard reset ") and events[1].endswith("(every 28 days)")
        assert " times, 2024-02-26 to " in events[0]
        shot(page, "confirm-400")
        box.locator("button.cancel").click()
        expect(page.locator("#record-result")).to_contain_text("not recorded")
        assert league.match_count == 48
        # asked again and confirmed: recorded
        page.click("#record-form button")
        box.locator("button.confirm").click()
        expect(page.locator("#record-result")).to_contain_text("recorded now-1", timeout=30_000)
        assert league.match_count == 49
        # now is no longer far past the latest match: recorded at once
        page.wait_for_timeout(1100)
        page.fill("#rec-id", "now-2")
        page.click("#record-form button")
        expect(page.locator("#record-result")).to_contain_text("recorded now-2", timeout=30_000)
        assert box.is_hidden() and league.match_count == 50
    page.close()
