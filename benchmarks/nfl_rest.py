"""The search behind the bundled ``nfl`` ruleset's rest edge, on the warm-up part only.

Starts from the previous bundled ``nfl`` ruleset (``PREVIOUS``) and searches eight values
with Optuna's TPE (seed 0, one trial at a time, the start point enqueued first) on the
validation slice ``rankcraft tune --validation 0.4`` scores: the last 40% of the games
before the file's ``test_from`` (1988-2010). The replay stops before ``test_from``: the
test seasons are never read here. Then each new value is put back to its previous value
in turn (ablations), and the paired difference of the best point against ``PREVIOUS`` on
the validation slice is printed with its 95% block-bootstrap interval
(``evaluate.compare``: weeks, 2,000 resamples, seed 0).

    python benchmarks/nfl_rest.py [--data DIR] [--trials 200]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import optuna

import rankcraft
from rankcraft.evaluate import Evaluation, compare, evaluate, scratch_league, with_home
from rankcraft.io import read_match_dicts
from rankcraft.tune import ParamRange, apply, parse_param

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
FILE = "nfl_538_elo_1920_2021.jsonl.gz"
PREVIOUS = """name = "nfl"
[update]
plugin = "elo"
[update.params]
initial_rating = 1505.0
k_factor = 19.57
home_advantage = 58.67
margin = "power"
margin_form = { offset = 0.638, power = 0.6539, base = 2.2, lead = 0.001427 }
scale = 395.4
home_drift = 0.0208
home_drift_year = 2000.0
context_field = "playoff"
[[update.params.context_rules]]
contains = "True"
gap_scale = 1.159
[team]
plugin = "mean"
[reset]
plugin = "regress"
[reset.params]
fraction = 0.528
target = 1505.0
[[resets]]
kind = "season"
every_days = 365.2425
start = "1920-05-01"
"""
"""The bundled ``nfl`` ruleset before the rest edge (tuned on the same slice)."""
BOX = {
    "update.k_factor": (12.0, 30.0, 19.57),
    "update.home_advantage": (40.0, 75.0, 58.67),
    "reset.fraction": (0.3, 0.7, 0.528),
    "update.rest_per_day": (0.0, 8.0, 4.0),
    "update.rest_cap_days": (7.0, 28.0, 14.0),
    "update.season_k_boost": (0.7, 1.6, 1.0),
    "update.home_drift": (-0.5, 0.5, 0.0208),
    "update.context_rules.0.k_scale": (0.5, 2.0, 1.0),
}
"""Searched: name -> (low, high, start). The start point is ``PREVIOUS`` with a rest
edge of 4 points a day up to 14 days (the best single value of a first sweep)."""
ABLATIONS = {
    "update.season_k_boost": 1.0,
    "update.context_rules.0.k_scale": 1.0,
    "update.home_drift": 0.0208,
    "update.rest_per_day": 0.0,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--trials", type=int, default=200)
    args = parser.parse_args()
    test_from = json.loads((args.data / "splits.json").read_text())["files"][FILE]["test_from"]
    warm = [
        d
        for d in with_home((d for _, d in read_match_dicts(args.data / FILE)), HOME)
        if d["played_at"] < test_from
    ]
    validation_from = warm[min(int(len(warm) * 0.6), len(warm) - 1)]["played_at"]
    base = rankcraft.loads_ruleset(PREVIOUS)
    ranges: dict[str, ParamRange] = {
        name: parse_param(f"{name}={low}:{high}", base) for name, (low, high, _) in BOX.items()
    }

    def score(values: dict[str, float]) -> Evaluation:
        ruleset = apply(base, [ranges[n] for n in values], list(values.values()))
        return evaluate(scratch_league(ruleset), warm, test_from=validation_from, stop_at=test_from)

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(sampler=optuna.samplers.TPESampler(seed=0))
    study.enqueue_trial({name: start for name, (_, _, start) in BOX.items()})

    def objective(trial: Any) -> float:
        values = {
            name: trial.suggest_float(name, low, high) for name, (low, high, _) in BOX.items()
        }
        return score(values).log_loss

    study.optimize(objective, n_trials=args.trials)
    best = {name: float(v) for name, v in study.best_params.items()}
    previous = score({})
    found = score(best)
    d = compare(previous, found, names=("best", "previous nfl"))
    print(f"validation from {validation_from}: {found.n:,} games")
    print(
        f"previous nfl {previous.log_loss:.5f}; best of {args.trials} trials {found.log_loss:.5f}"
    )
    print(f"best - previous {d.log_loss:+.5f} [{d.low:+.5f}, {d.high:+.5f}]")
    print("best:", {name: round(v, 4) for name, v in best.items()})
    for name, value in ABLATIONS.items():
        changed = score({**best, name: value}).log_loss
        print(f"with {name} = {value}: {changed:.5f} ({changed - found.log_loss:+.5f})")


HOME = "meta.home_team_index"

if __name__ == "__main__":
    main()
