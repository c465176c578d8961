"""A judge's card on real replies leads; the written gold set's follows as a second line."""

from __future__ import annotations

from synthetic_runs import judge_card

from voicebench.bootstrap import wilson
from voicebench.judging.cards import (
    Tally,
    card_line,
    combine_cards,
    figure_warning,
    trust_warning,
)


def _real(**fields):
    return judge_card(real_replies=True, **fields)


def test_cards_on_several_real_gold_files_count_their_pairs_together():
    agents = _real(
        gold_path="judges/pairs-real.jsonl",
        gold_sha256="a" * 64,
        pairs=80,
        decided=80,
        correct=60,
        verdicts=160,
        seconds_per_verdict=4.0,
        by_category={"real-vs-reference": Tally(pairs=40, correct=35)},
        outcomes={"p1": "right", "p2": "wrong"},
    )
    corpus = _real(
        gold_path="reports/gold/pairs-esconv.jsonl",
        gold_sha256="b" * 64,
        pairs=20,
        decided=18,
        correct=12,
        verdicts=40,
        seconds_per_verdict=9.0,
        by_category={"corpus-next": Tally(pairs=20, correct=12)},
        outcomes={"e1": "undecided"},
    )
    both = combine_cards([corpus, agents])
    assert (both.pairs, both.correct, both.decided) == (100, 72, 98)
    assert both.accuracy == 0.72 and both.decided_rate == 0.98
    assert (0.72, both.accuracy_low, both.accuracy_high) == wilson(72, 100)
    # a verdict's time is weighed by verdicts: (160 x 4 + 40 x 9) / 200
    assert both.seconds_per_verdict == 5.0
    assert both.by_category == {
        "real-vs-reference": Tally(pairs=40, correct=35),
        "corpus-next": Tally(pairs=20, correct=12),
    }
    assert both.outcomes == {"p1": "right", "p2": "wrong", "e1": "undecided"}
    assert both.gold_path == "judges/pairs-real.jsonl + reports/gold/pairs-esconv.jsonl"
    assert both.real_replies and combine_cards([agents]) == agents


def test_the_real_reply_figure_leads_and_the_written_set_says_it_catches_plain_defects():
    written = judge_card(pairs=122, correct=110, accuracy=0.9, accuracy_low=0.84)
    card = _real(pairs=170, correct=136, accuracy=0.8, accuracy_low=0.73, accuracy_high=0.85)
    first, second = card_line(card.model_copy(update={"written": written})).split("\n")
    assert first.startswith("judge measured: 80% right on 170 pairs of real replies (holdout;")
    assert second.startswith("catches plain defects: 90% right on 122 written gold pairs")
    # a judge measured only on written pairs says so, on one line
    assert card_line(written).endswith("; not measured on real replies")
    assert trust_warning(card) is None
    below = card.model_copy(update={"accuracy": 0.7})
    assert (trust_warning(below) or "").startswith("judge right on only 70% of pairs of real")


def test_a_judge_at_chance_on_real_replies_carries_no_information_whatever_its_written_score():
    written = judge_card(pairs=122, correct=110, accuracy=0.9, accuracy_low=0.84)
    card = _real(
        pairs=80, correct=42, accuracy=0.525, accuracy_low=0.42, accuracy_high=0.63
    ).model_copy(update={"written": written})
    assert "no better than chance on real replies" in (trust_warning(card) or "")
    assert "carry no information" in (trust_warning(card) or "")
    assert figure_warning(card) == (
        "JUDGE AT CHANCE ON REAL REPLIES (52%): quality figures mean nothing"
    )
