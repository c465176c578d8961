"""The weights of a checklist judge (``method = "checklist"``), fitted on labelled pairs.

A pair's features are each question's margin of reply A over reply B; the pair goes to A when
the weighed sum is positive. The weights are a logistic regression without intercept (a pair
and its mirror image get opposite features and opposite labels), L2-regularized:
P(A is better) = sigmoid(w . x), minimizing the summed log-loss plus strength/2 |w|^2. The
strength is chosen by k-fold cross-validation on the same pairs (``choose``), so the figure
it reports was not tuned on the pairs it is measured on. ``benchmarks/fit_checklist.py``
fits a spec's weights on the gold set's dev pairs.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np
from scipy.optimize import minimize

STRENGTHS = (0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0)
"""L2 strengths tried by ``choose``."""
FOLDS = 10


def fit(x: np.ndarray, y: np.ndarray, strength: float) -> np.ndarray:
    """Weights for features ``x`` (pairs x questions) and labels ``y`` (+1: A is better,
    -1: B is)."""

    def loss(w: np.ndarray) -> tuple[float, np.ndarray]:
        z = y * (x @ w)
        value = np.logaddexp(0.0, -z).sum() + strength / 2 * w @ w
        grad = -(x * (y / (1.0 + np.exp(z)))[:, None]).sum(axis=0) + strength * w
        return float(value), grad

    return minimize(loss, np.zeros(x.shape[1]), jac=True, method="L-BFGS-B").x


def folds_of(groups: Sequence[str], folds: int = FOLDS) -> np.ndarray:
    """Each pair's fold, by its group (its conversation) alone, so that pairs of one
    conversation are never both fitted and decided."""
    return np.array(
        [int(hashlib.sha256(g.encode("utf-8")).hexdigest()[:8], 16) % folds for g in groups]
    )


def cross_validated(
    x: np.ndarray,
    y: np.ndarray,
    strength: float,
    folds: int = FOLDS,
    groups: Sequence[str] | None = None,
) -> float:
    """Share of pairs right when each fold (every ``folds``-th pair, or the pairs of every
    ``folds``-th group) is decided by weights fitted on the others."""
    fold = np.arange(len(y)) % folds if groups is None else folds_of(groups, folds)
    right = 0
    for k in range(folds):
        if not (fold == k).any():
            continue
        w = fit(x[fold != k], y[fold != k], strength)
        right += int((np.sign(x[fold == k] @ w) == y[fold == k]).sum())
    return right / len(y)


def choose(
    x: np.ndarray,
    y: np.ndarray,
    strengths: tuple[float, ...] = STRENGTHS,
    groups: Sequence[str] | None = None,
) -> tuple[float, dict[float, float]]:
    """The strength with the best cross-validated accuracy (ties: the stronger), and every
    strength's (folds by ``groups`` when given)."""
    scores = {s: cross_validated(x, y, s, groups=groups) for s in strengths}
    return max(strengths, key=lambda s: (scores[s], s)), scores
