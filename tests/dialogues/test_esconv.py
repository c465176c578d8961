import copy
import json
from pathlib import Path

import pytest

from voicebench.dialogues.esconv import esconv_personas, import_esconv, import_esconv_to_file
from voicebench.dialogues.io import load_dialogues
from voicebench.dialogues.models import Role
from voicebench.dialogues.personas import load_personas, personas_for, personas_path
from voicebench.errors import InputError

DATA = Path(__file__).resolve().parents[1] / "data" / "esconv"
CONVERSATIONS = DATA / "conversations.json"
LISTENER = DATA / "conversations_listener.json"
SAFETY = DATA / "safety.json"


def _write(tmp_path: Path, data, name: str = "esconv.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def _load(path: Path) -> list:
    return json.loads(path.read_text(encoding="utf-8"))


def test_items_and_ids():
    items = import_esconv(CONVERSATIONS)
    assert [d.id for d in items] == ["esconv-0-t5", "esconv-0-t9", "esconv-1-t2"]
    first = items[0]
    assert first.source == "esconv:0"
    assert first.problem_type == "job crisis"
    assert first.emotion_type == "anxiety"
    assert first.situation.startswith("I was let go from my job")
    assert first.adversarial is False
    assert first.escalation_profile is None
    assert items[2].source == "esconv:1"
    assert items[2].turns[0].role is Role.SEEKER  # a history may start with the seeker


def test_both_speaker_variants_give_identical_items():
    assert import_esconv(LISTENER) == import_esconv(CONVERSATIONS)


def test_consecutive_turns_of_one_role_are_merged():
    item = import_esconv(CONVERSATIONS)[1]  # esconv-0-t9
    assert [t.role for t in item.turns] == [Role.SUPPORTER, Role.SEEKER] * 5
    assert item.turns[1].text == "Hi. Not great to be honest."
    assert item.turns[4].text == (
        "That sounds really stressful. Losing a job out of the blue would shake anyone."
    )
    assert item.turns[4].strategy == "Reflection of feelings; Affirmation and Reassurance"
    assert item.turns[8].strategy == "Affirmation and Reassurance; Question"
    assert item.turns[0].strategy == "Question"
    assert all(t.strategy is None for t in item.turns if t.role is Role.SEEKER)


def test_history_ends_on_the_seeker_turn_and_reference_is_the_next_supporter_turn():
    items = import_esconv(CONVERSATIONS)
    by_id = {d.id: d for d in items}
    t5 = by_id["esconv-0-t5"]
    assert t5.turns[-1].text.startswith("Yes. My partner and I argued about money")
    assert t5.reference_reply == (
        "It makes sense that money worries spill into a relationship."
        " What happened when you tried to talk before?"
    )
    t9 = by_id["esconv-0-t9"]
    assert t9.turns[-1].text.startswith("What would you do in my place?")
    # the reference is itself two supporter entries, merged
    assert t9.reference_reply == (
        "Many people find that family want to help more than we expect."
        " You could start by telling them just a little."
    )
    # each item's history is a prefix of the conversation: t5's turns open t9's
    assert t9.turns[: len(t5.turns)] == t5.turns
    assert t9.turns[len(t5.turns)].text == t5.reference_reply


def test_at_most_two_items_per_conversation_and_spaced_apart():
    items = import_esconv(CONVERSATIONS)
    per_conversation = {}
    for d in items:
        per_conversation.setdefault(d.source, []).append(d)
    assert max(len(v) for v in per_conversation.values()) == 2
    # conversation 0 has three scoring seeker turns (t3, t5, t9); t3 outscores t9 but is
    # the seeker turn right after t5, the best, so t9 is taken instead
    assert [d.id for d in per_conversation["esconv:0"]] == ["esconv-0-t5", "esconv-0-t9"]


def test_max_items_per_conversation_one_takes_the_best():
    items = import_esconv(CONVERSATIONS, max_items_per_conversation=1)
    assert [d.id for d in items] == ["esconv-0-t5", "esconv-1-t2"]


def test_max_items_per_conversation_must_be_positive():
    with pytest.raises(ValueError):
        import_esconv(CONVERSATIONS, max_items_per_conversation=0)


def test_distress_turn_is_chosen_and_pleasantry_is_not(tmp_path):
    items = import_esconv(CONVERSATIONS)
    assert [d.id for d in items if d.source == "esconv:1"] == ["esconv-1-t2"]
    assert "hopeless" in items[-1].turns[-1].text
    # the thank-you turn (t6) is excluded as a pleasantry, not for its position:
    # put a distressed request there and it is chosen
    data = _load(CONVERSATIONS)
    data[1]["dialog"][6]["content"] = (
        "Thank you, but I am still scared they will ignore me. What should I do then?"
    )
    items = import_esconv(_write(tmp_path, data))
    assert [d.id for d in items if d.source == "esconv:1"] == ["esconv-1-t2", "esconv-1-t6"]


def test_safety_screen_excludes_self_harm_plan_and_what_follows(tmp_path):
    items = import_esconv(SAFETY)
    ids = [d.id for d in items]
    assert ids == ["esconv-0-t1", "esconv-1-t2"]
    for d in items:
        texts = [t.text for t in d.turns] + [d.reference_reply]
        assert not any("end my life" in t for t in texts)
        assert not any("@" in t or "555-013-2476" in t for t in texts)
    # with the plan replaced by a neutral sentence, the later turn becomes an item
    data = _load(SAFETY)
    data[0]["dialog"][3]["content"] = "Three months ago. The house feels very quiet now."
    items = import_esconv(_write(tmp_path, data))
    assert [d.id for d in items if d.source == "esconv:0"] == ["esconv-0-t1", "esconv-0-t5"]


def test_safety_screen_excludes_identifying_info_and_hate(tmp_path):
    ids = [d.id for d in import_esconv(SAFETY)]
    # conversation 1: t6 would score high, but its history holds an e-mail and a phone number
    assert "esconv-1-t6" not in ids
    # conversation 2: hate in the first seeker turn; nothing usable, so it is skipped
    assert not any(i.startswith("esconv-2-") for i in ids)
    data = _load(SAFETY)
    data[1]["dialog"][4]["content"] = "Yes, he sends me angry e-mails almost every day."
    ids = [d.id for d in import_esconv(_write(tmp_path, data))]
    assert "esconv-1-t6" in ids


def test_an_overlong_situation_makes_its_conversation_ineligible(tmp_path):
    data = _load(CONVERSATIONS)
    before = {d.id for d in import_esconv(CONVERSATIONS)}
    # 200,000 characters with no space: the e-mail screen once took minutes on such a text.
    data[0]["situation"] = "x" * 200_000
    ids = {d.id for d in import_esconv(_write(tmp_path, data))}
    assert not any(i.startswith("esconv-0-") for i in ids)
    assert ids == {i for i in before if not i.startswith("esconv-0-")}


def test_a_file_with_no_usable_items_is_an_error(tmp_path):
    data = [
        {
            "emotion_type": "joy",
            "problem_type": "ongoing depression",
            "situation": "Just checking in.",
            "dialog": [
                {"speaker": "supporter", "annotation": {}, "content": "Hello! How are you?"},
                {"speaker": "seeker", "annotation": {}, "content": "Hi, I am good thanks."},
                {"speaker": "supporter", "annotation": {}, "content": "Glad to hear it."},
                {"speaker": "seeker", "annotation": {}, "content": "Thanks, bye!"},
                {"speaker": "supporter", "annotation": {}, "content": "Bye, take care."},
            ],
        }
    ]
    path = _write(tmp_path, data)
    with pytest.raises(InputError) as info:
        import_esconv(path)
    assert "no usable items" in str(info.value)
    assert str(path) in str(info.value)


def _base() -> list:
    """Two valid conversations; the malformed cases break the second, index 1."""
    return _load(CONVERSATIONS)


def _set(field_path, value):
    def mutate(conv):
        target = conv
        for key in field_path[:-1]:
            target = target[key]
        target[field_path[-1]] = value

    return mutate


def _delete(field_path):
    def mutate(conv):
        target = conv
        for key in field_path[:-1]:
            target = target[key]
        del target[field_path[-1]]

    return mutate


MALFORMED = [
    (_delete(["emotion_type"]), "emotion_type", "missing field"),
    (_set(["emotion_type"], "  "), "emotion_type", "is empty"),
    (_set(["problem_type"], 7), "problem_type", "expected a string, got a number"),
    (_delete(["situation"]), "situation", "missing field"),
    (_set(["experience_type"], ["a"]), "experience_type", "expected a string, got a list"),
    (_delete(["dialog"]), "dialog", "missing field"),
    (_set(["dialog"], {"speaker": "seeker"}), "dialog", "expected a list, got an object"),
    (_set(["dialog"], []), "dialog", "is empty"),
    (_set(["dialog", 5], "hello"), "dialog[5]", "expected an object, got a string"),
    (_delete(["dialog", 5, "speaker"]), "dialog[5].speaker", "missing field"),
    (_set(["dialog", 5, "speaker"], "bot"), "dialog[5].speaker", "unknown speaker 'bot'"),
    (_set(["dialog", 5, "speaker"], None), "dialog[5].speaker", "expected a string, got null"),
    (_delete(["dialog", 5, "content"]), "dialog[5].content", "missing field"),
    (_set(["dialog", 5, "content"], " \n "), "dialog[5].content", "is empty"),
    (_set(["dialog", 5, "content"], 3.5), "dialog[5].content", "expected a string"),
    (_set(["dialog", 5, "annotation"], ["Question"]), "dialog[5].annotation", "expected an object"),
    (
        _set(["dialog", 5, "annotation", "strategy"], 1),
        "dialog[5].annotation.strategy",
        "expected a string, got a number",
    ),
    (
        _set(["survey_score"], {"seeker": {"initial_emotion_intensity": "very"}}),
        "survey_score.seeker.initial_emotion_intensity",
        "expected a number 1-5, got 'very'",
    ),
    (
        _set(["survey_score"], {"seeker": {"initial_emotion_intensity": 9}}),
        "survey_score.seeker.initial_emotion_intensity",
        "expected a number 1-5, got 9",
    ),
]


@pytest.mark.parametrize(("mutate", "field", "message"), MALFORMED)
def test_malformed_conversation_names_file_conversation_and_field(tmp_path, mutate, field, message):
    data = _base()
    mutate(data[1])
    path = _write(tmp_path, data)
    with pytest.raises(InputError) as info:
        import_esconv(path)
    err = info.value
    assert err.file == str(path)
    assert err.record == "conversation 1"
    assert err.field == field
    assert message in err.message
    assert str(err).startswith(f"{path}: conversation 1: {field}: ")


def test_conversation_that_is_not_an_object(tmp_path):
    data = [*_base(), "not a conversation"]
    path = _write(tmp_path, data)
    with pytest.raises(InputError) as info:
        import_esconv(path)
    assert str(info.value) == f"{path}: conversation 2: expected an object, got a string"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b'[{"dialog": ', "not valid JSON"),
        (b'{"dialog": []}', "expected a list of conversations at the top level, got an object"),
        (b"[]", "no conversations in file"),
        (b'[{"situation": "caf\xe9"}]', "not UTF-8 text"),
    ],
)
def test_malformed_file_names_the_file(tmp_path, content, message):
    path = tmp_path / "bad.json"
    path.write_bytes(content)
    with pytest.raises(InputError) as info:
        import_esconv(path)
    assert info.value.file == str(path)
    assert message in str(info.value)
    assert str(info.value).startswith(f"{path}: ")


def test_missing_file(tmp_path):
    path = tmp_path / "absent.json"
    with pytest.raises(InputError) as info:
        import_esconv(path)
    assert str(info.value).startswith(f"{path}: file not found")


def test_error_in_a_late_conversation_returns_nothing(tmp_path):
    data = _base() * 3
    data[5] = copy.deepcopy(data[5])
    data[5]["dialog"][2]["speaker"] = "narrator"
    path = _write(tmp_path, data)
    with pytest.raises(InputError) as info:
        import_esconv(path)
    assert str(info.value).startswith(f"{path}: conversation 5: dialog[2].speaker: ")


def test_import_to_file_writes_loadable_dialogues(tmp_path):
    dest = tmp_path / "out" / "items.jsonl"
    items = import_esconv_to_file(CONVERSATIONS, dest)
    assert [d.id for d in items] == ["esconv-0-t5", "esconv-0-t9", "esconv-1-t2"]
    assert load_dialogues(dest) == items


def test_import_to_file_writes_nothing_when_import_fails(tmp_path):
    data = _base()
    data[1]["dialog"][0]["speaker"] = "bot"
    src = _write(tmp_path, data)
    dest = tmp_path / "items.jsonl"
    with pytest.raises(InputError):
        import_esconv_to_file(src, dest)
    assert not dest.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["esconv.json"]


def test_persona_cards_carry_the_surveys_initial_intensity(tmp_path):
    dest = tmp_path / "esconv.jsonl"
    items = import_esconv_to_file(CONVERSATIONS, dest)
    cards = {c.id: c for c in load_personas(personas_path(dest))}
    assert set(cards) == {d.id for d in items} and cards == {
        c.id: c for c in esconv_personas(CONVERSATIONS)
    }
    # Conversation 0's seeker rated their emotion 4 before the chat; conversation 1 has no
    # survey, so its cards start at the middle of the scale.
    assert {c.intensity for i, c in cards.items() if i.startswith("esconv-0-")} == {4}
    assert {c.intensity for i, c in cards.items() if i.startswith("esconv-1-")} == {3}
    first = items[0]
    assert cards[first.id].what_happened == first.situation
    assert cards[first.id].emotion == first.emotion_type
    # A simulated caller of the imported set finds the cards beside it.
    found = personas_for(items, dialogues_path=dest)
    assert found[first.id] == cards[first.id]
