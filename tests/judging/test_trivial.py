"""The trivial rules a judge must beat: each reads one thing on the surface of a pair, and a
tie goes to a coin fixed by the pair's id."""

from __future__ import annotations

from voicebench.bootstrap import wilson
from voicebench.judging.gold import GoldPair, split_of
from voicebench.judging.trivial import (
    TRIVIAL_RULES,
    asks,
    coin,
    content_words,
    longer,
    rule_outcomes,
    rule_scores,
    shares_words,
)


def pair(pid: str, a: str, b: str, better: str = "a", seeker: str = "I feel awful.") -> GoldPair:
    return GoldPair.model_validate(
        {
            "id": pid,
            "turns": [{"role": "seeker", "text": seeker}],
            "reply_a": a,
            "reply_b": b,
            "better": better,
        }
    )


SEEKER = "My sister moved to Denver last spring and I miss her every single day."


def test_each_rule_picks_by_one_surface_feature():
    short, long = "I'm sorry.", "That sounds so hard, and I'm here with you tonight."
    assert longer(pair("p", long, short)) == "a" and longer(pair("p", short, long)) == "b"
    question = "What was that like?"
    assert asks(pair("p", long, question)) == "b" and asks(pair("p", question, long)) == "a"
    echo = "You miss your sister since she moved to Denver."  # sister, moved, denver, miss
    kind = "That sounds really hard, and I'm here for you, truly, all the way."
    assert shares_words(pair("p", kind, echo, seeker=SEEKER)) == "b"
    # function words are not shared words: "my", "to", "and", "i", "her", "every" are not
    # what the seeker talked about, so a reply of them alone shares nothing.
    words = {"sister", "moved", "denver", "last", "spring", "miss", "every", "single", "day"}
    assert content_words(SEEKER) == words
    assert content_words("And I, to my... her!") == set()
    assert content_words("I\u2019m here, it\u2019s okay") == {"okay"}  # typographic apostrophes


def test_a_tie_goes_to_a_coin_fixed_by_the_pair_s_id():
    same = "I'm here with you."  # the same length, the same overlap, neither asks
    ties = [pair(f"tie-{n}", same, "You are not alone.") for n in range(400)]
    for p in ties:
        assert longer(p) == shares_words(p) == asks(p) == coin(p.id)
    assert [coin(p.id) for p in ties] == [coin(f"tie-{n}") for n in range(400)]  # no chance
    heads = sum(coin(p.id) == "a" for p in ties)
    assert 170 <= heads <= 230  # about half of the ties go either way
    # the coin is not the split's hash: within each split, ties still fall both ways
    for split in ("dev", "holdout"):
        of_split = [p for p in ties if split_of(p.id) == split]
        assert 0.38 <= sum(coin(p.id) == "a" for p in of_split) / len(of_split) <= 0.62
    # so on ties a rule is right on about half, whichever reply is better
    scores = rule_scores(rule_outcomes(ties))
    assert all(0.42 <= s.accuracy <= 0.58 for s in scores.values())
    assert scores["longer"].correct == heads


def test_rule_outcomes_and_scores_count_each_pair():
    pairs = [
        pair("p1", "You miss your sister in Denver?", "Okay.", seeker=SEEKER),
        pair("p2", "Okay.", "Tell me more about your sister?", better="b", seeker=SEEKER),
        pair("p3", "Sure.", "That is a very long and rambling reply about nothing at all."),
    ]
    outcomes = rule_outcomes(pairs)
    assert set(outcomes) == set(TRIVIAL_RULES)
    assert outcomes["longer"] == {"p1": "right", "p2": "right", "p3": "wrong"}
    assert outcomes["asks"] == {"p1": "right", "p2": "right", "p3": coin_outcome("p3")}
    assert outcomes["shared words"] == {"p1": "right", "p2": "right", "p3": coin_outcome("p3")}
    longer_score = rule_scores(outcomes)["longer"]
    assert longer_score.correct == 2 and longer_score.accuracy == round(2 / 3, 4)
    _, low, high = wilson(2, 3) or (0, 0, 0)
    assert (longer_score.accuracy_low, longer_score.accuracy_high) == (
        round(low, 4),
        round(high, 4),
    )
    assert longer_score.outcomes == outcomes["longer"]


def coin_outcome(pid: str) -> str:
    return "right" if coin(pid) == "a" else "wrong"  # the better reply is a
