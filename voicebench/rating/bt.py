"""Strength-weighted Bradley-Terry, fitted by Newton's method on a win matrix.

Model: P(i beats j) = exp(t_i) / (exp(t_i) + exp(t_j)). A decided comparison in which i beat
j with strength s (1-5) adds s to ``W[i, j]``; the weighted log-likelihood is

    L(t) = sum_ij W_ij log sigma(t_i - t_j)  -  (prior / 2) sum_i t_i^2

The Gaussian prior (precision ``prior``, default 0.1, i.e. a standard deviation of about
3.2 on the log-strength scale, or ~1,370 Elo) keeps an undefeated or winless contestant's
rating finite and makes the problem strictly concave, so Newton converges in a few steps
and ratings are unique without pinning one player. With a few dozen comparisons per
contestant its pull is small (the paper's scale: hundreds per contestant).

Comparisons are aggregated per item into win matrices first, so a fit costs O(players^2)
per step whatever the number of comparisons, and a bootstrap round (items resampled with
replacement) is one weighted sum of item matrices. All rounds are fitted at once: the
Newton steps are batched over rounds.

Elo_i = 400 (t_i - mean t) / ln 10 + 1500.
"""

from __future__ import annotations

import math

import numpy as np

ELO_SCALE = 400.0 / math.log(10.0)
ELO_BASE = 1500.0
DEFAULT_PRIOR = 0.1


def win_matrices(
    item_index: np.ndarray,
    winner: np.ndarray,
    loser: np.ndarray,
    weight: np.ndarray,
    n_items: int,
    n_players: int,
) -> np.ndarray:
    """(items, players, players) array: total weight of row beating column on each item."""
    out = np.zeros((n_items, n_players, n_players))
    np.add.at(out, (item_index, winner, loser), weight)
    return out


def fit(
    W: np.ndarray, *, prior: float = DEFAULT_PRIOR, tol: float = 1e-10, max_iter: int = 100
) -> np.ndarray:
    """Ratings ``t`` for one win matrix (n, n) or a batch (B, n, n); returns (n,) or (B, n)."""
    single = W.ndim == 2
    W = W[None] if single else W
    if prior <= 0:
        raise ValueError("prior must be positive: it keeps ratings finite and unique")
    B, n, _ = W.shape
    N = W + W.transpose(0, 2, 1)
    t = np.zeros((B, n))
    eye = np.eye(n)
    for _ in range(max_iter):
        d = t[:, :, None] - t[:, None, :]
        P = 1.0 / (1.0 + np.exp(-d))
        grad = (W - N * P).sum(axis=2) - prior * t
        C = N * P * (1.0 - P)
        H = C - eye * (C.sum(axis=2) + prior)[:, :, None]  # negative definite
        step = np.linalg.solve(H, grad[:, :, None])[:, :, 0]
        t = t - step
        if np.max(np.abs(step)) < tol:
            break
    return t[0] if single else t


def to_elo(t: np.ndarray) -> np.ndarray:
    """Elo from log-strengths (last axis = players)."""
    return ELO_SCALE * (t - t.mean(axis=-1, keepdims=True)) + ELO_BASE


def asymptotic_half_width(n_comparisons: np.ndarray, z: float = 1.96) -> np.ndarray:
    """Half-width of the paper's 95% interval in Elo points: z * sqrt(1 / n_i) on the
    log-strength scale. Infinite for a contestant with no comparisons."""
    n = np.asarray(n_comparisons, dtype=float)
    with np.errstate(divide="ignore"):
        se = np.where(n > 0, np.sqrt(1.0 / np.maximum(n, 1e-300)), np.inf)
    return z * se * ELO_SCALE


def bootstrap_elo(
    item_W: np.ndarray,
    *,
    rounds: int = 1000,
    seed: int = 0,
    prior: float = DEFAULT_PRIOR,
    chunk: int = 250,
) -> np.ndarray:
    """(rounds, players) Elo from refits on items resampled with replacement."""
    rng = np.random.default_rng(seed)
    n_items, n, _ = item_W.shape
    flat = item_W.reshape(n_items, n * n)
    out = np.empty((rounds, n))
    for start in range(0, rounds, chunk):
        b = min(chunk, rounds - start)
        counts = rng.multinomial(n_items, np.full(n_items, 1.0 / n_items), size=b)
        W = (counts @ flat).reshape(b, n, n)
        out[start : start + b] = to_elo(fit(W, prior=prior))
    return out
