"""What a TrueSkill Through Time fit takes in and gives out: checks of parameters and
games, a game turned into its stored form, the batch list, and the probability that each
of several teams performs best.

>>> [round(p, 6) for p in win_probabilities([(0.0, 2.0), (0.0, 2.0)])]
[0.5, 0.5]
>>> round(win_probabilities([(1.0, 1.0), (0.0, 1.0)])[0], 6)  # Φ(1/√2)
0.76025
"""

from __future__ import annotations

import bisect
import itertools
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

from ._ttt_fit import StoredGame

PlayerId = str | int
"""A player's id: a string or an integer (what a JSON snapshot keeps as it was)."""
Scheduled = dict[int, set[int]]
"""Appearances to visit, by batch."""
FORMAT = "rankcraft-ttt/3"
"""The snapshot format :meth:`ThroughTime.to_dict` writes."""
GRID = 2000
"""Intervals of the integration grid of :func:`win_probabilities` (Simpson's rule)."""


class GameLike(Protocol):
    """A game as :class:`ThroughTime.add` takes it (``_ttt.Game``)."""

    @property
    def teams(self) -> Sequence[Sequence[PlayerId]]: ...
    @property
    def results(self) -> Sequence[float] | None: ...
    @property
    def weights(self) -> Sequence[Sequence[float]] | None: ...


class Batches:
    """The batches of a history, one per distinct time.

    Attributes:
        times: each batch's time (time units, increasing).
        aps: the appearances of each batch.
        games: the games of each batch (indexes into the store's games).
    """

    __slots__ = ("aps", "games", "times")

    def __init__(self) -> None:
        self.times: list[float] = []
        self.aps: list[list[int]] = []
        self.games: list[list[int]] = []

    def new(self, time: float) -> None:
        """Open a batch at ``time``."""
        self.times.append(time)
        self.aps.append([])
        self.games.append([])

    def first_at(self, time: float) -> int:
        """The first batch at or after ``time``."""
        return bisect.bisect_left(self.times, time)


def _finite(name: str, value: float) -> None:
    if not isinstance(value, int | float) or not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number: {value!r}")


def check_params(
    mu: float,
    sigma: float,
    beta: float,
    gamma: float,
    p_draw: float,
    priors: Mapping[Any, tuple[float, float]],
    drifts: Mapping[Any, float],
) -> None:
    """Refuse parameters out of range (ValueError naming the first)."""
    for name, value in (("mu", mu), ("sigma", sigma), ("beta", beta), ("gamma", gamma)):
        _finite(name, value)
    _finite("p_draw", p_draw)
    if sigma <= 0 or beta <= 0 or gamma < 0 or not 0 <= p_draw < 1:
        raise ValueError(
            "need sigma > 0, beta > 0, gamma ≥ 0 and 0 ≤ p_draw < 1: "
            f"{sigma=}, {beta=}, {gamma=}, {p_draw=}"
        )
    for player, (prior_mu, prior_sigma) in priors.items():
        _finite(f"prior mu of {player!r}", prior_mu)
        _finite(f"prior sigma of {player!r}", prior_sigma)
        if prior_sigma <= 0:
            raise ValueError(f"prior sigma of {player!r} must be > 0: {prior_sigma}")
    for player, own in drifts.items():
        _finite(f"gamma of {player!r}", own)
        if own < 0:
            raise ValueError(f"gamma of {player!r} must be ≥ 0: {own}")


def check_game(
    teams: Sequence[Sequence[PlayerId]],
    results: Sequence[float] | None,
    weights: Sequence[Sequence[float]] | None,
    p_draw: float,
) -> None:
    """Refuse a malformed game (ValueError saying what is wrong)."""
    if len(teams) < 2 or any(len(team) == 0 for team in teams):
        raise ValueError(f"a game needs two or more teams, none empty: {teams!r}")
    players = [x for team in teams for x in team]
    if len(set(players)) != len(players):
        raise ValueError(f"a player appears twice in one game: {teams!r}")
    if any(isinstance(x, bool) or not isinstance(x, str | int) for x in players):
        raise ValueError(f"player ids must be strings or integers: {teams!r}")
    if results is not None:
        if len(results) != len(teams):
            raise ValueError(f"one result per team: {results!r} for {len(teams)} teams")
        for r in results:
            _finite("a result", r)
        if p_draw == 0.0 and len(set(results)) != len(results):
            raise ValueError(f"a draw needs p_draw > 0: {results!r}")
    if weights is not None:
        if [len(w) for w in weights] != [len(t) for t in teams]:
            raise ValueError(f"weights must be shaped like the teams: {weights!r}")
        for w in (w for team in weights for w in team):
            _finite("a weight", w)
            if w < 0:
                raise ValueError(f"a weight must be ≥ 0: {w}")


def check_evidence(evidence: Mapping[Any, tuple[float, float]], players: set[Any]) -> None:
    """Refuse evidence about a player of none of the games, or not a belief (μ, σ > 0)."""
    for player, known in evidence.items():
        if player not in players:
            raise ValueError(f"evidence about {player!r}, who plays none of these games")
        if not isinstance(known, tuple | list) or len(known) != 2:
            raise ValueError(f"evidence about {player!r} must be (mu, sigma): {known!r}")
        _finite(f"evidence mu of {player!r}", known[0])
        _finite(f"evidence sigma of {player!r}", known[1])
        if known[1] <= 0:
            raise ValueError(f"evidence sigma of {player!r} must be > 0: {known[1]}")
        try:  # (the message it adds: precision and precision times mean, both finite)
            pi = known[1] ** -2
            message = (pi, known[0] * pi)
        except OverflowError:
            message = (math.inf, math.inf)
        if not all(math.isfinite(x) for x in message):
            raise ValueError(f"evidence about {player!r} is out of range: {tuple(known)!r}")


def normal_game(game: GameLike) -> tuple[list[list[PlayerId]], Any, Any]:
    """``game``'s teams, results and weights as plain lists (what a snapshot keeps)."""
    teams = [list(team) for team in game.teams]
    results = None if game.results is None else [float(r) for r in game.results]
    weights = None if game.weights is None else [[float(w) for w in t] for t in game.weights]
    return teams, results, weights


def stored_game(
    game: GameLike, aps: list[list[int]], first: int, margin: Callable[[int], float]
) -> StoredGame:
    """``game`` in stored form: teams sorted best first (stable, so tied teams keep
    their order), their appearances ``aps`` (by team, as given) and slots from ``first``;
    ``margin(n)`` is the draw margin of a comparison of n players in all."""
    n = len(game.teams)
    results = game.results if game.results is not None else [float(n - i) for i in range(n)]
    order = sorted(range(n), key=lambda i: -results[i])
    flat: list[int] = []
    bounds = [0]
    flat_weights: list[float] = []
    for t in order:
        flat += aps[t]
        bounds.append(len(flat))
        flat_weights += game.weights[t] if game.weights is not None else [1.0] * len(aps[t])
    pairs = list(itertools.pairwise(order))
    ties = [results[u] == results[lo] for u, lo in pairs]
    margins = [margin(len(aps[u]) + len(aps[lo])) for u, lo in pairs]
    unit = all(w == 1.0 for w in flat_weights)
    return StoredGame(first, flat, bounds, None if unit else flat_weights, ties, margins)


def win_probabilities(performances: Sequence[tuple[float, float]]) -> list[float]:
    """The probability that each of independent performances N(mean, variance) is the
    highest, by Simpson's rule over ±10 deviations (normalized to sum to 1)."""
    means = [m for m, _ in performances]
    sds = [math.sqrt(v) for _, v in performances]
    lo = min(m - 10.0 * s for m, s in zip(means, sds, strict=True))
    hi = max(m + 10.0 * s for m, s in zip(means, sds, strict=True))
    step = (hi - lo) / GRID
    totals = [0.0] * len(means)
    for k in range(GRID + 1):
        x = lo + k * step
        simpson = 1.0 if k in (0, GRID) else (4.0 if k % 2 else 2.0)
        cdfs = [
            0.5 * math.erfc((m - x) / (s * math.sqrt(2.0))) for m, s in zip(means, sds, strict=True)
        ]
        for i, (m, s) in enumerate(zip(means, sds, strict=True)):
            z = (x - m) / s
            density = math.exp(-0.5 * z * z) / (s * math.sqrt(2.0 * math.pi))
            rest = math.prod(c for j, c in enumerate(cdfs) if j != i)
            totals[i] += simpson * density * rest
    total = sum(totals)
    return [t / total for t in totals]
