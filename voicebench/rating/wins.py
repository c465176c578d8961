"""A judging folder's decided pairs as win matrices per item: what every fit starts from (the
ratings table, and the Elo difference of two contestants that ``voicebench compare`` shows)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from voicebench.errors import InputError
from voicebench.judging import Reply, current_verdicts, pair_results, read_replies
from voicebench.judging.models import PairResult, Verdict
from voicebench.rating.bt import DEFAULT_PRIOR, bootstrap_elo, fit, to_elo, win_matrices


class NothingToRateError(InputError):
    """Every pair is undecided (failed verdicts, position flips): there is nothing to fit."""


@dataclass(frozen=True)
class ItemWins:
    replies: list[Reply]
    """The replies that did not fail."""
    kinds: dict[str, str]
    names: list[str]
    """Contestants, sorted: the matrices' rows and columns."""
    index: dict[str, int]
    verdicts: list[Verdict]
    pairs: list[PairResult]
    decided: list[PairResult]
    item_ids: list[str]
    item_index: dict[str, int]
    win: np.ndarray
    lose: np.ndarray
    strength: np.ndarray
    items: np.ndarray
    """Each decided pair's item, as an index into ``item_ids``."""
    item_W: np.ndarray
    """(items, contestants, contestants) strength-weighted wins."""


def item_wins(judging_dir: Path) -> ItemWins:
    replies = [r for r in read_replies(judging_dir) if r.failed is None]
    kinds = {r.contestant: r.kind.value for r in replies}
    names = sorted(kinds)
    index = {c: k for k, c in enumerate(names)}
    verdicts = current_verdicts(judging_dir)
    pairs = pair_results(verdicts)
    decided = [p for p in pairs if p.winner is not None]
    if not decided:
        raise NothingToRateError(
            f"no decided pairs to rate among {len(pairs)} (every pair's "
            "verdicts failed or flipped with the order)",
            file=judging_dir / "verdicts.jsonl",
        )
    item_ids = sorted({p.item_id for p in decided})
    item_index = {i: k for k, i in enumerate(item_ids)}
    win = np.array([index[p.winner] for p in decided if p.winner is not None])
    lose = np.array([index[p.second if p.winner == p.first else p.first] for p in decided])
    strength = np.array([p.strength for p in decided])
    items = np.array([item_index[p.item_id] for p in decided])
    return ItemWins(
        replies=replies,
        kinds=kinds,
        names=names,
        index=index,
        verdicts=verdicts,
        pairs=pairs,
        decided=decided,
        item_ids=item_ids,
        item_index=item_index,
        win=win,
        lose=lose,
        strength=strength,
        items=items,
        item_W=win_matrices(items, win, lose, strength, len(item_ids), len(names)),
    )


def elo_difference(
    judging_dir: Path,
    base: str,
    new: str,
    *,
    rounds: int = 1000,
    seed: int = 0,
    prior: float = DEFAULT_PRIOR,
) -> tuple[float, float, float]:
    """``new``'s Elo minus ``base``'s, fitted together, and its 95% interval over refits on
    items resampled with replacement (the same resamples for both)."""
    w = item_wins(judging_dir)
    for name in (base, new):
        if name not in w.index:
            raise InputError(
                f"no contestant {name!r} among its replies (there are: {', '.join(w.names)})",
                file=judging_dir,
            )
    a, b = w.index[base], w.index[new]
    elo = to_elo(fit(w.item_W.sum(axis=0), prior=prior))
    boot = bootstrap_elo(w.item_W, rounds=rounds, seed=seed, prior=prior)
    diff = boot[:, b] - boot[:, a]
    low, high = np.percentile(diff, [2.5, 97.5])
    return float(elo[b] - elo[a]), float(low), float(high)
