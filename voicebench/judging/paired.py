"""Two judges compared on the same gold pairs, pair by pair (``voicebench.judging.mcnemar``):
McNemar's exact test on the pairs only one of them gets right, and the difference in accuracy
with its 95% interval."""

from __future__ import annotations

from voicebench.errors import InputError
from voicebench.judging.cards import JudgeCard
from voicebench.judging.mcnemar import PairedComparison, compare_outcomes


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
    return compare_outcomes(
        first.spec_name, second.spec_name, first.split, first.outcomes, second.outcomes
    )
