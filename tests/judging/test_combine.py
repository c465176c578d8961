"""The position-bias rule and the ensemble rule, on hand-made verdicts."""

from __future__ import annotations

from voicebench.judging import (
    JudgeAnswer,
    Verdict,
    combine_orders,
    judge_health,
    pair_results,
)
from voicebench.judging.combine import JudgeDecision, combine_judges


def v(
    a: str,
    b: str,
    winner: str | None,
    strength: int = 3,
    judge: str = "j/1",
    dims: dict | None = None,
    item: str = "i1",
) -> Verdict:
    answer = None
    if winner is not None:
        marks = {"H": None, "E": None, "A": None, "R": None, "T": None, **(dims or {})}
        answer = JudgeAnswer(winner=winner, strength=strength, dimensions=marks, rationale="r")
    return Verdict(
        key=f"{judge}{a}{b}{item}",
        item_id=item,
        judge=judge,
        rubric_sha256="h",
        contestant_a=a,
        contestant_b=b,
        answer=answer,
        failure=None if answer else "unparseable: x",
    )


def test_agreeing_orders_keep_the_winner_mean_strength_and_shared_dimensions():
    # x wins as A (slot A) and as B (slot B); E is x's in both, H only in one.
    d = combine_orders(
        [v("x", "y", "A", 4, dims={"E": "A", "H": "A"}), v("y", "x", "B", 2, dims={"E": "B"})]
    )
    assert d.winner == "x" and d.consistent and d.strength == 3.0
    assert d.dimensions["E"] == "x" and d.dimensions["H"] is None


def test_a_position_flip_has_no_winner_and_is_counted():
    verdicts = [v("x", "y", "A"), v("y", "x", "A")]  # "A" both times: the slot won, not a reply
    d = combine_orders(verdicts)
    assert d.winner is None and not d.consistent
    (h,) = judge_health(verdicts)
    assert (h.pairs_decided, h.flips, h.flip_rate, h.first_slot_rate) == (1, 1, 1.0, 1.0)


def test_a_failed_order_leaves_the_pair_undecided_and_counts_the_failure():
    d = combine_orders([v("x", "y", "A"), v("y", "x", None)])
    assert d.winner is None and d.failed == 1 and d.consistent


def test_ensemble_majority_with_strength_averaged_over_the_majority():
    ds = [
        JudgeDecision("a", "x", 4.0, {"E": "x"}, True, 0),
        JudgeDecision("b", "x", 2.0, {"E": "x"}, True, 0),
        JudgeDecision("c", "y", 5.0, {"E": "y"}, True, 0),
    ]
    r = combine_judges("i1", "x", "y", ds)
    assert r.winner == "x" and r.strength == 3.0 and r.dimensions["E"] == "x"
    tied = combine_judges("i1", "x", "y", ds[1:])
    assert tied.winner is None and tied.dimensions["E"] is None


def test_pair_results_group_by_item_and_unordered_pair():
    verdicts = [
        v("x", "y", "A"),
        v("y", "x", "B"),
        v("x", "y", "B", item="i2"),
        v("y", "x", "A", item="i2"),
    ]
    results = pair_results(verdicts)
    assert [(r.item_id, r.first, r.second, r.winner) for r in results] == [
        ("i1", "x", "y", "x"),
        ("i2", "x", "y", "y"),
    ]
