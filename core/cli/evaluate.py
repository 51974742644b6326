"""The ``evaluate`` command: rulesets scored one step ahead on a history's test part, in
parallel processes when asked, and the text or JSON of their scores.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, TextIO

from ..errors import InputError
from ..io import parse_time
from ..processes import can_fork, default_processes, run_each
from ..ruleset import load_ruleset
from ..terminal import Bar, Steps, count_lines, plural, print_table, progress_for
from .match_files import match_dicts
from .options import Commands, checked_limits
from .output import emit_json, figure, warn_home

if TYPE_CHECKING:
    from ..evaluate import Difference, Evaluation


def _counted(items: Iterable[Any], bar: Callable[[int], None], every: int = 500) -> Iterator[Any]:
    """``items`` as they are, telling ``bar`` the count every ``every`` items."""
    count = 0
    for count, item in enumerate(items, 1):
        if count % every == 0:
            bar(count)
        yield item
    bar(count)


def cmd_evaluate(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from ..comparison import report
    from ..evaluate import differences, evaluate_field, field_warning

    test_from = parse_time(args.test_from, field="--test-from")
    check_bootstrap(args)
    if args.plot:  # (before the replays, not after them)
        from ..plots import require_matplotlib

        require_matplotlib()
    limits = checked_limits(args)
    rulesets, labels = _rulesets_to_evaluate(args.ruleset)
    results: dict[str, Evaluation] = {}
    warnings = []
    if args.baseline_field is not None:
        labels[args.baseline_field] = args.baseline_field
        results[args.baseline_field] = evaluate_field(
            match_dicts(args.matches, args.home_from, limits),
            args.baseline_field,
            test_from=test_from,
        )
        warning = field_warning(results[args.baseline_field], args.baseline_field)
        if warning is not None:
            err.write(f"rankcraft: warning: {warning}\n")
            warnings.append(warning)
    baseline = _baseline(args, labels, args.baseline_field or rulesets[0][0])
    results.update(_evaluate_rulesets(args, rulesets, test_from, limits, err))
    _warn_no_warmup(results, args, err)
    paired = differences(
        results, baseline, samples=args.bootstrap, seed=args.seed, block_days=args.block_days
    )
    if args.plot:
        from ..plots import plot_calibration

        plot_calibration(results, args.plot)
    if args.json:
        document = report(results, baseline, paired, test_from=args.test_from)
        if warnings:
            document["warnings"] = warnings
        emit_json(document, out)
        return 0
    out.write(f"{args.matches}: one step ahead from {args.test_from}\n\n")
    evaluation_tables(results, baseline, paired, out)
    if args.plot:
        out.write(f"\nplot written to {args.plot}\n")
    return 0


def _warn_no_warmup(results: dict[str, Evaluation], args: argparse.Namespace, err: TextIO) -> None:
    """Warn when no match comes before ``--test-from``: nothing warms up, so every
    ruleset rates the test part from new players' ratings."""
    if results and all(e.warmup == 0 and e.matches for e in results.values()):
        err.write(
            f"rankcraft: warning: no match of {args.matches} is before --test-from "
            f"{args.test_from}: nothing warms up, so every rating starts at a new player's "
            "on the test part (set --test-from after the first matches)\n"
        )


def check_bootstrap(args: argparse.Namespace) -> None:
    """Refuse a ``--bootstrap`` or ``--block-days`` out of its range."""
    from ..evaluate import MAX_SAMPLES

    if not 1 <= args.bootstrap <= MAX_SAMPLES:
        raise InputError(
            f"'--bootstrap' must be a whole number in [1, {MAX_SAMPLES}]: {args.bootstrap}"
        )
    if args.block_days < 1:
        raise InputError(f"'--block-days' must be at least 1: {args.block_days}")


def _rulesets_to_evaluate(names: list[str]) -> tuple[list[tuple[str, Any]], dict[str, str]]:
    """The (label, ruleset) of each ``--ruleset``, and what each said -> its label (the
    ruleset's name, or what was said where two rulesets have one name)."""
    rulesets = []
    labels: dict[str, str] = {}  # what --ruleset said -> the label of the result
    for name in names:
        ruleset = load_ruleset(name)
        label = ruleset.name if ruleset.name not in labels.values() else name
        labels.setdefault(name, label)
        rulesets.append((label, ruleset))
    return rulesets, labels


def _baseline(args: argparse.Namespace, labels: dict[str, str], default: str) -> str:
    """The label the others are compared with: ``--baseline``, checked, else ``default``."""
    chosen: str | None = args.baseline
    if chosen is None:
        return default
    if chosen not in labels and chosen not in labels.values():
        raise InputError(
            f"'--baseline' must be one of the rulesets evaluated "
            f"({', '.join(labels.values())}): {chosen!r}"
        )
    return labels.get(chosen, chosen)


def _evaluate_rulesets(
    args: argparse.Namespace,
    rulesets: list[tuple[str, Any]],
    test_from: Any,
    limits: tuple[int, int],
    err: TextIO,
) -> dict[str, Evaluation]:
    """Each ruleset's evaluation by its label: in parallel processes (``--jobs``) where
    the machine can fork, else one after another with the same results."""
    from ..advice import HomeSeen
    from ..evaluate import evaluate_ruleset

    results = {}
    total = count_lines(args.matches)
    jobs = _jobs(args.jobs, len(rulesets))
    if jobs > 1 and can_fork():  # (else one after another, with the same results)
        evaluated = _evaluate_parallel(args, rulesets, test_from, total, jobs, err, limits)
        for (label, ruleset), (result, matches, homes) in zip(rulesets, evaluated, strict=True):
            results[label] = result
            warn_home(ruleset, matches, homes, args.matches, err)
        return results
    for label, ruleset in rulesets:
        seen = HomeSeen(match_dicts(args.matches, args.home_from, limits))
        with progress_for(err, f"evaluating {label}", total) as bar:
            every = 500 if isinstance(bar, Bar) else 1  # (a line exactly at each 10%)
            results[label] = evaluate_ruleset(
                ruleset,
                _counted(seen, bar, every),
                test_from=test_from,
                warmup=match_dicts(args.matches, args.home_from, limits),
            )
        warn_home(ruleset, seen.matches, seen.with_home, args.matches, err)
    return results


def _jobs(jobs: int | None, rulesets: int) -> int:
    """``evaluate --jobs``, checked: the processes the rulesets are replayed in (default:
    one per core), never more than there are rulesets."""
    if jobs is None:
        jobs = default_processes()
    elif jobs < 1:
        raise InputError(f"'--jobs' must be a whole number >= 1: {jobs}")
    return min(jobs, rulesets)


def _evaluate_parallel(
    args: argparse.Namespace,
    rulesets: list[tuple[str, Any]],
    test_from: Any,
    total: int | None,
    jobs: int,
    err: TextIO,
    limits: tuple[int, int],
) -> list[tuple[Evaluation, int, int]]:
    """Each ruleset's evaluation in a forked process of its own, at most ``jobs`` at once
    (:func:`rankcraft.processes.run_each`), with one progress display over them all:
    (the evaluation, the matches read, those that named a home side), in order."""
    from ..advice import HomeSeen
    from ..evaluate import evaluate_ruleset

    def one(index: int, tick: Callable[[int], None]) -> tuple[Evaluation, int, int]:
        seen = HomeSeen(match_dicts(args.matches, args.home_from, limits))
        result = evaluate_ruleset(
            rulesets[index][1],
            _counted(seen, tick, 500),
            test_from=test_from,
            warmup=match_dicts(args.matches, args.home_from, limits),
        )
        return result, seen.matches, seen.with_home

    names = ", ".join(label for label, _ in rulesets)
    what = f"evaluating {names} in {jobs} processes"
    bar: list[Bar | Steps] = []  # (made once every process is forked: a bar has a thread)

    def told(done: Sequence[int], finished: int) -> None:
        if not bar:
            bar.append(progress_for(err, what, None if total is None else total * len(rulesets)))
        bar[0](sum(done))

    try:
        return run_each(one, len(rulesets), processes=jobs, progress=told)
    finally:
        if bar:
            bar[0].done()


def evaluation_tables(
    results: dict[str, Evaluation], baseline: str, differences: list[Difference], out: TextIO
) -> None:
    """The text of ``rankcraft evaluate``: the scores, the differences, the calibration."""
    _score_table(results, out)
    for name, r in results.items():
        if r.draw_fit is not None:
            fit = r.draw_fit
            values = ", ".join(f"{k} {v:.4g}" for k, v in fit.values.items())
            out.write(
                f"\ndraw parameters of {name} fitted on {fit.matches:,} warm-up matches "
                f"({fit.draws:,} draws, {plural(fit.rounds, 'replay')}): {values}\n"
            )
    if differences:
        _difference_table(baseline, differences, out)
    for name, r in results.items():
        out.write(
            f"\ncalibration of {name} (predicted vs observed score of each item's first "
            "side; a draw counts ½):\n"
        )
        print_table(
            [
                [
                    f"{b.low:.1f}-{b.high:.1f}",
                    f"{b.n:,}",
                    figure(b.predicted, 3),
                    figure(b.observed, 3),
                ]
                for b in r.calibration
            ],
            ["bin", "n", "predicted", "observed"],
            out,
        )


def _score_table(results: dict[str, Evaluation], out: TextIO) -> None:
    """The table of each result's scores (with the three-way ones where any has them)."""
    three = any(r.three_way is not None for r in results.values())
    rows = []
    for name, r in results.items():
        row = [
            name,
            f"{r.n:,}",
            f"{r.matches:,}",
            figure(r.log_loss),
            figure(r.brier),
            figure(r.accuracy),
            f"{r.decisive:,}",
            f"{r.draws:,}",
        ]
        if three:
            t = r.three_way
            row += ["-", "-"] if t is None else [figure(t.log_loss), figure(t.rps)]
        rows.append(row)
    headers = ["ruleset", "scored", "matches", "log loss", "Brier", "accuracy", "decisive"]
    headers.append("draws")
    if three:
        headers += ["3-way log loss", "RPS"]
    print_table(rows, headers, out)


def _difference_table(baseline: str, differences: list[Difference], out: TextIO) -> None:
    """The table of the differences from the baseline, with their 95% intervals."""
    first = differences[0]
    out.write(
        f"\nagainst {baseline}, the same items (95% interval: {first.samples:,} bootstrap "
        f"resamples of {first.block_days}-day blocks, seed {first.seed}; negative: "
        "better):\n"
    )
    print_table(
        [
            [
                d.ruleset,
                d.score,
                f"{d.difference:+.4f}",
                f"{d.low:+.4f}",
                f"{d.high:+.4f}",
                f"{d.blocks:,}",
            ]
            for d in differences
        ],
        ["ruleset", "score", "difference", "low", "high", "blocks"],
        out,
    )


def add_evaluate_command(c: Commands) -> None:
    """evaluate."""
    p = c.add("evaluate", cmd_evaluate, "score rulesets one step ahead on a history's test part")
    c.matches(p)
    p.add_argument(
        "--ruleset",
        action="append",
        required=True,
        help="bundled name or TOML file; repeat to compare several",
    )
    p.add_argument(
        "--test-from",
        required=True,
        metavar="DATE",
        help="score matches played on or after this ISO-8601 date or date-time (UTC)",
    )
    p.add_argument("--plot", metavar="FILE.png", help="draw calibration curves")
    p.add_argument(
        "--baseline",
        metavar="RULESET",
        help="compare every other ruleset's scores with this one (default: the "
        "--baseline-field, else the first ruleset)",
    )
    p.add_argument(
        "--baseline-field",
        metavar="PATH",
        help="score a published forecast read from each match as a row named PATH: "
        "P(side 0 wins) (e.g. forecast.p_team0_wins), or three probabilities (a list, or "
        "three paths joined by commas: win, draw, loss); one number is scored as side 0's "
        "expected score, so on a history with draws give the three (warned of otherwise)",
    )
    add_bootstrap_options(p)
    p.add_argument(
        "--jobs",
        type=int,
        metavar="N",
        help="replay the rulesets in up to N processes at once (default: one per core; "
        "1: one after another in this process)",
    )
    c.limits(p)
    c.home_from(p)


def add_bootstrap_options(p: argparse.ArgumentParser) -> None:
    """The options of the paired interval (``--bootstrap``, ``--block-days``,
    ``--seed``), which ``evaluate`` and ``compare-live`` share."""
    p.add_argument(
        "--bootstrap",
        type=int,
        default=2000,
        metavar="N",
        help="bootstrap resamples for the 95%% interval of a difference (2000; <= 100000)",
    )
    p.add_argument(
        "--block-days",
        type=int,
        default=7,
        metavar="N",
        help="days per bootstrap block (default 7)",
    )
    p.add_argument("--seed", type=int, default=0, help="the bootstrap's seed (default 0)")
