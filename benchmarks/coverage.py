"""How often voicebench's 95% latency intervals hold the truth, and how often a comparison
calls a change clear, on synthetic runs whose truth is known.

A run is drawn as voicebench's runs are made: dialogues (or calls), each with a number of turns
(most dialogues short, a few long), a latency level of its own (a dialogue's seeker, history
and replies vary together) and a skewed spread of its turns around it:

    ttfa = base_ms * exp(dialogue_effect + turn_noise),  both normal on the log scale

The truth is the pooled percentile of an endless run of such dialogues (estimated from
200,000 of them). ``voicebench.bootstrap.clusters_needed`` says how many dialogues a
percentile's interval needs (6 for p50, 30 for p90); a cell below it is marked "(too few)".
For each setting, ``--runs`` runs are drawn; each interval is made twice,
resampling turns one by one (as every turn were independent) and resampling whole dialogues
with their turns (``voicebench.bootstrap.clustered``). The table gives how often each holds the
true p50 and p90, and, for two runs of the same setting, how often the interval of the p50
difference holds the true difference, how often a change is called clear when nothing changed
(false alarm) and when the new run is 50 ms slower at every turn (power). A change is called
clear as ``voicebench compare`` calls it: its interval excludes zero and it is at least 10 ms.

    python benchmarks/coverage.py                   # the default settings, 400 runs each
    python benchmarks/coverage.py --runs 1000 --dialogues 6 12 30
    python benchmarks/coverage.py --seed 1 --tail-widening 0   # a p90 widened as a median
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from voicebench import bootstrap  # noqa: E402

BASE_MS = 700.0
SHIFT_MS = 50.0
MIN_CHANGE_MS = 10.0


@dataclass(frozen=True)
class Setting:
    dialogues: int
    dialogue_sd: float
    """Spread of the dialogues' levels (log scale)."""
    turn_sd: float
    """Spread of a dialogue's turns around its level (log scale)."""
    long_share: float = 0.2
    """The share of dialogues that are long."""
    short_turns: int = 2
    long_turns: int = 12


def draw(s: Setting, rng: np.random.Generator, dialogues: int, shift_ms: float = 0.0):
    """(ttfa per turn, dialogue id per turn) of one run."""
    n = np.where(rng.random(dialogues) < s.long_share, s.long_turns, s.short_turns)
    level = rng.normal(0.0, s.dialogue_sd, dialogues)
    ids = np.repeat(np.arange(dialogues), n)
    noise = rng.normal(0.0, s.turn_sd, ids.size)
    return BASE_MS * np.exp(level[ids] + noise) + shift_ms, [str(i) for i in ids]


def truth(s: Setting, qs: tuple[float, ...]) -> np.ndarray:
    x, _ = draw(s, np.random.default_rng(12345), 200_000)
    return np.percentile(x, qs)


def turn_level(x: np.ndarray, qs: tuple[float, ...], seed: int):
    _, low, high = bootstrap.percentiles(x, qs, seed=seed)
    return low, high


def cluster_level(x: np.ndarray, ids: list[str], qs: tuple[float, ...], seed: int):
    stats = [bootstrap.weighted_percentile(q) for q in qs]
    _, low, high = bootstrap.clustered(x, ids, stats, seed=seed)
    return low, high


def clear(change: float, low: float, high: float) -> bool:
    return (low > 0 or high < 0) and abs(change) >= MIN_CHANGE_MS


def measure(s: Setting, runs: int, seed: int) -> dict[str, float]:
    qs = (50.0, 90.0)
    true = truth(s, qs)
    rng = np.random.default_rng(seed)
    hits = {"turn": np.zeros(2), "cluster": np.zeros(2)}
    diff_hits = {"turn": 0, "cluster": 0}
    alarms = {"turn": 0, "cluster": 0}
    power = {"turn": 0, "cluster": 0}
    p50 = bootstrap.weighted_percentile(50.0)
    for k in range(runs):
        x, ids = draw(s, rng, s.dialogues)
        low, high = turn_level(x, qs, k)
        hits["turn"] += (low <= true) & (true <= high)
        low, high = cluster_level(x, ids, qs, k)
        hits["cluster"] += (low <= true) & (true <= high)
        same, same_ids = draw(s, rng, s.dialogues)
        slower, slower_ids = draw(s, rng, s.dialogues, SHIFT_MS)
        for kind in ("turn", "cluster"):
            if kind == "turn":
                stat = lambda v, axis=-1: np.percentile(v, 50.0, axis=axis)  # noqa: E731
                nothing = bootstrap.difference(x, same, stat, seed=k)
                shifted = bootstrap.difference(x, slower, stat, seed=k)
            else:
                nothing = bootstrap.clustered_difference(x, ids, same, same_ids, p50, seed=k)
                shifted = bootstrap.clustered_difference(x, ids, slower, slower_ids, p50, seed=k)
            alarms[kind] += clear(*nothing)
            power[kind] += clear(*shifted)
            diff_hits[kind] += shifted[1] <= SHIFT_MS <= shifted[2]
    out: dict[str, float] = {}
    for kind in ("turn", "cluster"):
        out[f"{kind}_p50"] = hits[kind][0] / runs
        out[f"{kind}_p90"] = hits[kind][1] / runs
        out[f"{kind}_diff"] = diff_hits[kind] / runs
        out[f"{kind}_alarm"] = alarms[kind] / runs
        out[f"{kind}_power"] = power[kind] / runs
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=400)
    parser.add_argument("--dialogues", type=int, nargs="+", default=[6, 12, 30, 60])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--tail-widening",
        type=float,
        default=bootstrap.TAIL_WIDENING,
        help="How much a tail percentile's interval is widened for the few clusters that reach "
        "it (voicebench.bootstrap.TAIL_WIDENING; 0: as a median's).",
    )
    args = parser.parse_args()
    bootstrap.TAIL_WIDENING = args.tail_widening
    table = Table(
        title=f"95% intervals on synthetic runs ({args.runs} runs per row, seed {args.seed}, "
        f"tail widening {args.tail_widening:g})"
    )
    for column in (
        "dialogues",
        "spread (dialogue/turn)",
        "bootstrap",
        "p50 covered",
        "p90 covered",
        "difference covered",
        "false alarms",
        "power (+50 ms)",
    ):
        table.add_column(column, justify="right")

    def cell(share: float, q: float, dialogues: int) -> str:
        few = dialogues < bootstrap.clusters_needed(q)
        return f"{share:.1%}" + (" (too few)" if few else "")

    for dialogues in args.dialogues:
        for dialogue_sd, turn_sd in ((0.3, 0.2), (0.1, 0.3)):
            s = Setting(dialogues, dialogue_sd, turn_sd)
            got = measure(s, args.runs, args.seed)
            for kind in ("turn", "cluster"):
                table.add_row(
                    str(dialogues),
                    f"{dialogue_sd}/{turn_sd}",
                    "turns" if kind == "turn" else "dialogues",
                    cell(got[kind + "_p50"], 50, dialogues),
                    cell(got[kind + "_p90"], 90, dialogues),
                    f"{got[kind + '_diff']:.1%}",
                    f"{got[kind + '_alarm']:.1%}",
                    f"{got[kind + '_power']:.1%}",
                )
    Console(width=140).print(table)


if __name__ == "__main__":
    main()
