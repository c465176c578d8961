"""Checks on the built-in HEART-style dialogue set (audio_fixtures/dialogues.jsonl)."""

from __future__ import annotations

import pytest

from voicebench.dialogues import (
    BUILTIN_DIALOGUES,
    Dialogue,
    EscalationProfile,
    Role,
    load_dialogues,
)

ESCONV_PROBLEM_TYPES = {
    "ongoing depression",
    "job crisis",
    "breakup with partner",
    "problems with friends",
    "academic pressure",
    "procrastination",
    "alcohol abuse",
    "issues with parents",
    "sleep problems",
    "appearance anxiety",
    "school bullying",
    "issues with children",
    "conflict with parents",
}


@pytest.fixture(scope="module")
def dialogues() -> list[Dialogue]:
    return load_dialogues(BUILTIN_DIALOGUES)


def _words(text: str) -> int:
    return len(text.split())


def test_counts(dialogues: list[Dialogue]) -> None:
    regular = [d for d in dialogues if not d.adversarial]
    adversarial = [d for d in dialogues if d.adversarial]
    assert len(regular) >= 24
    assert len(adversarial) >= 6
    assert all(d.escalation_profile is None for d in regular)


def test_all_escalation_profiles_present(dialogues: list[Dialogue]) -> None:
    profiles = {d.escalation_profile for d in dialogues if d.adversarial}
    assert profiles == set(EscalationProfile)


def test_all_problem_types_among_regular_items(dialogues: list[Dialogue]) -> None:
    present = {d.problem_type for d in dialogues if not d.adversarial}
    missing = ESCONV_PROBLEM_TYPES - present
    assert not missing, f"problem types without a regular item: {sorted(missing)}"


def test_ids_unique(dialogues: list[Dialogue]) -> None:
    ids = [d.id for d in dialogues]
    assert len(ids) == len(set(ids))


def test_shape(dialogues: list[Dialogue]) -> None:
    for d in dialogues:
        assert d.turns[0].role is Role.SUPPORTER, d.id
        assert d.turns[-1].role is Role.SEEKER, d.id
        assert d.source == "builtin", d.id
        if d.adversarial:
            assert len(d.turns) >= 4, d.id


def test_seeker_turn_lengths(dialogues: list[Dialogue]) -> None:
    for d in dialogues:
        for i in d.seeker_turn_indices:
            n = _words(d.turns[i].text)
            assert 1 <= n <= 40, f"{d.id} turn {i}: {n} words"
            assert d.turns[i].text.isascii(), f"{d.id} turn {i}: non-ASCII text"


def test_reference_reply_lengths(dialogues: list[Dialogue]) -> None:
    for d in dialogues:
        n = _words(d.reference_reply)
        assert 10 <= n <= 70, f"{d.id}: reference reply has {n} words"
