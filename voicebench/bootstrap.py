"""Percentile-bootstrap 95% intervals, one helper for every figure that has one.

Observations that vary together (the turns of one dialogue share a seeker, a history and a
connection) are resampled together: ``clustered`` draws whole clusters with replacement and
computes each statistic on the turns they bring (``weighted_percentile``, ``weighted_mean``:
a cluster drawn twice counts twice), ``clustered_difference`` does so for two runs
independently, and both widen the plain percentile interval for the number of clusters
(``expanded_levels``); ``clusters_needed`` says how many clusters a percentile's interval needs.

``scipy.stats.bootstrap`` (percentile method, seeded, vectorized) does the resampling:
``percentiles`` resamples observations (latency percentiles over turns; ``mean`` likewise,
for a mean such as callers' change of intensity), ``difference`` two samples
independently, observation by observation (the turn-level comparison ``benchmarks/coverage.py``
measures against the clustered one), ``cluster_ratio`` resamples clusters, each with its
count of successes and of trials (agreement over items, so the pairs of one item stay
together; a word error rate over dialogues), and ``clustered_share`` gives a share of turns
over resampled dialogues, the Wilson interval of as many trials as clusters where every
resample is the same (a share of 0 or 1). With a single observation or cluster every resample is
the same, so the interval is the point itself. The Bradley-Terry bootstrap, which refits a
whole rating per resample, batches its own resamples (``voicebench.rating.bt``). A share of
independent trials (a judge right on gold pairs, turns that failed) has its Wilson score
interval instead, ``wilson``, written here once for all of them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

LEVEL = 0.95
ROUNDS = 1000
TAIL_CLUSTERS = 3
"""A percentile's interval over resampled clusters holds what it says only when at least this
many clusters are expected beyond it: a p90 of fewer than 30 dialogues rests on one or two
(``benchmarks/coverage.py`` measures it)."""
TAIL_WIDENING = 1.25
"""A percentile in a tail is pinned down by the clusters that reach it, not by all of them:
its interval is widened (``expanded_levels``) as if it rested on ``clusters x (tail / 50)``
to this power, the tail being the smaller of q and 100 - q (all the clusters for a median; for
a p90, 13% of them). 0 widens every statistic for all the clusters alike. Chosen with
``benchmarks/coverage.py --tail-widening`` on seed 0 (p90 covered at 30 and 60 dialogues:
88-92% with 0, 92-98% with 1, 93.5-98% with 1.25, 95-98% with 1.5) and reported on seed 2."""
MIN_TURNS = 10
"""Turns a side needs before a comparison says anything from an interval."""
TOO_FEW = "too few to tell"


def clusters_needed(q: float = 50.0) -> int:
    """Clusters an interval of the ``q`` percentile needs (a mean's or a share's: as the
    median's): 6 for p50, 30 for p90, 60 for p95, 300 for p99."""
    tail = min(q, 100.0 - q) / 100.0  # 0 < q < 100
    return math.ceil(TAIL_CLUSTERS / tail - 1e-9)


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


def cluster_ratio(
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


Stat = Callable[[np.ndarray, np.ndarray], np.ndarray]
"""A statistic of observations ``x`` (n,) under weights ``w`` (rounds, n), one per round: the
observations each counted as often as its weight (a cluster drawn twice counts its turns
twice)."""


class weighted_percentile:
    """The ``q`` percentile (0-100) of the weighted observations, as ``np.percentile``'s
    linear interpolation gives it on the observations repeated by their weights."""

    def __init__(self, q: float) -> None:
        self.q = q

    def __call__(self, x: np.ndarray, w: np.ndarray) -> np.ndarray:
        order = np.argsort(x, kind="stable")
        xs, cw = x[order], np.cumsum(w[:, order], axis=1)
        n = cw[:, -1]
        h = (n - 1) * self.q / 100.0
        lower = np.floor(h)
        upper = np.minimum(lower + 1, n - 1)

        def at(position: np.ndarray) -> np.ndarray:  # the value at a repeated position
            return xs[np.minimum((cw <= position[:, None]).sum(axis=1), xs.size - 1)]

        below = at(lower)
        return below + (h - lower) * (at(upper) - below)


def tail_clusters(clusters: int, stat: Stat) -> float:
    """The clusters that pin a statistic down, for widening its interval: all of them for a
    mean or a median, fewer for a percentile in a tail (``TAIL_WIDENING``)."""
    q = getattr(stat, "q", 50.0)
    tail = min(q, 100.0 - q) / 50.0
    return clusters * tail**TAIL_WIDENING


def weighted_mean(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """The weighted mean (a share, for observations of 0 and 1)."""
    return (w @ x) / w.sum(axis=1)


def cluster_weights(clusters: Sequence[str], *, rounds: int, seed: int) -> np.ndarray:
    """Each observation's weight in each of ``rounds`` resamples that draw whole clusters with
    replacement (as many as there are): (rounds, n), the count of its cluster's draws."""
    _, inverse = np.unique(np.asarray(clusters, dtype=object), return_inverse=True)
    k = int(inverse.max()) + 1 if inverse.size else 0
    draws = np.random.default_rng(seed).integers(0, k, size=(rounds, k))
    flat = (draws + np.arange(rounds)[:, None] * k).ravel()
    counts = np.bincount(flat, minlength=rounds * k).reshape(rounds, k)
    return counts[:, inverse].astype(float)


def expanded_levels(clusters: float) -> tuple[float, float]:
    """The percentiles (0-100) of the resampled statistics that bound a 95% interval drawn
    from ``clusters`` clusters: the expanded percentile interval (Hesterberg 2015), which
    widens the plain 2.5-97.5 by the t distribution's and the resampling's small-sample
    narrowness, since a bootstrap over few clusters is too narrow."""
    from scipy import stats

    if clusters < 2:
        return 0.0, 100.0
    t = stats.t.ppf(0.5 + LEVEL / 2, clusters - 1)
    tail = float(stats.norm.sf(np.sqrt(clusters / (clusters - 1)) * t))
    return 100 * tail, 100 * (1 - tail)


def count_clusters(clusters: Sequence[str]) -> int:
    """How many distinct clusters."""
    return len(set(clusters))


def clustered(
    values: Sequence[float] | np.ndarray,
    clusters: Sequence[str],
    stats: Sequence[Stat],
    *,
    rounds: int = ROUNDS,
    seed: int = 0,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each statistic of ``values`` with its 95% interval over resampled clusters (the
    observations of one cluster, a dialogue's turns or a call's, drawn together): (point,
    low, high), one entry per statistic."""
    x = np.asarray(values, dtype=float)
    ones = np.ones((1, x.size))
    point = np.array([float(stat(x, ones)[0]) for stat in stats])
    w = cluster_weights(clusters, rounds=rounds, seed=seed)
    k = count_clusters(clusters)
    low, high = np.array(
        [np.percentile(stat(x, w), expanded_levels(tail_clusters(k, stat))) for stat in stats]
    ).T
    return point, low, high


def clustered_share(
    hits: Sequence[float] | np.ndarray,
    clusters: Sequence[str],
    *,
    rounds: int = ROUNDS,
    seed: int = 0,
) -> tuple[float, float | None, float | None]:
    """A share of observations (each 0 or 1) with its 95% interval over resampled clusters;
    the ends None below ``clusters_needed()``. At 0 or 1 every resample gives the same share,
    which says nothing of how sure it is: there the interval is the Wilson score interval of
    as many trials as clusters (a cluster's observations counted as one, the safe side when
    nothing says how alike they are)."""
    x = np.asarray(hits, dtype=float)
    share = float(x.mean())
    k = count_clusters(clusters)
    if k < clusters_needed():
        return share, None, None
    if share in (0.0, 1.0):
        interval = wilson(round(share * k), k)
        assert interval is not None
        return share, interval[1], interval[2]
    _, (low,), (high,) = clustered(x, clusters, [weighted_mean], rounds=rounds, seed=seed)
    return share, float(low), float(high)


def clustered_difference(
    base: Sequence[float] | np.ndarray,
    base_clusters: Sequence[str],
    new: Sequence[float] | np.ndarray,
    new_clusters: Sequence[str],
    stat: Stat,
    *,
    rounds: int = ROUNDS,
    seed: int = 0,
) -> tuple[float, float, float]:
    """``stat(new) - stat(base)`` with each side's clusters resampled, independently:
    (change, low, high)."""
    a, b = np.asarray(base, dtype=float), np.asarray(new, dtype=float)
    point = float(stat(b, np.ones((1, b.size)))[0] - stat(a, np.ones((1, a.size)))[0])
    drawn = stat(b, cluster_weights(new_clusters, rounds=rounds, seed=seed + 1)) - stat(
        a, cluster_weights(base_clusters, rounds=rounds, seed=seed)
    )
    fewer = min(count_clusters(base_clusters), count_clusters(new_clusters))
    low, high = np.percentile(drawn, expanded_levels(tail_clusters(fewer, stat)))
    return point, float(low), float(high)


def wilson(successes: int, trials: int) -> tuple[float, float, float] | None:
    """A share of trials with its 95% Wilson score interval: (share, low, high); None for no
    trials."""
    if trials == 0:
        return None
    from scipy import stats

    ci = stats.binomtest(successes, trials).proportion_ci(confidence_level=LEVEL, method="wilson")
    return successes / trials, float(ci.low), float(ci.high)
