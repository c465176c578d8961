"""Persona cards: one for every built-in item, validated with the file, line and field named."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from voicebench.calling.roles import cut_to_length, role_break, says_goodbye, spoken
from voicebench.calling.seeker import system_prompt
from voicebench.dialogues import BUILTIN_DIALOGUES, load_dialogues
from voicebench.dialogues.personas import (
    BUILTIN_PERSONAS,
    load_personas,
    persona_from_dialogue,
    personas_for,
)
from voicebench.errors import InputError


def test_every_builtin_item_has_its_own_card():
    items = load_dialogues(BUILTIN_DIALOGUES)
    cards = {c.id: c for c in load_personas(BUILTIN_PERSONAS)}
    assert set(cards) == {d.id for d in items}
    for d in items:
        card = cards[d.id]
        assert card.source == "builtin" and card.emotion == d.emotion_type
        assert card.resistance == d.escalation_profile  # the adversarial items resist
        assert 1 <= card.intensity <= 5
    assert len({c.who for c in cards.values()}) == len(cards)  # each written for its item


def test_a_bad_card_names_the_file_the_line_and_the_field(tmp_path: Path):
    good = BUILTIN_PERSONAS.read_text().splitlines()[0]
    bad = json.loads(good) | {"id": "x-1", "intensity": 9}
    path = tmp_path / "cards.jsonl"
    path.write_text(good + "\n" + json.dumps(bad) + "\n")
    with pytest.raises(InputError) as info:
        load_personas(path)
    text = str(info.value)
    assert str(path) in text and "line 2 (x-1)" in text and "intensity" in text
    path.write_text(good + "\n" + good + "\n")
    with pytest.raises(InputError, match="duplicate id"):
        load_personas(path)


def test_an_item_without_a_card_gets_one_derived_from_it(tmp_path: Path):
    item = load_dialogues(BUILTIN_DIALOGUES)[0].model_copy(update={"id": "esconv-7"})
    cards = personas_for([item])
    card = cards["esconv-7"]
    assert card == persona_from_dialogue(item)
    assert card.what_happened == item.situation and card.emotion == item.emotion_type


def test_role_checks():
    card = load_personas(BUILTIN_PERSONAS)[0]
    assert role_break("Honestly I just feel tired all the time.", card) is None
    assert role_break("Caller: I feel tired.", card) is None  # its own label is taken off
    assert spoken("Caller: I feel tired.") == "I feel tired."
    assert role_break("Supporter: I hear you.", card) == "speaking as the supporter"
    assert role_break("I feel tired *looks away*", card) == "narration or stage directions"
    assert role_break("It sounds like you are under a lot of stress.", card) == (
        "speaking as the supporter"
    )
    assert role_break("", card) == "an empty line"
    assert role_break("[END]", card) is None and spoken(" [END]") == ""  # hangs up, silent
    # The model went on to write the supporter's answer on the same line: it is taken off.
    assert spoken("I'm ready to end the call. [END] Supporter: Thank you for calling.") == (
        "I'm ready to end the call."
    )
    assert spoken("Okay. Supporter: How are you?") == "Okay."
    assert spoken("I told my supporter: no more.") == "I told my supporter: no more."
    refusals = (
        "I'm sorry, but I can't continue this conversation.",
        "I'm just an AI, so I don't have feelings to share.",
        "I can't pretend to be someone in distress.",
    )
    for line in refusals:
        assert role_break(line, card) == "a refusal to play the caller", line
    # Saying a line again is in role: a caller who is not heard repeats themselves.
    assert role_break("I just feel so tired all the time.", card) is None
    long = " ".join(["word"] * (card.max_words + 1))
    assert role_break(long, card) is not None and "words" in role_break(long, card)


def test_a_line_a_sentence_too_long_is_cut_not_refused():
    card = load_personas(BUILTIN_PERSONAS)[0]
    assert card.max_words == 25
    # 31 words, as the offline seeker said it: its first two sentences fit the cap
    line = (
        "I guess it's about my work. I used to love doing that, but now it feels like a chore. "
        "I don't know if there's anything I can do to make it more enjoyable. [END]"
    )
    cut = cut_to_length(line, card)
    assert cut == (
        "I guess it's about my work. I used to love doing that, but now it feels like a chore. "
        "[END]"
    )
    assert role_break(cut, card) is None and says_goodbye(cut)
    short = "I feel tired. Really tired."
    assert cut_to_length(short, card) == short
    # a first sentence over the cap alone is left as it is, and still breaks role
    long = " ".join(["word"] * (card.max_words + 1)) + ". Yes."
    assert cut_to_length(long, card) == long and "words" in role_break(long, card)
    assert says_goodbye("Okay, thanks. Bye.") and says_goodbye("I'll leave it there. [END]")
    # Words that end calls elsewhere do not end this one: "I have to go to work tomorrow".
    assert not says_goodbye("I have to go to work tomorrow and I dread it.")
    assert spoken('"Okay, thanks. Bye." [END]') == "Okay, thanks. Bye."
    prompt = system_prompt(card)
    assert card.who in prompt and card.hangs_up in prompt and str(card.max_words) in prompt


def test_a_persona_file_that_is_not_there_is_an_error(tmp_path):
    """Named and missing is refused, not quietly replaced by derived cards."""
    with pytest.raises(InputError, match="persona file not found") as exc:
        personas_for(load_dialogues(BUILTIN_DIALOGUES)[:1], tmp_path / "nowhere.jsonl")
    assert exc.value.file == str(tmp_path / "nowhere.jsonl")
