"""The ``tune`` command: a search of ruleset parameters on the warm-up part, the tuned
ruleset written, and the text or JSON (``tune --json``) of its scores.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TextIO

from .._files import write_atomically
from ..evaluate import SCORES
from ..extras import install_hint
from ..ruleset import load_ruleset
from ..terminal import Bar, plural, print_table
from .match_files import match_dicts
from .options import Commands, check_count, checked_limits
from .output import emit_json, figure, warn_home

if TYPE_CHECKING:
    from ..ruleset import Ruleset
    from ..tune import ParamRange, Trial


def cmd_tune(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from ..tune import parse_param, tune, tuned_toml

    check_count("trials", args.trials)
    check_count("jobs", args.jobs)
    ruleset = load_ruleset(args.ruleset)
    params = [parse_param(text, ruleset) for text in args.param]
    _read_first(args, ruleset, err)
    method = _method(args.method, err)
    bars: list[Bar] = []  # (made at the first trial: a bar runs a thread, and tune forks)
    result = tune(
        args.matches,
        ruleset,
        params,
        test_from=args.test_from,
        trials=args.trials,
        seed=args.seed,
        validation=args.validation,
        jobs=args.jobs,
        home_from=args.home_from,
        progress=_progress(err, method, params, bars),
        method=method,
        storage=args.storage,
        study_name=args.study,
        score=args.score,
    )
    for bar in bars:
        bar.done()
    write_atomically(args.out, tuned_toml(result, ruleset, args.ruleset, args.out))
    document = result.to_dict()
    chosen = document["chosen"]
    if args.json:
        emit_json({**document, "out": args.out}, out)
        return 0
    _tune_text(result, ruleset.name, args, chosen, out)
    return 0


def _read_first(args: argparse.Namespace, ruleset: Ruleset, err: TextIO) -> None:
    """The whole file read once first: a match past the limits is refused before any
    trial, and a ruleset with a home advantage is warned of a file naming no home side."""
    from ..advice import HomeSeen

    seen = HomeSeen(match_dicts(args.matches, args.home_from, checked_limits(args)))
    for _ in seen:
        pass
    warn_home(ruleset, seen.matches, seen.with_home, args.matches, err)


def _method(method: str | None, err: TextIO) -> str:
    """``--method``, else Optuna where it is installed (saying so where it is not)."""
    from ..tune import has_optuna

    chosen = method or ("optuna" if has_optuna() else "random")
    if method is None and chosen == "random":
        err.write(
            "rankcraft: Optuna is not installed: tuning by the seeded random search "
            f"({install_hint('tune')} for Optuna's TPE with pruning)\n"
        )
    return chosen


TRIAL_LINES = 20
"""Off a terminal, ``tune`` writes a line per trial up to this many trials; with more,
a line at each tenth of them."""


def _progress(
    err: TextIO, method: str, params: list[ParamRange], bars: list[Bar]
) -> Callable[[int, int, float, Trial], None]:
    """What ``tune`` tells of its trials: a bar on a terminal (made at the first trial,
    into ``bars``), else a line with the trial's values and score for each trial of up to
    :data:`TRIAL_LINES`, and for more at each tenth of them (the lines scale with the
    work: 24 trials or 2,000 give at most 20 lines)."""

    def progress(done: int, total: int, best: float, trial: Trial) -> None:
        if not bars:
            bars.append(Bar(err, f"tuning ({method})", total))
        bar = bars[0]
        if bar.enabled:
            bar(done)
            if done >= total:  # (its thread ends: the chosen ruleset's scores may fork)
                bar.done()
            return
        if total > TRIAL_LINES and done * 10 // total == (done - 1) * 10 // total:
            return
        values = ", ".join(
            f"{p.name}={_param_text(v, p.integer)}"
            for p, v in zip(params, trial.values, strict=True)
        )
        err.write(f"trial {done}/{total}: {values}: {_trial_score(trial, best)}\n")
        err.flush()

    return progress


def _trial_score(trial: Trial, best: float) -> str:
    """A trial's score on its progress line, beside the best full score so far: a pruned
    trial's is partial (over the first matches of the validation slice, where it was
    stopped), so it says so rather than read as better than the best."""
    if not trial.pruned:
        return f"scored {trial.value:.5f} (best {best:.5f})"
    where = ""
    if trial.validation_matches:
        where = f" after {trial.scored:,} of {trial.validation_matches:,} validation matches"
    return f"pruned: partial score {trial.value:.5f}{where} (best full {best:.5f})"


def _tune_text(
    result: Any, name: str, args: argparse.Namespace, chosen: dict[str, Any], out: TextIO
) -> None:
    """The text of ``rankcraft tune``: the search, the choice, every score of the start
    and the tuned ruleset on the validation slice and the test part (the start's alone,
    and what would help, when no trial beat it)."""
    pruned = sum(1 for t in result.trials if t.pruned)
    how = "Optuna's TPE" if result.method == "optuna" else "the seeded random search"
    search = (
        f"by {result.score} on matches before {args.test_from} ({how}, "
        f"{plural(len(result.trials), 'trial')} run{f', {pruned:,} pruned' if pruned else ''}; "
        f"validation from {result.validation_from})"
    )
    if result.kept_start:
        out.write(f"no trial beat {name!r} {search}: the start is kept:\n")
    else:
        out.write(f"tuned {name!r} {search}:\n")
    for name, value in chosen.items():
        out.write(f"  {name} = {_param_text(value, isinstance(value, int))}\n")
    assert result.start_validation is not None and result.start_test is not None
    assert result.validation is not None
    parts = [("start, validation", result.start_validation), ("start, test", result.start_test)]
    if not result.kept_start:
        parts[1:1] = [("tuned, validation", result.validation)]
        parts.append(("tuned, test", result.test))
    rows = [[label, *(figure(e.figure(score)) for score in SCORES)] for label, e in parts]
    print_table(rows, ["ruleset, part", *SCORES], out)
    if result.worse_on_test:
        out.write(
            f"warning: the tuned ruleset scores worse than the start on the test part "
            f"({result.score}): the validation slice chose on noise, or the test part "
            "differs\n"
        )
    if result.kept_start:
        out.write(
            f"what may help: more trials (--trials, {args.trials} now), other ranges or other "
            "parameters (--param), or a longer validation slice (--validation, "
            f"{args.validation:g} now)\n"
            f"the start written to {args.out} (as {result.ruleset.name!r})\n"
        )
    else:
        out.write(f"written to {args.out}\n")


def _param_text(value: float, integer: bool) -> str:
    return str(round(value)) if integer else f"{value:.6g}"


def add_tune_command(c: Commands) -> None:
    """tune."""
    p = c.add("tune", cmd_tune, "search ruleset parameters on the warm-up part")
    c.matches(p)
    p.add_argument("--ruleset", required=True, help="bundled name or TOML file to start from")
    p.add_argument(
        "--test-from",
        required=True,
        metavar="DATE",
        help="the test part starts here; tuning only sees earlier matches",
    )
    p.add_argument(
        "--param",
        action="append",
        required=True,
        metavar="NAME=LOW:HIGH",
        help="a parameter and its range, e.g. update.params.k_factor=10:40",
    )
    p.add_argument("--out", required=True, metavar="FILE.toml", help="the tuned ruleset")
    p.add_argument(
        "--trials",
        type=int,
        default=24,
        help="trials to run (default 24; the random search then adds a finer round of half "
        "as many)",
    )
    p.add_argument(
        "--score",
        choices=SCORES,
        default="log-loss",
        help="the validation score that chooses (default log-loss, binary with a draw "
        "counting ½; three-way: log loss over win/draw/loss; rps; brier)",
    )
    p.add_argument("--seed", type=int, default=0, help="search seed (default 0)")
    p.add_argument(
        "--validation",
        type=float,
        default=0.2,
        help="share of warm-up matches, the latest, scored (default 0.2)",
    )
    p.add_argument("--jobs", type=int, default=2, help="worker processes (default 2)")
    p.add_argument(
        "--method",
        choices=("optuna", "random"),
        default=None,
        help="Optuna's seeded TPE with pruning (default when installed: rankcraft[tune]) "
        "or the seeded random search",
    )
    p.add_argument(
        "--storage",
        metavar="URL",
        help="Optuna storage shared by several processes or machines "
        "(sqlite:///study.db, postgresql://user@host/db)",
    )
    p.add_argument(
        "--study", metavar="NAME", help="the study's name in --storage (default: the ruleset's)"
    )
    c.limits(p)
    c.home_from(p)
