"""Percentile-bootstrap 95% intervals, one helper for every figure that has one.

``scipy.stats.bootstrap`` (percentile method, seeded, vectorized) does the resampling:
``percentiles`` resamples observations (latency percentiles over turns; ``mean`` likewise,
for a mean such as callers' change of intensity), ``difference`` two samples independently (a
statistic's change between two runs), ``clustered_share`` resamples clusters, each with its
count of successes and of trials (agreement over items, so the pairs of one item stay
together). With a single observation or cluster every resample is
the same, so the interval is the point itself. The Bradley-Terry bootstrap, which refits a
whole rating per resample, batches its own resamples (``voicebench.rating.bt``). A share of
independent trials (a judge right on gold pairs, turns that failed) has its Wilson score
interval instead, ``wilson``, written here once for all of them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

LEVEL = 0.95
ROUNDS = 1000


def _bounds(
    data: tuple[np.ndarray, ...],
    statistic: Callable[..., np.ndarray],
    *,
    paired: bool,
    rounds: int,
    seed: int,
) -> tuple[np.ndarray, np.ndarray]:
    """The 95% percentile-bootstrap bounds of ``statistic`` over ``data`` (seeded, vectorized):
    the one call every interval here makes (scipy is imported here, not at start: a command
    that draws no interval starts without it)."""
    from scipy import stats

    ci = stats.bootstrap(
        data,
        statistic,
        paired=paired,
        vectorized=True,
        method="percentile",
        n_resamples=rounds,
        confidence_level=LEVEL,
        random_state=seed,
    ).confidence_interval
    return np.asarray(ci.low), np.asarray(ci.high)


def percentiles(
    values: Sequence[float] | np.ndarray,
    qs: Sequence[float],
    *,
    rounds: int = ROUNDS,
    seed: int = 0,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The ``qs`` percentiles of ``values`` and their interval bounds: (point, low, high)."""
    x = np.asarray(values, dtype=float)
    point = np.percentile(x, qs)
    if x.size < 2:
        return point, point.copy(), point.copy()
    low, high = _bounds(
        (x,),
        lambda s, axis: np.percentile(s, qs, axis=axis),
        paired=False,
        rounds=rounds,
        seed=seed,
    )
    return point, low, high


def mean(
    values: Sequence[float] | np.ndarray, *, rounds: int = ROUNDS, seed: int = 0
) -> tuple[float, float, float]:
    """The mean of ``values`` and its interval bounds: (mean, low, high)."""
    x = np.asarray(values, dtype=float)
    point = float(x.mean())
    if x.size < 2 or np.all(x == x[0]):
        return point, point, point
    low, high = _bounds(
        (x,), lambda s, axis: s.mean(axis=axis), paired=False, rounds=rounds, seed=seed
    )
    return point, float(low), float(high)


def clustered_share(
    successes: Sequence[float] | np.ndarray,
    trials: Sequence[float] | np.ndarray,
    *,
    rounds: int = ROUNDS,
    seed: int = 0,
) -> tuple[float, float, float]:
    """Total successes over total trials, with clusters (one entry each) resampled:
    (share, low, high). Every cluster must have at least one trial."""
    s, n = np.asarray(successes, dtype=float), np.asarray(trials, dtype=float)
    share = float(s.sum() / n.sum())
    if s.size < 2:
        return share, share, share
    low, high = _bounds(
        (s, n), lambda a, b, axis: a.sum(axis) / b.sum(axis), paired=True, rounds=rounds, seed=seed
    )
    return share, float(low), float(high)


def difference(
    base: np.ndarray,
    new: np.ndarray,
    statistic: Callable[..., np.ndarray],
    *,
    rounds: int = ROUNDS,
    seed: int = 0,
) -> tuple[float, float, float]:
    """``statistic(new) - statistic(base)`` with the two samples resampled independently:
    (change, low, high). ``statistic`` takes an array and ``axis``."""
    point = float(statistic(new, axis=-1) - statistic(base, axis=-1))
    if base.size < 2 or new.size < 2:
        return point, point, point
    low, high = _bounds(
        (base, new),
        lambda b, n, axis: statistic(n, axis=axis) - statistic(b, axis=axis),
        paired=False,
        rounds=rounds,
        seed=seed,
    )
    return point, float(low), float(high)


def wilson(successes: int, trials: int) -> tuple[float, float, float] | None:
    """A share of trials with its 95% Wilson score interval: (share, low, high); None for no
    trials."""
    if trials == 0:
        return None
    from scipy import stats

    ci = stats.binomtest(successes, trials).proportion_ci(confidence_level=LEVEL, method="wilson")
    return successes / trials, float(ci.low), float(ci.high)
