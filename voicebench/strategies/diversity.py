"""How varied a contestant's support is: statistics over its replies' strategy marks.

Per contestant, over all its labelled replies and separately over regular and adversarial
items. A strategy counts as used in a reply only when marked present (uncertain does not).

- usage rate: the share of replies that use each strategy, in percent;
- coverage: how many of the 15 strategies are used at least once;
- strategies per reply: the mean number of strategies a reply uses;
- entropy: Shannon entropy (bits) of the distribution of all strategy uses over the 15
  strategies; 0 when one strategy is all there is, log2(15) = 3.91 when all are used equally.
  Also given divided by log2(15);
- SD and range of the 15 usage rates, in percentage points (population SD). A balanced
  repertoire has a low SD and a narrow range: HEART reports SD 16.3 and range 60.3 for
  humans against 20.8-22.9 and 70.7-80.3 for model families.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from typing import Literal

import numpy as np

from voicebench._model import FrozenModel
from voicebench.strategies.label import ReplyStrategies
from voicebench.strategies.taxonomy import LABELS

Subset = Literal["all", "regular", "adversarial"]


class Diversity(FrozenModel):
    contestant: str
    subset: Subset
    replies: int
    usage_pct: dict[str, float]
    """Share of the replies using each strategy, in percent."""
    coverage: int
    per_reply: float
    entropy_bits: float
    entropy_norm: float
    usage_sd_pts: float
    usage_range_pts: float


def diversity(
    labels: Sequence[ReplyStrategies], contestant: str, subset: Subset = "all"
) -> Diversity | None:
    """The statistics of ``contestant``'s labelled replies in ``subset``; None if it has none."""
    chosen = [
        r
        for r in labels
        if r.contestant == contestant
        and r.marks is not None
        and (subset == "all" or r.adversarial == (subset == "adversarial"))
    ]
    if not chosen:
        return None
    used = np.array([[k in r.present() for k in LABELS] for r in chosen], dtype=float)
    rates = used.mean(axis=0) * 100.0
    counts = used.sum(axis=0)
    total = counts.sum()
    p = counts[counts > 0] / total if total else np.array([])
    entropy = float(-(p * np.log2(p)).sum()) + 0.0 if p.size else 0.0  # no -0.0
    return Diversity(
        contestant=contestant,
        subset=subset,
        replies=len(chosen),
        usage_pct={k: round(float(v), 2) for k, v in zip(LABELS, rates, strict=True)},
        coverage=int((counts > 0).sum()),
        per_reply=round(float(used.sum(axis=1).mean()), 3),
        entropy_bits=round(entropy, 4),
        entropy_norm=round(entropy / math.log2(len(LABELS)), 4),
        usage_sd_pts=round(float(rates.std()), 2),
        usage_range_pts=round(float(rates.max() - rates.min()), 2),
    )


def diversity_rows(labels: Sequence[ReplyStrategies]) -> list[Diversity]:
    """Every contestant's statistics: all items, then regular and adversarial where it has any."""
    rows = []
    for contestant in sorted({r.contestant for r in labels}):
        for subset in ("all", "regular", "adversarial"):
            row = diversity(labels, contestant, subset)
            if row is not None:
                rows.append(row)
    return rows


class StrategySummary(FrozenModel):
    """Support-strategy diversity per contestant, from one classifier's labels."""

    classifier: str
    smoke: bool
    """Labelled by an offline smoke judge: the figures are not meaningful."""
    labelled: int
    failed: int
    rows: tuple[Diversity, ...]


def summarize_labels(labels: Sequence[ReplyStrategies]) -> StrategySummary | None:
    """The diversity of every contestant; with labels from several classifiers, those of the
    one that labelled the most replies. None when there are no labels."""
    if not labels:
        return None
    classifier = Counter(r.classifier for r in labels).most_common(1)[0][0]
    mine = [r for r in labels if r.classifier == classifier]
    return StrategySummary(
        classifier=classifier,
        smoke=any(r.smoke for r in mine),
        labelled=sum(r.marks is not None for r in mine),
        failed=sum(r.marks is None for r in mine),
        rows=tuple(diversity_rows(mine)),
    )
