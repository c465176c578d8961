"""``judge-check``: a scripted judge with known answers gives known card figures, a bad gold
line stops everything before a request, and an unchanged spec and gold file reuse the card."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from voicebench.errors import InputError
from voicebench.judging.cards import find_card, read_card
from voicebench.judging.check import check_judge
from voicebench.judging.gold import cue_accuracy, load_gold, split_of
from voicebench.judging.mcnemar import shown_p
from voicebench.judging.trust import trust_warning
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
FAMILIES = {"p1": ["human", "qwen"], "p2": ["qwen", "smollm"]}
"""The families that wrote p1's and p2's replies; p3's and p4's are not named."""
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
    named = [dict(p, families=FAMILIES[p["id"]]) if p["id"] in FAMILIES else p for p in GOLD]
    gold = _write(tmp_path / "gold.jsonl", named)
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
    assert card.outcomes == {"p1": "right", "p2": "undecided", "p3": "wrong", "p4": "right"}
    # beside it, the trivial rules on the same pairs: the reply sharing the seeker's words is
    # right on all four (p2 a tie, the coin right), the judge 50 points under it
    rules = card.trivial_rules or {}
    assert {k: r.correct for k, r in rules.items()} == {"longer": 3, "shared words": 4, "asks": 3}
    assert rules["asks"].outcomes == {"p1": "right", "p2": "right", "p3": "wrong", "p4": "right"}
    assert card.margin is not None and (card.margin.second, card.margin.difference) == (
        "shared words",
        -0.5,
    )
    # and both on the pairs with a reply of each family: qwen's p1 (right) and p2 (undecided)
    assert {f: (t.pairs, t.correct, t.rules) for f, t in (card.by_family or {}).items()} == {
        "*": (2, 1, {"longer": 2, "shared words": 2, "asks": 2}),  # the pairs that name them
        "human": (1, 1, {"longer": 1, "shared words": 1, "asks": 1}),
        "qwen": (2, 1, {"longer": 2, "shared words": 2, "asks": 2}),
        "smollm": (1, 0, {"longer": 1, "shared words": 1, "asks": 1}),
    }
    assert card.failed_verdicts == 0 and card.verdicts == 8
    assert "no better than chance" in trust_warning(card)  # 50%, 95% CI 15-85%
    assert "indicative only" in trust_warning(card.model_copy(update={"accuracy_low": 0.55}))
    # The card is keyed by both hashes, beside the spec, and found again from the spec.
    assert result.path.parent == tmp_path / "cards"
    assert card.gold_sha256 in "".join(load_gold(gold).sha256 for _ in [0])
    assert find_card(spec) == read_card(result.path) == card
    # a card written before the trivial rules and the families gains them when it is reused,
    # and keeps them
    older = json.loads(result.path.read_text())
    del older["trivial_rules"], older["margin"], older["by_family"]
    result.path.write_text(json.dumps(older))
    filled = await check_judge(spec, gold, out_dir=tmp_path / "check")
    assert filled.reused and filled.card == card and read_card(result.path) == card


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
    # No rule that reads only the replies' surface (length, a question mark, the slot) is
    # right on much more than half of the pairs, held out or not.
    for subset in (list(pairs), gold.select("holdout")):
        cues = cue_accuracy(subset)
        assert max(cues.values()) <= 0.6, cues


def test_the_shipped_real_reply_pairs_keep_each_item_in_one_split_and_give_reasons():
    from voicebench import builtin

    gold = load_gold(builtin.GOLD_SETS["real"])  # judge-check --gold real
    assert gold.sha256 == load_gold("judges/pairs-real.jsonl").sha256
    pairs = gold.pairs
    assert len(pairs) >= 150
    assert {p.category for p in pairs} == {"real-vs-reference", "real-vs-agents"}
    assert all(p.conversation and p.why and "better (" in p.why for p in pairs)
    split_of_item: dict[str, str] = {}
    for p in pairs:
        assert split_of_item.setdefault(p.conversation or "", p.split) == p.split
    assert 0.3 <= len(gold.select("holdout")) / len(pairs) <= 0.7
    share_a = sum(p.better == "a" for p in pairs) / len(pairs)
    assert 0.4 <= share_a <= 0.6


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


async def test_a_checklist_weighs_each_question_and_new_weights_ask_nothing_again(
    tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)  # the verdicts' default folder, kept across new weights
    gold = _write(
        tmp_path / "gold.jsonl",
        [_pair("p1", "a", "One.", "Two."), _pair("p2", "b", "Three.", "Four.")],
    )
    # Per reply, in the order asked: attuned (Yes is good), then fixes (Yes is bad).
    answers = {
        "One.": [(-0.1, -2.1), (-0.1, -2.1)],  # attuned +2.0, fixes -2.0
        "Two.": [(-2.1, -0.1), (-2.1, -0.1)],  # attuned -2.0, fixes +2.0
        "Three.": [(-0.1, -1.1), (-1.1, -0.1)],  # attuned +1.0, fixes +1.0
        "Four.": [(-1.1, -0.1), (-3.1, -0.1)],  # attuned -1.0, fixes +3.0
    }
    with ScriptedLLMServer(ttft_ms=0, token_delay_ms=0) as server:
        weights = "weights = {{ attuned = {}, fixes = {} }}\n"
        spec = _spec(tmp_path, server, 'method = "checklist"\n' + weights.format(1.0, 0.0))
        for reply in ("One.", "Two.", "Three.", "Four."):
            for yes, no in answers[reply]:
                server.enqueue("Yes", top_logprobs={"Yes": yes, "No": no})
        first = await check_judge(spec, gold)
        asked = server.history()
        assert len(asked) == 8  # two questions for each reply, once
        assert [m["messages"][-1]["content"].count("rush to fix") for m in asked] == [0, 1] * 4
        # Only 'attuned' counts: p1 to a (+4), p2 to a (+2): one right.
        assert {p.item_id: p.winner for p in first.pairs} == {"p1": "a", "p2": "a"}
        assert first.card.correct == 1
        # A dimension goes where its questions push the weighed margin: attuned (A) to a,
        # fixes (E) nowhere while it weighs nothing.
        p1 = next(p for p in first.pairs if p.item_id == "p1")
        assert (p1.dimensions["A"], p1.dimensions["E"]) == ("a", None)
        # Fixes weighed twice as much: the recorded margins give other winners.
        spec.write_text(spec.read_text().replace(weights.format(1.0, 0.0), weights.format(1, 2)))
        second = await check_judge(spec, gold)
        assert len(server.history()) == 8  # nothing asked again
    # p1: attuned +4, fixes (-2 - 2) * 2 = -8 -> b; p2: attuned +2, fixes (1 - 3) * 2 -> b.
    margins = {p.item_id: p.winner for p in second.pairs}
    assert margins == {"p1": "b", "p2": "b"}
    p1 = next(p for p in second.pairs if p.item_id == "p1")
    assert (p1.dimensions["A"], p1.dimensions["E"]) == ("a", "b")  # fixes now weighs -8
    assert second.card.correct == 1 and second.path != first.path
    assert second.card.spec_sha256 != first.card.spec_sha256


def test_judge_check_against_a_second_judge_compares_them_pair_by_pair(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from voicebench.cli import app

    monkeypatch.chdir(tmp_path)
    gold = _write(tmp_path / "gold.jsonl", GOLD)
    right = {"p1": "AB", "p2": "BA", "p3": "AB", "p4": "BA"}  # every pair, both orders
    with ScriptedLLMServer(ttft_ms=0, token_delay_ms=0) as server:
        spec = _spec(tmp_path, server)
        other = tmp_path / "other" / "judge.toml"
        other.parent.mkdir()
        other.write_text(spec.read_text().replace("scripted-check", "scripted-right"))
        (other.parent / "rubric.md").write_text((tmp_path / "rubric.md").read_text())
        for answers in (ANSWERS, right):
            for pair in GOLD:
                for letter in answers[pair["id"]]:
                    server.enqueue(_answer(letter))
        shown = CliRunner().invoke(
            app,
            [
                *("judge-check", "--judge", str(spec), "--gold", str(gold), "--split", "all"),
                *("--against", str(other)),
            ],
        )
    assert shown.exit_code == 0, shown.output
    text = " ".join(shown.output.split())
    # scripted-check is right on p1 and p4 only; scripted-right on all four.
    assert "scripted-check - scripted-right on 4 all pairs: -50.0 points" in text
    assert "right only for scripted-check 0, only for scripted-right 2" in text
    assert "McNemar exact p = 0.5" in text
    assert shown_p(1e-9) == "< 1e-6" and shown_p(0.0421) == "= 0.0421"


def test_judge_check_measures_held_out_pairs_unless_told_and_marks_dev_pairs(tmp_path, monkeypatch):
    """Without --split, only the pairs no tuning saw (as leaderboards quote them); with --split
    all, the card counts the dev pairs, and says so in the terminal and in its JSON."""
    from typer.testing import CliRunner

    from voicebench.cli import app
    from voicebench.judging.trust import card_line

    monkeypatch.chdir(tmp_path)
    pairs = [_pair(pid, "a", "I'm here. What happened?", "Okay.") for pid in ("p1", "p2", "p9")]
    assert [split_of(p["id"]) for p in pairs] == ["dev", "dev", "holdout"]
    gold = _write(tmp_path / "gold.jsonl", pairs)
    with ScriptedLLMServer(ttft_ms=0, token_delay_ms=0) as server:
        spec = _spec(tmp_path, server)
        for _ in pairs:  # right in both orders, the held-out pair asked first
            server.enqueue(_answer("A"))
            server.enqueue(_answer("B"))
        held_out = CliRunner().invoke(
            app, ["judge-check", "--judge", str(spec), "--gold", str(gold)]
        )
        assert len(server.history()) == 2
        every = CliRunner().invoke(
            app, ["judge-check", "--judge", str(spec), "--gold", str(gold), "--split", "all"]
        )
        assert len(server.history()) == 6  # the dev pairs asked, the held-out one cached
    assert held_out.exit_code == every.exit_code == 0, held_out.output + every.output
    first = read_card(next((tmp_path / "cards").glob("*-holdout.json")))
    assert (first.split, first.pairs, first.dev_pairs, first.includes_dev) == (
        "holdout",
        1,
        0,
        False,
    )
    assert "gold.jsonl (holdout)" in held_out.output and "dev" not in held_out.output.lower()

    path = next((tmp_path / "cards").glob("*-all.json"))
    saved = json.loads(path.read_text())
    assert (saved["split"], saved["pairs"], saved["dev_pairs"]) == ("all", 3, 2)
    text = " ".join(every.output.split())
    assert "gold.jsonl (all: includes 2 dev pairs, tuned on)" in text
    assert "accuracy (decided and right / all pairs), DEV PAIRS INCLUDED" in text
    assert "these figures include dev pairs, which the judge's method was tuned" in text
    assert "(all: includes 2 dev pairs, tuned on; 95% CI" in card_line(read_card(path))

    none = _write(tmp_path / "dev-only.jsonl", pairs[:2])
    refused = CliRunner().invoke(app, ["judge-check", "--judge", str(spec), "--gold", str(none)])
    assert refused.exit_code == 2 and "dev-only.jsonl: it has no holdout pairs" in refused.output


def test_a_card_written_before_dev_pairs_were_counted_reads_its_split():
    from synthetic_runs import judge_card

    from voicebench.judging.trust import card_line

    assert judge_card(split="all").includes_dev and judge_card(split="dev").includes_dev
    assert not judge_card(split="holdout").includes_dev
    assert "(all: includes dev pairs, tuned on; 95% CI 77%-96%)" in card_line(
        judge_card(split="all")
    )


def _card(name: str, outcomes: dict[str, str], split: str = "holdout"):
    from voicebench.judging.cards import JudgeCard

    return JudgeCard.model_construct(
        spec_name=name, spec_path=f"{name}.toml", gold_sha256="g", split=split, outcomes=outcomes
    )


def test_the_paired_comparison_of_two_cards():
    from voicebench.judging.paired import paired_comparison

    # 12 both right, 9 right for the first only, 2 for the second only, 21 neither.
    kinds = [("right", "right")] * 12 + [("right", "wrong")] * 9
    kinds += [("wrong", "right")] * 2 + [("undecided", "wrong")] * 21
    first = _card("one", {f"p{i}": k[0] for i, k in enumerate(kinds)})
    second = _card("two", {f"p{i}": k[1] for i, k in enumerate(kinds)})
    cmp = paired_comparison(first, second)
    assert (cmp.pairs, cmp.both_right, cmp.first_only, cmp.second_only, cmp.neither) == (
        44,
        12,
        9,
        2,
        21,
    )
    assert cmp.difference == pytest.approx(7 / 44, abs=1e-4)
    # McNemar's exact test: two-sided binomial tail of 2 of 11 discordant pairs.
    assert cmp.p_value == pytest.approx(2 * (1 + 11 + 55) / 2**11, abs=1e-6)
    assert cmp.difference_low < cmp.difference < cmp.difference_high
    assert cmp.difference_low > 0 and cmp.difference_high < 7 / 44 + 0.2
    back = paired_comparison(second, first)  # the other way round: the mirror image
    assert (back.difference_low, back.difference_high) == pytest.approx(
        (-cmp.difference_high, -cmp.difference_low), abs=1e-4
    )
    assert back.p_value == cmp.p_value

    with pytest.raises(InputError, match="not on the same gold pairs"):
        paired_comparison(first, _card("three", second.outcomes, split="dev"))
    with pytest.raises(InputError, match="no per-pair outcomes") as err:
        paired_comparison(first, _card("old", None))
    assert "old.toml" in str(err.value)


def test_checklist_weights_are_fitted_to_the_labels_and_shrink_with_the_penalty():
    import numpy as np

    from voicebench.judging.fitting import choose, fit

    rng = np.random.default_rng(7)
    x = rng.normal(size=(120, 3))
    # A is better when its first question says so, and its second says the opposite; the
    # third is noise. Labels follow that rule, one in ten flipped.
    y = np.sign(1.5 * x[:, 0] - 1.0 * x[:, 1])
    y[::10] *= -1
    strength, scores = choose(x, y)
    w = fit(x, y, strength)
    assert w[0] > 0 > w[1] and abs(w[2]) < min(abs(w[0]), abs(w[1])) / 2
    assert scores[strength] >= 0.8
    assert np.abs(fit(x, y, 1000.0)).sum() < np.abs(fit(x, y, 0.01)).sum() / 5


def test_the_shipped_judge_s_card_leads_with_real_replies_then_the_written_set():
    from voicebench import builtin
    from voicebench.judging.cards import real_gold_sha256s

    gold = load_gold(builtin.PAIRS_GOLD)
    real = load_gold(builtin.PAIRS_REAL)
    more = load_gold(builtin.PAIRS_REAL_MORE)
    card = find_card("judges/local.toml")
    # the held-out real replies: both shipped readings and the ESConv pairs, counted together
    assert card is not None and card.real_replies and card.split == "holdout"
    shipped_held_out = [*real.select("holdout"), *more.select("holdout")]
    assert card.pairs > len(shipped_held_out) >= 1_000
    assert card.outcomes is not None and len(card.outcomes) == card.pairs
    assert {p.id for p in shipped_held_out} <= set(card.outcomes)
    assert {real.sha256, more.sha256} <= real_gold_sha256s()
    written = card.written
    assert written is not None and written.gold_sha256 == gold.sha256
    assert written.split == "holdout" and written.pairs == len(gold.select("holdout")) >= 120
    # asked for a gold file, that file's card
    assert find_card("judges/local.toml", gold_sha256=gold.sha256) == written
    # the trivial rules beside it, filled in from its outcomes: on the written set 16 points
    # over the reply sharing the seeker's words; on the shipped real replies 1 point over the
    # longer reply; on all the held-out real replies 2 points over it: short of the bar
    assert written.margin is not None and written.margin.second == "shared words"
    assert round(100 * written.margin.difference) == 16 and written.trusted
    shipped = find_card("judges/local.toml", gold_sha256=real.sha256)
    assert shipped is not None and shipped.margin is not None
    assert shipped.margin.second == "longer" and round(100 * shipped.margin.difference) == 1
    assert card.margin is not None and card.margin.second == "longer"
    assert round(100 * card.margin.difference) == 2 and not card.trusted
    # A judge measured on the earlier, smaller gold set too: those cards are kept beside
    # its spec, and not chosen.
    letter = find_card("judges/candidates/qwen-1.5b-letter.toml")
    assert letter is not None and letter.gold_sha256 == gold.sha256
    earlier = [
        read_card(p)
        for p in Path("judges/candidates/cards").glob("qwen-1.5b-letter-*-holdout.json")
        if read_card(p).gold_sha256 != gold.sha256
    ]
    assert earlier and all(c.pairs < letter.pairs for c in earlier)


def test_the_length_matched_pairs_make_the_longer_reply_right_half_of_the_time():
    from voicebench.judging.gold import GoldPair, length_matched

    def pair(pid: str, better: str, a_words: int, b_words: int) -> GoldPair:
        return GoldPair.model_validate(
            _pair(pid, better, " ".join(["yes"] * a_words), " ".join(["no"] * b_words))
        )

    pairs = [pair(f"w{k}", "a", 3, 9) for k in range(3)]  # the longer is the worse
    pairs += [pair(f"b{k}", "b", 3, 9) for k in range(7)]  # the longer is the better
    pairs.append(pair("same", "a", 4, 4))  # one length: no side
    matched = length_matched(pairs)
    assert len(matched) == 6 and "same" not in {p.id for p in matched}
    assert sum(p.longer_is_worse for p in matched) == 3
    assert cue_accuracy(matched)["the longer reply"] == 0.5
    assert length_matched(reversed(pairs)) == matched  # chosen by id, not by order
