"""The hook-contract study (issue "Faster than every peer"): three shapes of the rating
contract, prototyped on Elo, bounded Glicko-2 and Weng-Lin Plackett-Luce, each checked
against today's ``League`` results and timed against a plain-Python loop in one process.

The shapes:

* ``objects, lean``: today's object hooks (attrs states, ``Pairing``, ``PlayerContext``)
  called through today's :class:`rankcraft.steps.Steps` with every overhead around them
  removed: matches built as :class:`rankcraft.Match` without the validator, rows kept in a
  dict, no unit of work, no store, no report kept. The ceiling of the object contract.
* ``kernels``: numeric states and scalar kernels. A plugin declares its state as a fixed
  tuple of floats and writes expectation and update as plain functions of tuples, with its
  params bound once (closures). The loop keeps players as tuples in a list (an id → index
  dict), parses the common match shape cheaply (with the late-match check), and keeps one
  report tuple per match (the states before and after, the expectation). The kernels call
  the plugins' own math (``glicko2.rate``, ``wenglin.rate``, ``_matchup.logistic10``)
  where it is already a function of floats.
* ``kernels, 1-v-1 form``: the same loop where the plugin's kernel has a two-player form
  written out (no list of results): what a plugin can add for the common shape.
* ``kernels, engine bookkeeping``: the kernels inside what the engine keeps per match
  today (a ``PlayerContext`` per participant, a nested ``Rated`` report, rows as lists).
* ``kernels, proposed loop``: the same facts kept without a context object per
  participant and with one flat report tuple per match: the loop the study proposes.
* ``tuple hooks, proposed loop`` (Elo): the proposed loop calling module-level hook
  functions that take the params instance first, as pluggy hooks do, instead of closures.
* ``waves``: the history cut into waves of matches that share no player; NumPy arrays of a
  wave handed to vectorised expectation and update (Glicko-2's volatility iteration run on
  the whole wave, masked).

Each loop is written out whole, its checks inline, even where two loops share lines:
the cost of a function call per match is what the shapes differ by, so a helper shared
between them would be measured too. Nothing here is asserted by the tests; it prints a
table of matches per second, the ratio to the plain loop of the family, and each shape's
largest relative difference from today's ratings.

    python benchmarks/contracts.py [--matches 100000] [--players 10000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import itertools
import math
import statistics
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any

import numpy as np
from compare import (
    BOUNDED_GLICKO2,
    glicko2_run,
    openskill_run,
    plain_elo,
    plain_glicko2,
    workload,
)

import rankcraft
from rankcraft.loop import Loop
from rankcraft.model import Match, PlayerContext
from rankcraft.plugins import glicko2 as g2
from rankcraft.plugins import wenglin as wl
from rankcraft.plugins._matchup import logistic10
from rankcraft.ruleset import load_ruleset, loads_ruleset
from rankcraft.steps import Steps

Matches = list[dict[str, Any]]
Ratings = dict[str, tuple[float, ...]]


RULESETS = {"elo": "elo", "glicko2": BOUNDED_GLICKO2, "openskill": "openskill"}
FIELDS = {"elo": ("rating",), "glicko2": ("mu", "phi", "sigma"), "openskill": ("mu", "sigma")}


def _ruleset(system: str) -> Any:
    text = RULESETS[system]
    return loads_ruleset(text) if "\n" in text else load_ruleset(text)


# -- today ----------------------------------------------------------------------------------


def today(system: str) -> Callable[[Matches], Ratings]:
    """Today's League in memory: the reference results and the figure to beat."""

    def run(matches: Matches) -> Ratings:
        league = rankcraft.League(_ruleset(system))
        league.record_many(matches)
        fields = FIELDS[system]
        out = {}
        for player in league.players():
            skill = player.skill
            out[player.id] = tuple(float(getattr(skill, f)) for f in fields)
        return out

    return run


# -- objects, lean ---------------------------------------------------------------------------

_times: dict[str, datetime] = {}


def _time(text: str) -> datetime:
    """A match time, parsed once per distinct text (a history repeats its dates)."""
    moment = _times.get(text)
    if moment is None:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=UTC)
        _times[text] = moment
    return moment


class _Batch:
    """The loop's batch over a plain dict of rows: nothing to roll back."""

    def __init__(self, rows: dict[str, Any], new_row: Callable[[], Any]) -> None:
        self.rows = rows
        self.touched = rows
        self.new_row = new_row
        self.runs = 0

    def take(self, player: str) -> Any:
        row = self.rows[player] = self.new_row()
        return row

    def put_all(self, changes: Any) -> None:
        self.rows.update(changes)


def objects_lean(system: str) -> Callable[[Matches], Ratings]:
    """The core's rating loop (Loop.run, no history) with nothing else around it (the
    object hooks when the study was made; since hook contract 2, the core's tuple steps:
    this row of the study's table was measured before that change)."""

    def run(matches: Matches) -> Ratings:
        league = rankcraft.League(_ruleset(system))
        steps: Steps = league._steps  # (the study reaches inside; no product code does)
        loop = Loop(steps)
        rows: dict[str, list[Any]] = {}
        batch = _Batch(rows, steps.new_row)

        new_match = object.__new__
        setattr_ = object.__setattr__
        for m in matches:
            match = new_match(Match)
            teams = m["teams"]
            sa, sb = m["scores"]
            for name, value in (
                ("id", m["id"]),
                ("played_at", _time(m["played_at"])),
                ("teams", (tuple(teams[0]), tuple(teams[1]))),
                ("scores", (float(sa), float(sb))),
                ("ranks", None),
                ("places", (1, 2) if sa > sb else (2, 1) if sa < sb else (1, 1)),
                ("seconds_played", None),
                ("quit", ()),
                ("weight", 1.0),
                ("meta", {}),
                ("home", None),
            ):
                setattr_(match, name, value)
            loop.run((match,), batch)
        fields = FIELDS[system]
        public = steps.skill_form.to_object_unchecked  # (rows keep tuples since contract 2)
        return {p: tuple(float(getattr(public(r[0]), f)) for f in fields) for p, r in rows.items()}

    return run


# -- kernels ---------------------------------------------------------------------------------
# What a plugin would write: its state a tuple of floats, expectation and update functions
# of tuples with the params bound once. ``update(me, results)``: results are
# (opponent state, score, weight) triples, as the team step hands them.

State = tuple[float, ...]
Results = Sequence[tuple[State, float, float]]


class Kernels:
    """A plugin's numeric declaration: the initial state, expect(a, b) -> P(a beats b),
    update(me, results) -> new state, and optionally duel(a, b, score) -> (a', b') for a
    two-player match written out."""

    def __init__(
        self,
        initial: State,
        expect: Callable[[State, State], float],
        update: Callable[[State, Results], State],
        duel: Callable[[State, State, float], tuple[State, State]] | None = None,
    ) -> None:
        self.initial, self.expect, self.update, self.duel = initial, expect, update, duel


def elo_kernels(k: float = 32.0, scale: float = 400.0, initial: float = 1500.0) -> Kernels:
    """The elo plugin's plain case (constant K, no home edge): (rating, peak)."""
    limit = 1e6

    def expect(a: State, b: State) -> float:
        return logistic10((b[0] - a[0]) / scale)

    def update(me: State, results: Results) -> State:
        rating = me[0]
        surprise = 0.0
        for opponent, score, weight in results:
            surprise += weight * (score - logistic10((opponent[0] - rating) / scale))
        new = rating + k * surprise
        if not -limit <= new <= limit:
            new = min(max(new, -limit), limit)
        return (new, new if new > me[1] else me[1])

    def duel(a: State, b: State, score: float) -> tuple[State, State]:
        delta = k * (score - logistic10((b[0] - a[0]) / scale))
        ra, rb = a[0] + delta, b[0] - delta
        return (ra, ra if ra > a[1] else a[1]), (rb, rb if rb > b[1] else b[1])

    return Kernels((initial, initial), expect, update, duel)


def glicko2_kernels() -> Kernels:
    """The glicko2 plugin, bounded as in INVERSUS: (mu, phi, sigma)."""
    params = _ruleset("glicko2").slot("update").params
    tau, epsilon, clamp = params.tau, params.epsilon, params.clamp_values
    rate = g2.rate

    def expect(a: State, b: State) -> float:
        return g2.logistic(-g2.g(math.sqrt(a[1] * a[1] + b[1] * b[1])) * (a[0] - b[0]))

    def update(me: State, results: Results) -> State:
        mu, phi, sigma = rate(
            me[0], me[1], me[2], tau, [(o[0], o[1], s, w) for o, s, w in results], epsilon
        )
        return clamp(mu, phi, sigma)

    def duel(a: State, b: State, score: float) -> tuple[State, State]:
        na = rate(a[0], a[1], a[2], tau, ((b[0], b[1], score, 1.0),), epsilon)
        nb = rate(b[0], b[1], b[2], tau, ((a[0], a[1], 1.0 - score, 1.0),), epsilon)
        return clamp(*na), clamp(*nb)

    initial = params.clamp_values(params.initial_mu, params.initial_phi, params.initial_sigma)
    return Kernels(initial, expect, update, duel)


def openskill_kernels() -> Kernels:
    """The wenglin plugin's Plackett-Luce: (mu, sigma); the update of one player against
    one opponent is the two-team match (what ``_pair_step`` computes)."""
    params = _ruleset("openskill").slot("update").params
    two_beta2 = 2.0 * params.beta * params.beta
    beta2, tau2, kappa = params.beta * params.beta, params.tau * params.tau, params.kappa
    lo, hi = wl.SIGMA_RANGE

    def expect(a: State, b: State) -> float:
        return wl.cdf((a[0] - b[0]) / math.sqrt(two_beta2 + a[1] * a[1] + b[1] * b[1]))

    def update(me: State, results: Results) -> State:
        mu, sigma = me
        for opponent, score, _ in results:
            places = [1, 1] if score == 0.5 else [1, 2] if score > 0.5 else [2, 1]
            ((mine,), _) = wl.rate(params, [[me], [opponent]], places)
            mu += mine[0] - me[0]
            sigma *= mine[1] / me[1]
        return (mu, min(max(sigma, lo), hi))

    def duel(a: State, b: State, score: float) -> tuple[State, State]:
        # Plackett-Luce for two teams of one, written out (the terms of _wenglin_models.omega_delta)
        va, vb = a[1] * a[1] + tau2, b[1] * b[1] + tau2
        c = math.sqrt(va + vb + 2.0 * beta2)
        ea, eb = math.exp(a[0] / c), math.exp(b[0] / c)
        pa = ea / (ea + eb)
        out = []
        for mu, var, p, s in ((a[0], va, pa, score), (b[0], vb, 1.0 - pa, 1.0 - score)):
            if s == 0.5:  # (tied: both in one place, each half of each term)
                omega = 0.5 * ((1.0 - p) - p) + 0.0
                delta = p * (1.0 - p)
            elif s > 0.5:
                omega, delta = 1.0 - p, p * (1.0 - p)
            else:
                omega, delta = -p, p * (1.0 - p)
            gamma = math.sqrt(var) / c
            new_mu = mu + var / c * omega
            new_sigma = math.sqrt(var) * math.sqrt(max(1.0 - var / (c * c) * gamma * delta, kappa))
            out.append((new_mu, min(max(new_sigma, lo), hi)))
        return out[0], out[1]

    return Kernels((params.mu, params.sigma), expect, update, duel)


KERNELS = {"elo": elo_kernels, "glicko2": glicko2_kernels, "openskill": openskill_kernels}


def kernels(system: str, duel: bool) -> Callable[[Matches], Ratings]:
    """The numeric-state loop: cheap parse of a two-sided one-a-side match, the late-match
    check, the kernels, one report tuple per match."""

    def run(matches: Matches) -> Ratings:
        k = KERNELS[system]()
        expect, update, pair = k.expect, k.update, k.duel
        initial = k.initial
        index: dict[str, int] = {}
        states: list[State] = []
        last: list[str] = []
        reports = []
        for m in matches:
            teams = m["teams"]
            if len(teams) != 2 or len(teams[0]) != 1 or len(teams[1]) != 1:
                raise ValueError("not a 1-v-1 match: the general path would take it")
            (a,), (b,) = teams
            sa, sb = m["scores"]
            at = m["played_at"]
            if type(at) is not str or type(sa) not in (int, float) or a == b:
                raise ValueError("the general path would take it")
            ia = index.get(a)
            if ia is None:
                ia = index[a] = len(states)
                states.append(initial)
                last.append(at)
            elif at < last[ia]:
                raise ValueError("late match")
            ib = index.get(b)
            if ib is None:
                ib = index[b] = len(states)
                states.append(initial)
                last.append(at)
            elif at < last[ib]:
                raise ValueError("late match")
            s = 1.0 if sa > sb else 0.0 if sa < sb else 0.5
            before_a, before_b = states[ia], states[ib]
            e = expect(before_a, before_b)
            if duel:
                after_a, after_b = pair(before_a, before_b, s)
            else:
                after_a = update(before_a, ((before_b, s, 1.0),))
                after_b = update(before_b, ((before_a, 1.0 - s, 1.0),))
            states[ia], states[ib] = after_a, after_b
            last[ia] = last[ib] = at
            reports.append((m["id"], ia, ib, before_a, before_b, after_a, after_b, e))
        n = len(FIELDS[system])
        return {p: states[i][:n] for p, i in index.items()}

    return run


def kernels_engine(system: str) -> Callable[[Matches], Ratings]:
    """The kernels inside the bookkeeping the engine keeps today: a row per player
    (state, matches, last played as a datetime), the match id refused when seen, a
    ``Match``-shaped tuple, a ``PlayerContext`` per participant (games, side, expected,
    factors) handed to the update, and a ``Rated``-shaped report per match."""

    def run(matches: Matches) -> Ratings:
        k = KERNELS[system]()
        expect, update = k.expect, k.update
        initial = k.initial
        rows: dict[str, list[Any]] = {}
        seen: set[str] = set()
        reports = []
        context = PlayerContext
        for m in matches:
            match_id = m["id"]
            teams = m["teams"]
            if type(match_id) is not str or match_id in seen:
                raise ValueError("the general path would take it (or refuse the id)")
            if len(teams) != 2 or len(teams[0]) != 1 or len(teams[1]) != 1:
                raise ValueError("not a 1-v-1 match: the general path would take it")
            (a,), (b,) = teams
            if a == b:
                raise ValueError("a player on both sides")
            sa, sb = m["scores"]
            at = _time(m["played_at"])
            seen.add(match_id)
            match = (match_id, at, ((a,), (b,)), (sa, sb))
            ra = rows.get(a)
            if ra is None:
                ra = [initial, 0, None]
            elif at < ra[2]:
                raise ValueError("late match")
            rb = rows.get(b)
            if rb is None:
                rb = [initial, 0, None]
            elif at < rb[2]:
                raise ValueError("late match")
            s = 1.0 if sa > sb else 0.0 if sa < sb else 0.5
            before_a, before_b = ra[0], rb[0]
            e = expect(before_a, before_b)
            ca = context(None, a, 0, ra[1], e, s, (), "match")
            cb = context(None, b, 1, rb[1], 1.0 - e, 1.0 - s, (), "match")
            after_a = update(before_a, ((before_b, s, 1.0),))
            after_b = update(before_b, ((before_a, 1.0 - s, 1.0),))
            rows[a] = [after_a, ra[1] + 1, at]
            rows[b] = [after_b, rb[1] + 1, at]
            reports.append(
                (
                    match,
                    (e, 1.0 - e),
                    (
                        (a, 0, before_a, before_a, after_a, None, None, ca.factors or None),
                        (b, 1, before_b, before_b, after_b, None, None, cb.factors or None),
                    ),
                )
            )
        n = len(FIELDS[system])
        return {p: r[0][:n] for p, r in rows.items()}

    return run


def kernels_proposed(system: str) -> Callable[[Matches], Ratings]:
    """The loop the study proposes: the same checks and the same facts kept as
    :func:`kernels_engine` (id, time, late match, matches played, last played, the
    report), without a context object per participant (the update is handed its games
    as a number; factors are explained when a report is read) and with the report one
    flat tuple per match."""

    def run(matches: Matches) -> Ratings:
        k = KERNELS[system]()
        expect, update = k.expect, k.update
        initial = k.initial
        rows: dict[str, tuple[Any, ...]] = {}
        seen: set[str] = set()
        reports = []
        for m in matches:
            match_id = m["id"]
            teams = m["teams"]
            if type(match_id) is not str or match_id in seen:
                raise ValueError("the general path would take it (or refuse the id)")
            if len(teams) != 2 or len(teams[0]) != 1 or len(teams[1]) != 1:
                raise ValueError("not a 1-v-1 match: the general path would take it")
            (a,), (b,) = teams
            if a == b:
                raise ValueError("a player on both sides")
            sa, sb = m["scores"]
            at = _time(m["played_at"])
            seen.add(match_id)
            ra = rows.get(a)
            if ra is None:
                ra = (initial, 0, at)
            elif at < ra[2]:
                raise ValueError("late match")
            rb = rows.get(b)
            if rb is None:
                rb = (initial, 0, at)
            elif at < rb[2]:
                raise ValueError("late match")
            s = 1.0 if sa > sb else 0.0 if sa < sb else 0.5
            before_a, before_b = ra[0], rb[0]
            e = expect(before_a, before_b)
            after_a = update(before_a, ((before_b, s, 1.0),))
            after_b = update(before_b, ((before_a, 1.0 - s, 1.0),))
            rows[a] = (after_a, ra[1] + 1, at)
            rows[b] = (after_b, rb[1] + 1, at)
            reports.append((match_id, at, a, b, sa, sb, e, before_a, before_b, after_a, after_b))
        n = len(FIELDS[system])
        return {p: r[0][:n] for p, r in rows.items()}

    return run


def elo_hooks() -> tuple[Any, Callable[..., float], Callable[..., State]]:
    """Elo's expectation and update as tuple *hooks*: plain module functions taking the
    params instance first (pluggy's form), not closures over bound params."""
    params = _ruleset("elo").slot("update").params

    def expectation(params: Any, a: State, b: State) -> float:
        return logistic10((b[0] - a[0]) / params.scale)

    def update(params: Any, state: State, results: Results, games: int) -> State:
        rating, peak = state
        scale = params.scale
        surprise = 0.0
        for opponent, score, weight in results:
            surprise += weight * (score - logistic10((opponent[0] - rating) / scale))
        new = rating + params.k_factor * surprise
        return (new, new if new > peak else peak)

    return params, expectation, update


def hooks_proposed(matches: Matches) -> Ratings:
    """:func:`kernels_proposed` calling Elo's tuple hooks with the params first and the
    player's matches played as an argument: the form the contract keeps."""
    params, expectation, update = elo_hooks()
    initial = (params.initial_rating, params.initial_rating)
    rows: dict[str, tuple[Any, ...]] = {}
    seen: set[str] = set()
    reports = []
    for m in matches:
        match_id = m["id"]
        teams = m["teams"]
        if type(match_id) is not str or match_id in seen:
            raise ValueError("the general path would take it (or refuse the id)")
        if len(teams) != 2 or len(teams[0]) != 1 or len(teams[1]) != 1:
            raise ValueError("not a 1-v-1 match: the general path would take it")
        (a,), (b,) = teams
        if a == b:
            raise ValueError("a player on both sides")
        sa, sb = m["scores"]
        at = _time(m["played_at"])
        seen.add(match_id)
        ra = rows.get(a)
        if ra is None:
            ra = (initial, 0, at)
        elif at < ra[2]:
            raise ValueError("late match")
        rb = rows.get(b)
        if rb is None:
            rb = (initial, 0, at)
        elif at < rb[2]:
            raise ValueError("late match")
        s = 1.0 if sa > sb else 0.0 if sa < sb else 0.5
        before_a, before_b = ra[0], rb[0]
        e = expectation(params, before_a, before_b)
        after_a = update(params, before_a, ((before_b, s, 1.0),), ra[1])
        after_b = update(params, before_b, ((before_a, 1.0 - s, 1.0),), rb[1])
        rows[a] = (after_a, ra[1] + 1, at)
        rows[b] = (after_b, rb[1] + 1, at)
        reports.append((match_id, at, a, b, sa, sb, e, before_a, before_b, after_a, after_b))
    return {p: r[0][:1] for p, r in rows.items()}


# -- waves -----------------------------------------------------------------------------------


Waves = tuple[np.ndarray, np.ndarray, np.ndarray, list[int], dict[str, int]]


def waves(matches: Matches) -> Waves:
    """The matches in wave order: both players' indices and the score of each, where
    each wave starts (and the end), and the players' indices. A match joins the wave
    after the latest wave of its players, so a wave shares no player."""
    index: dict[str, int] = {}
    wave_of: list[int] = []
    a_idx, b_idx, score, match_wave = [], [], [], []
    for m in matches:
        (a,), (b,) = m["teams"]
        ia = index.setdefault(a, len(index))
        ib = index.setdefault(b, len(index))
        while len(wave_of) < len(index):
            wave_of.append(-1)
        w = max(wave_of[ia], wave_of[ib]) + 1
        wave_of[ia] = wave_of[ib] = w
        sa, sb = m["scores"]
        a_idx.append(ia)
        b_idx.append(ib)
        score.append(1.0 if sa > sb else 0.0 if sa < sb else 0.5)
        match_wave.append(w)
    order = np.argsort(np.asarray(match_wave), kind="stable")
    waves_sorted = np.asarray(match_wave)[order]
    starts = list(np.flatnonzero(np.diff(waves_sorted)) + 1)
    return (
        np.asarray(a_idx)[order],
        np.asarray(b_idx)[order],
        np.asarray(score)[order],
        [0, *(int(x) for x in starts), len(order)],
        index,
    )


def _g_np(phi: np.ndarray) -> np.ndarray:
    return 1.0 / np.sqrt(1.0 + 3.0 * phi * phi / (math.pi * math.pi))


def _volatility_np(
    phi: np.ndarray, sigma: np.ndarray, tau: float, v: np.ndarray, delta: np.ndarray, eps: float
) -> np.ndarray:
    """Glickman's step 5 (Illinois) on arrays, each lane iterated until it converges."""
    a = np.log(sigma * sigma)
    d2, p2, t2 = delta * delta, phi * phi, tau * tau

    def f(x: np.ndarray) -> np.ndarray:
        ex = np.exp(x)
        total = p2 + v + ex
        return ex * (d2 - p2 - v - ex) / (2.0 * total * total) - (x - a) / t2

    big_a = a.copy()
    up = d2 > p2 + v
    big_b = np.where(up, np.log(np.where(up, d2 - p2 - v, 1.0)), a - tau)
    k = np.ones_like(a)
    low = ~up & (f(a - k * tau) < 0.0)
    while low.any():
        k = np.where(low, k + 1.0, k)
        low = low & (f(a - k * tau) < 0.0)
    big_b = np.where(up, big_b, a - k * tau)
    f_a, f_b = f(big_a), f(big_b)
    active = np.ones_like(a, dtype=bool)
    for _ in range(100):
        active &= (np.abs(big_b - big_a) > eps) & (f_b != f_a)
        if not active.any():
            break
        big_c = big_a + (big_a - big_b) * f_a / np.where(active, f_b - f_a, 1.0)
        f_c = f(big_c)
        swap = active & (f_c * f_b <= 0.0)
        halve = active & ~swap
        big_a = np.where(swap, big_b, big_a)
        f_a = np.where(swap, f_b, np.where(halve, f_a / 2.0, f_a))
        big_b = np.where(active, big_c, big_b)
        f_b = np.where(active, f_c, f_b)
    return np.exp(big_a / 2.0)


def waves_run(system: str) -> Callable[[Matches], Ratings]:
    """Vectorised expectation and update over each wave."""

    def run(matches: Matches) -> Ratings:
        ia, ib, s, starts, index = waves(matches)
        n = len(index)
        if system == "elo":
            r = np.full(n, 1500.0)
            for lo, hi in itertools.pairwise(starts):
                a, b, sc = ia[lo:hi], ib[lo:hi], s[lo:hi]
                ra, rb = r[a], r[b]
                d = 32.0 * (sc - 1.0 / (1.0 + 10.0 ** ((rb - ra) / 400.0)))
                r[a], r[b] = ra + d, rb - d
            return {p: (float(r[i]),) for p, i in index.items()}
        if system == "glicko2":
            params = _ruleset("glicko2").slot("update").params
            mu, phi, sig = np.zeros(n), np.full(n, 2.015), np.full(n, 0.06)
            (mlo, mhi), (plo, phi_hi), (slo, shi) = (
                params.rating_bounds,
                params.deviation_bounds,
                params.volatility_bounds,
            )
            for lo, hi in itertools.pairwise(starts):
                a, b, sc = ia[lo:hi], ib[lo:hi], s[lo:hi]
                me = np.concatenate([a, b])
                op = np.concatenate([b, a])
                score = np.concatenate([sc, 1.0 - sc])
                m0, p0, s0 = mu[me], phi[me], sig[me]
                gj = _g_np(phi[op])
                e = 1.0 / (1.0 + np.exp(-gj * (m0 - mu[op])))
                inv_v = gj * gj * e * (1.0 - e)
                total = gj * (score - e)
                v = 1.0 / inv_v
                s1 = _volatility_np(p0, s0, params.tau, v, v * total, params.epsilon)
                p1 = 1.0 / np.sqrt(1.0 / (p0 * p0 + s1 * s1) + inv_v)
                m1 = m0 + p1 * p1 * total
                mu[me] = np.clip(m1, mlo, mhi)
                phi[me] = np.clip(p1, plo, phi_hi)
                sig[me] = np.clip(s1, slo, shi)
            return {p: (float(mu[i]), float(phi[i]), float(sig[i])) for p, i in index.items()}
        params = _ruleset("openskill").slot("update").params
        mu, sg = np.full(n, params.mu), np.full(n, params.sigma)
        beta2, tau2, kappa = params.beta**2, params.tau**2, params.kappa
        for lo, hi in itertools.pairwise(starts):
            a, b, sc = ia[lo:hi], ib[lo:hi], s[lo:hi]
            va, vb = sg[a] ** 2 + tau2, sg[b] ** 2 + tau2
            c = np.sqrt(va + vb + 2.0 * beta2)
            ea, eb = np.exp(mu[a] / c), np.exp(mu[b] / c)
            pa = ea / (ea + eb)
            for side, var, p, res in ((a, va, pa, sc), (b, vb, 1.0 - pa, 1.0 - sc)):
                omega = np.where(res > 0.5, 1.0 - p, np.where(res < 0.5, -p, 0.5 - p))
                delta = p * (1.0 - p)
                gamma = np.sqrt(var) / c
                new_mu = mu[side] + var / c * omega
                new_sg = np.sqrt(var) * np.sqrt(np.maximum(1.0 - var / c**2 * gamma * delta, kappa))
                mu[side], sg[side] = new_mu, new_sg
        return {p: (float(mu[i]), float(sg[i])) for p, i in index.items()}

    return run


# -- the table -------------------------------------------------------------------------------


def plain_openskill(matches: Matches) -> None:
    """The floor for Plackett-Luce: a dict loop doing the two-player update's arithmetic."""
    ratings: dict[str, tuple[float, float]] = {}
    beta2, tau2, kappa = (25 / 6) ** 2, (25 / 300) ** 2, 0.0001
    for m in matches:
        (a,), (b,) = m["teams"]
        s = 1.0 if m["scores"][0] > m["scores"][1] else 0.0
        ma, sa = ratings.get(a, (25.0, 25 / 3))
        mb, sb = ratings.get(b, (25.0, 25 / 3))
        va, vb = sa * sa + tau2, sb * sb + tau2
        c = math.sqrt(va + vb + 2.0 * beta2)
        ea, eb = math.exp(ma / c), math.exp(mb / c)
        pa = ea / (ea + eb)
        oa = (1.0 - pa) if s else -pa
        d = pa * (1.0 - pa)
        ratings[a] = (
            ma + va / c * oa,
            math.sqrt(va) * math.sqrt(max(1 - va / (c * c) * math.sqrt(va) / c * d, kappa)),
        )
        ratings[b] = (
            mb - vb / c * oa,
            math.sqrt(vb) * math.sqrt(max(1 - vb / (c * c) * math.sqrt(vb) / c * d, kappa)),
        )


PEERS: dict[str, tuple[str, str, Callable[[Matches], Any]]] = {
    "glicko2": ("glicko2", "glicko2 (PyPI)", glicko2_run),
    "openskill": ("openskill", "openskill PlackettLuce", openskill_run),
}
PLAIN = {"elo": plain_elo, "glicko2": plain_glicko2, "openskill": plain_openskill}


def _elote(matches: Matches) -> None:
    from compare import elote_run

    elote_run("elo")(matches)


def shapes(system: str) -> list[tuple[str, Callable[[Matches], Any]]]:
    rows: list[tuple[str, Callable[[Matches], Any]]] = [
        ("plain loop", PLAIN[system]),
        ("today: League in memory", today(system)),
        ("objects, lean", objects_lean(system)),
        ("kernels", kernels(system, duel=False)),
        ("kernels, 1-v-1 form", kernels(system, duel=True)),
        ("kernels, engine bookkeeping", kernels_engine(system)),
        ("kernels, proposed loop", kernels_proposed(system)),
        ("waves (NumPy)", waves_run(system)),
    ]
    if system == "elo":
        rows.insert(-1, ("tuple hooks, proposed loop", hooks_proposed))
    if system == "elo" and importlib.util.find_spec("elote"):
        rows.append(("elote EloCompetitor", _elote))
    if system in PEERS and importlib.util.find_spec(PEERS[system][0]):
        rows.append(PEERS[system][1:])
    return rows


def difference(reference: Ratings, got: Ratings) -> float:
    """The largest relative difference of any value of any player."""
    worst = 0.0
    for player, values in reference.items():
        for x, y in zip(values, got[player], strict=False):
            worst = max(worst, abs(x - y) / max(abs(x), 1e-300))
    return worst


def history(path: str) -> Matches:
    """A shared history's results alone (no seconds played, no meta, no home)."""
    import gzip
    import json

    opener: Any = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        rows = [json.loads(line) for line in f]
    return [{k: m[k] for k in ("id", "played_at", "teams", "scores")} for m in rows]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--matches", type=int, default=100_000)
    parser.add_argument("--players", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--only", default="", help="systems to run, e.g. elo,glicko2")
    parser.add_argument(
        "--history",
        help="a JSON Lines history (.gz read too) of two-sided one-a-side matches with "
        "scores, instead of the random workload; only id, played_at, teams, scores are kept",
    )
    args = parser.parse_args()
    if args.history:
        data = history(args.history)
        args.matches = len(data)
        where = f"{len(data):,} matches of {args.history}"
    else:
        data = workload(args.players, args.matches)
        where = f"{args.matches:,} random matches among {args.players:,} players"
    starts = waves(data)[3]
    sizes = np.diff(starts)
    print(
        f"{where}; waves: {len(sizes):,}, mean {sizes.mean():.1f}, max {sizes.max()}; "
        f"median of {args.rounds} interleaved rounds of CPU time"
    )
    print()
    head = ("system", "shape", "matches/s", "x plain", "max rel diff")
    print("| {:<10} | {:<28} | {:>10} | {:>8} | {:>12} |".format(*head))
    print(f"|{'-' * 12}|{'-' * 30}|{'-' * 12}|{'-' * 10}|{'-' * 14}|")
    for system in ("elo", "glicko2", "openskill"):
        if args.only and system not in args.only.split(","):
            continue
        entries = shapes(system)
        reference = today(system)(data)
        diffs = {}
        for name, fn in entries:
            if name.startswith(("objects", "kernels", "tuple", "waves")):
                diffs[name] = difference(reference, fn(data))
        samples: dict[str, list[float]] = {name: [] for name, _ in entries}
        for _ in range(args.rounds):
            for name, fn in entries:
                gc.collect()
                start = time.process_time()
                fn(data)
                samples[name].append(time.process_time() - start)
        floor = statistics.median(samples["plain loop"])
        for name, _ in entries:
            seconds = statistics.median(samples[name])
            diff = f"{diffs[name]:.1e}" if name in diffs else "-"
            print(
                f"| {system:<10} | {name:<28} | {args.matches / seconds:>10,.0f} | "
                f"{floor / seconds:>8.3f} | {diff:>12} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
