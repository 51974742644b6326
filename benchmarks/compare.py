"""Replay throughput: rankcraft against plain-Python loops and the PyPI rating libraries.

One deterministic workload (10,000 players with hidden skills, 200,000 random 1-v-1
matches with logistic outcomes, seeded) replayed in one process, in turn, by:

* a plain-Python loop per system (Elo, Glicko-1, Glicko-2 with INVERSUS's bounds): the
  floor of its family;
* rankcraft's League in memory and into SQLite with the ``elo``, ``glicko1`` and
  ``inversus`` rulesets, and with two rulesets that do exactly the plain loops' work:
  ``glicko1-no-decay`` (no idle-time growth of RD, no RD floor) and ``glicko2-bounded``
  (INVERSUS's bounds without its Rank Points or idle-time decay);
* the PyPI libraries users would pick instead, where installed: elote (Elo, Glicko-1,
  Glicko-2), glicko2, openskill and trueskill. They are never rankcraft dependencies:
  ``pip install elote glicko2 openskill trueskill`` to include them.

Figures: matches per second and the ratio to the plain loop of the same family, median of
``--rounds`` runs of CPU time (``time.process_time``); each round runs every implementation
of the family once, in turn. ``--matches`` shrinks the workload
for a quick look. Nothing here is asserted by the tests.

    python benchmarks/compare.py [--matches 200000] [--players 10000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import math
import os
import platform
import random
import statistics
import tempfile
import time
from collections.abc import Callable
from typing import Any

import rankcraft

Q = math.log(10) / 400
SCALE = 400 / math.log(10)


def workload(players: int, matches: int, seed: int = 2026) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    skill = [rng.gauss(0, 1.2) for _ in range(players)]
    out = []
    for i in range(matches):
        a, b = rng.sample(range(players), 2)
        won = rng.random() < 1 / (1 + math.exp(skill[b] - skill[a]))
        out.append(
            {
                "id": f"m{i}",
                "played_at": f"2024-{1 + i * 12 // matches:02d}-01",
                "teams": [[f"p{a}"], [f"p{b}"]],
                "scores": [1, 0] if won else [0, 1],
            }
        )
    return out


def plain_elo(matches: list[dict[str, Any]]) -> None:
    ratings: dict[str, float] = {}
    for m in matches:
        (a,), (b,) = m["teams"]
        s = 1.0 if m["scores"][0] > m["scores"][1] else 0.0
        ra, rb = ratings.get(a, 1500.0), ratings.get(b, 1500.0)
        d = 32.0 * (s - 1.0 / (1.0 + 10.0 ** ((rb - ra) / 400.0)))
        ratings[a], ratings[b] = ra + d, rb - d


def _g1(rd: float) -> float:
    return 1.0 / math.sqrt(1.0 + 3.0 * Q * Q * rd * rd / (math.pi * math.pi))


def plain_glicko1(matches: list[dict[str, Any]]) -> None:
    state: dict[str, tuple[float, float]] = {}
    for m in matches:
        (a,), (b,) = m["teams"]
        s = 1.0 if m["scores"][0] > m["scores"][1] else 0.0
        ra, da = state.get(a, (1500.0, 350.0))
        rb, db = state.get(b, (1500.0, 350.0))
        new = []
        for r, d, ro, do, score in ((ra, da, rb, db, s), (rb, db, ra, da, 1 - s)):
            g = _g1(do)
            e = 1.0 / (1.0 + 10.0 ** (-g * (r - ro) / 400.0))
            inv_d2 = Q * Q * g * g * e * (1 - e)
            precision = 1.0 / (d * d) + inv_d2
            new.append((r + Q / precision * g * (score - e), math.sqrt(1.0 / precision)))
        state[a], state[b] = new


def plain_glicko2(matches: list[dict[str, Any]]) -> None:
    from rankcraft.plugins.glicko2 import rate

    def bounded(mu: float, phi: float, sigma: float) -> tuple[float, float, float]:
        return (
            min(max(mu, -6.045), 6.045),
            min(max(phi, 0.175), 2.015),
            min(max(sigma, 0.04), 0.08),
        )

    state: dict[str, tuple[float, float, float]] = {}
    for m in matches:
        (a,), (b,) = m["teams"]
        s = 1.0 if m["scores"][0] > m["scores"][1] else 0.0
        pa = state.get(a, (0.0, 2.015, 0.06))
        pb = state.get(b, (0.0, 2.015, 0.06))
        state[a] = bounded(*rate(pa[0], pa[1], pa[2], 0.5, [(pb[0], pb[1], s, 1.0)]))
        state[b] = bounded(*rate(pb[0], pb[1], pb[2], 0.5, [(pa[0], pa[1], 1 - s, 1.0)]))


# Glicko-2 with INVERSUS's bounds alone (no Rank Points, no idle-time decay), each match
# its own rating period: the ratings equal plain_glicko2's, and the work is the glicko2
# package's plus the bounds.
BOUNDED_GLICKO2 = """
name = "glicko2-bounded"
[period]
mode = "match"
[update]
plugin = "glicko2"
[update.params]
tau = 0.5
initial_phi = 2.015
bounded = true
rating_bounds = [-6.045, 6.045]
deviation_bounds = [0.175, 2.015]
volatility_bounds = [0.04, 0.08]
[decay]
plugin = "no-decay"
"""


# Glicko-1 without the glicko1 ruleset's idle-time growth of RD and its floor of 25: the
# plain loop's work (ratings equal plain_glicko1's within 1e-12).
PLAIN_GLICKO1 = """
name = "glicko1-no-decay"
[period]
mode = "match"
[update]
plugin = "glicko1"
[update.params]
initial_rating = 1500.0
initial_deviation = 350.0
[decay]
plugin = "no-decay"
"""

# Two third-party plugins written with the documented hooks alone (docs/examples/plugins):
# an Elo that does the bundled elo's arithmetic, and the streak system of docs/plugins.md.
HOOKS_ELO = 'name = "hooks-elo"\n[update]\nplugin = "hooks_elo"\n'
STREAK = 'name = "streak"\n[update]\nplugin = "streak"\n'
EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "docs", "examples", "plugins")

LIKE_FOR_LIKE = {
    "glicko2-bounded": BOUNDED_GLICKO2,
    "glicko1-no-decay": PLAIN_GLICKO1,
    "hooks-elo": HOOKS_ELO,
    "streak": STREAK,
}


def league(name: str, sqlite: bool) -> Callable[[list[dict[str, Any]]], None]:
    ruleset = _loaded(name)

    def run(matches: list[dict[str, Any]]) -> None:
        if sqlite:
            with tempfile.TemporaryDirectory() as folder:
                lg = rankcraft.League.open(os.path.join(folder, "b.sqlite"), ruleset)
                lg.record_many(matches)
                lg.close()
        else:
            rankcraft.League(ruleset).record_many(matches)

    return run


def _loaded(name: str) -> Any:
    """A bundled ruleset's name, or one of LIKE_FOR_LIKE loaded (with the example plugins)."""
    if name not in LIKE_FOR_LIKE:
        return name
    from rankcraft.ruleset import loads_ruleset

    plugins = None
    if name in ("hooks-elo", "streak"):
        plugins = rankcraft.Plugins(rankcraft.get_plugin_manager(plugin_dirs=[EXAMPLES]))
    return loads_ruleset(LIKE_FOR_LIKE[name], plugins=plugins)


PARSED: list[Any] = []
"""The workload validated once (rankcraft.parse_match), before any clock runs: what the
streaming rows rate (decoded matches, as a peer library is handed them)."""


def stream(name: str) -> Callable[[list[dict[str, Any]]], None]:
    """rankcraft.Rater, the streaming entry point, over the decoded matches (no history
    kept, each match's forecast asked for, as a peer gives it)."""
    ruleset = _loaded(name)

    def run(matches: list[dict[str, Any]]) -> None:
        rankcraft.Rater(ruleset).rate(PARSED, forecasts=True)

    return run


def both(name: str, label: str | None = None) -> list[tuple[str, Callable[..., None]]]:
    """The rows of a rankcraft ruleset: streamed, in memory, then into SQLite."""
    label = label or name
    return [
        (f"rankcraft {label}, stream", stream(name)),
        (f"rankcraft {label}, memory", league(name, False)),
        (f"rankcraft {label}, SQLite", league(name, True)),
    ]


def elote_run(kind: str) -> Callable[[list[dict[str, Any]]], None]:
    def run(matches: list[dict[str, Any]]) -> None:
        import elote

        cls = {
            "elo": elote.EloCompetitor,
            "glicko1": elote.GlickoCompetitor,
            "glicko2": elote.Glicko2Competitor,
        }[kind]
        players: dict[str, Any] = {}
        for m in matches:
            (a,), (b,) = m["teams"]
            pa = players.get(a) or players.setdefault(a, cls())
            pb = players.get(b) or players.setdefault(b, cls())
            if m["scores"][0] > m["scores"][1]:
                pa.beat(pb)
            else:
                pb.beat(pa)

    return run


def glicko2_run(matches: list[dict[str, Any]]) -> None:
    import glicko2

    players: dict[str, Any] = {}
    for m in matches:
        (a,), (b,) = m["teams"]
        pa = players.get(a) or players.setdefault(a, glicko2.Player())
        pb = players.get(b) or players.setdefault(b, glicko2.Player())
        s = 1 if m["scores"][0] > m["scores"][1] else 0
        ra, da, rb, db = pa.rating, pa.rd, pb.rating, pb.rd
        pa.update_player([rb], [db], [s])
        pb.update_player([ra], [da], [1 - s])


def openskill_run(matches: list[dict[str, Any]]) -> None:
    from openskill.models import PlackettLuce

    model = PlackettLuce()
    players: dict[str, Any] = {}
    for m in matches:
        (a,), (b,) = m["teams"]
        pa = players.get(a) or players.setdefault(a, model.rating())
        pb = players.get(b) or players.setdefault(b, model.rating())
        ranks = [0, 1] if m["scores"][0] > m["scores"][1] else [1, 0]
        [[players[a]], [players[b]]] = model.rate([[pa], [pb]], ranks=ranks)


def trueskill_run(matches: list[dict[str, Any]]) -> None:
    import trueskill

    env = trueskill.TrueSkill(draw_probability=0.0)
    players: dict[str, Any] = {}
    for m in matches:
        (a,), (b,) = m["teams"]
        pa = players.get(a) or players.setdefault(a, env.create_rating())
        pb = players.get(b) or players.setdefault(b, env.create_rating())
        if m["scores"][0] > m["scores"][1]:
            players[a], players[b] = env.rate_1vs1(pa, pb)
        else:
            players[b], players[a] = env.rate_1vs1(pb, pa)


def timed(
    fn: Callable[[list[dict[str, Any]]], None], data: list[dict[str, Any]], rounds: int
) -> float:
    samples = []
    for _ in range(rounds):
        # start from a collected heap: the garbage of the run before (a league's object
        # graph has cycles) must not be collected on the next run's clock
        gc.collect()
        start = time.process_time()
        fn(data)
        samples.append(time.process_time() - start)
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--matches", type=int, default=200_000)
    parser.add_argument("--players", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--only", default="", help="families to run, e.g. Elo,Glicko-1")
    args = parser.parse_args()
    data = workload(args.players, args.matches)
    PARSED[:] = [rankcraft.parse_match(m) for m in data]
    have = {
        name: importlib.util.find_spec(name) is not None
        for name in ("elote", "glicko2", "openskill", "trueskill")
    }
    families: dict[str, list[tuple[str, Callable[[list[dict[str, Any]]], None]]]] = {
        "Elo": [
            ("plain loop", plain_elo),
            *both("elo"),
            *both("hooks-elo", "hooks-only Elo (plugin folder)"),
            *both("streak", "hooks-only streak (plugin folder)"),
        ],
        "Glicko-1": [
            ("plain loop", plain_glicko1),
            *both("glicko1"),
            *both("glicko1-no-decay", "glicko1 no decay"),
        ],
        "Glicko-2": [
            ("plain loop", plain_glicko2),
            *both("inversus"),
            *both("glicko2-bounded", "glicko2 bounded"),
            ("rankcraft glicko2, stream", stream("glicko2")),
        ],
        "Bayesian (no plain loop)": [*both("openskill"), *both("trueskill")],
    }
    if have["elote"]:
        families["Elo"].append(("elote EloCompetitor", elote_run("elo")))
        families["Glicko-1"].append(("elote GlickoCompetitor", elote_run("glicko1")))
        families["Glicko-2"].append(("elote Glicko2Competitor", elote_run("glicko2")))
    if have["glicko2"]:
        families["Glicko-2"].append(("glicko2 (PyPI)", glicko2_run))
    if have["openskill"]:
        families["Bayesian (no plain loop)"].append(("openskill PlackettLuce", openskill_run))
    if have["trueskill"]:
        families["Bayesian (no plain loop)"].append(("trueskill rate_1vs1", trueskill_run))
    print(
        f"{args.matches:,} matches among {args.players:,} players; median of {args.rounds} "
        f"rounds of CPU time; Python {platform.python_version()} on {platform.machine()} "
        f"({os.cpu_count()} cores); rankcraft {rankcraft.__version__}"
    )
    print()
    print(f"| {'family':<24} | {'implementation':<44} | {'matches/s':>10} | {'x plain loop':>12} |")
    print(f"|{'-' * 26}|{'-' * 46}|{'-' * 12}|{'-' * 14}|")
    for family, entries in families.items():
        if args.only and family not in args.only.split(","):
            continue
        # rounds interleave the family's implementations, so that a machine that slows
        # down or speeds up over minutes moves every figure of the family alike
        samples: dict[str, list[float]] = {name: [] for name, _ in entries}
        for _ in range(args.rounds):
            for name, fn in entries:
                samples[name].append(timed(fn, data, 1))
        floor = None
        for name, _ in entries:
            seconds = statistics.median(samples[name])
            rate = args.matches / seconds
            if name == "plain loop":
                floor = seconds
            ratio = f"{floor / seconds:.3f}" if floor else "-"
            print(f"| {family:<24} | {name:<44} | {rate:>10,.0f} | {ratio:>12} |", flush=True)
        if family == "Elo":
            versus_bundled(samples)
        versus_peers(samples)


PEERS = {
    "rankcraft elo, stream": "elote EloCompetitor",
    "rankcraft elo, memory": "elote EloCompetitor",
    "rankcraft glicko1, stream": "elote GlickoCompetitor",
    "rankcraft glicko2, stream": "glicko2 (PyPI)",
    "rankcraft glicko2 bounded, stream": "glicko2 (PyPI)",
    "rankcraft openskill, stream": "openskill PlackettLuce",
    "rankcraft trueskill, stream": "trueskill rate_1vs1",
}
"""Issue 38's pairs: a rankcraft row and the peer library it is measured against."""


def versus_peers(samples: dict[str, list[float]]) -> None:
    """Each rankcraft row of PEERS as a multiple of its peer's speed (same process, same
    rounds), and SQLite as a fraction of memory."""
    for mine, peer in PEERS.items():
        if mine in samples and peer in samples:
            ratio = statistics.median(samples[peer]) / statistics.median(samples[mine])
            print(f"|   {mine} = {ratio:.2f} x {peer}", flush=True)
    for name in samples:
        if name.endswith(", memory") and name.replace("memory", "SQLite") in samples:
            ratio = statistics.median(samples[name]) / statistics.median(
                samples[name.replace("memory", "SQLite")]
            )
            print(f"|   {name.replace(', memory', '')}: SQLite = {ratio:.2f} x memory", flush=True)


def versus_bundled(samples: dict[str, list[float]]) -> None:
    """The hooks-only plugins' speed as a fraction of the bundled elo's, per store."""
    for store in ("stream", "memory", "SQLite"):
        bundled = statistics.median(samples[f"rankcraft elo, {store}"])
        for name in samples:
            if name.startswith("rankcraft hooks-only") and name.endswith(store):
                ratio = bundled / statistics.median(samples[name])
                print(f"|   {name} = {ratio:.3f} x rankcraft elo, {store}", flush=True)


if __name__ == "__main__":
    main()
