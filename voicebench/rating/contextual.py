"""Bradley-Terry with latency as a covariate: who is better at equal latency?

P(i beats j) = sigma(t_i - t_j + beta (x_i - x_j)), with x the log of the reply's time to
first audio in seconds (x = ln(TTFA / 1 s)). ``beta`` is shared: it says how much a judge's
preference moved with latency (judges read transcripts, so for them beta should be near 0;
a clearly non-zero beta means latency and quality are confounded across contestants, e.g.
bigger models are both slower and better). The ``t`` are the ratings with that effect
removed, in the spirit of style control in public arenas. Fitted by maximum likelihood with
scipy (L-BFGS-B, analytic gradient) under the same Gaussian prior on ``t`` as the plain fit.
Comparisons where either reply has no TTFA (human replies) are left out of this fit.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize

from voicebench.rating.bt import DEFAULT_PRIOR


@dataclass(frozen=True)
class ContextualFit:
    t: np.ndarray
    beta: float
    beta_se: float | None
    """Standard error of beta from the observed information (None if singular)."""
    comparisons: int


def fit_contextual(
    winner: np.ndarray,
    loser: np.ndarray,
    weight: np.ndarray,
    x_winner: np.ndarray,
    x_loser: np.ndarray,
    n_players: int,
    *,
    prior: float = DEFAULT_PRIOR,
) -> ContextualFit:
    winner = np.asarray(winner, dtype=int)
    loser = np.asarray(loser, dtype=int)
    w = np.asarray(weight, dtype=float)
    dx = np.asarray(x_winner, dtype=float) - np.asarray(x_loser, dtype=float)

    def objective(params: np.ndarray) -> tuple[float, np.ndarray]:
        t, beta = params[:-1], params[-1]
        z = t[winner] - t[loser] + beta * dx
        # -log sigma(z) = log(1 + exp(-z)), computed stably
        nll = np.sum(w * np.logaddexp(0.0, -z)) + 0.5 * prior * np.sum(t * t)
        r = w * (1.0 / (1.0 + np.exp(z)))  # d(-log sigma)/dz = -(1 - sigma(z))
        grad_t = -np.bincount(winner, r, n_players) + np.bincount(loser, r, n_players) + prior * t
        grad_beta = -np.sum(r * dx)
        return nll, np.append(grad_t, grad_beta)

    res = minimize(
        objective,
        np.zeros(n_players + 1),
        jac=True,
        method="L-BFGS-B",
        options={"maxiter": 1000, "gtol": 1e-9},
    )
    t, beta = res.x[:-1], float(res.x[-1])
    beta_se = _beta_se(t, beta, winner, loser, w, dx, n_players, prior)
    return ContextualFit(t=t, beta=beta, beta_se=beta_se, comparisons=len(w))


def _beta_se(t, beta, winner, loser, w, dx, n, prior) -> float | None:
    z = t[winner] - t[loser] + beta * dx
    p = 1.0 / (1.0 + np.exp(-z))
    c = w * p * (1.0 - p)
    H = np.zeros((n + 1, n + 1))
    # design row per comparison: +1 at winner, -1 at loser, dx at beta
    np.add.at(H, (winner, winner), c)
    np.add.at(H, (loser, loser), c)
    np.add.at(H, (winner, loser), -c)
    np.add.at(H, (loser, winner), -c)
    np.add.at(H, (winner, n), c * dx)
    np.add.at(H, (loser, n), -c * dx)
    H[n, :n] = H[:n, n]
    H[n, n] = np.sum(c * dx * dx)
    H[np.arange(n), np.arange(n)] += prior
    try:
        cov = np.linalg.inv(H)
    except np.linalg.LinAlgError:
        return None
    var = cov[n, n]
    return float(np.sqrt(var)) if var > 0 and np.isfinite(var) else None
