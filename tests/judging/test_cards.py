"""A judge's card on real replies leads; the written gold set's follows as a second line. A
judge is trusted when it clears two bars: 75% right, and 10 points over the best trivial rule
on the same pairs."""

from __future__ import annotations

import json
from pathlib import Path

from synthetic_runs import judge_card

from voicebench.bootstrap import wilson
from voicebench.judging.cards import (
    TRUSTED_ACCURACY,
    JudgeCard,
    Tally,
    combine_cards,
    read_card,
    with_trivial_rules,
)
from voicebench.judging.gold import GoldPair, load_gold, save_gold
from voicebench.judging.trivial import rule_outcomes
from voicebench.judging.trust import card_line, figure_warning, trust_warning


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
    first, rules, second = card_line(card.model_copy(update={"written": written})).split("\n")
    assert first.startswith("judge measured: 80% right on 170 pairs of real replies (holdout;")
    assert rules.startswith("trivial rules on the same pairs: longer 50%, shared words 50%")
    assert second.startswith("catches plain defects: 90% right on 122 written gold pairs")
    # a judge measured only on written pairs says so, on its first line
    assert card_line(written).split("\n")[0].endswith("; not measured on real replies")
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


SEEKER = [{"role": "seeker", "text": "I lost my job today."}]
LONG_A = "That is a hard blow, and I am here with you for as long as you need."
B_ASKS = "Your job, today, after all those years of work and everything you gave them?"


def _gold_pair(pid: str, reply_a: str, reply_b: str) -> GoldPair:
    return GoldPair.model_validate(
        {"id": pid, "turns": SEEKER, "reply_a": reply_a, "reply_b": reply_b, "better": "a"}
    )


def _longer_gold(tmp_path: Path) -> list[GoldPair]:
    """40 pairs, the better reply a: the longer one in 32; reply b asks and shares the
    seeker's words in all 40, so only "the longer reply" is ever right (80%)."""
    pairs = [_gold_pair(f"p{n}", LONG_A, "Your job?") for n in range(32)]
    pairs += [_gold_pair(f"p{n}", "So sorry.", B_ASKS) for n in range(32, 40)]
    save_gold(pairs, tmp_path / "gold.jsonl")
    return list(load_gold(tmp_path / "gold.jsonl").pairs)


def _measured(gold: list[GoldPair], right: set[str], **fields) -> JudgeCard:
    """A card of a judge right on the pairs ``right``, the trivial rules set beside it."""
    n, correct = len(gold), sum(g.id in right for g in gold)
    _, low, high = wilson(correct, n) or (0.0, 0.0, 0.0)
    card = judge_card(
        pairs=n,
        decided=n,
        correct=correct,
        accuracy=correct / n,
        accuracy_low=low,
        accuracy_high=high,
        outcomes={g.id: "right" if g.id in right else "wrong" for g in gold},
        trivial_rules=None,
        margin=None,
        **fields,
    )
    return with_trivial_rules(card, rule_outcomes(gold))


def test_a_judge_that_picks_the_longer_reply_is_not_trusted_even_at_80_percent(tmp_path: Path):
    gold = _longer_gold(tmp_path)
    card = _measured(gold, {f"p{n}" for n in range(32)})  # right exactly where length is
    assert card.trivial_rules is not None and card.margin is not None
    assert {k: r.accuracy for k, r in card.trivial_rules.items()} == {
        "longer": 0.8,
        "shared words": 0.0,
        "asks": 0.0,
    }
    _, low, high = wilson(32, 40) or (0.0, 0.0, 0.0)
    longer = card.trivial_rules["longer"]
    assert (longer.correct, longer.accuracy_low, longer.accuracy_high) == (
        32,
        round(low, 4),
        round(high, 4),
    )
    m = card.margin
    assert (m.second, m.difference, m.first_only, m.second_only, m.pairs) == ("longer", 0, 0, 0, 40)
    assert card.accuracy >= TRUSTED_ACCURACY and not card.trusted
    assert trust_warning(card) == (
        "judge right on 80% of gold pairs, no better than 'the longer reply' (80%): read the "
        "quality figures as indicative only"
    )
    assert figure_warning(card) == (
        "JUDGE RIGHT ON 80% OF GOLD PAIRS: quality figures are indicative\n"
        "NO BETTER THAN 'THE LONGER REPLY' (80%)"
    )
    assert card_line(card).split("\n")[1] == (
        "trivial rules on the same pairs: longer 80%, shared words 0%, asks 0%; judge +0 "
        f"points over the best (95% CI {round(100 * m.difference_low):+d} to "
        f"{round(100 * m.difference_high):+d})"
    )
    assert m.difference_low < 0 < m.difference_high
    # 5 points over it is still short of the bar, and the banner says by how much
    closer = card.model_copy(update={"margin": m.model_copy(update={"difference": 0.05})})
    assert not closer.trusted
    assert trust_warning(closer) == (
        "judge right on 80% of gold pairs, only +5 points over 'the longer reply' (80%; the "
        "bar is +10): read the quality figures as indicative only"
    )
    # short of both bars, both are named
    both = card.model_copy(update={"accuracy": 0.7})
    assert (trust_warning(both) or "").startswith(
        "judge right on only 70% of gold pairs (below 75%), no better than 'the longer reply'"
    )


def test_a_judge_20_points_over_every_trivial_rule_is_trusted(tmp_path: Path):
    gold = _longer_gold(tmp_path)
    card = _measured(gold, {g.id for g in gold})
    assert card.margin is not None and card.margin.second == "longer"
    assert card.margin.difference == 0.2 and card.margin.first_only == 8
    assert card.trusted and trust_warning(card) is None and figure_warning(card) is None
    assert "judge +20 points over the best" in card_line(card)


def test_cards_combined_measure_the_rules_again_on_all_their_pairs(tmp_path: Path):
    agents = _measured(_longer_gold(tmp_path), {f"p{n}" for n in range(32)}, real_replies=True)
    # 20 pairs where the better reply is the short one that asks and echoes the seeker: "the
    # reply sharing the seeker's words" is right on all of them, "the longer reply" on none
    corpus_gold = [_gold_pair(f"e{n}", "Your job?", LONG_A) for n in range(20)]
    corpus = _measured(
        corpus_gold, {f"e{n}" for n in range(16)}, real_replies=True, gold_path="esconv.jsonl"
    )
    assert agents.margin is not None and corpus.margin is not None
    assert (agents.margin.difference, corpus.margin.second, corpus.margin.difference) == (
        0,
        "shared words",
        -0.2,
    )
    both = combine_cards([agents, corpus])
    assert both.trivial_rules is not None and both.margin is not None
    longer = both.trivial_rules["longer"]
    assert (longer.correct, longer.accuracy) == (32, round(32 / 60, 4))
    assert set(longer.outcomes) == set(both.outcomes or {}) and len(longer.outcomes) == 60
    # on the 60 pairs together the best rule is the longer reply (32 of them), the judge right
    # on 48: 27 points over it, where neither card alone was over anything (the two cards'
    # margins, 0 and -20 points, weighed by their pairs would say -7)
    assert (both.margin.second, both.margin.pairs, both.margin.difference) == (
        "longer",
        60,
        round(48 / 60 - 32 / 60, 4),
    )
    assert both.trusted and not agents.trusted and not corpus.trusted
    # a card without the rules leaves the whole unmeasured on that count
    old = corpus.model_copy(update={"trivial_rules": None, "margin": None})
    assert combine_cards([agents, old]).margin is None


def test_a_card_from_before_the_trivial_rules_loads_and_is_not_trusted(tmp_path: Path):
    fields = judge_card().model_dump(mode="json")
    del fields["trivial_rules"], fields["margin"]
    path = tmp_path / "card.json"
    path.write_text(json.dumps(fields))
    card = read_card(path)
    assert card.trivial_rules is None and card.accuracy == 0.9 and not card.trusted
    assert card_line(card).split("\n")[1] == "trivial rules not measured on this card"
    assert trust_warning(card) == (
        "judge right on 90% of gold pairs, trivial rules not measured on this card: read the "
        "quality figures as indicative only"
    )
    assert (figure_warning(card) or "").endswith("\nTRIVIAL RULES NOT MEASURED ON THIS CARD")
