"""The seeker's role check: a supporter's words and a line said again break role; every seeker
turn of the built-in dialogues and of the gold pairs keeps it, and most supporter turns are
caught."""

from __future__ import annotations

import pytest

from voicebench import builtin
from voicebench.calling.roles import repeats_earlier, role_break, speaks_as_supporter
from voicebench.dialogues import BUILTIN_DIALOGUES, load_dialogues
from voicebench.dialogues.models import Role
from voicebench.dialogues.personas import personas_for
from voicebench.judging.gold import load_gold

ITEMS = load_dialogues(BUILTIN_DIALOGUES)
CARDS = personas_for(ITEMS)
CARD = CARDS[ITEMS[0].id].model_copy(update={"turn_length": "long"})


def test_a_supporter_reassuring_and_asking_for_more_breaks_role():
    line = (
        "I want you to know that there's always someone who cares about you. Can you tell me "
        "more about what's been going on?"
    )
    assert role_break(line, CARD) == "speaking as the supporter"


@pytest.mark.parametrize(
    "line",
    [
        "I just feel so lost. I don't know what to do anymore.",  # word for word
        "Yeah. I just feel so lost, I don't know what to do anymore.",  # a word put before it
        "I don't know what to do anymore, I just feel so lost.",  # its halves turned round
    ],
)
def test_a_line_said_again_breaks_role(line):
    earlier = ["I lost my job on Friday.", "I just feel so lost. I don't know what to do anymore."]
    assert role_break(line, CARD, earlier) == "saying an earlier line again"


def test_the_benchmarks_loop_with_new_first_words_breaks_role():
    """The offline seeker's line in benchmarks/seeker.py (card 13), said again with its first
    words changed."""
    earlier = ["I know, but I just can't stop drinking. It's like a habit."]
    line = "I'm so sorry, but I just can't stop drinking. It's like a habit."
    assert role_break(line, CARD, earlier) == "saying an earlier line again"


@pytest.mark.parametrize(
    "line",
    [
        "I don't know.",  # too short to be a loop
        "I don't know what to do about my sister though, she keeps calling.",  # a phrase again
    ],
)
def test_a_phrase_said_again_keeps_the_role(line):
    earlier = ["I don't know.", "I don't know what to do anymore."]
    assert not repeats_earlier(line, earlier)
    assert role_break(line, CARD, earlier) is None


def test_quoted_words_are_not_the_callers_own():
    line = "This is pointless. You're going to say 'that sounds hard' like everyone else."
    assert not speaks_as_supporter(line)
    assert speaks_as_supporter("That sounds hard. How are you holding up?")


def test_no_seeker_turn_of_the_built_in_dialogues_breaks_role():
    """Each seeker turn against its own card (at the long turn length: the word cap is the
    card's business) and the dialogue's seeker turns before it."""
    broken = []
    for item in ITEMS:
        card = CARDS[item.id].model_copy(update={"turn_length": "long"})
        said: list[str] = []
        for turn in item.turns:
            if turn.role is Role.SEEKER:
                if why := role_break(turn.text, card, said):
                    broken.append((item.id, turn.text, why))
                said.append(turn.text)
    assert broken == []
    assert len([t for i in ITEMS for t in i.turns if t.role is Role.SEEKER]) == 81


def test_most_supporter_turns_of_the_built_in_dialogues_are_caught():
    """Their supporter turns and reference replies (the figure docs/converse.md quotes)."""
    lines = [t.text for i in ITEMS for t in i.turns if t.role is Role.SUPPORTER]
    lines += [i.reference_reply for i in ITEMS if i.reference_reply]
    caught = [line for line in lines if role_break(line, CARD) == "speaking as the supporter"]
    assert (len(caught), len(lines)) == (77, 111)


@pytest.mark.parametrize("gold", [builtin.PAIRS_GOLD, builtin.PAIRS_REAL], ids=["written", "real"])
def test_the_gold_pairs_seeker_turns_keep_the_role_and_their_replies_are_caught(gold):
    """Pairs the patterns were not written against: none of their seeker turns is flagged
    (neither as the supporter nor as a repeat), and a quarter or more of their replies is
    (the written set's replies carry plain defects, and many say little a helper would)."""
    pairs = load_gold(gold).pairs
    flagged = []
    for pair in pairs:
        said: list[str] = []
        for turn in pair.turns:
            if turn.role == "seeker":
                if speaks_as_supporter(turn.text) or repeats_earlier(turn.text, said):
                    flagged.append(turn.text)
                said.append(turn.text)
    assert flagged == []
    replies = {text for p in pairs for text in (p.reply_a, p.reply_b)}
    caught = sum(speaks_as_supporter(r) for r in replies)
    assert caught >= len(replies) / 4
