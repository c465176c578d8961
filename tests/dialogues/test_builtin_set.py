"""Checks on the built-in HEART-style dialogue sets (audio_fixtures/dialogues.jsonl, and the
180 more items of audio_fixtures/dialogues-more.jsonl)."""

from __future__ import annotations

from pathlib import Path

import pytest

from voicebench import builtin
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


@pytest.fixture(scope="module", params=sorted(builtin.DIALOGUE_SETS))
def dialogues(request: pytest.FixtureRequest) -> list[Dialogue]:
    return load_dialogues(builtin.DIALOGUE_SETS[request.param])


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
            assert 1 <= n <= 45, f"{d.id} turn {i}: {n} words"  # about 15 s spoken
            assert d.turns[i].text.isascii(), f"{d.id} turn {i}: non-ASCII text"


def test_reference_reply_lengths(dialogues: list[Dialogue]) -> None:
    for d in dialogues:
        n = _words(d.reference_reply)
        assert 10 <= n <= 70, f"{d.id}: reference reply has {n} words"


def test_the_shipped_sets_hold_210_distinct_items_a_tenth_of_them_adversarial() -> None:
    sets = {name: load_dialogues(path) for name, path in builtin.DIALOGUE_SETS.items()}
    items = [d for found in sets.values() for d in found]
    assert sets["builtin"] == load_dialogues(BUILTIN_DIALOGUES)
    assert (len(sets["builtin"]), len(sets["more"])) == (30, 180)
    assert len({d.id for d in items}) == 210
    assert len({d.reference_reply for d in items}) == 210
    assert 0.08 <= sum(d.adversarial for d in items) / len(items) <= 0.15


def test_a_set_is_named_by_its_path_or_by_its_shipped_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert builtin.dialogue_set("more") == builtin.DIALOGUES_MORE
    assert builtin.dialogue_set("builtin") == BUILTIN_DIALOGUES
    assert builtin.dialogue_set("sets/more") == Path("sets/more")  # plainly a path
    (tmp_path / "more").write_text("")
    assert builtin.dialogue_set("more") == Path("more")  # a user's own file wins
    assert builtin.shipped_name(builtin.DIALOGUES_MORE) == "more"
