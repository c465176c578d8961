"""Bradley-Terry against closed forms, the paper's formulas, scipy, and known strengths."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.optimize import minimize
from scipy.stats import spearmanr

from voicebench.rating import (
    ELO_SCALE,
    asymptotic_half_width,
    bootstrap_elo,
    fit,
    fit_contextual,
    to_elo,
    win_matrices,
)

TINY = 1e-9  # a prior too weak to matter where the data pin the ratings down


def test_two_players_rating_gap_is_the_log_odds_of_their_record():
    W = np.array([[0.0, 3.0], [1.0, 0.0]])  # 3 (strength-weighted) wins to 1
    t = fit(W, prior=TINY)
    assert t[0] - t[1] == pytest.approx(math.log(3.0), abs=1e-6)
    elo = to_elo(t)
    assert elo[0] - elo[1] == pytest.approx(400 * math.log10(3.0), abs=1e-4)  # 190.85
    assert elo.mean() == pytest.approx(1500.0)


def test_strength_weights_count_as_repeated_wins():
    # One win at strength 4 against one at strength 1 is the record 4:1.
    t = fit(
        win_matrices(
            np.array([0, 0]), np.array([0, 1]), np.array([1, 0]), np.array([4.0, 1.0]), 1, 2
        )[0],
        prior=TINY,
    )
    assert t[0] - t[1] == pytest.approx(math.log(4.0), abs=1e-6)


def test_three_players_recover_exact_strengths_from_expected_records():
    p = np.array([4.0, 2.0, 1.0])
    N = 60.0
    W = np.array([[0 if i == j else N * p[i] / (p[i] + p[j]) for j in range(3)] for i in range(3)])
    t = fit(W, prior=TINY)
    assert t - t.mean() == pytest.approx(np.log(p) - np.log(p).mean(), abs=1e-6)


def test_an_undefeated_player_gets_a_finite_rating_from_the_prior():
    W = np.array([[0.0, 5.0, 5.0], [0.0, 0.0, 2.0], [0.0, 1.0, 0.0]])
    t = fit(W)  # default prior 0.1
    assert np.all(np.isfinite(t)) and t[0] > t[1] > t[2]
    # The stationarity condition of the penalised likelihood holds exactly.
    P = 1 / (1 + np.exp(-(t[:, None] - t[None, :])))
    grad = (W - (W + W.T) * P).sum(axis=1) - 0.1 * t
    assert grad == pytest.approx(np.zeros(3), abs=1e-8)


def test_newton_agrees_with_scipy_maximum_likelihood():
    rng = np.random.default_rng(3)
    W = rng.integers(0, 6, size=(6, 6)).astype(float)
    np.fill_diagonal(W, 0)

    def nll(t):
        d = t[:, None] - t[None, :]
        return np.sum(W * np.logaddexp(0, -d)) + 0.05 * np.sum(t * t)

    ref = minimize(nll, np.zeros(6), method="BFGS", options={"gtol": 1e-10}).x
    assert fit(W) == pytest.approx(ref, abs=1e-5)


def test_batched_fits_equal_single_fits():
    rng = np.random.default_rng(4)
    Ws = rng.integers(0, 5, size=(7, 5, 5)).astype(float)
    batch = fit(Ws)
    for b in range(7):
        assert batch[b] == pytest.approx(fit(Ws[b]), abs=1e-9)


def test_the_papers_asymptotic_interval():
    half = asymptotic_half_width(np.array([100, 25, 0]))
    assert half[0] == pytest.approx(1.96 * 0.1 * ELO_SCALE)  # 34.05 Elo
    assert half[1] == pytest.approx(1.96 * 0.2 * ELO_SCALE)
    assert math.isinf(half[2])


def synthetic(n_players=20, n_items=300, n_comparisons=42_000, seed=0):
    rng = np.random.default_rng(seed)
    truth = rng.normal(0, 1, n_players)
    i = rng.integers(0, n_players, n_comparisons)
    j = (i + rng.integers(1, n_players, n_comparisons)) % n_players
    p = 1 / (1 + np.exp(-(truth[i] - truth[j])))
    i_wins = rng.random(n_comparisons) < p
    winner, loser = np.where(i_wins, i, j), np.where(i_wins, j, i)
    strength = rng.integers(1, 6, n_comparisons).astype(float)
    items = rng.integers(0, n_items, n_comparisons)
    return truth, win_matrices(items, winner, loser, strength, n_items, n_players)


def test_known_strengths_are_recovered_at_scale():
    truth, item_W = synthetic()
    t = fit(item_W.sum(axis=0))
    assert np.corrcoef(t, truth)[0, 1] > 0.99
    assert spearmanr(t, truth).statistic > 0.99


def test_bootstrap_is_seeded_and_brackets_the_estimate():
    _truth, item_W = synthetic(n_players=5, n_items=60, n_comparisons=3000, seed=1)
    a = bootstrap_elo(item_W, rounds=200, seed=7)
    b = bootstrap_elo(item_W, rounds=200, seed=7)
    assert np.array_equal(a, b) and a.shape == (200, 5)
    elo = to_elo(fit(item_W.sum(axis=0)))
    lo, hi = np.percentile(a, [2.5, 97.5], axis=0)
    assert np.all(lo <= elo) and np.all(elo <= hi)
    assert np.all(hi - lo < 120)


def test_contextual_fit_separates_latency_from_quality():
    rng = np.random.default_rng(5)
    n, m = 4, 20_000
    quality = np.array([0.8, 0.2, -0.3, -0.7])
    beta = -0.9  # slower replies lose more often than their quality says
    i = rng.integers(0, n, m)
    j = (i + rng.integers(1, n, m)) % n
    xi, xj = rng.normal(0, 0.5, m), rng.normal(0, 0.5, m)
    p = 1 / (1 + np.exp(-(quality[i] - quality[j] + beta * (xi - xj))))
    win_i = rng.random(m) < p
    fit_ = fit_contextual(
        np.where(win_i, i, j),
        np.where(win_i, j, i),
        np.ones(m),
        np.where(win_i, xi, xj),
        np.where(win_i, xj, xi),
        n,
        prior=TINY,
    )
    assert fit_.beta == pytest.approx(beta, abs=0.08)
    assert fit_.beta_se is not None and 0 < fit_.beta_se < 0.05
    assert fit_.t - fit_.t.mean() == pytest.approx(quality - quality.mean(), abs=0.06)
