"""From verdicts to pair results: the position-bias rule and the ensemble rule.

Orders (one judge, one pair). Every pair is judged twice, once in each order.
- Both orders name the same winner: it wins. The strength is the mean of the two, and a
  dimension goes to a contestant only where both orders gave it to that contestant.
- They name different winners: a position flip. The judge preferred whatever sat in one
  slot, not either reply. The pair is recorded as inconsistent and has no winner.
- Either order failed: there is no decision (the failure is counted; a re-run asks again).
- Letter judges (``method = "letter-margin"``) record a margin, log P(A) - log P(B), per
  order. The pair goes to the contestant whose margins, summed over both orders, are
  positive: a preference for a slot adds to one order and subtracts from the other, so it
  cancels, and every pair with both orders answered is decided. When the two orders' own
  signs differ it is still counted as a position flip (``consistent`` false). Strength is
  1 + the mean margin in whole nats (at most 5); a dimension goes to the contestant whose
  summed dimension margin is at least 1 nat.

Judges (an ensemble). Letter judges add up: when every judge that answered both orders is
one, the winner is the sign of the sum of their summed margins. Otherwise the winner is the
one named by a strict majority of the judges that reached a decision. The strength is the
mean over that majority. A dimension goes to the contestant a strict majority of deciding
judges gave it to. Without a majority there is no winner.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from pydantic import computed_field

from voicebench._model import FrozenModel
from voicebench.judging.models import DIMENSIONS, PairResult, Verdict


@dataclass(frozen=True)
class JudgeDecision:
    judge: str
    winner: str | None
    strength: float
    dimensions: dict[str, str | None]
    consistent: bool
    failed: int
    complete: bool = True
    """Both orders were answered, so position bias was checked."""
    score: float | None = None
    """Letter judges: both orders' margins summed, for the pair's first contestant in sorted
    order (positive: it is better)."""


def pair_of(v: Verdict) -> tuple[str, str, str]:
    a, b = sorted((v.contestant_a, v.contestant_b))
    return v.item_id, a, b


def combine_orders(verdicts: Sequence[Verdict]) -> JudgeDecision:
    """One judge's decision on one pair from its verdicts (normally one per order)."""
    judge = verdicts[0].judge
    answered = [v for v in verdicts if v.answer is not None]
    failed = len(verdicts) - len(answered)
    orders = {(v.contestant_a, v.contestant_b) for v in answered}
    if failed or len(orders) < 2:
        return JudgeDecision(judge, None, 0.0, dict.fromkeys(DIMENSIONS), True, failed, False)
    winners = {v.winner for v in answered}
    if all(v.answer is not None and v.answer.margin is not None for v in answered):
        return _margin_decision(judge, answered, consistent=len(winners) == 1)
    if len(winners) != 1:
        return JudgeDecision(judge, None, 0.0, dict.fromkeys(DIMENSIONS), False, 0, True)
    dims: dict[str, str | None] = {}
    for d in DIMENSIONS:
        marks = {v.dimension_winner(d) for v in answered}
        dims[d] = marks.pop() if len(marks) == 1 else None
    strength = sum(v.answer.strength for v in answered if v.answer) / len(answered)
    return JudgeDecision(judge, winners.pop(), strength, dims, True, 0, True)


def _toward(v: Verdict, first: str, margin: float) -> float:
    """A margin of reply A over reply B, turned toward contestant ``first``."""
    return margin if v.contestant_a == first else -margin


def _margin_decision(judge: str, answered: Sequence[Verdict], *, consistent: bool) -> JudgeDecision:
    first, second = sorted((answered[0].contestant_a, answered[0].contestant_b))
    score = sum(_toward(v, first, v.answer.margin or 0.0) for v in answered if v.answer)
    winner = first if score > 0 else second if score < 0 else None
    dims: dict[str, str | None] = dict.fromkeys(DIMENSIONS)
    for d in DIMENSIONS:
        marks = [(v.answer.dimension_margins or {}).get(d) for v in answered if v.answer]
        if all(m is not None for m in marks):
            total = sum(_toward(v, first, m or 0.0) for v, m in zip(answered, marks, strict=True))
            dims[d] = first if total >= 1.0 else second if total <= -1.0 else None
    strength = 0.0 if winner is None else min(5.0, 1.0 + int(abs(score) / len(answered)))
    return JudgeDecision(judge, winner, strength, dims, consistent, 0, True, score)


def combine_judges(
    item_id: str, first: str, second: str, decisions: Sequence[JudgeDecision]
) -> PairResult:
    """The ensemble's result on one pair."""
    deciding = [d for d in decisions if d.winner is not None]
    winner, strength = None, 0.0
    votes = Counter(d.winner for d in deciding)
    complete = [d for d in decisions if d.complete]
    if len(complete) > 1 and all(d.score is not None for d in complete):
        total = sum(d.score or 0.0 for d in complete)
        winner = first if total > 0 else second if total < 0 else None
        agreeing = [d for d in deciding if d.winner == winner]
        strength = sum(d.strength for d in agreeing) / len(agreeing) if agreeing else 1.0
    elif votes:
        top, n = votes.most_common(1)[0]
        if n * 2 > len(deciding):
            winner = top
            agreeing = [d for d in deciding if d.winner == top]
            strength = sum(d.strength for d in agreeing) / len(agreeing)
    dims: dict[str, str | None] = {}
    for dim in DIMENSIONS:
        marks = Counter(d.dimensions.get(dim) for d in deciding if d.dimensions.get(dim))
        best = marks.most_common(1)
        dims[dim] = best[0][0] if best and best[0][1] * 2 > len(deciding) else None
    return PairResult(
        item_id=item_id,
        first=first,
        second=second,
        winner=winner,
        strength=round(strength, 3),
        dimensions=dims,
        consistent=all(d.consistent for d in decisions),
        judges=tuple(sorted(d.judge for d in decisions)),
        failed=sum(d.failed for d in decisions),
    )


def decisions_by_pair(
    verdicts: Iterable[Verdict],
) -> dict[tuple[str, str, str], dict[str, JudgeDecision]]:
    """Per pair (item, first, second) in sorted order, each judge's decision from its orders."""
    groups: dict[tuple[str, str, str], dict[str, list[Verdict]]] = defaultdict(
        lambda: defaultdict(list)
    )
    for v in verdicts:
        groups[pair_of(v)][v.judge].append(v)
    return {
        pair: {judge: combine_orders(vs) for judge, vs in sorted(by_judge.items())}
        for pair, by_judge in sorted(groups.items())
    }


def pair_results(verdicts: Iterable[Verdict]) -> list[PairResult]:
    """Every pair's result, combining orders per judge, then judges."""
    return [
        combine_judges(item, a, b, list(decisions.values()))
        for (item, a, b), decisions in decisions_by_pair(verdicts).items()
    ]


class JudgeHealth(FrozenModel):
    """How one judge behaved."""

    judge: str
    verdicts: int
    failed: int
    pairs_decided: int
    """Pairs with both orders answered."""
    flips: int
    """Of those, pairs whose winner changed with the order."""
    first_slot_wins: int
    """Answered verdicts won by reply A (about half for a judge without position bias)."""

    @computed_field  # type: ignore[prop-decorator]
    @property
    def flip_rate(self) -> float | None:
        return self.flips / self.pairs_decided if self.pairs_decided else None

    @computed_field  # type: ignore[prop-decorator]
    @property
    def first_slot_rate(self) -> float | None:
        answered = self.verdicts - self.failed
        return self.first_slot_wins / answered if answered else None


def judge_health(verdicts: Iterable[Verdict]) -> list[JudgeHealth]:
    verdicts = list(verdicts)
    decided: Counter[str] = Counter()
    flips: Counter[str] = Counter()
    for decisions in decisions_by_pair(verdicts).values():
        for judge, d in decisions.items():
            decided[judge] += d.complete
            flips[judge] += d.complete and not d.consistent
    by_judge: dict[str, list[Verdict]] = defaultdict(list)
    for v in verdicts:
        by_judge[v.judge].append(v)
    return [
        JudgeHealth(
            judge=judge,
            verdicts=len(vs),
            failed=sum(v.answer is None for v in vs),
            pairs_decided=decided[judge],
            flips=flips[judge],
            first_slot_wins=sum(v.answer is not None and v.answer.winner == "A" for v in vs),
        )
        for judge, vs in sorted(by_judge.items())
    ]
