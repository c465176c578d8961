import json
from pathlib import Path

import pytest

from voicebench.dialogues.models import Role
from voicebench.errors import InputError
from voicebench.judging.corpus import corpus_pairs, read_conversations, read_windows_tsv
from voicebench.judging.gold import load_gold, save_gold

SEEKER_1 = "I lost my job last week and I am so worried about paying the rent, what should I do?"
REPLY_1 = "Losing a job out of the blue is frightening. What worries you most about the rent?"
SEEKER_2 = "My sister stopped talking to me after the wedding and I feel so alone and hurt."
REPLY_2 = "That silence from your sister must sting, especially after a day meant to be shared."
SEEKER_3 = "I cannot sleep before my exams, I am stressed and scared I will fail them all."
REPLY_3 = "Exams can make the nights feel endless. How many hours have you been sleeping lately?"


def _windows(*conversations: list[tuple[int, str]]) -> str:
    """Sliding windows of up to five utterances, one line per supporter utterance, as the
    corpus's code release writes them."""
    lines = []
    for utterances in conversations:
        for end, (role, _) in enumerate(utterances):
            if role != 1:
                continue
            window = utterances[max(0, end - 4) : end + 1]
            start = end + 1 - len(window)
            lines.append(
                " EOS ".join(
                    f"{'1.0' if i == len(window) - 1 else '0.0'} {r} {start + i} "
                    + (f"[Questions] {t}" if r == 1 else t)
                    for i, (r, t) in enumerate(window)
                )
            )
    return "\n".join(lines) + "\n"


CONVERSATIONS = [
    [(0, "hi"), (1, "Hello, how are you today?"), (0, "Not good."), (0, SEEKER_1), (1, REPLY_1)],
    [(0, "hello"), (1, "Hi there, what brings you here?"), (0, SEEKER_2), (1, REPLY_2)],
    [(0, "hey"), (1, "Hi, how can I help?"), (0, SEEKER_3), (1, REPLY_3)],
]


@pytest.fixture
def tsv(tmp_path) -> Path:
    path = tmp_path / "testWithStrategy_short.tsv"
    path.write_text(_windows(*CONVERSATIONS), encoding="utf-8")
    return path


def test_conversations_are_read_back_from_their_windows(tsv):
    records = read_windows_tsv(tsv)
    assert len(records) == 3
    assert [e["content"] for e in records[0]["dialog"]] == [t for _, t in CONVERSATIONS[0]]
    assert records[0]["dialog"][4]["speaker"] == "supporter"  # the strategy tag is taken off
    conversations = read_conversations(tsv)
    # consecutive seeker utterances are merged into one turn
    assert [t.role for t in conversations[0].turns] == [Role.SEEKER, Role.SUPPORTER] * 2
    assert conversations[0].turns[2].text == f"Not good. {SEEKER_1}"


def test_a_bad_window_names_the_file_and_line(tmp_path, tsv):
    bad = tmp_path / "bad.tsv"
    bad.write_text(tsv.read_text() + "0.0 seeker x hello\n", encoding="utf-8")
    with pytest.raises(InputError) as info:
        read_windows_tsv(bad)
    assert str(bad) in str(info.value) and "line 7" in str(info.value)


def test_each_real_reply_is_paired_with_another_conversations(tsv):
    pairs = corpus_pairs([("test", read_conversations(tsv))])
    assert [p.id for p in pairs] == ["esconv-test-0-t2", "esconv-test-1-t2", "esconv-test-2-t2"]
    reals = {"esconv-test-0": REPLY_1, "esconv-test-1": REPLY_2, "esconv-test-2": REPLY_3}
    for pair in pairs:
        better, worse = (
            (pair.reply_a, pair.reply_b) if pair.better == "a" else (pair.reply_b, pair.reply_a)
        )
        assert better == reals[pair.conversation]
        assert worse in reals.values() and worse != better
        assert pair.turns[-1].role == "seeker" and pair.category == "corpus-next"
        assert pair.split == load_gold_split(pair.conversation)
    assert {p.better for p in pairs} == {"a", "b"} or len(pairs) < 3
    # the same file gives the same pairs
    assert corpus_pairs([("test", read_conversations(tsv))]) == pairs


def load_gold_split(conversation: str) -> str:
    from voicebench.judging.gold import split_of

    return split_of(conversation)


def test_rated_replies_make_rated_pairs(tmp_path):
    def conversation(seeker: str, reply: str, rating: int) -> dict:
        return {
            "problem_type": "job crisis",
            "emotion_type": "anxiety",
            "situation": "A hard week.",
            "dialog": [
                {"speaker": "supporter", "content": "Hi, how are you?"},
                {"speaker": "seeker", "content": seeker},
                {"speaker": "supporter", "content": reply},
                {"speaker": "seeker", "content": "Okay.", "annotation": {"feedback": str(rating)}},
            ],
        }

    data = [conversation(SEEKER_1, REPLY_1, 5), conversation(SEEKER_2, REPLY_2, 1)]
    path = tmp_path / "rated.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    pairs = corpus_pairs([("failed", read_conversations(path))])
    rated = [p for p in pairs if p.category == "corpus-rated"]
    assert [p.id for p in rated] == ["esconv-failed-0-t1"]
    assert {rated[0].reply_a, rated[0].reply_b} == {REPLY_1, REPLY_2}
    assert "rated 5 of 5" in (rated[0].why or "") and "rated 1 of 5" in (rated[0].why or "")
    # the badly rated reply's own conversation still gives a pair of the other kind
    assert [p.category for p in pairs if p.id != rated[0].id] == ["corpus-next"]


def test_a_conversation_is_in_one_split_and_the_file_loads_as_a_gold_set(tmp_path, tsv):
    pairs = corpus_pairs([("test", read_conversations(tsv))])
    out = tmp_path / "pairs.jsonl"
    save_gold(pairs, out)
    gold = load_gold(out)
    assert gold.pairs == tuple(pairs)
    # a second pair from one conversation lands in the same split as the first
    twin = pairs[0].model_copy(update={"id": "other-id"})
    assert twin.split == pairs[0].split
