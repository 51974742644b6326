"""Forecasts: League.forecast, the optional rankcraft_outcomes hook (a draw model), the
Plackett-Luce reading of more than two sides, and their CLI and HTTP answers."""

from __future__ import annotations

import io
import itertools
import json
import math
import textwrap
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rankcraft
from rankcraft.cli import main
from rankcraft.evaluate import evaluate, score_three_way
from rankcraft.forecast import checked_outcomes, finishing
from rankcraft.jsontext import loads_strict

# A tiny draw model over Elo states: Davidson's extension of Bradley-Terry ("On extending
# the Bradley-Terry model to accommodate ties in paired comparison experiments", 1970):
# with π = 10^(rating / 400), P(i wins) = π_i / T, P(draw) = nu √(π_i π_j) / T,
# T = π_i + π_j + nu √(π_i π_j). Its expectation is P(win) + ½ P(draw), so the two agree.
# nu = 0 stands for "no draw model" (the hook answers None).
DRAWY = """
    import math

    import attrs
    import rankcraft


    @attrs.frozen(kw_only=True)
    class DrawyParams:
        nu: float = 0.5
        broken: bool = False


    @rankcraft.hookimpl
    def rankcraft_params(slot):
        return DrawyParams if slot == "expectation" else None


    @rankcraft.hookimpl
    def rankcraft_needs(slot):
        return rankcraft.Needs(fields=("rating",))


    def davidson(params, side_states):
        a, b = (10 ** (s.rating / 400) for s in side_states)
        tie = params.nu * math.sqrt(a * b)
        total = a + b + tie
        return a / total, tie / total, b / total


    @rankcraft.hookimpl
    def rankcraft_expectation(params, side_states):
        if len(side_states) != 2:
            raise AssertionError("a forecast asks the expectation about pairs only")
        w, d, _ = davidson(params, side_states)
        return [w + d / 2, 1 - (w + d / 2)]


    @rankcraft.hookimpl
    def rankcraft_outcomes(params, side_states, home):
        if params.broken:
            return (0.5, 0.5, 0.5)
        return None if params.nu == 0 else davidson(params, side_states)
"""


def _ruleset_text(nu: float = 0.5, broken: bool = False) -> str:
    return (
        'name = "drawy"\n[update]\nplugin = "elo"\n[expectation]\nplugin = "drawy"\n'
        f"[expectation.params]\nnu = {nu}\nbroken = {str(broken).lower()}\n"
    )


@pytest.fixture(scope="module")
def plugin_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("plugins")
    (folder / "drawy.py").write_text(textwrap.dedent(DRAWY))
    return folder


@pytest.fixture(scope="module")
def plugins(plugin_dir: Path) -> rankcraft.Plugins:
    return rankcraft.Plugins(rankcraft.get_plugin_manager(plugin_dirs=[plugin_dir]))


def _league(plugins: rankcraft.Plugins, nu: float = 0.5, **ratings: float) -> rankcraft.League:
    league = rankcraft.League(rankcraft.loads_ruleset(_ruleset_text(nu), plugins=plugins))
    if ratings:
        league.import_state(
            {"players": [{"id": p, "skill": {"rating": r, "peak": r}} for p, r in ratings.items()]}
        )
    return league


def _elo(**ratings: float) -> rankcraft.League:
    league = rankcraft.League("elo")
    league.import_state(
        {"players": [{"id": p, "skill": {"rating": r, "peak": r}} for p, r in ratings.items()]}
    )
    return league


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    return main(list(argv), out=out, err=err), out.getvalue(), err.getvalue()


# -- two sides: the draw model ------------------------------------------------------------


def test_two_sides_with_a_draw_model(plugins: rankcraft.Plugins) -> None:
    league = _league(plugins, a=1600.0, b=1500.0)
    assert league.has_draw_model and not rankcraft.League("elo").has_draw_model
    forecast = league.forecast([["a"], ["b"]])
    # Davidson by hand: π_a = 10^4, π_b = 10^3.75, nu = 0.5
    pa, pb = 10**4.0, 10**3.75
    tie = 0.5 * math.sqrt(pa * pb)
    total = pa + pb + tie
    assert forecast.method == "outcomes"
    assert forecast.win == pytest.approx((pa / total, pb / total))
    assert forecast.draw == pytest.approx(tie / total)
    assert forecast.win is not None and sum(forecast.win) + forecast.draw == pytest.approx(1.0)
    assert forecast.expected_score[0] == pytest.approx(pa / total + tie / total / 2)
    assert forecast.places is None and forecast.order == (0, 1)
    # predict keeps giving the expected score (the expectation the report keeps)
    assert league.predict([["a"], ["b"]]) == list(forecast.expected_score)
    assert league.predict([["a"], ["b"]])[0] != pytest.approx(forecast.win[0])


def test_without_a_draw_model_a_forecast_does_not_call_the_expected_score_a_win(
    plugins: rankcraft.Plugins,
) -> None:
    for league in (_league(plugins, nu=0.0, a=1600.0), _elo(a=1600.0)):
        forecast = league.forecast([["a"], ["b"]])
        assert forecast.method == "expected-score"
        assert forecast.win is None and forecast.draw is None and forecast.places is None
        assert forecast.expected_score == pytest.approx((0.64, 0.36), abs=0.01)
        assert list(forecast.probabilities) == league.predict([["a"], ["b"]])


def test_an_outcomes_hook_that_breaks_its_contract_is_refused(
    plugins: rankcraft.Plugins,
) -> None:
    league = rankcraft.League(rankcraft.loads_ruleset(_ruleset_text(broken=True), plugins=plugins))
    with pytest.raises(rankcraft.PluginError, match="summing to 1"):
        league.forecast([["a"], ["b"]])
    assert checked_outcomes(None) is None
    with pytest.raises(rankcraft.PluginError):
        checked_outcomes([0.5, 0.5])


def test_the_rating_loop_never_asks_the_draw_model(plugins: rankcraft.Plugins) -> None:
    league = rankcraft.League(rankcraft.loads_ruleset(_ruleset_text(broken=True), plugins=plugins))
    report = league.record(
        {"id": "m", "played_at": "2024-01-01", "teams": [["a"], ["b"]], "scores": [1, 1]}
    )
    assert report.expected == (0.5, 0.5)


# -- more than two sides: Plackett-Luce -----------------------------------------------------


def _brute_force(strength: list[float]) -> list[list[float]]:
    """Place probabilities of Plackett-Luce by summing over every finishing order."""
    n = len(strength)
    w = [math.exp(s) for s in strength]
    places = [[0.0] * n for _ in range(n)]
    for order in itertools.permutations(range(n)):
        p, left = 1.0, sum(w)
        for i in order:
            p *= w[i] / left
            left -= w[i]
        for k, i in enumerate(order):
            places[i][k] += p
    return places


def test_elo_free_for_all_is_plackett_luce_exactly() -> None:
    ratings = {"a": 1700.0, "b": 1550.0, "c": 1500.0, "d": 1320.0, "e": 1200.0}
    league = _elo(**ratings)
    forecast = league.forecast([[p] for p in ratings])
    # Elo's logistic expectation is Bradley-Terry with π = 10^(r/400): λ = r ln 10 / 400
    strength = [r * math.log(10) / 400 for r in ratings.values()]
    expected = _brute_force(strength)
    assert forecast.method == "plackett-luce" and forecast.places is not None
    for row, want in zip(forecast.places, expected, strict=True):
        assert row == pytest.approx(want, abs=1e-10)
    total = sum(10 ** (r / 400) for r in ratings.values())
    assert forecast.win == pytest.approx([10 ** (r / 400) / total for r in ratings.values()])
    assert forecast.order == (0, 1, 2, 3, 4)
    assert league.predict([[p] for p in ratings]) == list(forecast.win)
    # the expected score is the mean pairwise expectation (the round robin)
    e = rankcraft.plugins.elo.expected_score
    assert forecast.expected_score[0] == pytest.approx(
        sum(e(1700.0, r) for r in (1550.0, 1500.0, 1320.0, 1200.0)) / 4
    )


def test_a_hopeless_third_side_leaves_the_two_side_probabilities() -> None:
    league = _elo(a=1600.0, b=1500.0, z=-50_000.0)
    two = league.predict([["a"], ["b"]])
    three = league.forecast([["a"], ["b"], ["z"]])
    assert three.win is not None and three.places is not None
    assert three.win[:2] == pytest.approx(two, abs=1e-9)
    assert three.places[2][2] == pytest.approx(1.0)


def test_home_side_of_a_free_for_all() -> None:
    ruleset = rankcraft.loads_ruleset(
        'extends = "elo"\nname = "h"\n[update.params]\nhome_advantage = 100.0\n'
    )
    league = rankcraft.League(ruleset)
    neutral = league.forecast([["a"], ["b"], ["c"]])
    home = league.forecast([["a"], ["b"], ["c"]], home=1)
    assert neutral.win == pytest.approx((1 / 3, 1 / 3, 1 / 3))
    # at home in every pair: as if 100 rating points stronger, Plackett-Luce exactly
    edge = 10 ** (100 / 400)
    assert home.win == pytest.approx((1 / (edge + 2), edge / (edge + 2), 1 / (edge + 2)))
    assert home.order == (1, 0, 2)


def test_two_sides_give_back_their_pairwise_probability() -> None:
    for p in (0.0, 1e-15, 0.3, 0.5, 0.999, 1.0):
        reading = finishing([[0.0, p], [1.0 - p, 0.0]])
        assert reading.win == (p, 1.0 - p)
        assert reading.places == ((p, 1.0 - p), (1.0 - p, p))


ratings = st.lists(
    st.floats(min_value=-3000, max_value=5000, allow_nan=False), min_size=2, max_size=5
)


@settings(max_examples=10, deadline=None)
@given(ratings, st.randoms(use_true_random=False))
def test_forecast_properties(values: list[float], rng: object) -> None:
    ids = [f"p{i}" for i in range(len(values))]
    league = _elo(**dict(zip(ids, values, strict=True)))
    sides = [[p] for p in ids]
    forecast = league.forecast(sides)
    n = len(sides)
    assert all(0.0 <= s <= 1.0 for s in forecast.expected_score)
    assert math.fsum(forecast.expected_score) == pytest.approx(n / 2)
    assert forecast.probabilities == pytest.approx(league.predict(sides))
    assert math.fsum(forecast.probabilities) == pytest.approx(1.0)
    if n > 2:
        assert forecast.win is not None and forecast.places is not None
        assert math.fsum(forecast.win) == pytest.approx(1.0)
        for i in range(n):
            assert math.fsum(forecast.places[i]) == pytest.approx(1.0)
            assert math.fsum(row[i] for row in forecast.places) == pytest.approx(1.0)
            assert forecast.places[i][0] == pytest.approx(forecast.win[i], abs=1e-9)
        assert all(0.0 <= p <= 1.0 for row in forecast.places for p in row)
    # reordering the sides reorders the forecast
    perm = list(range(n))
    rng.shuffle(perm)  # type: ignore[attr-defined]
    again = league.forecast([sides[i] for i in perm])
    assert again.expected_score == pytest.approx([forecast.expected_score[i] for i in perm])
    if n > 2:
        assert forecast.win is not None and forecast.places is not None
        assert again.win == pytest.approx([forecast.win[i] for i in perm], abs=1e-12)
        assert again.places is not None
        for k, i in enumerate(perm):
            assert again.places[k] == pytest.approx(forecast.places[i], abs=1e-9)


# -- evaluate: three-way scores ---------------------------------------------------------------


def test_rps_worked_examples() -> None:
    # Constantinou and Fenton, "Solving the problem of inadequate scoring rules for assessing
    # probabilistic football forecast models" (2012), table 1, match 1 (a home win)
    assert score_three_way([(1.0, 0.0, 0.0, 0)])[1] == 0.0
    assert score_three_way([(0.9, 0.1, 0.0, 0)])[1] == pytest.approx(0.005)
    assert score_three_way([(0.8, 0.1, 0.1, 0)])[1] == pytest.approx(0.025)
    assert score_three_way([(0.5, 0.25, 0.25, 0)])[1] == pytest.approx(0.15625)
    # a draw forecast (0.25, 0.5, 0.25): ½(0.25² + 0.25²); its log loss is -ln 0.5
    assert score_three_way([(0.25, 0.5, 0.25, 1)]) == pytest.approx((math.log(2), 0.0625))


def _draw_history(n: int = 24) -> list[dict[str, object]]:
    scores = [[1, 0], [1, 1], [0, 1], [2, 2], [3, 1], [0, 0]]
    pairs = [("a", "b"), ("b", "c"), ("c", "a"), ("a", "d")]
    return [
        {
            "id": f"m{i}",
            "played_at": f"2024-01-{1 + i:02d}",
            "teams": [[pairs[i % 4][0]], [pairs[i % 4][1]]],
            "scores": scores[i % len(scores)],
        }
        for i in range(n)
    ]


def test_evaluate_scores_three_ways_with_draws_and_a_draw_model(
    plugins: rankcraft.Plugins,
) -> None:
    history = _draw_history()
    result = evaluate(_league(plugins), history, test_from="2024-01-13")
    assert result.three_way is not None and result.three_way.n == 12 and result.draws == 6
    # by hand: replay, forecast before each test match
    league = _league(plugins)
    items = []
    for data in history:
        if str(data["played_at"]) >= "2024-01-13":
            f = league.forecast(data["teams"], at=str(data["played_at"]))  # type: ignore[arg-type]
            assert f.win is not None and f.draw is not None
            s0, s1 = data["scores"]  # type: ignore[misc]
            outcome = 0 if s0 > s1 else 2 if s0 < s1 else 1
            items.append((f.win[0], f.draw, f.win[1], outcome))
        league.record(data)
    log_loss, rps = score_three_way(items)
    assert result.three_way.log_loss == pytest.approx(log_loss)
    assert result.three_way.rps == pytest.approx(rps)
    # no draw model, or no draws in the test part: binary figures only
    assert evaluate(_league(plugins, nu=0.0), history, test_from="2024-01-13").three_way is None
    assert evaluate(rankcraft.League("elo"), history, test_from="2024-01-13").three_way is None
    decisive = [m for m in history if m["scores"][0] != m["scores"][1]]  # type: ignore[index]
    assert evaluate(_league(plugins), decisive, test_from="2024-01-13").three_way is None


# -- the match's context reaches the draw model (rankcraft_outcomes' ``match``) -------------

# Elo with Davidson draws, a home advantage per competition (none at the World Cup, whose
# gap counts 1.5 times), a drifting home advantage and context ratings per surface.
CONTEXT_DRAWS = """name = "context-draws"
[update]
plugin = "elo"
[update.params]
k_factor = 30.0
home_advantage = 80.0
home_drift = 4.0
home_drift_year = 2020.0
draw = "davidson"
draw_kappa = 0.6
context_field = "tournament"
blend_field = "surface"
blend_values = ["grass", "sand"]
blend_weight = 0.5
[[update.params.context_rules]]
contains = "World Cup"
home_advantage = 0.0
gap_scale = 1.5
[[update.params.context_rules]]
contains = "Cup"
home_advantage = 140.0
"""


def _context_history() -> list[dict[str, object]]:
    """24 matches of four teams: competitions, surfaces, home sides and draws varied."""
    teams = ["ann", "bo", "cy", "di"]
    tournaments = ["Friendly", "World Cup", "Nations Cup", "World Cup qualification"]
    out: list[dict[str, object]] = []
    for i in range(24):
        a, b = teams[i % 4], teams[(i * 3 + 1) % 4]
        if a == b:
            b = teams[(i + 2) % 4]
        out.append(
            {
                "id": f"c{i}",
                "played_at": f"2024-{1 + i // 4:02d}-{1 + i % 4 * 7:02d}",
                "teams": [[a], [b]],
                "scores": [[2, 0], [1, 1], [0, 1], [3, 1], [0, 0], [1, 2]][i % 6],
                "home": [0, None, 1][i % 3],
                "meta": {"tournament": tournaments[i % 4], "surface": ["grass", "sand"][i % 2]},
            }
        )
    return out


def _davidson(gap: float, kappa: float) -> tuple[float, float, float]:
    """Davidson's three probabilities in Elo's units, written from the formula: with
    x = 10^(gap / 800), P(win) = x / T, P(draw) = κ / T, P(loss) = (1/x) / T."""
    x = 10.0 ** (gap / 800.0)
    total = x + 1.0 / x + kappa
    return x / total, kappa / total, 1.0 / x / total


def test_the_draw_model_reads_the_match_as_the_expectation_does() -> None:
    ruleset = rankcraft.loads_ruleset(CONTEXT_DRAWS)
    league = rankcraft.League(ruleset)
    changed = 0
    for data in _context_history():
        match = rankcraft.parse_match(data)
        forecast = league.forecast(match.teams, match=match)
        # the gap by hand, from the players' stored states (context ratings blended)
        (a,), (b,) = match.teams
        index = ["grass", "sand"].index(data["meta"]["surface"])  # type: ignore[index]

        def strength(pid: str, index: int = index) -> float:
            try:
                skill = league.player(pid).skill
            except rankcraft.UnknownPlayerError:
                return 1500.0
            return 0.5 * skill.rating + 0.5 * skill.contexts[index]

        tournament = data["meta"]["tournament"]  # type: ignore[index]
        advantage, gap_scale = (
            (0.0, 1.5)
            if "World Cup" in tournament
            else (140.0, 1.0)
            if "Cup" in tournament
            else (80.0, 1.0)
        )
        moment = match.played_at
        advantage += 4.0 * (moment.year + (moment.timetuple().tm_yday - 1) / 365.25 - 2020.0)
        edge = 0.0 if match.home is None else advantage if match.home == 0 else -advantage
        gap = (strength(a) + edge - strength(b)) * gap_scale
        assert forecast.method == "outcomes" and forecast.win is not None
        assert forecast.draw is not None
        three = (forecast.win[0], forecast.draw, forecast.win[1])
        assert three == pytest.approx(_davidson(gap, 0.6), rel=1e-12)
        # the forecast without the match (sides, time and home only): the plain home
        # advantage, the overall rating
        plain = league.forecast(match.teams, at=match.played_at, home=match.home)
        assert plain.win is not None and plain.draw is not None
        if abs(plain.win[0] - forecast.win[0]) > 1e-6:
            changed += 1
        report = league.record(match)
        # P(win) + ½ P(draw) is the expectation the report keeps
        assert forecast.win[0] + forecast.draw / 2 == pytest.approx(report.expected[0], abs=1e-12)
        assert forecast.expected_score[0] == report.expected[0]
    assert changed >= 20  # (the match's context moves nearly every forecast)


def test_evaluate_scores_three_ways_with_the_match_context() -> None:
    history = _context_history()
    ruleset = rankcraft.loads_ruleset(CONTEXT_DRAWS)
    result = evaluate(rankcraft.League(ruleset), history, test_from="2024-03-01")
    league = rankcraft.League(ruleset)
    with_match, without = [], []
    for data in history:
        match = rankcraft.parse_match(data)
        if data["played_at"] >= "2024-03-01":  # type: ignore[operator]
            s0, s1 = data["scores"]  # type: ignore[misc]
            outcome = 0 if s0 > s1 else 2 if s0 < s1 else 1
            for f, out in (
                (league.forecast(match.teams, match=match), with_match),
                (league.forecast(match.teams, at=match.played_at, home=match.home), without),
            ):
                assert f.win is not None and f.draw is not None
                out.append((f.win[0], f.draw, f.win[1], outcome))
        league.record(match)
    assert result.three_way is not None and result.three_way.n == len(with_match) == 16
    assert (result.three_way.log_loss, result.three_way.rps) == pytest.approx(
        score_three_way(with_match), rel=1e-12
    )
    assert abs(result.three_way.log_loss - score_three_way(without)[0]) > 1e-3


def test_a_forecast_of_a_match_takes_its_sides_time_and_home_from_it() -> None:
    league = rankcraft.League(rankcraft.loads_ruleset(CONTEXT_DRAWS))
    match = rankcraft.parse_match(_context_history()[1])
    with pytest.raises(rankcraft.InputError, match="'sides' must be the match's teams"):
        league.forecast([["zed"], ["bo"]], match=match)
    with pytest.raises(rankcraft.InputError, match="'at', 'home' and 'season' come from"):
        league.forecast(match.teams, home=0, match=match)
    assert league.match_count == 0


# -- the command line and the service: strict JSON -----------------------------------------


def test_predict_command_shows_the_forecast_in_strict_json(
    plugin_dir: Path, tmp_path: Path
) -> None:
    ruleset = tmp_path / "drawy.toml"
    ruleset.write_text(_ruleset_text())
    db = str(tmp_path / "none.sqlite")
    base = ["--plugins-dir", str(plugin_dir), "predict", "--db", db, "--ruleset", str(ruleset)]
    code, out, err = run(*base, "a", "b")
    assert code == 0, err
    assert out.splitlines()[0].split() == ["P(win)", "P(draw)", "expected", "score", "side"]
    assert out.splitlines()[1].split() == ["0.4000", "0.2000", "0.5000", "a"]
    documents = []
    for sides in (["a", "b"], ["a", "b", "c,d"]):
        code, out, err = run(*base, *sides, "--json")
        assert code == 0, err
        documents.append(loads_strict(out, what="predict --json"))
    two, three = documents
    assert two["win"] == [0.4, 0.4] and two["draw"] == pytest.approx(0.2)
    assert two["method"] == "outcomes" and two["probabilities"] == [0.5, 0.5]
    assert three["method"] == "plackett-luce" and three["draw"] is None
    assert three["probabilities"] == three["win"] == pytest.approx([1 / 3] * 3)
    code, out, err = run("predict", "a", "b", "c", "--ruleset", "elo", "--db", db, "--home", "2")
    assert code == 0, err
    header = ["P(first)", "expected", "place", "expected", "score", "side"]
    assert out.splitlines()[0].split() == header
    assert out.splitlines()[-1] == "predicted order: a, b, c"  # no home advantage in elo
    code, out, err = run("predict", "a", "b", "--ruleset", "elo", "--db", db, "--home", "2")
    assert code == 2 and "'home'" in err and "2" in err
    assert not Path(db).exists()


def test_predict_endpoint_answers_the_forecast(plugins: rankcraft.Plugins) -> None:
    pytest.importorskip("starlette")
    from starlette.testclient import TestClient

    from rankcraft import serve

    league = _league(plugins, a=1600.0)
    with TestClient(serve.create_app(league, serve.Settings())) as client:
        answer = client.get("/predict", params=[("side", "a"), ("side", "b")])
        assert answer.status_code == 200
        data = loads_strict(answer.text, what="/predict")
        assert data == {
            "sides": [["a"], ["b"]],
            "probabilities": league.predict([["a"], ["b"]]),
            **league.forecast([["a"], ["b"]]).to_dict(),
            "new_players": [{"id": "b", "similar": []}],  # (b is new: predicted as such)
        }
        assert data["method"] == "outcomes" and data["draw"] > 0
        answer = client.post("/predict", json={"sides": [["a"], ["b"], ["c"]], "home": 0})
        assert answer.json()["places"][0][0] == pytest.approx(answer.json()["win"][0])


def test_predict_endpoint_forecasts_the_match_its_meta_describes() -> None:
    """``POST /predict`` with ``meta``: the forecast of that match (``tennis`` reads the
    surface), as ``League.forecast(match=...)`` and ``rankcraft predict --meta`` give it."""
    pytest.importorskip("starlette")
    from starlette.testclient import TestClient

    from rankcraft import serve
    from rankcraft.predictions import meta_match

    league = rankcraft.League("tennis")
    for i in range(6):
        nadal_won = i % 2 == 1
        league.record(
            {
                "id": f"g{i}",
                "played_at": f"2024-01-{i + 1:02d}",
                "teams": [["nadal"], ["isner"]],
                "scores": [1, 0] if nadal_won else [0, 1],
                "meta": {"surface": "Clay" if nadal_won else "Grass"},
            }
        )
    sides = [["nadal"], ["isner"]]
    with TestClient(serve.create_app(league, serve.Settings())) as client:
        got = {}
        for surface in ("Clay", "Grass"):
            body = {"sides": sides, "meta": {"surface": surface}}
            got[surface] = client.post("/predict", json=body).json()["probabilities"][0]
            match = meta_match(sides, {"surface": surface}, None, None, league.latest_played())
            want = league.forecast(sides, match=match).probabilities[0]
            assert got[surface] == pytest.approx(want, abs=1e-12)
        assert got["Clay"] > got["Grass"]
        plain = client.post("/predict", json={"sides": sides}).json()["probabilities"][0]
        assert got["Grass"] < plain < got["Clay"]
        for body, field in (
            ({"sides": sides, "meta": [1]}, "meta"),
            ({"sides": sides, "meta": {}, "season": 2024}, "season"),
            ({"sides": sides, "meta": {}, "at": "bogus"}, "'at'"),
        ):
            answer = client.post("/predict", json=body)
            assert answer.status_code == 400 and field in answer.json()["error"]["message"]


def test_predict_endpoint_reads_the_season_from_meta_for_more_sides() -> None:
    """Of three sides (the places integrated in the worker), ``meta``'s season applies
    its reset as ``League.forecast(match=...)`` applies it."""
    pytest.importorskip("starlette")
    from starlette.testclient import TestClient

    from rankcraft import serve
    from rankcraft.predictions import meta_match

    by_season = rankcraft.loads_ruleset(
        'extends = "elo"\nname = "by-season"\n[reset]\nplugin = "regress"\n'
        "[reset.params]\nfraction = 0.5\ntarget = 1500.0\n"
        '[[resets]]\nkind = "season"\nseason_field = "meta.season"\n'
    )
    league = rankcraft.League(by_season)
    for i, (a, b) in enumerate([("a", "b"), ("a", "c"), ("a", "b"), ("c", "b")]):
        league.record(
            {
                "id": f"m{i}",
                "played_at": f"2024-01-{i + 10}",
                "teams": [[a], [b]],
                "scores": [1, 0],
                "meta": {"season": "2023-24"},
            }
        )
    sides = [["a"], ["b"], ["c"]]
    match = meta_match(sides, {"season": "2024-25"}, "2024-10-20", None, None)
    want = league.forecast(sides, match=match).probabilities
    old = league.forecast(sides, at="2024-10-20", season="2023-24").probabilities
    with TestClient(serve.create_app(league, serve.Settings())) as client:
        body = {"sides": sides, "at": "2024-10-20", "meta": {"season": "2024-25"}}
        got = client.post("/predict", json=body).json()["probabilities"]
    assert got == pytest.approx(want, abs=1e-9)
    assert got != pytest.approx(old, abs=1e-3)  # (the reset made a difference)


def test_evaluate_command_with_a_draw_model_in_strict_json(
    plugin_dir: Path, tmp_path: Path
) -> None:
    history = tmp_path / "draws.jsonl"
    history.write_text("".join(json.dumps(m) + "\n" for m in _draw_history()))
    ruleset = tmp_path / "drawy.toml"
    ruleset.write_text(_ruleset_text())
    argv = ["--plugins-dir", str(plugin_dir), "evaluate", str(history), "--ruleset", str(ruleset)]
    argv += ["--ruleset", "elo", "--test-from", "2024-01-13", "--bootstrap", "200"]
    code, out, err = run(*argv, "--json")
    assert code == 0, err
    data = loads_strict(out, what="evaluate --json")
    three = data["results"]["drawy"]["three_way"]
    assert three["n"] == 12 and 0 < three["rps"] < 1 and three["log_loss"] > 0
    assert data["results"]["elo"]["three_way"] is None
    assert data["differences"][0]["ruleset"] == "elo"
    code, out, err = run(*argv)
    assert code == 0, err
    header = out.splitlines()[2]
    assert "3-way log loss" in header and "RPS" in header
    assert f"{three['rps']:.4f}" in out.splitlines()[3]
