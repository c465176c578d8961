"""Rating at the paper's scale: 42,000 comparisons, 20 contestants, 300 items; one fit plus
1,000 bootstrap rounds resampling items. Target: under 10 s on 2 CPU cores.

    python benchmarks/rating_scale.py [--rounds 1000] [--seed 0]

Prints wall time for each part and how well the known strengths were recovered.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from voicebench.rating import bootstrap_elo, fit, to_elo, win_matrices


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--players", type=int, default=20)
    ap.add_argument("--items", type=int, default=300)
    ap.add_argument("--comparisons", type=int, default=42_000)
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    truth = rng.normal(0, 1, args.players)
    i = rng.integers(0, args.players, args.comparisons)
    j = (i + rng.integers(1, args.players, args.comparisons)) % args.players
    i_wins = rng.random(args.comparisons) < 1 / (1 + np.exp(-(truth[i] - truth[j])))
    winner, loser = np.where(i_wins, i, j), np.where(i_wins, j, i)
    strength = rng.integers(1, 6, args.comparisons).astype(float)
    items = rng.integers(0, args.items, args.comparisons)

    t0 = time.perf_counter()
    item_W = win_matrices(items, winner, loser, strength, args.items, args.players)
    elo = to_elo(fit(item_W.sum(axis=0)))
    t1 = time.perf_counter()
    boot = bootstrap_elo(item_W, rounds=args.rounds, seed=args.seed)
    lo, hi = np.percentile(boot, [2.5, 97.5], axis=0)
    t2 = time.perf_counter()
    result = {
        "comparisons": args.comparisons,
        "players": args.players,
        "items": args.items,
        "bootstrap_rounds": args.rounds,
        "fit_s": round(t1 - t0, 3),
        "bootstrap_s": round(t2 - t1, 3),
        "total_s": round(t2 - t0, 3),
        "target_s": 10.0,
        "meets_target": (t2 - t0) < 10.0,
        "pearson_r_with_truth": round(float(np.corrcoef(elo, truth)[0, 1]), 4),
        "median_ci_width_elo": round(float(np.median(hi - lo)), 1),
    }
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
