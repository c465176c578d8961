"""Two sets of outcomes on the same gold pairs, compared pair by pair: McNemar's exact test on
the pairs only one of them gets right, and the difference in accuracy with its 95% interval.

Two judges' cards compare this way (``voicebench.judging.paired``), and so do a judge and the
trivial rules on its card's own pairs (``voicebench.judging.trivial``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from scipy.stats import binomtest

from voicebench._model import FrozenModel
from voicebench.bootstrap import wilson


class PairedComparison(FrozenModel):
    """Two sets of outcomes on the same gold pairs, compared pair by pair."""

    first: str
    second: str
    """What the two outcomes are of: the cards' spec names, or a judge's and a rule's."""
    split: str
    pairs: int
    both_right: int
    first_only: int
    """Pairs the first got right and the second did not."""
    second_only: int
    neither: int
    difference: float
    """First's accuracy minus second's."""
    difference_low: float
    difference_high: float
    """95% interval of ``difference`` (Newcombe's hybrid score interval for paired
    proportions, his method 10)."""
    p_value: float
    """McNemar's exact test: two-sided binomial test of the discordant pairs against 1/2."""

    def line(self) -> str:
        return (
            f"{self.first} - {self.second} on {self.pairs} {self.split} pairs: "
            f"{100 * self.difference:+.1f} points (95% CI {100 * self.difference_low:+.1f} to "
            f"{100 * self.difference_high:+.1f}); right only for {self.first} "
            f"{self.first_only}, only for {self.second} {self.second_only}; McNemar exact "
            f"p {shown_p(self.p_value)}"
        )


def shown_p(p: float) -> str:
    """ "= 0.042", or "< 1e-6" for what the stored figure rounds to nothing."""
    return "< 1e-6" if p < 1e-6 else f"= {p:.3g}"


def compare_outcomes(
    first: str,
    second: str,
    split: str,
    first_outcomes: Mapping[str, str],
    second_outcomes: Mapping[str, str],
) -> PairedComparison:
    """Whether ``first`` is right (``"right"``) on more of the same pairs than ``second``:
    both maps hold each pair's id; anything but right counts as not right."""
    ids = list(first_outcomes)
    a = sum(first_outcomes[i] == "right" and second_outcomes[i] == "right" for i in ids)
    b = sum(first_outcomes[i] == "right" and second_outcomes[i] != "right" for i in ids)
    c = sum(first_outcomes[i] != "right" and second_outcomes[i] == "right" for i in ids)
    n = len(ids)
    d = n - a - b - c
    p1, p2 = (a + b) / n, (a + c) / n
    (_, l1, u1), (_, l2, u2) = wilson(a + b, n) or (0, 0, 0), wilson(a + c, n) or (0, 0, 0)
    denominator = (a + b) * (c + d) * (a + c) * (b + d)
    phi = (a * d - b * c) / math.sqrt(denominator) if denominator else 0.0
    diff = p1 - p2
    low = diff - math.sqrt(
        max(0.0, (p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2)
    )
    high = diff + math.sqrt(
        max(0.0, (u1 - p1) ** 2 - 2 * phi * (u1 - p1) * (p2 - l2) + (p2 - l2) ** 2)
    )
    p = float(binomtest(b, b + c, 0.5).pvalue) if b + c else 1.0
    return PairedComparison(
        first=first,
        second=second,
        split=split,
        pairs=n,
        both_right=a,
        first_only=b,
        second_only=c,
        neither=d,
        difference=round(diff, 4),
        difference_low=round(max(-1.0, low), 4),
        difference_high=round(min(1.0, high), 4),
        p_value=round(p, 6),
    )
