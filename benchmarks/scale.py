"""What a large league costs: the reads users run on it, and replays into it.

Measures what users run, as they run it:

* ``build``: write a match file of random one-on-one games among ``--ids`` player ids
  (1,000,000 games among 1,000,000 ids give ~864k players; with ``--every-id`` the first
  500,000 pair every id once, giving exactly 1,000,000), then ``rankcraft replay`` it
  into a new SQLite league (a child process: CPU time and peak RSS from ``wait4``).
  Prints the cost per match. Run once; the database is kept for ``reads``.
* ``reads``: ``rankcraft leaderboard --top 10``, ``player ID``, ``predict A B`` (and a
  page deep in the leaderboard, ``--active-days``, a search and ``match opponents``) on
  that database, each a child process: wall time and CPU time (best of ``--rounds``, and
  the slowest wall time), and the largest peak RSS; then calls in one process, the
  league-wide labels (``standings``), matchmaking, the page's tiers and, for a rank that
  keeps one, its season archive among them. Build with ``--ruleset team-wager`` or
  ``--ruleset skyweaver`` for the percentiles and the archive.
* ``cost``: ``League.record_many`` of ``--games`` more games into each built league
  given (CPU per match, the commit's writes included, then rolled back; ``--commit``:
  committed into a fresh copy, the ``COMMIT`` on the clock), the leagues measured in
  alternating rounds in one process: 10k players against 864k.
* ``ratio``: ``League.record_many`` of the same games in memory (the default memory
  store, which packs matches past its first 10,000, and one that never packs) and into
  SQLite (CPU time, best of ``--rounds``): the store's speed relative to memory.

Nothing here is asserted by the tests (speed is never asserted in unit tests).

    python benchmarks/scale.py build --db /tmp/scale-1m.sqlite --games 1000000 --ids 1000000
    python benchmarks/scale.py build --db /tmp/scale-all.sqlite --every-id
    python benchmarks/scale.py build --db /tmp/scale-10k.sqlite --games 200000 --ids 10000
    python benchmarks/scale.py reads --db /tmp/scale-1m.sqlite
    python benchmarks/scale.py build --db /tmp/wager-1m.sqlite --ruleset team-wager
    python benchmarks/scale.py reads --db /tmp/wager-1m.sqlite
    python benchmarks/scale.py cost --db /tmp/scale-10k.sqlite --db /tmp/scale-1m.sqlite --commit
    python benchmarks/scale.py ratio --games 100000 --ids 10000
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from statistics import median, quantiles
from typing import Any

import attrs

import rankcraft

START = datetime(2020, 1, 1, tzinfo=UTC)


def games(n: int, ids: int, seed: int = 1, every_id: bool = False) -> Iterator[dict[str, Any]]:
    """``n`` one-on-one games in time order, a minute apart, between random players
    ``p0`` ... ``p{ids-1}``; the first player wins three games in five.

    ``every_id``: the first ``ids // 2`` games pair every id once (the ids shuffled, then
    taken two by two), so that every id plays (``n >= ids // 2``; ``ids`` even); the rest
    are random pairs as without it."""
    rng = random.Random(seed)
    order: list[int] = []
    if every_id:
        if ids % 2 or n < ids // 2:
            raise SystemExit(f"--every-id needs an even --ids and --games >= ids/2: {ids}, {n}")
        order = list(range(ids))
        rng.shuffle(order)
    for i in range(n):
        if 2 * i < len(order):
            a, b = order[2 * i], order[2 * i + 1]
        else:
            a = rng.randrange(ids)
            b = rng.randrange(ids - 1)
            b += b >= a
        win = rng.random() < 0.6
        yield {
            "id": f"g{i}",
            "played_at": (START + timedelta(minutes=i)).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "teams": [[f"p{a}"], [f"p{b}"]],
            "scores": [1, 0] if win else [0, 1],
        }


def run(argv: list[str]) -> tuple[float, float, float]:
    """Run ``rankcraft ARGV`` as a child: (wall s, CPU s, peak RSS MB).

    The child may read and write Python's bytecode cache, as an installed rankcraft
    does (``PYTHONDONTWRITEBYTECODE`` is dropped from its environment: compiling every
    module from source again costs about 0.3 s per command on this machine)."""
    command = [str(Path(sys.executable).parent / "rankcraft"), *argv]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    start = time.perf_counter()
    child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode != 0:
        assert child.stderr is not None
        raise SystemExit(f"{' '.join(argv)} failed: {child.stderr.read().decode()}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def build(args: argparse.Namespace) -> None:
    db = Path(args.db)
    if db.exists():
        raise SystemExit(f"{db} exists: remove it to build it again")
    source = db.with_suffix(".jsonl")
    with source.open("w") as handle:
        for game in games(args.games, args.ids, every_id=args.every_id):
            handle.write(json.dumps(game) + "\n")
    wall, cpu, rss = run(["replay", str(source), "--ruleset", args.ruleset, "--db", str(db)])
    with rankcraft.League.open(db, create=False) as league:
        players = len(league)
    print(
        f"replay {args.games:,} games among {args.ids:,} ids -> {players:,} players: "
        f"{cpu:.1f} s CPU, {wall:.1f} s wall, {rss:.0f} MB peak, "
        f"{cpu / args.games * 1e6:.1f} us CPU per match"
    )
    source.unlink()


def reads(args: argparse.Namespace) -> None:
    db = args.db
    with rankcraft.League.open(db, create=False) as league:
        top = [r.id for r in league.leaderboard(2)]
        players = len(league)
        middle = league.leaderboard(1, offset=players // 2)[0].id
        archive = league.rank_class is not None and "seasons" in attrs.fields_dict(
            league.rank_class
        )
    half = str(players // 2)
    commands = {
        "leaderboard --top 10": ["leaderboard", "--top", "10"],
        "leaderboard --top 10 --offset N/2": ["leaderboard", "--top", "10", "--offset", half],
        "leaderboard --top 10 --active-days 7": ["leaderboard", "--top", "10", "--active-days=7"],
        "leaderboard --top 10 --holding 1234": ["leaderboard", "--top", "10", "--holding", "1234"],
        "player ID": ["player", top[0]],
        "predict A B": ["predict", top[0], top[1]],
        "match opponents ID (the middle player)": ["match", "opponents", middle],
    }
    print(f"{db}: {players:,} players")
    print("| command | wall s | CPU s | peak RSS MB | slowest wall s |")
    print("|---|---|---|---|---|")
    for name, argv in {"--help (start-up alone)": ["--help"], **commands}.items():
        db_args = [] if argv == ["--help"] else ["--db", db]
        samples = [run([*argv, *db_args]) for _ in range(args.rounds)]
        best = min(samples, key=lambda r: r[0])
        worst = max(r[0] for r in samples)
        peak = max(r[2] for r in samples)
        print(f"| `{name}` | {best[0]:.2f} | {best[1]:.2f} | {peak:.0f} | {worst:.2f} |")
    calls = {
        "League.open": lambda league: None,
        "+ leaderboard(10)": lambda league: league.leaderboard(10),
        "+ leaderboard(10, offset=N/2)": lambda league: league.leaderboard(10, offset=players // 2),
        "+ player(ID) and history(ID)": lambda league: league.history(top[0]),
        "+ predict([[A], [B]])": lambda league: league.predict([[top[0]], [top[1]]]),
        "+ search('P1234')": lambda league: league.search("P1234"),
        "+ search('zzz') (none: every id read)": lambda league: league.search("zzz"),
        "+ placed(100, holding='1234')": lambda league: league.placed(100, holding="1234"),
        "+ placed(100, holding='1234', active_days=30)": lambda league: league.placed(
            100, holding="1234", active_days=30
        ),
        "+ standings(the top 10's ids)": lambda league: league.standings(
            r.id for r in league.leaderboard(10)
        ),
        "+ standings([the middle player])": lambda league: league.standings([middle]),
        "+ find_opponents(the middle player)": lambda league: league.find_opponents(middle),
        "+ tiers() (the page's /web/meta)": lambda league: league.tiers(),
    }
    if archive:  # (the page's /web/seasons; rankcraft.web needs the serve extra)
        from rankcraft.web import season_archive

        calls["+ the season archive (/web/seasons)"] = season_archive
    print("\nIn one process (the league opened afresh each time), best of rounds:\n")
    print("| call | wall ms | CPU ms |")
    print("|---|---|---|")
    for name, call in calls.items():
        samples = []
        for _ in range(args.rounds):
            wall, cpu = time.perf_counter(), time.process_time()
            with rankcraft.League.open(db, create=False) as league:
                call(league)
            samples.append((time.perf_counter() - wall, time.process_time() - cpu))
        best = min(samples)
        print(f"| `{name}` | {best[0] * 1e3:.1f} | {best[1] * 1e3:.1f} |")


class _Undo(Exception):
    """Raised to roll a measuring batch back."""


def _later(n: int, ids: int, seed: int, tag: str) -> list[dict[str, Any]]:
    """``n`` games among ``ids`` ids, ids tagged and played after anything built."""
    return [
        {**g, "id": f"{tag}{g['id']}", "played_at": g["played_at"].replace("20", "30", 1)}
        for g in games(n, ids, seed=seed)
    ]


def _batch(db: str, later: list[dict[str, Any]], commit: bool) -> tuple[int, float]:
    """(players before, CPU seconds) of one ``record_many`` batch into ``db``: its writes
    flushed on the clock, then rolled back, or with ``commit`` the ``COMMIT`` too."""
    with rankcraft.League.open(db, create=False) as league:
        players = len(league)
        spent = 0.0
        with contextlib.suppress(_Undo), league.batch():
            gc.collect()
            start = time.process_time()
            league.record_many(later)
            league._unit.flush()  # what the commit writes, on the clock
            spent = time.process_time() - start
            if not commit:
                raise _Undo
        if commit:
            spent = time.process_time() - start
        else:
            assert len(league) == players  # (rolled back)
    return players, spent


def _quartiles(values: list[float]) -> tuple[float, float, float]:
    """(lower quartile, median, upper quartile) of ``values``."""
    if len(values) < 2:
        return values[0], values[0], values[0]
    q1, q2, q3 = quantiles(values, n=4)
    return q1, q2, q3


def cost(args: argparse.Namespace) -> None:
    """CPU per match of ``League.record_many`` into each built league (its players' rows
    read from the database, every touched player written), in one process: a batch per
    league rolled back first (Python's and the OS's first-use costs), then ``--rounds``
    rounds, each measuring every league once (in reversed order every other round, so
    that a drift of the machine's speed falls on both). Rolled back after each batch;
    with ``--commit``, into a fresh copy of the database (a new WAL, as ``rankcraft
    replay`` finds a league another command closed: the batch is what replaying a file
    of ``--games`` games into it costs), the ``COMMIT`` on the clock too. Prints each
    league's best and median, the ratio of the bests to the first league's, and the
    round-by-round ratios: their median and quartiles. On this VM a burst of slower CPU
    moves a batch's time by up to a third (a plain loop's time by half), and only ever
    up: the best of many rounds is the steadiest figure, and a round's pair of batches,
    measured seconds apart, shares most bursts."""
    later = _later(args.games, args.ids, 7, "c")
    _ = [_batch(db, _later(args.games, args.ids, 8, "w"), False) for db in args.db]
    samples: dict[str, list[float]] = {db: [] for db in args.db}
    players: dict[str, int] = {}
    for round_ in range(args.rounds):
        for db in args.db if round_ % 2 == 0 else args.db[::-1]:
            with tempfile.TemporaryDirectory(dir=Path(db).parent) as folder:
                target = db
                if args.commit:
                    target = f"{folder}/copy.sqlite"
                    with rankcraft.League.open(db, create=False):  # (its WAL checkpointed)
                        pass
                    shutil.copyfile(db, target)
                players[db], spent = _batch(target, later, args.commit)
            samples[db].append(spent / args.games * 1e6)
    how = "committed into a copy" if args.commit else "rolled back"
    print(f"{args.games:,} more games among {args.ids:,} ids, {how}: us CPU per match")
    first = args.db[0]
    for db in args.db:
        rounds = ", ".join(f"{x:.1f}" for x in samples[db])
        line = (
            f"  {db} ({players[db]:,} players): best {min(samples[db]):.1f}, "
            f"median {median(samples[db]):.1f} ({rounds})"
        )
        if db != first:
            ratios = [b / a for a, b in zip(samples[first], samples[db], strict=True)]
            low, mid, high = _quartiles(ratios)
            line += (
                f"; against the first: {min(samples[db]) / min(samples[first]):.2f}x best "
                f"to best; round by round median {mid:.2f}x, quartiles "
                f"{low:.2f}x-{high:.2f}x, range {min(ratios):.2f}x-{max(ratios):.2f}x"
            )
        print(line)


def ratio(args: argparse.Namespace) -> None:
    history = list(games(args.games, args.ids))

    def timed(make: Any) -> float:
        samples = []
        for _ in range(args.rounds):
            with tempfile.TemporaryDirectory() as folder:
                league = make(folder)
                gc.collect()
                start = time.process_time()
                league.record_many(history)
                samples.append(time.process_time() - start)
                league.close()
        return min(samples)

    from rankcraft.store import MemoryStore

    memory = timed(lambda folder: rankcraft.League(args.ruleset))
    objects = timed(
        lambda folder: rankcraft.League(args.ruleset, store=MemoryStore(pack_after=None))
    )
    sqlite = timed(lambda folder: rankcraft.League.open(f"{folder}/l.sqlite", args.ruleset))
    print(f"record_many, {args.games:,} games among {args.ids:,} ids ({args.ruleset}):")
    for name, seconds in (
        ("memory (default: packs past 10,000)", memory),
        ("memory, never packing", objects),
    ):
        print(f"  {name}: {seconds / args.games * 1e6:.1f} us/match")
    print(
        f"  SQLite {sqlite / args.games * 1e6:.1f} us/match: {memory / sqlite:.2f}x the "
        f"default memory store, {objects / sqlite:.2f}x the one that never packs"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="what", required=True)
    p = sub.add_parser("build")
    p.add_argument("--db", required=True)
    p.add_argument("--games", type=int, default=1_000_000)
    p.add_argument("--ids", type=int, default=1_000_000)
    p.add_argument("--ruleset", default="elo")
    p.add_argument(
        "--every-id",
        action="store_true",
        help="the first ids/2 games pair every id once (a league of exactly --ids players)",
    )
    p = sub.add_parser("reads")
    p.add_argument("--db", required=True)
    p.add_argument("--rounds", type=int, default=3)
    p = sub.add_parser("cost")
    p.add_argument("--db", required=True, action="append", help="a built league (repeat)")
    p.add_argument("--games", type=int, default=20_000)
    p.add_argument("--ids", type=int, default=10_000)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--commit", action="store_true", help="commit into a copy of the database")
    p = sub.add_parser("ratio")
    p.add_argument("--games", type=int, default=100_000)
    p.add_argument("--ids", type=int, default=10_000)
    p.add_argument("--ruleset", default="elo")
    p.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    {"build": build, "reads": reads, "cost": cost, "ratio": ratio}[args.what](args)


if __name__ == "__main__":
    main()
