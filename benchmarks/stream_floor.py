"""How fast a checked 1-v-1 Elo stream can be in pure Python: the floor under issue 38.

The workload of ``compare.py`` (10,000 players, random 1-v-1 matches, seeded), decoded
once by ``rankcraft.parse_match``, rated in one process, interleaved, by:

* ``plain loop``: Elo written out over ratings indexed by player number (the floor of
  the arithmetic);
* ``hooks, player numbers``: the bundled ``elo`` hooks (expectation, two updates) over
  states indexed by player number, matches pre-reduced to ``(a, b, score)`` tuples, no
  check (``../shared/bench/lean_loop.py``'s loop);
* ``hooks, decoded matches``: the same hooks over the decoded ``Match`` objects, players
  by id (what a stream is handed), still no check;
* ``hooks, decoded, checked``: the same, with what a league may not drop: a match earlier
  than a player's last refused, the expectation checked (two probabilities summing to
  one), each update's answer checked (a tuple of the skill's length, finite), matches
  and times counted, each forecast kept;
* ``rankcraft Rater``: the streaming entry point (``rankcraft.Rater(...).rate``), forecasts
  asked for;
* ``parse_match of each dict``: the validation alone of the match dicts that
  ``League.record_many`` is handed (what it adds to a checked loop before any history);
* ``elote EloCompetitor`` where installed (``pip install elote``).

Figures: µs a match, the plain loop's time as a multiple of each row's, and elote's time
as a multiple of each row's (the issue's ">= 2x elote" reads that column), medians of
``--rounds`` rounds of CPU time. Nothing here is asserted by the tests.

    python benchmarks/stream_floor.py [--matches 100000] [--rounds 5]
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import statistics
import time
from collections.abc import Callable
from typing import Any

from compare import elote_run, workload

import rankcraft
from rankcraft.plugins import elo


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--matches", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    data = workload(10_000, args.matches)
    decoded = [rankcraft.parse_match(m) for m in data]
    rows: dict[str, Callable[[], Any]] = {
        "plain loop": plain(data),
        "hooks, player numbers": numbered(data),
        "hooks, decoded matches": lambda: by_id(decoded, checked=False),
        "hooks, decoded, checked": lambda: by_id(decoded, checked=True),
        "rankcraft Rater": lambda: rankcraft.Rater("elo").rate(decoded, forecasts=True),
        "parse_match of each dict": lambda: [rankcraft.parse_match(m) for m in data],
    }
    if importlib.util.find_spec("elote") is not None:
        peer = elote_run("elo")
        rows["elote EloCompetitor"] = lambda: peer(data)
    samples: dict[str, list[float]] = {name: [] for name in rows}
    for _ in range(args.rounds):
        for name, run in rows.items():
            gc.collect()
            start = time.process_time()
            run()
            samples[name].append(time.process_time() - start)
    seconds = {name: statistics.median(s) for name, s in samples.items()}
    peer_time = seconds.get("elote EloCompetitor")
    print(f"{args.matches:,} matches, median of {args.rounds} rounds of CPU time")
    print(f"| {'loop':<26} | {'µs a match':>10} | {'x plain loop':>12} | {'x elote':>8} |")
    print(f"|{'-' * 28}|{'-' * 12}|{'-' * 14}|{'-' * 10}|")
    for name, spent in seconds.items():
        versus = f"{peer_time / spent:.2f}" if peer_time else "-"
        print(
            f"| {name:<26} | {spent / args.matches * 1e6:>10.2f} | "
            f"{seconds['plain loop'] / spent:>12.3f} | {versus:>8} |"
        )


def _score(match: dict[str, Any]) -> float:
    first, second = match["scores"]
    return 1.0 if first > second else 0.0 if first < second else 0.5


def plain(data: list[dict[str, Any]]) -> Callable[[], list[float]]:
    numbers: dict[str, int] = {}
    games = [(_number(numbers, m, 0), _number(numbers, m, 1), _score(m)) for m in data]

    def run() -> list[float]:
        ratings = [1500.0] * len(numbers)
        for a, b, s in games:
            ra, rb = ratings[a], ratings[b]
            change = 32.0 * (s - 1.0 / (1.0 + 10.0 ** ((rb - ra) / 400.0)))
            ratings[a], ratings[b] = ra + change, rb - change
        return ratings

    return run


def _number(numbers: dict[str, int], match: dict[str, Any], side: int) -> int:
    return numbers.setdefault(match["teams"][side][0], len(numbers))


def numbered(data: list[dict[str, Any]]) -> Callable[[], list[Any]]:
    numbers: dict[str, int] = {}
    games = [(_number(numbers, m, 0), _number(numbers, m, 1), _score(m)) for m in data]
    params = rankcraft.League("elo").ruleset.update.params
    expect, update = elo.rankcraft_expectation, elo.rankcraft_update

    def run() -> list[Any]:
        states = [(1500.0, 1500.0)] * len(numbers)
        for a, b, s in games:
            sa, sb = states[a], states[b]
            expect(params, (sa, sb), None, None)
            states[a] = update(params, sa, ((sb, s, 1.0),), 0, 0, None)
            states[b] = update(params, sb, ((sa, 1.0 - s, 1.0),), 0, 1, None)
        return states

    return run


def by_id(decoded: list[Any], *, checked: bool) -> dict[str, list[Any]]:
    """The hooks over decoded matches, each player's ``[state, matches, last]`` by id."""
    params = rankcraft.League("elo").ruleset.update.params
    expect, update = elo.rankcraft_expectation, elo.rankcraft_update
    rows: dict[str, list[Any]] = {}
    kept: list[Any] = []
    for match in decoded:
        (first,), (second,) = match.teams
        row_a = rows.get(first) or rows.setdefault(first, [(1500.0, 1500.0), 0, None])
        row_b = rows.get(second) or rows.setdefault(second, [(1500.0, 1500.0), 0, None])
        at, a, b = match.played_at, row_a[0], row_b[0]
        places = match.places
        score = 1.0 if places[0] < places[1] else 0.0 if places[0] > places[1] else 0.5
        said = expect(params, (a, b), match.home, match)
        after_a = update(params, a, ((b, score, match.weight),), row_a[1], 0, match)
        after_b = update(params, b, ((a, 1.0 - score, match.weight),), row_b[1], 1, match)
        if checked:
            _check(at, row_a[2], row_b[2], said, after_a, after_b)
            row_a[1], row_a[2], row_b[1], row_b[2] = row_a[1] + 1, at, row_b[1] + 1, at
            kept.append(tuple(said))
        row_a[0], row_b[0] = after_a, after_b
    return rows


def _check(at: Any, last_a: Any, last_b: Any, said: Any, *answers: Any) -> None:
    if (last_a is not None and at < last_a) or (last_b is not None and at < last_b):
        raise ValueError("late match")
    first, second = said
    if not (0.0 <= first <= 1.0 and 0.0 <= second <= 1.0 and abs(first + second - 1.0) <= 1e-9):
        raise ValueError("not two probabilities")
    for answer in answers:
        if type(answer) is not tuple or len(answer) != 2 or sum(answer) - sum(answer) != 0.0:
            raise ValueError("not a finite state")


if __name__ == "__main__":
    main()
