"""TrueSkill Through Time: a whole-history fit of Gaussian skills that drift in time.

Dangauthier, Herbrich, Minka and Graepel, "TrueSkill Through Time: Revisiting the History
of Chess" (NIPS 2007); Landfried and Mocskos, "TrueSkill Through Time: reliable initial
skill estimates and historical comparability with Julia, Python and R" (Journal of
Statistical Software, 2025), whose ``trueskillthroughtime`` package (1.1.0) this engine
is tested against and whose conventions it keeps:

* a player's skill starts at their prior N(mu, sigma²); between two appearances ``dt``
  time units apart its variance grows by gamma² · dt (no growth before a first game);
* in a game, performances are N(skill, beta²); teams are sorted by result (higher is
  better, equal results are a draw, which needs p_draw > 0); without results the first
  team is best; the draw margin comes from p_draw as in ``_ttt_game``;
* the history is a list of batches, one per distinct time; the fit is expectation
  propagation, messages going forward and backward in time until no belief (μ or σ)
  moves by more than a tolerance.

Where the package sweeps the whole history each iteration, this engine keeps, per batch,
the appearances whose incoming messages changed, and visits only those (and only their
games): a new day's games reach back exactly as far as they move beliefs. A fit started
anywhere (a snapshot, a fit of yesterday) goes on from its messages.

The package's README example: three players, each wins once and loses once; skills do
not drift (gamma 0); every belief ends at N(0, 2.395²):

>>> fit = ThroughTime(gamma=0.0)
>>> fit.add(1.0, [Game([["a"], ["b"]], [1.0, 0.0])])
>>> fit.add(2.0, [Game([["b"], ["c"]], [1.0, 0.0])])
>>> fit.add(3.0, [Game([["c"], ["a"]], [1.0, 0.0])])
>>> fit.converge(tolerance=1e-9, iterations=100).converged
True
>>> [(time, round(abs(mu), 3), round(sigma, 3)) for time, mu, sigma in fit.curve("a")]
[(1.0, 0.0, 2.395), (3.0, 0.0, 2.395)]
>>> [round(p, 3) for p in fit.forecast([["a"], ["b"]], 4.0)]
[0.5, 0.0, 0.5]
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NamedTuple

from ._ttt_fit import Store
from ._ttt_game import draw_margin, outcomes
from ._ttt_io import (
    FORMAT,
    Batches,
    PlayerId,
    Scheduled,
    check_evidence,
    check_game,
    check_params,
    normal_game,
    stored_game,
    win_probabilities,
)

__all__ = ["Convergence", "Game", "ThroughTime"]

MESSAGES = (
    "fwd_pi", "fwd_tau", "bwd_pi", "bwd_tau", "lik_pi", "lik_tau", "msg_pi", "msg_tau",
    "told_mu", "told_sigma",
)  # fmt: skip
"""The store's message lists (and what each belief's neighbours were last told), in the
order a snapshot keeps them."""


class Game(NamedTuple):
    """One game.

    Attributes:
        teams: the player ids of each team (≥ 2 teams, none empty, a player once).
        results: one score per team, higher is better, equal is a draw; None: the first
            team is best, then the second, and so on.
        weights: one weight ≥ 0 per player, shaped like ``teams``; None: all 1.
    """

    teams: Sequence[Sequence[PlayerId]]
    results: Sequence[float] | None = None
    weights: Sequence[Sequence[float]] | None = None


class Convergence(NamedTuple):
    """What :meth:`ThroughTime.converge` did.

    Attributes:
        converged: True when no belief moved by more than the tolerance in the last pass.
        passes: the passes made (a pass goes once forward or once backward in time).
        games: the games run, summed over passes (the work done).
    """

    converged: bool
    passes: int
    games: int


class ThroughTime:
    """A TrueSkill Through Time fit over a growing history.

    :param mu: the prior mean of a new player's skill (skill units).
    :param sigma: the prior deviation of a new player's skill, > 0.
    :param beta: the deviation of a performance around the skill, > 0.
    :param gamma: the skill drift, deviation per √(time unit), ≥ 0.
    :param p_draw: the probability of a draw between two known equal teams, in [0, 1).
    :param priors: an own prior (mu, sigma) for some players, by id.
    :param drifts: an own drift gamma ≥ 0 for some players, by id (the others drift by
        ``gamma``).
    """

    def __init__(
        self,
        mu: float = 0.0,
        sigma: float = 6.0,
        beta: float = 1.0,
        gamma: float = 0.03,
        p_draw: float = 0.0,
        priors: Mapping[PlayerId, tuple[float, float]] | None = None,
        drifts: Mapping[PlayerId, float] | None = None,
    ) -> None:
        check_params(mu, sigma, beta, gamma, p_draw, priors or {}, drifts or {})
        self.mu, self.sigma, self.beta, self.gamma, self.p_draw = mu, sigma, beta, gamma, p_draw
        self.priors = dict(priors or {})
        self.drifts = dict(drifts or {})
        self.store = Store(beta)
        self.ids: list[PlayerId] = []
        self.index: dict[PlayerId, int] = {}
        self.last: list[int] = []  # each player's latest appearance
        self.batches = Batches()
        self.inputs: list[Game] = []
        self.evidence: dict[int, tuple[PlayerId, float, float]] = {}  # by appearance
        self.pending: dict[int, set[int]] = {}

    def _player(self, player: PlayerId) -> int:
        """The index of ``player``, registered with their prior on first sight."""
        p = self.index.get(player)
        if p is None:
            p = self.index[player] = len(self.ids)
            self.ids.append(player)
            self.last.append(-1)
            mu, sigma = self.priors.get(player, (self.mu, self.sigma))
            self.store.prior_pi.append(sigma**-2)
            self.store.prior_tau.append(mu * sigma**-2)
            self.store.drift2.append(self.drifts.get(player, self.gamma) ** 2)
        return p

    def _appearance(self, p: int, time: float) -> int:
        """Player ``p``'s appearance in the last batch (at ``time``), made if needed."""
        batches, store = self.batches, self.store
        b = len(batches.times) - 1
        s = self.last[p]
        if s >= 0 and store.ap_batch[s] == b:
            return s
        elapsed = time - batches.times[store.ap_batch[s]] if s >= 0 else 0.0
        s = self.last[p] = store.new_appearance(p, b, s, elapsed)
        batches.aps[b].append(s)
        return s

    def add(
        self,
        time: float,
        games: Iterable[Game],
        evidence: Mapping[PlayerId, tuple[float, float]] | None = None,
    ) -> None:
        """Append ``games`` played at ``time`` (time units, finite, not before the last
        batch; the same time as the last batch adds to it). Nothing is fitted until
        :meth:`converge`; a refused game (ValueError) leaves the fit unchanged.

        ``evidence``: what is known of some players' skills at ``time`` from outside the
        games (a ranking read as a skill, say), a belief (μ, σ > 0) per player of these
        games: it multiplies into the player's belief at ``time`` as one more likelihood
        message, once (a second one about the same player and time is ignored).
        """
        games = [Game(*normal_game(Game(*g))) for g in games]
        for game in games:
            check_game(game.teams, game.results, game.weights, self.p_draw)
        times = self.batches.times
        if not math.isfinite(time) or (times and time < times[-1]):
            raise ValueError(f"time must be finite and ≥ {times[-1] if times else '-inf'}: {time}")
        check_evidence(evidence or {}, {x for g in games for team in g.teams for x in team})
        if not games:
            return
        if not times or time > times[-1]:
            self.batches.new(time)
        b = len(times) - 1
        dirty = self.pending.setdefault(b, set())
        for game in games:
            aps = [[self._appearance(self._player(x), time) for x in team] for team in game.teams]
            stored = stored_game(game, aps, len(self.store.msg_pi), self._margin)
            self.batches.games[b].append(len(self.store.games))
            self.store.new_game(stored)
            self.inputs.append(game)
            dirty.update(stored.aps)
        for player, (mu, sigma) in (evidence or {}).items():
            s = self.last[self.index[player]]
            if s not in self.evidence:
                self.evidence[s] = (player, float(mu), float(sigma))
                self.store.lik_pi[s] += sigma**-2
                self.store.lik_tau[s] += mu * sigma**-2

    def _margin(self, players: int) -> float:
        return draw_margin(self.p_draw, self.beta, players)

    def converge(
        self, tolerance: float = 1e-6, iterations: int = 30, since: float | None = None
    ) -> Convergence:
        """Pass messages until no belief moves by more than ``tolerance`` (skill units,
        in μ or σ), at most ``iterations`` times forward and backward in time.

        Only what changed is visited: the games added since the last call, then the
        appearances whose neighbours moved. ``since`` (a time) first marks every batch
        from that time on, to sweep them whatever changed. When ``iterations`` run out
        first, ``converged`` is False and what was still moving stays marked for the next
        call.
        """
        if since is not None:
            for b in range(self.batches.first_at(since), len(self.batches.times)):
                self.pending.setdefault(b, set()).update(self.batches.aps[b])
        current, self.pending = self.pending, {}
        passes = runs = 0
        forward = True
        while current and passes < 2 * iterations + 1:
            later, ran = self._sweep(current, forward, tolerance)
            runs += ran
            current, forward, passes = later, not forward, passes + 1
        self.pending = current
        return Convergence(not current, passes, runs)

    def _sweep(self, current: Scheduled, forward: bool, tolerance: float) -> tuple[Scheduled, int]:
        """One pass over the marked batches, in time order (``forward``) or against it;
        returns the marks left for the next pass and the number of games run."""
        store, batch_of = self.store, self.store.ap_batch
        ap_games = store.ap_games
        ahead, behind = (
            (store.ap_next, store.ap_prev) if forward else (store.ap_prev, store.ap_next)
        )
        sign = 1 if forward else -1
        heap = [sign * b for b in current]
        heapq.heapify(heap)
        later: Scheduled = {}
        runs = 0
        while heap:
            b = sign * heapq.heappop(heap)
            aps = current.pop(b)
            if len(aps) == len(self.batches.aps[b]):
                games = self.batches.games[b]
            else:
                games = sorted({g for s in aps for g in ap_games[s]})
            moved = store.visit(aps, games, tolerance)
            runs += len(games)
            for s in moved:
                if len(ap_games[s]) > 1:  # its other games here saw the old belief
                    later.setdefault(b, set()).add(s)
                t = ahead[s]
                if t >= 0:
                    marks = current.get(batch_of[t])
                    if marks is None:
                        marks = current[batch_of[t]] = set()
                        heapq.heappush(heap, sign * batch_of[t])
                    marks.add(t)
                t = behind[s]
                if t >= 0:
                    later.setdefault(batch_of[t], set()).add(t)
        return later, runs

    def posterior(self, player: PlayerId) -> tuple[float, float]:
        """The belief (μ, σ) of ``player``'s skill at their latest appearance (KeyError
        for a player never seen)."""
        return self.store.posterior(self.last[self.index[player]])

    def curve(self, player: PlayerId) -> list[tuple[float, float, float]]:
        """``player``'s smoothed beliefs (time, μ, σ) at each appearance, oldest first."""
        store, times = self.store, self.batches.times
        points = []
        s = self.last[self.index[player]]
        while s >= 0:
            points.append((times[store.ap_batch[s]], *store.posterior(s)))
            s = store.ap_prev[s]
        return points[::-1]

    def belief(self, player: PlayerId, time: float) -> tuple[float, float]:
        """The belief (μ, σ) about ``player``'s skill at ``time``: the latest appearance's
        belief, its variance grown by the player's γ² · (time − that appearance's time)
        (not below 0); a player never seen has their prior."""
        p = self.index.get(player)
        if p is None:
            return self.priors.get(player, (self.mu, self.sigma))
        s = self.last[p]
        mu, sigma = self.store.posterior(s)
        elapsed = max(time - self.batches.times[self.store.ap_batch[s]], 0.0)
        return mu, math.sqrt(sigma * sigma + self.store.drift2[p] * elapsed)

    def _performances(
        self, teams: Sequence[Sequence[PlayerId]], time: float, weights: Any
    ) -> list[tuple[float, float]]:
        """Each team's performance belief (mean, variance) at ``time``."""
        found = []
        for t, team in enumerate(teams):
            mean = var = 0.0
            for i, player in enumerate(team):
                w = 1.0 if weights is None else weights[t][i]
                mu, sigma = self.belief(player, time)
                mean += w * mu
                var += w * w * (sigma * sigma + self.beta**2)
            found.append((mean, var))
        return found

    def forecast(
        self,
        teams: Sequence[Sequence[PlayerId]],
        time: float,
        weights: Sequence[Sequence[float]] | None = None,
    ) -> tuple[float, float, float]:
        """The probabilities (team 0 wins, draw, team 1 wins) of a game between two teams
        at ``time``, each in [0, 1], summing to 1."""
        if len(teams) != 2:
            raise ValueError(f"forecast needs two teams, not {len(teams)}")
        (m0, v0), (m1, v1) = self._performances(teams, time, weights)
        sd = math.sqrt(v0 + v1)
        return outcomes(m0 - m1, sd, self._margin(len(teams[0]) + len(teams[1])))

    def win_probabilities(
        self,
        teams: Sequence[Sequence[PlayerId]],
        time: float,
        weights: Sequence[Sequence[float]] | None = None,
    ) -> list[float]:
        """Each team's probability of the best performance at ``time`` (draws ignored),
        by numerical integration; in [0, 1], summing to 1 (to about 1e-9)."""
        return win_probabilities(self._performances(teams, time, weights))

    def to_dict(self) -> dict[str, Any]:
        """A JSON-able snapshot: parameters, games and every message (exact floats)."""
        store = self.store
        return {
            "format": FORMAT,
            "params": [self.mu, self.sigma, self.beta, self.gamma, self.p_draw],
            "priors": [[p, *prior] for p, prior in self.priors.items()],
            "drifts": [[p, gamma] for p, gamma in self.drifts.items()],
            "batches": [
                [t, [[g.teams, g.results, g.weights] for g in map(self.inputs.__getitem__, gs)]]
                for t, gs in zip(self.batches.times, self.batches.games, strict=True)
            ],
            "evidence": [[s, *known] for s, known in self.evidence.items()],
            "messages": [list(getattr(store, name)) for name in MESSAGES],
            "pending": sorted([b, sorted(aps)] for b, aps in self.pending.items()),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ThroughTime:
        """The fit :meth:`to_dict` described, messages and all (no refit needed)."""
        if data.get("format") != FORMAT:
            raise ValueError(f"not a {FORMAT} snapshot: {data.get('format')!r}")
        mu, sigma, beta, gamma, p_draw = data["params"]
        priors = {p: (prior_mu, prior_sigma) for p, prior_mu, prior_sigma in data["priors"]}
        drifts = {p: own for p, own in data["drifts"]}
        fit = cls(mu, sigma, beta, gamma, p_draw, priors, drifts)
        for time, games in data["batches"]:
            fit.add(time, [Game(*g) for g in games])
        store = fit.store
        for s, player, known_mu, known_sigma in data["evidence"]:
            if not 0 <= s < len(store.ap_player) or fit.ids[store.ap_player[s]] != player:
                raise ValueError(f"snapshot's evidence about {player!r} fits no appearance")
            fit.evidence[s] = (player, float(known_mu), float(known_sigma))
        for name, values in zip(MESSAGES, data["messages"], strict=True):
            if len(values) != len(getattr(store, name)):
                raise ValueError(f"snapshot has {len(values)} {name}, the games need another")
            setattr(store, name, [float(x) for x in values])
        fit.pending = {b: set(aps) for b, aps in data["pending"]}
        return fit
