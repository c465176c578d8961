"""Two judges compared on the same gold pairs, pair by pair: McNemar's exact test on the pairs
only one of them gets right, and the difference in accuracy with its 95% interval."""

from __future__ import annotations

import math

from scipy.stats import binomtest

from voicebench._model import FrozenModel
from voicebench.bootstrap import wilson
from voicebench.errors import InputError
from voicebench.judging.cards import JudgeCard


class PairedComparison(FrozenModel):
    """Two judges' cards on the same gold pairs, compared pair by pair."""

    first: str
    second: str
    """The two cards' spec names."""
    split: str
    pairs: int
    both_right: int
    first_only: int
    """Pairs the first judge got right and the second did not."""
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


def paired_comparison(first: JudgeCard, second: JudgeCard) -> PairedComparison:
    """Whether ``first`` is right on more of the same gold pairs than ``second``. Both cards
    must come from one gold file and split and carry their pair outcomes."""
    if first.outcomes is None or second.outcomes is None:
        old = first if first.outcomes is None else second
        raise InputError(
            f"the card of {old.spec_name} has no per-pair outcomes; measure it again "
            "(voicebench judge-check --refresh)",
            file=old.spec_path,
        )
    if (first.gold_sha256, first.split) != (second.gold_sha256, second.split) or set(
        first.outcomes
    ) != set(second.outcomes):
        raise InputError(
            f"the cards of {first.spec_name} and {second.spec_name} are not on the same gold "
            f"pairs ({first.split} of {first.gold_sha256[:12]} against {second.split} of "
            f"{second.gold_sha256[:12]})"
        )
    ids = list(first.outcomes)
    a = sum(first.outcomes[i] == "right" and second.outcomes[i] == "right" for i in ids)
    b = sum(first.outcomes[i] == "right" and second.outcomes[i] != "right" for i in ids)
    c = sum(first.outcomes[i] != "right" and second.outcomes[i] == "right" for i in ids)
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
        first=first.spec_name,
        second=second.spec_name,
        split=first.split,
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
