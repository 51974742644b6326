"""Four small tools of issue 42, item 5: a one-number published forecast on a history with
draws is warned of, ``tune --json`` names the validation score by the score used, and the
tennis ranking prior reads the field it is given (a pruned trial's progress line is in
tests/test_tune_optuna.py)."""

from __future__ import annotations

import io
import json
import math
from pathlib import Path
from typing import Any

import pytest

import rankcraft
from rankcraft.cli import main
from rankcraft.evaluate import DRAWS_WARNED, evaluate_field, field_warning
from rankcraft.jsontext import loads_strict
from rankcraft.tune import parse_param, tune

TEST_FROM = "2021-01-01"
DRAWS = 'name = "draws"\n[update]\nplugin = "elo"\n[update.params]\ndraw = "davidson"\n'
WIN, DRAW, LOSS = 0.45, 0.30, 0.25
"""A made-up published forecast of every match: P(side 0 wins), P(draw), P(side 1 wins)."""


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    return main(list(argv), out=out, err=err), out.getvalue(), err.getvalue()


def _published(history: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [dict(m, forecast={"win": WIN, "draw": DRAW, "loss": LOSS}) for m in history]


def _write(path: Path, matches: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(m) + "\n" for m in matches))
    return path


def _tested(history: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [m for m in history if m["played_at"] >= TEST_FROM]


def test_one_published_number_on_a_history_with_draws_is_warned_of(
    tmp_path: Path, draw_history: list[dict[str, Any]]
) -> None:
    history = _published(draw_history)
    tested = _tested(history)
    draws = sum(m["scores"][0] == m["scores"][1] for m in tested)
    assert draws / len(tested) > 0.2  # (Davidson's κ 0.86: about a quarter drawn)
    path = _write(tmp_path / "h.jsonl", history)
    argv = ["evaluate", str(path), "--ruleset", "elo", "--test-from", TEST_FROM]
    argv += ["--bootstrap", "50", "--json", "--baseline-field"]
    code, out, err = run(*argv, "forecast.win")
    assert code == 0, err
    data = loads_strict(out, what="evaluate --json")
    # scored as side 0's expected score: P(win) 0.45 read as p, a draw as s = ½
    s = [
        1.0 if m["scores"][0] > m["scores"][1] else 0.5 if m["scores"][0] == m["scores"][1] else 0
        for m in tested
    ]
    one = -sum(x * math.log(WIN) + (1 - x) * math.log(1 - WIN) for x in s) / len(s)
    assert data["results"]["forecast.win"]["log_loss"] == pytest.approx(one)
    # ... and said so, on stderr and in the JSON, with the draws counted here
    (warning,) = data["warnings"]
    counted = f"{draws:,} of the {len(tested):,} test matches are draws ({draws / len(tested):.1%})"
    assert counted in warning and "'forecast.win' is one number per match" in warning
    assert "three paths joined by commas" in warning
    assert f"rankcraft: warning: {warning}\n" in err
    # the three probabilities: scored three ways, and as P(win) + ½ P(draw), no warning
    paths = "forecast.win,forecast.draw,forecast.loss"
    three = evaluate_field(history, paths, test_from=TEST_FROM)
    p = WIN + DRAW / 2
    binary = -sum(x * math.log(p) + (1 - x) * math.log(1 - p) for x in s) / len(s)
    chosen = [WIN if x == 1.0 else DRAW if x == 0.5 else LOSS for x in s]
    assert three.log_loss == pytest.approx(binary)
    assert three.figure("three-way") == pytest.approx(-sum(map(math.log, chosen)) / len(s))
    assert field_warning(three, paths) is None


def test_rare_draws_are_not_warned_of(draw_history: list[dict[str, Any]]) -> None:
    """Below 1% of drawn test matches (the NFL's 9 ties in 2,939 games) one number is not
    warned of: it moves the scores little, and such a forecast often gives no P(draw)."""
    history = _published(draw_history)
    tested = _tested(history)
    drawn = [m for m in tested if m["scores"][0] == m["scores"][1]]
    least = math.ceil(DRAWS_WARNED * len(tested))  # the fewest draws warned of
    assert DRAWS_WARNED == 0.01 and least < len(drawn)
    for kept, warned in ((least - 1, False), (least, True)):
        undrawn = {m["id"] for m in drawn[kept:]}
        changed = [dict(m, scores=[1, 0]) if m["id"] in undrawn else m for m in history]
        result = evaluate_field(changed, "forecast.win", test_from=TEST_FROM)
        assert result.draws == kept
        assert (field_warning(result, "forecast.win") is not None) is warned
    # a list of three at one path is three probabilities: no warning
    listed = [dict(m, forecast={"three": [WIN, DRAW, LOSS]}) for m in history]
    assert field_warning(evaluate_field(listed, "forecast.three", test_from=TEST_FROM), "x") is None


def _rps(outcomes: tuple[tuple[float, float, float, int], ...]) -> float:
    """The ranked probability score of three-way forecasts, from its definition: half the
    sum of the squared differences of the cumulative forecast and outcome."""
    total = 0.0
    for win, draw, _, outcome in outcomes:
        seen = [1.0 if outcome == 0 else 0.0, 1.0 if outcome <= 1 else 0.0]
        total += ((win - seen[0]) ** 2 + (win + draw - seen[1]) ** 2) / 2
    return total / len(outcomes)


def test_tune_json_names_the_validation_score_by_the_score_used(
    tmp_path: Path, draw_history: list[dict[str, Any]]
) -> None:
    path = _write(tmp_path / "h.jsonl", draw_history)
    start = rankcraft.loads_ruleset(DRAWS)
    params = [parse_param("update.k_factor=10:60", start)]
    found = tune(
        path, start, params, test_from=TEST_FROM, trials=2, jobs=1, method="random", score="rps"
    )
    rps = found.to_dict()
    assert found.validation is not None
    assert rps["validation_rps"] == pytest.approx(_rps(found.validation.outcomes), rel=1e-12)
    assert "validation_log_loss" not in rps  # (it held the RPS: no alias, docs/decisions.md)
    # the command's JSON is the same document (the log-loss key: tests/test_scores.py)
    out_file = tmp_path / "tuned.toml"
    (tmp_path / "draws.toml").write_text(DRAWS)
    argv = ["tune", str(path), "--ruleset", str(tmp_path / "draws.toml"), "--json"]
    argv += ["--test-from", TEST_FROM, "--param", "update.k_factor=10:60", "--trials", "2"]
    argv += ["--jobs", "1", "--method", "random", "--score", "three-way", "--out", str(out_file)]
    code, out, err = run(*argv)
    assert code == 0, err
    data = loads_strict(out, what="tune --json")
    assert data["score"] == "three-way" and "validation_log_loss" not in data
    assert data["validation_three_way"] == data["scores"]["tuned_validation"]["three-way"]


def _tennis(field: str | None) -> rankcraft.League:
    text = 'extends = "tennis"\nname = "wta"\n[update]\nplugin = "elo"\n[update.params]\n'
    if field is None:
        return rankcraft.League("tennis")
    return rankcraft.League(rankcraft.loads_ruleset(text + f"prior_field = {json.dumps(field)}\n"))


def _first(league: rankcraft.League, meta: dict[str, Any]) -> float:
    """The expected score of side 0 in a first match between two newcomers."""
    match = {"id": "m0", "played_at": "2024-01-01", "teams": [["top"], ["qualifier"]]}
    meta = {"surface": "Indoor", "best_of": 3, **meta}  # (no surface rating: overall only)
    return league.record({**match, "scores": [1, 0], "meta": meta}).expected[0]


def test_the_tennis_prior_reads_the_field_it_is_given() -> None:
    """Issue 42 item 5: women's tennis lists ``meta.wta_rank``; the prior is read from
    ``prior_field`` (``atp_rank`` in ``tennis``), so ``wta_rank`` starts newcomers too."""
    ranks = [1, 1000]
    ra, rb = (1831.2 - 22.0 * math.log(r) for r in ranks)  # the documented prior
    expected = 1.0 / (1.0 + 10.0 ** ((rb - ra) / 400.0))
    assert _first(_tennis(None), {"atp_rank": ranks}) == pytest.approx(expected, rel=1e-12)
    assert _first(_tennis("wta_rank"), {"wta_rank": ranks}) == pytest.approx(expected, rel=1e-12)
    # each reads its own field only: the other tour's ranking leaves both at 1500
    assert _first(_tennis(None), {"wta_rank": ranks}) == 0.5
    assert _first(_tennis("wta_rank"), {"atp_rank": ranks}) == 0.5
    assert rankcraft.load_ruleset("tennis").update.params.prior_field == "atp_rank"


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (
            '"meta.wta_rank"',
            "names a key of the match's meta, not a path: 'meta.wta_rank' (write 'wta_rank')",
        ),
        ('""', "'prior_field' must name a key of the match's meta"),
        ('" wta_rank"', "without spaces around it): ' wta_rank'"),
        ("3", "expected a string, got 3"),
    ],
)
def test_a_prior_field_that_could_never_be_read_is_refused(value: str, message: str) -> None:
    text = 'extends = "tennis"\nname = "x"\n[update]\nplugin = "elo"\n[update.params]\n'
    with pytest.raises(rankcraft.RulesetError) as caught:
        rankcraft.loads_ruleset(text + f"prior_field = {value}\n")
    assert message in str(caught.value)
