"""A judge that rates its own family: gold pairs name the family that wrote each reply, a card
counts its pairs by family, and the line beside an own-family contestant's rating gives the
judge's figure on that family's replies against its figure on all pairs."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from synthetic_runs import judge_card, make_judging, make_run, verdict

from voicebench import builtin
from voicebench.dialogues import BUILTIN_DIALOGUES, load_dialogues
from voicebench.errors import InputError
from voicebench.judging import OwnFamily, own_family_of
from voicebench.judging.cards import combine_cards, find_card
from voicebench.judging.families import NAMED, FamilyTally, family_tallies
from voicebench.judging.gold import load_gold
from voicebench.judging.trivial import rule_outcomes
from voicebench.judging.trust import family_line, family_lines, marked


def _pair(pid: str, better: str, a: str, b: str, **extra) -> dict:
    turns = [{"role": "seeker", "text": f"My week went badly ({pid}) and I feel alone."}]
    return {"id": pid, "turns": turns, "reply_a": a, "reply_b": b, "better": better, **extra}


def _gold(tmp_path: Path, pairs: list[dict]) -> Path:
    path = tmp_path / "gold.jsonl"
    path.write_text("".join(json.dumps(p) + "\n" for p in pairs))
    return path


def test_a_gold_pair_may_name_the_family_of_each_reply(tmp_path):
    gold = load_gold(
        _gold(
            tmp_path,
            [
                _pair("p1", "a", "That sounds lonely.", "Okay.", families=["human", "qwen"]),
                _pair("p2", "b", "Okay.", "That sounds lonely."),
            ],
        )
    )
    assert [p.families for p in gold.pairs] == [("human", "qwen"), None]
    for bad in (["qwen"], ["human", "Qwen 2"], "qwen"):
        path = _gold(tmp_path, [_pair("p1", "a", "Yes.", "No.", families=bad)])
        with pytest.raises(InputError, match=r"gold.jsonl: line 1: families"):
            load_gold(path)


def test_a_card_counts_the_judge_and_the_rules_on_the_pairs_with_each_family_s_reply(tmp_path):
    pairs = load_gold(
        _gold(
            tmp_path,
            [
                _pair("p1", "a", "Alone is hard. What happened?", "Okay.", families=["human", "q"]),
                _pair("p2", "b", "Cheer up.", "That sounds so lonely.", families=["q", "q"]),
                _pair("p3", "a", "I'm sorry your week went badly.", "Hm.", families=["s", "human"]),
                _pair("p4", "b", "Tell me about it, all of it, now.", "I'm here."),
            ],
        )
    ).pairs
    outcomes = {"p1": "right", "p2": "undecided", "p3": "wrong", "p4": "right"}
    rules = rule_outcomes(pairs)
    # the longer reply is wrong on p4 only, the reply that asks on p3 only (p2 asks in
    # neither: a tie, to the coin, which picks b), the reply sharing the seeker's words on none
    assert [rules["longer"][p] for p in outcomes] == ["right", "right", "right", "wrong"]
    assert [rules["asks"][p] for p in outcomes] == ["right", "right", "wrong", "right"]
    tallies = family_tallies(pairs, outcomes, rules)
    assert tallies == {
        NAMED: FamilyTally(pairs=3, correct=1, rules={"longer": 3, "shared words": 3, "asks": 2}),
        "human": FamilyTally(pairs=2, correct=1, rules={"longer": 2, "shared words": 2, "asks": 1}),
        "q": FamilyTally(pairs=2, correct=1, rules={"longer": 2, "shared words": 2, "asks": 2}),
        "s": FamilyTally(pairs=1, correct=0, rules={"longer": 1, "shared words": 1, "asks": 0}),
    }
    assert tallies["q"].best_rule == ("longer", 1.0)  # the first named of the rules tied
    # pairs that name no families give no tallies: unmeasured, not zero
    assert family_tallies(pairs[3:], outcomes, rules) is None


def test_combined_cards_add_their_tallies_by_family():
    real = judge_card(
        gold_path="a.jsonl",
        by_family={
            "qwen": FamilyTally(pairs=60, correct=33, rules={"longer": 40, "asks": 30}),
            "human": FamilyTally(pairs=50, correct=40, rules={"longer": 20, "asks": 25}),
        },
    )
    more = judge_card(
        gold_path="b.jsonl", by_family={"qwen": FamilyTally(pairs=10, correct=9, rules={})}
    )
    unnamed = judge_card(gold_path="c.jsonl")  # pairs that do not name families
    both = combine_cards([real, more, unnamed])
    # the rules only where every card with pairs of that family measured them
    assert both.by_family == {
        "human": FamilyTally(pairs=50, correct=40, rules={"asks": 25, "longer": 20}),
        "qwen": FamilyTally(pairs=70, correct=42, rules={}),
    }
    assert combine_cards([unnamed, unnamed.model_copy(update={"gold_path": "d"})]).by_family is None


OWN = OwnFamily(judge="local/qwen2.5-coder-1.5b", family="qwen", contestant="local-qwen-0.5b")


def test_the_line_beside_an_own_family_contestant_gives_the_measured_figure():
    card = judge_card(
        spec_name="local",
        pairs=248,
        accuracy=0.629,
        by_family={"qwen": FamilyTally(pairs=106, correct=59, rules={"longer": 70, "asks": 50})},
    )
    assert family_line(card, OWN) == (
        "local/qwen2.5-coder-1.5b (qwen) rated local-qwen-0.5b, its own family: on the 106 "
        "pairs with a qwen reply (holdout) it is right on 56% (95% CI 46%-65%), 'the longer "
        "reply' on 66% of them; against 63% on all 248 pairs"
    )
    # beside the figure on the pairs that name their families, where not all of them do
    named = {**(card.by_family or {}), NAMED: FamilyTally(pairs=158, correct=99)}
    assert family_line(card.model_copy(update={"by_family": named}), OWN).endswith(
        "66% of them; against 63% on the 158 pairs that name their families (63% on all 248)"
    )
    assert family_lines(card, [OWN]) == [f"\u2020 {family_line(card, OWN)}"]
    assert family_lines(card, [OWN], "local-smollm2") == []
    assert marked("local-qwen-0.5b", [OWN]) == "local-qwen-0.5b \u2020"
    assert marked("local-smollm2", [OWN]) == "local-smollm2"
    # a card that has no figure for the family says so
    unnamed = family_line(judge_card(spec_name="local"), OWN)
    assert unnamed.endswith(
        "its own family: its card is unmeasured on qwen replies (its gold pairs do not say "
        "which family wrote each reply)"
    )
    other = family_line(
        card.model_copy(update={"by_family": {"human": FamilyTally(pairs=3, correct=2)}}), OWN
    )
    assert other.endswith("unmeasured on qwen replies (none of its gold pairs has a qwen reply)")
    assert family_line(None, OWN).endswith(
        "its own family: judge unmeasured, so how far it favours its own family is unknown"
    )


def test_a_judging_folder_says_which_contestants_a_judge_of_their_family_rated(tmp_path):
    items = load_dialogues(BUILTIN_DIALOGUES)[:1]
    runs = [make_run(tmp_path, n, items, [900, 900]) for n in ("fast", "slow")]
    verdicts = [
        verdict(items[0].id, "fast", "slow", "A"),
        verdict(items[0].id, "slow", "fast", "B"),
    ]
    folder = make_judging(
        tmp_path / "j",
        runs,
        items,
        ("fast", "slow"),
        verdicts,
        families={"fast": "qwen", "slow": "smollm"},
        judge_families={"j/1": "qwen"},
    )
    assert own_family_of(folder) == (OwnFamily(judge="j/1", family="qwen", contestant="fast"),)
    # a folder written before the judges' families were recorded: none known, none claimed
    header = json.loads((folder / "judging.json").read_text())
    del header["judge_families"]
    (folder / "judging.json").write_text(json.dumps(header))
    assert own_family_of(folder) == ()


def test_the_shipped_real_pairs_name_their_families_as_their_ids_do():
    families = {
        "human-reference": "human",
        "local-qwen-0.5b": "qwen",
        "local-qwen-1.5b": "qwen",
        "local-smollm2": "smollm",
        "scripted-300ms": "scripted",
    }
    for p in load_gold(builtin.PAIRS_REAL).pairs:
        first, second = p.id.removeprefix(f"real-{p.conversation}-").split("-vs-")
        better = re.match(r"better \(([^)]+)\)", p.why or "")
        assert better is not None and p.families is not None, p.id
        assert sorted(p.families) == sorted((families[first], families[second])), p.id
        winner = p.families[0] if p.better == "a" else p.families[1]
        assert winner == families[better.group(1).replace("/", "-")], p.id


def test_the_qwen_judge_s_card_has_a_figure_on_qwen_replies():
    # the checklist judge is a Qwen model that rates the demo's Qwen agent (rates_own_family)
    held_out = [
        p
        for gold in (builtin.PAIRS_REAL, builtin.PAIRS_REAL_MORE)
        for p in load_gold(gold).select("holdout")
    ]
    card = find_card("judges/local-checklist.toml")
    assert card is not None and card.by_family is not None
    qwen = card.by_family["qwen"]
    with_qwen = [p for p in held_out if "qwen" in (p.families or ())]
    assert qwen.pairs == len(with_qwen) >= 60
    assert card.outcomes is not None
    assert qwen.correct == sum(card.outcomes[p.id] == "right" for p in with_qwen)
    assert set(qwen.rules) == {"longer", "shared words", "asks"}
    # the real pairs name their families, the ESConv pairs its card counts with them do not
    named = card.by_family[NAMED]
    assert named.pairs == len(held_out) < card.pairs
    line = family_line(card, OWN)
    assert f"on the {qwen.pairs:,} pairs with a qwen reply (holdout) it is right on" in line
    assert line.endswith(
        f"against {100 * named.correct / named.pairs:.0f}% on the {named.pairs:,} pairs that "
        f"name their families ({100 * card.accuracy:.0f}% on all {card.pairs:,})"
    )


def test_the_offline_judge_shares_no_family_with_a_shipped_agent():
    from voicebench.agentspec import load_agent_spec
    from voicebench.judging import load_judge_spec

    judge, _ = load_judge_spec(builtin.OFFLINE_JUDGE, require_secrets=False)
    agents = {
        load_agent_spec(p, require_secrets=False).family for p in builtin.AGENTS.glob("*.toml")
    }
    assert {j.family for j in judge.judges}.isdisjoint(agents)
