"""``judge-check``: a scripted judge with known answers gives known card figures, a bad gold
line stops everything before a request, and an unchanged spec and gold file reuse the card."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from voicebench.errors import InputError
from voicebench.judging.cards import find_card, read_card, trust_warning
from voicebench.judging.check import check_judge
from voicebench.judging.gold import load_gold, split_of
from voicebench.testing import ScriptedLLMServer

LONG = "That sounds so hard, and I can hear how much it weighs on you after such a long day."


def _pair(pid, better, reply_a, reply_b, **extra):
    turns = [{"role": "seeker", "text": f"Something happened ({pid}) and I feel awful."}]
    return {
        "id": pid,
        "turns": turns,
        "reply_a": reply_a,
        "reply_b": reply_b,
        "better": better,
        **extra,
    }


GOLD = [
    _pair("p1", "a", "I'm here. What happened?", "Okay.", category="x", dimensions="E"),
    _pair("p2", "b", "Cheer up.", "That hurts. Tell me more?", category="x", dimensions="EA"),
    _pair("p3", "a", "That's awful, I'm sorry.", "Whatever.", category="y", dimensions="T"),
    _pair("p4", "b", LONG, "I'm sorry. What happened?", category="y"),
]
# The judge's letter per pair and order (AB: reply_a shown first; BA: reply_b shown first).
ANSWERS = {"p1": "AB", "p2": "AA", "p3": "BA", "p4": "BA"}


def _answer(letter: str) -> str:
    dims = dict.fromkeys("HEART")
    return json.dumps(
        {"winner": letter, "strength": 2, "dimensions": dims, "rationale": "scripted"}
    )


def _write(path: Path, lines) -> Path:
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return path


def _spec(tmp_path: Path, server: ScriptedLLMServer, extra: str = "") -> Path:
    (tmp_path / "rubric.md").write_text("Say which reply supports the seeker better.\n")
    spec = tmp_path / "judge.toml"
    spec.write_text(
        'name = "scripted-check"\nrubric = "rubric.md"\n[[judges]]\n'
        'provider = "openai-compatible"\nmodel = "scripted-llm"\nfamily = "scripted"\n'
        f'base_url = "{server.base_url}"\n{extra}'
    )
    return spec


async def test_known_answers_give_exact_card_figures_and_the_card_is_reused(tmp_path):
    gold = _write(tmp_path / "gold.jsonl", GOLD)
    with ScriptedLLMServer(ttft_ms=0, token_delay_ms=0) as server:
        spec = _spec(tmp_path, server)
        for pair in GOLD:  # asked in file order, AB then BA, one at a time
            for letter in ANSWERS[pair["id"]]:
                server.enqueue(_answer(letter))
        result = await check_judge(spec, gold, out_dir=tmp_path / "check")
        asked = len(server.history())
        again = await check_judge(spec, gold, out_dir=tmp_path / "check")
        assert len(server.history()) == asked == 8  # the second check asked nothing

    card = result.card
    assert not result.reused and again.reused and again.card == card
    # p1 right, p2 flipped (undecided), p3 wrong, p4 right.
    assert (card.pairs, card.decided, card.correct) == (4, 3, 2)
    assert card.accuracy == 0.5 and card.decided_rate == 0.75
    assert (card.flips, card.flip_rate) == (1, 0.25)
    assert card.first_slot_rate == 5 / 8
    assert (card.accuracy_low, card.accuracy_high) == (pytest.approx(0.15, abs=0.01), 0.85)
    assert {c: (t.pairs, t.correct) for c, t in card.by_category.items()} == {
        "x": (2, 1),
        "y": (2, 1),
    }
    assert {d: (t.pairs, t.correct) for d, t in card.by_dimension.items()} == {
        "E": (2, 1),
        "A": (1, 0),
        "T": (1, 0),
    }
    assert (card.longer_worse.pairs, card.longer_worse.correct) == (1, 1)  # p4
    assert card.failed_verdicts == 0 and card.verdicts == 8
    assert trust_warning(card) is not None  # 50% is below the bar
    # The card is keyed by both hashes, beside the spec, and found again from the spec.
    assert result.path.parent == tmp_path / "cards"
    assert card.gold_sha256 in "".join(load_gold(gold).sha256 for _ in [0])
    assert find_card(spec) == read_card(result.path) == card


async def test_letter_margins_of_both_orders_are_summed(tmp_path):
    # p1: better a; AB margin +0.5 for A (= a), BA margin +1.5 for A (= b): a scores -1.0.
    # p2: better b; AB margin +2.0 for A (= a), BA margin +1.0 for A (= b): a scores +1.0.
    gold = _write(
        tmp_path / "gold.jsonl",
        [_pair("p1", "a", "One.", "Two.", category="c"), _pair("p2", "b", "Three.", "Four.")],
    )
    margins = [(-0.5, -1.0), (-0.2, -1.7), (-0.1, -2.1), (-0.3, -1.3)]
    with ScriptedLLMServer(ttft_ms=0, token_delay_ms=0) as server:
        spec = _spec(tmp_path, server, 'method = "letter-margin"\n')
        for a, b in margins:
            server.enqueue("A", top_logprobs={"A": a, "B": b, "The": -4.0})
        result = await check_judge(spec, gold, out_dir=tmp_path / "check")
        asked = server.history()
    assert all(body["logprobs"] and body["max_tokens"] == 3 for body in asked)
    card = result.card
    # Every pair is decided though each judge answered "A" both times (two flips).
    assert (card.decided, card.flips, card.correct) == (2, 2, 0)
    by_id = {p.item_id: p for p in result.pairs}
    assert by_id["p1"].winner == "b" and by_id["p2"].winner == "a"


def test_a_bad_gold_line_names_file_line_and_field_and_nothing_is_judged(tmp_path):
    bad = dict(GOLD[1])
    bad["better"] = "c"
    gold = _write(tmp_path / "gold.jsonl", [GOLD[0], bad, GOLD[2]])
    with pytest.raises(InputError) as err:
        load_gold(gold)
    assert str(err.value).startswith(f"{gold}: line 2: better:")

    ending = dict(GOLD[0], turns=[{"role": "supporter", "text": "Hello."}])
    _write(gold, [ending])
    with pytest.raises(InputError, match=r"line 1: turns: .*end on a seeker turn"):
        load_gold(gold)

    _write(gold, [GOLD[0], GOLD[0]])
    with pytest.raises(InputError, match=r"pair 2: id: id 'p1' is also pair 1"):
        load_gold(gold)


def test_a_users_file_with_only_the_required_fields_and_no_final_newline_loads(tmp_path):
    minimal = {k: GOLD[0][k] for k in ("id", "turns", "reply_a", "reply_b", "better")}
    path = tmp_path / "mine.jsonl"
    path.write_text(json.dumps(minimal))  # no newline at the end
    (pair,) = load_gold(path).pairs
    assert (
        pair.category is None
        and pair.dimension_letters == ()
        and pair.split
        in (
            "dev",
            "holdout",
        )
    )


def test_the_shipped_gold_set_is_balanced_and_covers_what_it_promises():
    gold = load_gold("judges/pairs-gold.jsonl")
    pairs = gold.pairs
    assert len(pairs) >= 80
    share_a = sum(p.better == "a" for p in pairs) / len(pairs)
    assert 0.4 <= share_a <= 0.6
    cats = {p.category for p in pairs}
    assert {
        "longer-worse",
        "generic-vs-specific",
        "minimizing",
        "clinical-overreach",
        "ignores-request",
        "robotic",
        "asr-slips",
        "adversarial",
        "close",
    } <= cats
    assert sum(p.category == "close" for p in pairs) >= 20
    assert {d for p in pairs for d in p.dimension_letters} == set("HEART")
    # A judge that always picks the longer reply is not rewarded by the set.
    assert sum(p.longer_is_worse for p in pairs) / len(pairs) >= 0.45
    splits = [split_of(p.id) for p in pairs]
    assert 0.35 <= splits.count("holdout") / len(splits) <= 0.65


async def test_pointwise_scores_each_reply_once_and_mirrors_the_orders(tmp_path):
    gold = _write(
        tmp_path / "gold.jsonl",
        [_pair("p1", "a", "One.", "Two."), _pair("p2", "a", "Three.", "Four.")],
    )
    # Yes/No log-probabilities per reply, in the order the replies are first scored.
    answers = [(-0.2, -1.8), (-2.0, -0.2), (-1.0, -0.5), (-0.3, -1.9)]
    with ScriptedLLMServer(ttft_ms=0, token_delay_ms=0) as server:
        spec = _spec(tmp_path, server, 'method = "pointwise"\n')
        for yes, no in answers:
            server.enqueue("Yes", top_logprobs={"Yes": yes, "No": no})
        result = await check_judge(spec, gold, out_dir=tmp_path / "check")
        asked = server.history()
    assert len(asked) == 4  # each reply scored once; the second order came from the cache
    assert "One." in asked[0]["messages"][-1]["content"]
    assert "Two." not in asked[0]["messages"][-1]["content"]  # a reply is judged alone
    card = result.card
    # p1: a scores +1.6 against b's -1.8; p2: a -0.5 against b +1.6.
    assert (card.decided, card.flips, card.correct, card.first_slot_rate) == (2, 0, 1, 0.5)
    by_id = {p.item_id: p for p in result.pairs}
    assert by_id["p1"].winner == "a" and by_id["p2"].winner == "b"
