"""Reading a judge's answer: strict, but tolerant of the wrappers real models put around it."""

from __future__ import annotations

import json

import pytest

from voicebench.judging import AnswerError, answer_schema, parse_answer
from voicebench.judging.prompt import verdict_key

GOOD = {
    "winner": "B",
    "strength": 4,
    "dimensions": {"H": "B", "E": None, "A": "B", "R": None, "T": "A"},
    "rationale": "B picks up the detail about the night shifts.",
}


def test_bare_json_is_read_exactly():
    answer = parse_answer(json.dumps(GOOD))
    assert answer.winner == "B" and answer.strength == 4
    assert answer.dimensions.T == "A" and answer.dimensions.E is None


@pytest.mark.parametrize(
    "wrap",
    [
        "```json\n{}\n```",
        "Here is my verdict:\n```\n{}\n```\nThanks!",
        "{} I preferred B because it was warmer.",
        "After weighing both: {}",
    ],
)
def test_fenced_or_prose_wrapped_answers_are_found(wrap):
    assert parse_answer(wrap.format(json.dumps(GOOD))).winner == "B"


@pytest.mark.parametrize(
    "raw, problem",
    [
        ("", "empty"),
        ("B is better.", "no JSON object"),
        (json.dumps({**GOOD, "winner": "tie"}), "winner"),
        (json.dumps({**GOOD, "strength": 7}), "strength"),
        (json.dumps({**GOOD, "dimensions": {"H": "A"}}), "dimensions.E"),
        (json.dumps({**GOOD, "extra": 1}), "extra"),
        ('{"winner": "A", "strength": 3,', "no JSON object"),
    ],
)
def test_anything_else_is_refused_never_guessed(raw, problem):
    with pytest.raises(AnswerError, match=problem):
        parse_answer(raw)


def test_the_schema_names_every_field_and_forbids_others():
    schema = answer_schema()
    assert schema["required"] == ["winner", "strength", "dimensions", "rationale"]
    assert schema["additionalProperties"] is False
    assert schema["properties"]["dimensions"]["required"] == ["H", "E", "A", "R", "T"]
    assert "$defs" not in json.dumps(schema)


def test_the_cache_key_changes_with_anything_the_judge_sees():
    base = dict(
        rubric_sha256="r", judge="openai/x", context="c", reply_a="a", reply_b="b", order="AB"
    )
    keys = {verdict_key(**base)}
    for field in base:
        keys.add(verdict_key(**{**base, field: base[field] + "'"}))
    assert len(keys) == len(base) + 1


def test_a_raw_line_break_inside_the_rationale_is_tolerated():
    raw = json.dumps(GOOD).replace("night shifts.", "night shifts.\n\nAlso warmer.")
    raw = raw.replace("\\n", "\n")  # a real newline inside the string, as small models write
    assert "\n" in raw and parse_answer(raw).rationale.endswith("Also warmer.")
