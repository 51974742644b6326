"""The message store of a TrueSkill Through Time fit, and one visit of a batch.

A player's *appearance* is their skill at one batch (one time). Appearances of a player
are chained in time: the forward message into an appearance is the previous appearance's
belief without its own backward message, its variance grown by γ² · elapsed; the
backward message is the next appearance's belief without its forward message, grown the
same way. Within a batch, each game sends every participant a message (see
``_ttt_game``); an appearance's likelihood is the product of its games' messages.

Every Gaussian is kept in natural parameters (π = 1/σ², τ = μ/σ²) in flat lists indexed
by appearance (``fwd``, ``bwd``, ``lik``) or by a game's slot (``msg``), so that the
store is a few lists of floats and a snapshot is those lists.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable

from ._ttt_game import (
    INV_SQRT_2PI,
    SQRT2,
    TAIL,
    moments,
    player_message,
    team_messages,
)

DUEL, TEAMS = 0, 1
"""Game kinds: two single players with unit weights (the fast path), anything else."""


class StoredGame:
    """One stored game: its appearances per team sorted best first, and what the math
    needs of it.

    Attributes:
        kind: :data:`DUEL` or :data:`TEAMS`.
        first: the index of its first slot in the ``msg`` lists (slots follow ``aps``).
        aps: the appearance of each slot, teams sorted best first, flat.
        bounds: where each sorted team starts in ``aps``, plus the end.
        weights: each slot's weight (≥ 0), or None for all 1.
        ties: for each sorted neighbour pair, whether it is a draw.
        margins: for each sorted neighbour pair, the draw margin (skill units).
    """

    __slots__ = ("aps", "bounds", "first", "kind", "margins", "ties", "weights")

    def __init__(
        self,
        first: int,
        aps: list[int],
        bounds: list[int],
        weights: list[float] | None,
        ties: list[bool],
        margins: list[float],
    ) -> None:
        duel = len(bounds) == 3 and len(aps) == 2 and weights is None
        self.kind = DUEL if duel else TEAMS
        self.first, self.aps, self.bounds = first, aps, bounds
        self.weights, self.ties, self.margins = weights, ties, margins


class Store:
    """The messages of a fit and the structure they live on.

    Attributes:
        beta2: β², the performance variance (skill units²).
        prior_pi, prior_tau: each player's prior, by player index.
        drift2: each player's drift variance per time unit (their γ²), by player index.
        ap_player, ap_batch, ap_prev, ap_next, ap_growth: each appearance's player,
            batch, previous and next appearance of the same player (-1: none), and the
            variance the skill gained since the previous one (γ² · elapsed time; 0 for a
            first appearance).
        ap_games: the games of each appearance (indexes into ``games``).
        fwd_pi, fwd_tau, bwd_pi, bwd_tau, lik_pi, lik_tau: each appearance's forward,
            backward and likelihood messages.
        told_mu, told_sigma: each appearance's belief (μ, σ) as its neighbours were last
            told of it: a belief counts as moved once it is more than the tolerance from
            these, so that small moves add up instead of being dropped one by one.
        msg_pi, msg_tau: the message each game slot sends its appearance.
        games: every game, in the order added.
    """

    __slots__ = (
        "ap_batch", "ap_games", "ap_growth", "ap_next", "ap_player", "ap_prev",
        "beta2", "bwd_pi", "bwd_tau", "drift2", "fwd_pi", "fwd_tau", "games",
        "lik_pi", "lik_tau", "msg_pi", "msg_tau", "prior_pi", "prior_tau",
        "told_mu", "told_sigma",
    )  # fmt: skip

    def __init__(self, beta: float) -> None:
        self.beta2 = beta * beta
        self.prior_pi: list[float] = []
        self.prior_tau: list[float] = []
        self.drift2: list[float] = []
        self.ap_player: list[int] = []
        self.ap_batch: list[int] = []
        self.ap_prev: list[int] = []
        self.ap_next: list[int] = []
        self.ap_growth: list[float] = []
        self.ap_games: list[list[int]] = []
        self.fwd_pi: list[float] = []
        self.fwd_tau: list[float] = []
        self.bwd_pi: list[float] = []
        self.bwd_tau: list[float] = []
        self.lik_pi: list[float] = []
        self.lik_tau: list[float] = []
        self.msg_pi: list[float] = []
        self.msg_tau: list[float] = []
        self.told_mu: list[float] = []
        self.told_sigma: list[float] = []
        self.games: list[StoredGame] = []

    def new_appearance(self, player: int, batch: int, prev: int, elapsed: float) -> int:
        """Add an appearance of ``player`` at ``batch`` after appearance ``prev`` (-1 for
        a first appearance), ``elapsed`` time units later; returns its index."""
        s = len(self.ap_player)
        self.ap_player.append(player)
        self.ap_batch.append(batch)
        self.ap_prev.append(prev)
        self.ap_next.append(-1)
        self.ap_growth.append(self.drift2[player] * elapsed)
        self.ap_games.append([])
        if prev >= 0:
            self.ap_next[prev] = s
        for column in (self.bwd_pi, self.bwd_tau, self.lik_pi, self.lik_tau):
            column.append(0.0)
        self.fwd_pi.append(self.prior_pi[player])
        self.fwd_tau.append(self.prior_tau[player])
        self.told_mu.append(self.prior_tau[player] / self.prior_pi[player])
        self.told_sigma.append(self.prior_pi[player] ** -0.5)
        return s

    def new_game(self, game: StoredGame) -> None:
        """Store ``game`` (its slots start flat) and link it to its appearances."""
        g = len(self.games)
        self.games.append(game)
        for s in game.aps:
            self.ap_games[s].append(g)
            self.msg_pi.append(0.0)
            self.msg_tau.append(0.0)

    def posterior(self, s: int) -> tuple[float, float]:
        """The belief (μ, σ) of appearance ``s``."""
        pi = self.fwd_pi[s] + self.bwd_pi[s] + self.lik_pi[s]
        return (self.fwd_tau[s] + self.bwd_tau[s] + self.lik_tau[s]) / pi, pi**-0.5

    def refresh(self, aps: Iterable[int]) -> None:
        """Recompute the forward and backward messages into ``aps`` from their neighbours."""
        fwd_pi, fwd_tau, bwd_pi, bwd_tau = self.fwd_pi, self.fwd_tau, self.bwd_pi, self.bwd_tau
        lik_pi, lik_tau, growth = self.lik_pi, self.lik_tau, self.ap_growth
        ap_prev, ap_next = self.ap_prev, self.ap_next
        for s in aps:
            prev, nxt = ap_prev[s], ap_next[s]
            if prev >= 0:
                pi = fwd_pi[prev] + lik_pi[prev]
                var = 1.0 / pi + growth[s]
                fwd_pi[s] = 1.0 / var
                fwd_tau[s] = (fwd_tau[prev] + lik_tau[prev]) / (pi * var)
            if nxt >= 0:
                pi = bwd_pi[nxt] + lik_pi[nxt]
                if pi > 0.0:
                    var = 1.0 / pi + growth[nxt]
                    bwd_pi[s] = 1.0 / var
                    bwd_tau[s] = (bwd_tau[nxt] + lik_tau[nxt]) / (pi * var)
                else:
                    bwd_pi[s] = bwd_tau[s] = 0.0

    def visit(self, aps: Iterable[int], games: list[int], tolerance: float) -> list[int]:
        """Refresh the messages into ``aps``, run ``games`` once each (in order), and
        return the appearances whose belief is now more than ``tolerance`` (in μ or σ)
        from what their neighbours were last told (``told_mu``, ``told_sigma``, updated
        for those returned)."""
        fwd_pi, fwd_tau, bwd_pi, bwd_tau = self.fwd_pi, self.fwd_tau, self.bwd_pi, self.bwd_tau
        lik_pi, lik_tau = self.lik_pi, self.lik_tau
        told_mu, told_sigma = self.told_mu, self.told_sigma
        all_games = self.games
        self.refresh(aps)
        self.run(games)
        moved = []
        for s in {s for g in games for s in all_games[g].aps}:
            pi = fwd_pi[s] + bwd_pi[s] + lik_pi[s]
            mu, sigma = (fwd_tau[s] + bwd_tau[s] + lik_tau[s]) / pi, pi**-0.5
            if abs(mu - told_mu[s]) > tolerance or abs(sigma - told_sigma[s]) > tolerance:
                moved.append(s)
                told_mu[s], told_sigma[s] = mu, sigma
        return moved

    def run(self, games: list[int]) -> None:
        """Run ``games`` once each, in order (two single players inline, the rest through
        :meth:`teams`)."""
        fwd_pi, fwd_tau, bwd_pi, bwd_tau = self.fwd_pi, self.fwd_tau, self.bwd_pi, self.bwd_tau
        msg_pi, msg_tau, lik_pi, lik_tau = self.msg_pi, self.msg_tau, self.lik_pi, self.lik_tau
        beta2x2, exp, erfc, sqrt = 2.0 * self.beta2, math.exp, math.erfc, math.sqrt
        for g in games:
            game = self.games[g]
            if game.kind != DUEL:
                self.teams(game)
                continue
            k = game.first
            a, b = game.aps
            pa = fwd_pi[a] + bwd_pi[a] + lik_pi[a] - msg_pi[k]
            pb = fwd_pi[b] + bwd_pi[b] + lik_pi[b] - msg_pi[k + 1]
            mu_a = (fwd_tau[a] + bwd_tau[a] + lik_tau[a] - msg_tau[k]) / pa
            mu_b = (fwd_tau[b] + bwd_tau[b] + lik_tau[b] - msg_tau[k + 1]) / pb
            var_a, var_b = 1.0 / pa, 1.0 / pb
            s2 = var_a + var_b + beta2x2
            sd = sqrt(s2)
            x = (mu_a - mu_b - game.margins[0]) / sd
            if game.ties[0] or x < TAIL:
                v, w = moments(mu_a - mu_b, sd, game.margins[0], game.ties[0])
            else:  # φ(x) / Φ(x), written out: the common case
                v = INV_SQRT_2PI * exp(-0.5 * x * x) / (0.5 * erfc(-x / SQRT2))
                w = v * (v + x)
            if w <= 0.0:
                v = w = 0.0
            den_a, den_b = s2 - w * var_a, s2 - w * var_b
            new_pa, new_ta = w / den_a, (w * mu_a + sd * v) / den_a
            new_pb, new_tb = w / den_b, (w * mu_b - sd * v) / den_b
            lik_pi[a] += new_pa - msg_pi[k]
            lik_tau[a] += new_ta - msg_tau[k]
            lik_pi[b] += new_pb - msg_pi[k + 1]
            lik_tau[b] += new_tb - msg_tau[k + 1]
            msg_pi[k], msg_tau[k], msg_pi[k + 1], msg_tau[k + 1] = new_pa, new_ta, new_pb, new_tb

    def teams(self, game: StoredGame) -> None:
        """Run any other game: team performances, the comparisons, back to the players."""
        k0, aps, bounds = game.first, game.aps, game.bounds
        weights = game.weights or [1.0] * len(aps)
        cavity = []
        for i, s in enumerate(aps):
            pi = self.fwd_pi[s] + self.bwd_pi[s] + self.lik_pi[s] - self.msg_pi[k0 + i]
            tau = self.fwd_tau[s] + self.bwd_tau[s] + self.lik_tau[s] - self.msg_tau[k0 + i]
            cavity.append((tau / pi, 1.0 / pi))
        means, variances = [], []
        for lo, hi in itertools.pairwise(bounds):
            means.append(sum(weights[i] * cavity[i][0] for i in range(lo, hi)))
            variances.append(
                sum(weights[i] ** 2 * (cavity[i][1] + self.beta2) for i in range(lo, hi))
            )
        received = team_messages(means, variances, game.margins, game.ties)
        for t, (lo, hi) in enumerate(itertools.pairwise(bounds)):
            for i in range(lo, hi):
                mu, var = cavity[i]
                pi, tau = player_message(received[t], means[t], variances[t], mu, var, weights[i])
                s, k = aps[i], k0 + i
                self.lik_pi[s] += pi - self.msg_pi[k]
                self.lik_tau[s] += tau - self.msg_tau[k]
                self.msg_pi[k], self.msg_tau[k] = pi, tau
