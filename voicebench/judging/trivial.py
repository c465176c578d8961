"""Trivial rules: what a judge must beat on the very pairs it was measured on.

Each rule picks reply ``a`` or ``b`` of a gold pair from the surface alone, reading no meaning:

- ``longer``: the longer reply (more words);
- ``shared words``: the reply sharing more content words with the seeker's last turn (word
  tokens lower-cased, ``STOP_WORDS`` left out, the two sets' overlap counted);
- ``asks``: the reply that asks a question (a ``?`` in it).

A tie (the same length, the same overlap, both or neither asking) goes to a fixed coin, a hash
of the pair's id (``coin``), so a rule picks the same reply on every run and is right on about
half of its ties.

A judge card carries each rule's accuracy on the card's own pairs, and the judge's margin over
the best of them, pair by pair (``voicebench.judging.mcnemar``): a judge right on 70% of pairs
where "the longer reply" is right on 70% has learned nothing a word count does not know.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Literal

from voicebench._model import FrozenModel
from voicebench.bootstrap import wilson
from voicebench.judging.gold import GoldPair, _asks, _words
from voicebench.judging.mcnemar import PairedComparison, compare_outcomes

RuleOutcome = Literal["right", "wrong"]
Side = Literal["a", "b"]

_FUNCTION_WORDS = """
a an the and or but if so as of to in on at by for with from about into over than then that this
these those there here it its it's is am are was were be been being do does did done have has had
i i'm i've i'd i'll me my mine you you're you've you'd you'll your yours we we're our us he he's
him his she she's her they they're them their what which who whom how when where why not no nor
just can could would should will shall may might must very really too also all any some more most
such only own same other that's what's there's let's don't doesn't didn't can't won't isn't
aren't wasn't
"""
STOP_WORDS = frozenset(_FUNCTION_WORDS.split())
"""Function words, left out of the words a reply shares with the seeker: what remains says
what the seeker talked about."""
_WORD = re.compile(r"[a-z0-9']+")


def content_words(text: str) -> set[str]:
    """The lower-cased word tokens of ``text`` that are not ``STOP_WORDS``."""
    tokens = (w.strip("'") for w in _WORD.findall(text.lower().replace("\u2019", "'")))
    return {w for w in tokens if w and w not in STOP_WORDS}


def coin(pair_id: str) -> Side:
    """A tie's fixed coin, from a hash of the pair's id (not the hash its split is drawn from,
    so that the coin does not follow the split)."""
    return "a" if hashlib.sha256(f"tie {pair_id}".encode()).digest()[0] % 2 else "b"


def _more(score_a: float, score_b: float, pair: GoldPair) -> Side:
    if score_a == score_b:
        return coin(pair.id)
    return "a" if score_a > score_b else "b"


def longer(pair: GoldPair) -> Side:
    return _more(_words(pair.reply_a), _words(pair.reply_b), pair)


def shares_words(pair: GoldPair) -> Side:
    seeker = content_words(pair.turns[-1].text)
    shared_a = len(seeker & content_words(pair.reply_a))
    return _more(shared_a, len(seeker & content_words(pair.reply_b)), pair)


def asks(pair: GoldPair) -> Side:
    return _more(_asks(pair.reply_a), _asks(pair.reply_b), pair)


TRIVIAL_RULES: dict[str, Callable[[GoldPair], Side]] = {
    "longer": longer,
    "shared words": shares_words,
    "asks": asks,
}
"""Each rule's short name (as cards key it) and its pick."""
RULE_NAMES = {
    "longer": "the longer reply",
    "shared words": "the reply sharing the seeker's words",
    "asks": "the reply that asks a question",
}
"""Each rule as a sentence names it."""


class RuleScore(FrozenModel):
    """One trivial rule on a judge card's pairs."""

    correct: int
    accuracy: float
    """Pairs where the rule picks the better reply, over all pairs."""
    accuracy_low: float
    accuracy_high: float
    """Wilson 95% interval of ``accuracy``."""
    outcomes: dict[str, RuleOutcome]
    """Each pair's id: whether the rule picks the better reply, so that the rule is compared
    with the judge pair by pair, and cards on several gold files combine pair by pair."""


def rule_outcomes(pairs: Iterable[GoldPair]) -> dict[str, dict[str, RuleOutcome]]:
    """Each rule's outcome on each pair, by rule name then pair id."""
    pairs = list(pairs)
    return {
        name: {p.id: "right" if pick(p) == p.better else "wrong" for p in pairs}
        for name, pick in TRIVIAL_RULES.items()
    }


def rule_scores(outcomes: Mapping[str, Mapping[str, RuleOutcome]]) -> dict[str, RuleScore]:
    """Each rule's accuracy, with its interval, from its outcomes."""
    scores = {}
    for name, by_pair in outcomes.items():
        right = sum(o == "right" for o in by_pair.values())
        share, low, high = wilson(right, len(by_pair)) or (0.0, 0.0, 0.0)
        scores[name] = RuleScore(
            correct=right,
            accuracy=round(share, 4),
            accuracy_low=round(low, 4),
            accuracy_high=round(high, 4),
            outcomes=dict(by_pair),
        )
    return scores


def margin(
    judge: str, split: str, judge_outcomes: Mapping[str, str], scores: Mapping[str, RuleScore]
) -> PairedComparison:
    """The judge against the best rule (the first named on a tie), pair by pair: its
    ``difference`` is the judge's accuracy minus the rule's."""
    best = max(scores, key=lambda name: scores[name].correct)
    return compare_outcomes(judge, best, split, judge_outcomes, scores[best].outcomes)
