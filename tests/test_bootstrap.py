"""The cluster bootstrap: weighted statistics equal the statistics of the repeated turns, whole
clusters are drawn together, and few clusters widen the interval."""

from __future__ import annotations

import numpy as np
import pytest

from voicebench import bootstrap


def test_a_weighted_percentile_is_the_percentile_of_the_turns_repeated():
    rng = np.random.default_rng(1)
    x = rng.gamma(2.0, 200.0, size=57)
    for q in (0, 10, 50, 90, 99, 100):
        assert bootstrap.weighted_percentile(q)(x, np.ones((1, 57)))[0] == pytest.approx(
            np.percentile(x, q)
        )
    w = rng.integers(0, 4, size=(5, 57)).astype(float)
    w[:, 0] += 1
    for row in w:
        repeated = np.repeat(x, row.astype(int))
        for q in (5, 50, 90):
            got = bootstrap.weighted_percentile(q)(x, row[None, :])[0]
            assert got == pytest.approx(np.percentile(repeated, q))
        assert bootstrap.weighted_mean(x, row[None, :])[0] == pytest.approx(repeated.mean())


def test_whole_clusters_are_drawn_and_few_of_them_widen_the_interval():
    ids = ["a", "a", "a", "b", "c", "c"]
    w = bootstrap.cluster_weights(ids, rounds=200, seed=0)
    assert w.shape == (200, 6)
    assert (w[:, 0] == w[:, 1]).all() and (w[:, 4] == w[:, 5]).all()  # a cluster's turns
    assert (w[:, [0, 3, 4]].sum(axis=1) == 3).all()  # three clusters drawn each time
    assert bootstrap.expanded_levels(200) == pytest.approx((2.4, 97.6), abs=0.01)
    low6, high6 = bootstrap.expanded_levels(6)
    assert low6 < 0.5 and high6 > 99.5  # six clusters: far out in the resamples' tails
    assert [bootstrap.clusters_needed(q) for q in (50, 90, 95, 99)] == [6, 30, 60, 300]


def test_turns_that_vary_together_get_a_wider_interval_than_turns_one_by_one():
    values = [100.0 * d + t for d in range(8) for t in range(10)]  # 8 dialogues of 10 turns
    ids = [f"d{d}" for d in range(8) for _ in range(10)]
    median = [bootstrap.weighted_percentile(50)]
    point, low, high = bootstrap.clustered(values, ids, median, seed=1)
    _, turn_low, turn_high = bootstrap.percentiles(values, [50], seed=1)
    assert point[0] == pytest.approx(np.median(values)) and low[0] <= point[0] <= high[0]
    assert high[0] - low[0] > 2 * (turn_high[0] - turn_low[0])
    change, low_d, high_d = bootstrap.clustered_difference(
        values, ids, [v + 500 for v in values], ids, median[0], seed=2
    )
    assert change == pytest.approx(500.0) and low_d <= 500.0 <= high_d


def test_a_share_over_clusters_is_never_sure_of_0_or_1_from_its_resamples():
    """At 0 or 1 every resample gives the same share; the interval is then the Wilson score
    interval of as many trials as clusters, not a zero-width one. Elsewhere the clusters are
    resampled; below 6 clusters there is none."""
    ids = [f"d{k // 3}" for k in range(36)]  # 12 dialogues of 3 turns
    share, low, high = bootstrap.clustered_share([0.0] * 36, ids)
    assert share == 0.0 and (low, high) == pytest.approx(bootstrap.wilson(0, 12)[1:])
    assert 0.2 < high < 0.3  # 12 dialogues: up to about a quarter, not 3 in 36 turns
    hits = [float(k % 3 < (k // 3) % 3) for k in range(36)]  # 0, 1 or 2 of a dialogue's 3
    share, low, high = bootstrap.clustered_share(hits, ids)
    assert share == pytest.approx(1 / 3) and low < share < high
    assert bootstrap.clustered_share(hits[:15], ids[:15])[1:] == (None, None)  # 5 dialogues
