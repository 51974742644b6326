"""Evaluation, tuning, home advantage, margin of victory, season regression, plots."""

from __future__ import annotations

import io
import json
import math
from pathlib import Path
from typing import Any

import pytest

import rankcraft
from rankcraft.cli import main
from rankcraft.evaluate import _orientation, calibration, evaluate, score, with_home
from rankcraft.jsontext import loads_strict
from rankcraft.plugins.elo import expected_score, margin_multiplier


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    return main(list(argv), out=out, err=err), out.getvalue(), err.getvalue()


def test_scores_by_hand() -> None:
    items = [(0.8, 1.0), (0.3, 0.0), (0.6, 0.5), (0.5, 1.0)]
    log_loss, brier, accuracy, decisive, n = score(items)
    expected_ll = (
        -(math.log(0.8) + math.log(0.7) + 0.5 * math.log(0.6) + 0.5 * math.log(0.4) + math.log(0.5))
        / 4
    )
    assert log_loss == pytest.approx(expected_ll)
    assert brier == pytest.approx((0.04 + 0.09 + 0.01 + 0.25) / 4)
    assert (accuracy, decisive, n) == (pytest.approx(2.5 / 3), 3, 4)
    bins = calibration(items)
    assert [b.n for b in bins] == [0, 0, 0, 1, 0, 1, 1, 0, 1, 0]
    assert bins[8].predicted == pytest.approx(0.8) and bins[8].observed == 1.0


def test_one_step_ahead_protocol() -> None:
    history = [
        {
            "id": f"m{i}",
            "played_at": f"2024-01-{i + 1:02d}",
            "teams": [["a"], ["b"]],
            "scores": [1, 0],
        }
        for i in range(5)
    ]
    result = evaluate(rankcraft.League("elo"), history, test_from="2024-01-04")
    # predictions before the 4th and 5th matches, from ratings after 3 and 4 wins
    league = rankcraft.League("elo")
    league.record_many(history[:3])
    p4 = league.predict([["a"], ["b"]])[0]
    league.record(history[3])
    p5 = league.predict([["a"], ["b"]])[0]
    assert result.predictions == (pytest.approx((p4, 1.0)), pytest.approx((p5, 1.0)))
    assert (result.warmup, result.matches, result.n) == (3, 2, 2)
    assert result.log_loss == pytest.approx(-(math.log(p4) + math.log(p5)) / 2)


def test_free_for_all_is_scored_on_every_pair() -> None:
    races = [
        {
            "id": f"r{i}",
            "played_at": f"2024-03-0{i + 1}",
            "teams": [["x"], ["y"], ["z"]],
            "ranks": [1, 2, 3],
        }
        for i in range(3)
    ]
    result = evaluate(rankcraft.League("elo"), races, test_from="2024-03-02")
    assert (result.matches, result.n) == (2, 6)
    league = rankcraft.League("elo")
    league.record(races[0])
    # each pair in an outcome-blind orientation: by a hash of the side's ids, not file order
    teams = (("x",), ("y",), ("z",))
    pairs = [_orientation(teams, i, j) for i, j in ((0, 1), (0, 2), (1, 2))]
    assert pairs == [(0, 1), (2, 0), (2, 1)]
    expected = [league.predict([list(teams[a]), list(teams[b])])[0] for a, b in pairs]
    assert [p for p, _ in result.predictions[:3]] == pytest.approx(expected)
    assert [s for _, s in result.predictions[:3]] == [1.0, 0.0, 0.0]


def test_home_from_a_meta_field() -> None:
    rows = [
        {"id": "a", "meta": {"home_team_index": 1}},
        {"id": "b", "meta": {}},
        {"id": "c", "meta": {"home_team_index": None}},
    ]
    assert [r.get("home") for r in with_home(rows, "meta.home_team_index")] == [1, None, None]


def test_home_advantage_in_elo() -> None:
    ruleset = rankcraft.loads_ruleset(
        'extends = "elo"\nname = "h"\n[update.params]\nhome_advantage = 60.0\n'
    )
    league = rankcraft.League(ruleset)
    report = league.record(
        {"id": "m", "played_at": "2024-01-01", "teams": [["a"], ["b"]], "scores": [1, 0], "home": 1}
    )
    p = expected_score(1500.0, 1560.0)
    assert report.expected[0] == pytest.approx(p)
    assert league.player("a").skill.rating == pytest.approx(1500 + 32 * (1 - p))
    assert (
        league.predict([["a"], ["b"]], home=0)[0] > 0.5 > league.predict([["a"], ["b"]], home=1)[0]
    )
    neutral = league.record(
        {"id": "n", "played_at": "2024-01-02", "teams": [["c"], ["d"]], "scores": [1, 0]}
    )
    assert neutral.expected == (0.5, 0.5)
    with pytest.raises(rankcraft.MatchError, match="'home' must be the index"):
        league.record(
            {
                "id": "x",
                "played_at": "2024-01-03",
                "teams": [["c"], ["d"]],
                "scores": [1, 0],
                "home": 2,
            }
        )


@pytest.mark.parametrize("plugin", ["glicko1", "glicko2"])
def test_home_advantage_in_glicko(plugin: str) -> None:
    ruleset = rankcraft.loads_ruleset(
        f'name = "h"\n[update]\nplugin = "{plugin}"\n[update.params]\nhome_advantage = 0.5\n'
    )
    league = rankcraft.League(ruleset)
    home = league.predict([["a"], ["b"]], home=0)[0]
    assert home > 0.5 and league.predict([["a"], ["b"]], home=1)[0] == pytest.approx(1 - home)


def test_fivethirtyeight_margin_multiplier() -> None:
    # ln(|margin| + 1) * 2.2 / (0.001 * winner's lead + 2.2); ties ln 2 * 2.2
    assert margin_multiplier(14, 100.0) == pytest.approx(math.log(15) * 2.2 / 2.3)
    assert margin_multiplier(-14, 100.0) == pytest.approx(math.log(15) * 2.2 / 2.1)
    assert margin_multiplier(0, 100.0) == pytest.approx(math.log(2) * 2.2)
    league = rankcraft.League(
        rankcraft.loads_ruleset(
            'extends = "elo"\nname = "m"\n[update.params]\nmargin = "fivethirtyeight"\n'
        )
    )
    report = league.record(
        {"id": "m", "played_at": "2024-01-01", "teams": [["a"], ["b"]], "scores": [31, 3]}
    )
    multiplier = math.log(29) * 2.2 / 2.2
    assert report.change("a").factors["margin"] == pytest.approx(multiplier)
    assert league.player("a").skill.rating == pytest.approx(1500 + 32 * multiplier * 0.5)


def test_regress_reset_toward_league_mean() -> None:
    league = rankcraft.League(
        rankcraft.loads_ruleset(
            'extends = "elo"\nname = "r"\n[reset]\nplugin = "regress"\n[reset.params]\n'
            "fraction = 0.5\n"
        )
    )
    league.import_state(
        {
            "players": [
                {"id": "a", "skill": {"rating": 1600.0, "peak": 1600.0}},
                {"id": "b", "skill": {"rating": 1400.0, "peak": 1400.0}},
            ]
        }
    )
    league.reset("season")
    assert [p.skill.rating for p in league.players()] == [1550.0, 1450.0]


def _history(tmp_path: Path, n: int = 400) -> Path:
    import random

    rng = random.Random(7)
    strength = {f"p{i}": rng.gauss(0, 1) for i in range(12)}
    lines = []
    for i in range(n):
        a, b = rng.sample(sorted(strength), 2)
        p = 1 / (1 + math.exp(strength[b] - strength[a]))
        s = 1 if rng.random() < p else 0
        day = f"2020-{1 + i // 40:02d}-{1 + (i % 40) // 2:02d}"
        lines.append(
            json.dumps({"id": f"m{i}", "played_at": day, "teams": [[a], [b]], "scores": [s, 1 - s]})
        )
    path = tmp_path / "h.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_evaluate_command_compares_rulesets_and_plots(tmp_path: Path) -> None:
    history = _history(tmp_path)
    plot = tmp_path / "cal.png"
    code, out, err = run(
        "evaluate",
        str(history),
        "--ruleset",
        "elo",
        "--ruleset",
        "glicko1",
        "--test-from",
        "2020-08-01",
        "--json",
        "--plot",
        str(plot),
    )
    assert code == 0, err
    data = json.loads(out)
    assert set(data["results"]) == {"elo", "glicko1"}
    assert data["results"]["elo"]["n"] == 120 and len(data["results"]["elo"]["calibration"]) == 10
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    code, out, _ = run("evaluate", str(history), "--ruleset", "elo", "--test-from", "2020-08-01")
    assert "log loss" in out and "calibration of elo" in out
    code, _, err = run("evaluate", str(history), "--ruleset", "elo", "--test-from", "2031-01-01")
    assert code == 2 and "no match to score" in err


def test_tune_uses_warm_up_only_and_is_deterministic(tmp_path: Path) -> None:
    history = _history(tmp_path)
    out_file = tmp_path / "tuned.toml"
    argv = [
        "tune",
        str(history),
        "--ruleset",
        "elo",
        "--test-from",
        "2020-08-01",
        "--param",
        "update.k_factor=4:64",
        "--out",
        str(out_file),
        "--trials",
        "6",
        "--json",
        "--jobs",
        "2",
    ]
    code, out, err = run(*argv)
    assert code == 0, err
    first = json.loads(out)
    tuned = rankcraft.load_ruleset(out_file)
    assert tuned.name == "elo-tuned"
    assert tuned.update.params.k_factor == pytest.approx(first["chosen"]["update.params.k_factor"])
    code, out, _ = run(*argv[:-2], "--jobs", "1")
    assert json.loads(out)["chosen"] == first["chosen"]  # same seed, any number of workers
    # Changing the test part does not change the choice.
    lines = history.read_text().splitlines()
    flipped = []
    for text in lines:
        data: dict[str, Any] = json.loads(text)
        if data["played_at"] >= "2020-08-01":
            data["scores"] = data["scores"][::-1]
        flipped.append(json.dumps(data))
    other = tmp_path / "flipped.jsonl"
    other.write_text("\n".join(flipped) + "\n")
    code, out, _ = run(
        "tune",
        str(other),
        "--ruleset",
        "elo",
        "--test-from",
        "2020-08-01",
        "--param",
        "update.k_factor=4:64",
        "--out",
        str(tmp_path / "t2.toml"),
        "--trials",
        "6",
        "--json",
    )
    again = json.loads(out)
    assert again["chosen"] == first["chosen"]
    assert again["test"]["log_loss"] != first["test"]["log_loss"]


def test_tune_refuses_bad_params(tmp_path: Path) -> None:
    history = _history(tmp_path, 50)
    for param, message in (
        ("k_factor", "NAME=LOW:HIGH"),
        ("update.nope=1:2", "must name a number of the ruleset"),
        ("update.k_factor=9:1", "LOW <= HIGH"),
    ):
        code, _, err = run(
            "tune",
            str(history),
            "--ruleset",
            "elo",
            "--test-from",
            "2020-02-01",
            "--param",
            param,
            "--out",
            str(tmp_path / "x.toml"),
        )
        assert code == 2 and message in err, err
    assert not (tmp_path / "x.toml").exists()


def test_player_plot(tmp_path: Path) -> None:
    db = tmp_path / "s.sqlite"
    history = _history(tmp_path, 80)
    assert run("replay", str(history), "--ruleset", "skyweaver", "--db", str(db))[0] == 0
    plot = tmp_path / "p0.png"
    code, _, err = run("player", "p0", "--db", str(db), "--plot", str(plot))
    assert code == 0, err
    assert plot.read_bytes()[:4] == b"\x89PNG"


@pytest.mark.slow
def test_elo_538_reproduces_fivethirtyeight_on_nfl(shared_data: Path) -> None:
    dicts = [
        json.loads(line)
        for line in __import__("gzip").open(shared_data / "nfl_538_elo_1920_2021.jsonl.gz", "rt")
    ]
    result = evaluate(
        rankcraft.League("elo-538"),
        with_home(dicts, "meta.home_team_index"),
        test_from="2010-08-01",
    )
    # the log loss, Brier score and accuracy of FiveThirtyEight's published forecasts on the
    # same 2,939 games
    assert result.n == 2939
    assert round(result.log_loss, 4) == 0.6291
    assert round(result.brier, 4) == 0.2190
    assert round(result.accuracy, 4) == 0.6461
    published = [d["forecast"]["p_team0_wins"] for d in dicts if d["played_at"] >= "2010-08-01"]
    worst = max(abs(p - q) for (p, _), q in zip(result.predictions, published, strict=True))
    assert worst < 0.01


@pytest.mark.parametrize(("plugin", "field"), [("glicko1", "rating"), ("glicko2", "mu")])
def test_margin_multiplier_in_glicko(plugin: str, field: str) -> None:
    plain = rankcraft.League(
        rankcraft.loads_ruleset(f'name = "p"\n[update]\nplugin = "{plugin}"\n')
    )
    margin = rankcraft.League(
        rankcraft.loads_ruleset(
            f'name = "m"\n[update]\nplugin = "{plugin}"\n'
            '[update.params]\nmargin = "fivethirtyeight"\n'
        )
    )
    game = {"id": "g", "played_at": "2024-01-01", "teams": [["a"], ["b"]], "scores": [5, 2]}
    p, m = plain.record(game), margin.record(game)
    base = getattr(p.change("a").skill_after, field) - getattr(p.change("a").skill_before, field)
    more = getattr(m.change("a").skill_after, field) - getattr(m.change("a").skill_before, field)
    assert more == pytest.approx(base * margin_multiplier(3, 0.0))
    assert m.change("a").factors["margin"] == pytest.approx(math.log(4) * 2.2 / 2.2)


# -- the test part's start, free-for-all orientation, paired differences, strict JSON ------


def test_test_from_is_a_time_parsed_as_played_at_is(tmp_path: Path) -> None:
    history = _history(tmp_path, 120)
    for bad in ("2014-1-1", "", "yesterday"):
        code, out, err = run("evaluate", str(history), "--ruleset", "elo", "--test-from", bad)
        assert code == 2 and out == ""
        assert f"'--test-from' is not an ISO-8601 date or date-time: {bad!r}" in err, err
    with pytest.raises(rankcraft.MatchError, match="'test_from' is not an ISO-8601"):
        evaluate(rankcraft.League("elo"), [], test_from="2014-1-1")
    # compared as times, not as text: 02:00 at +02:00 is midnight UTC
    lines = history.read_text().splitlines()
    dicts = [json.loads(line) for line in lines]
    plain = evaluate(rankcraft.League("elo"), dicts, test_from="2020-02-01")
    zoned = evaluate(rankcraft.League("elo"), dicts, test_from="2020-02-01T02:00:00+02:00")
    assert plain.n == zoned.n == 80 and plain.log_loss == zoned.log_loss


def test_free_for_all_calibration_spans_low_and_high_rates(shared_data: Path) -> None:
    import gzip

    with gzip.open(shared_data / "f1_races_1950_2026.jsonl.gz", "rt") as handle:
        races = [json.loads(line) for _, line in zip(range(300), handle, strict=False)]
    # the file lists every race's drivers by finishing place: in file order the first
    # side of every pair is the better placed one (observed rate 1.0 in every bin)
    assert all(r["ranks"] == sorted(r["ranks"]) for r in races)
    ruleset = rankcraft.loads_ruleset(
        'extends = "elo"\nname = "f1"\n[update.params]\nk_factor = 5.0\n'
    )
    result = evaluate(rankcraft.League(ruleset), races, test_from=races[250]["played_at"])
    assert result.n == 14074
    rates = [b.observed for b in result.calibration if b.n >= 100]
    assert rates == sorted(rates)  # observed rates rise with the predicted probability
    assert rates[0] is not None and rates[0] < 0.3
    assert rates[-1] is not None and rates[-1] > 0.7
    observed = sum(s for _, s in result.predictions) / result.n
    assert 0.45 < observed < 0.55  # each pair's first side wins about half the time


def _strong_history() -> list[dict[str, Any]]:
    """600 games of 12 players far apart (logistic strengths, sd 2), 25 days a month."""
    import random

    rng = random.Random(7)
    strength = {f"p{i}": rng.gauss(0, 2) for i in range(12)}
    games = []
    for i in range(600):
        a, b = rng.sample(sorted(strength), 2)
        s = int(rng.random() < 1 / (1 + math.exp(strength[b] - strength[a])))
        day = f"2020-{1 + i // 50:02d}-{1 + (i % 50) // 2:02d}"
        games.append({"id": f"m{i}", "played_at": day, "teams": [[a], [b]], "scores": [s, 1 - s]})
    return games


def test_paired_difference_with_a_block_bootstrap() -> None:
    from rankcraft.evaluate import compare

    games = _strong_history()
    slow = rankcraft.loads_ruleset(
        'extends = "elo"\nname = "slow"\n[update.params]\nk_factor = 2.0\n'
    )
    elo = evaluate(rankcraft.League("elo"), games, test_from="2020-08-01")
    worse = evaluate(rankcraft.League(slow), games, test_from="2020-08-01")
    d = compare(elo, worse, names=("slow", "elo"))
    assert (d.ruleset, d.baseline, d.samples, d.seed, d.block_days) == ("slow", "elo", 2000, 0, 7)
    assert d.log_loss == pytest.approx(worse.log_loss - elo.log_loss)
    assert 0.0 < d.low < d.log_loss < d.high  # K = 2 learns too slowly: clearly worse
    # test days: the 1st to the 25th of August to December; weeks counted from Aug 1
    assert d.blocks == 21 and compare(elo, worse, block_days=1).blocks == 125
    assert compare(elo, worse, names=("slow", "elo")) == d  # seeded
    other_seed = compare(elo, worse, seed=1)
    assert other_seed.log_loss == d.log_loss and other_seed.low != d.low
    same = compare(elo, elo)
    assert (same.log_loss, same.low, same.high) == (0.0, 0.0, 0.0)
    later = evaluate(rankcraft.League("elo"), games, test_from="2020-09-01")
    with pytest.raises(rankcraft.InputError, match="scored different items"):
        compare(elo, later)
    with pytest.raises(
        rankcraft.InputError, match=r"'samples' must be a whole number in \[1, 100000\]"
    ):
        compare(elo, worse, samples=0)


def test_evaluate_command_reports_differences_in_strict_json(tmp_path: Path) -> None:
    history = _history(tmp_path)
    slow = tmp_path / "slow.toml"
    slow.write_text('extends = "elo"\nname = "slow"\n[update.params]\nk_factor = 1.0\n')
    argv = ["evaluate", str(history), "--ruleset", "elo", "--ruleset", str(slow)]
    argv += ["--test-from", "2020-08-01", "--bootstrap", "500"]
    code, out, err = run(*argv, "--json")
    assert code == 0, err
    data = loads_strict(out, what="evaluate --json")
    # no draw model: paired intervals on the binary log loss and the Brier score
    assert data["baseline"] == "elo" and len(data["differences"]) == 2
    difference, brier = data["differences"]
    assert difference["ruleset"] == "slow" and difference["samples"] == 500
    assert difference["score"] == "log-loss" and brier["score"] == "brier"
    assert difference["low"] < difference["log_loss"] < difference["high"]
    assert difference["difference"] == difference["log_loss"]
    assert brier["low"] < brier["difference"] < brier["high"] and "log_loss" not in brier
    # an empty calibration bin is null, not NaN (which strict JSON parsers refuse)
    bins = data["results"]["elo"]["calibration"]
    assert any(b["n"] == 0 and b["predicted"] is None and b["observed"] is None for b in bins)
    code, out, err = run(*argv, "--baseline", "slow")
    assert code == 0, err
    assert "against slow" in out and "elo" in out.split("against slow")[1]
    code, _, err = run(*argv, "--baseline", "glicko1")
    assert code == 2 and "'--baseline' must be one of the rulesets evaluated" in err
    code, _, err = run(*argv, "--bootstrap", "0")
    assert code == 2 and "'--bootstrap' must be a whole number in [1, 100000]: 0" in err
    # one ruleset, a single decisive-free test part: accuracy is null, not NaN
    drawn = tmp_path / "drawn.jsonl"
    drawn.write_text(
        "\n".join(
            json.dumps(
                {
                    "id": f"d{i}",
                    "played_at": f"2024-01-0{i + 1}",
                    "teams": [["a"], ["b"]],
                    "scores": [1, 1],
                }
            )
            for i in range(4)
        )
        + "\n"
    )
    code, out, err = run(
        "evaluate", str(drawn), "--ruleset", "elo", "--test-from", "2024-01-03", "--json"
    )
    assert code == 0, err
    result = loads_strict(out, what="evaluate --json")["results"]["elo"]
    assert result["accuracy"] is None and result["draws"] == 2 and result["three_way"] is None
