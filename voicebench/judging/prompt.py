"""What a judge is shown, and how its answer is read.

The prompt is the rubric (system) and one user message holding the dialogue so far, reply A
and reply B. The answer must be one JSON object matching ``JudgeAnswer``; ``parse_answer``
accepts it bare, inside a fenced block, or followed or preceded by prose, and refuses
anything else (it never guesses a verdict).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable
from typing import Any

from pydantic import ValidationError

from voicebench._model import first_error
from voicebench.dialogues import Dialogue, Role
from voicebench.judging.models import JudgeAnswer

_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL)
SPEAKERS = {Role.SEEKER: "Seeker", Role.SUPPORTER: "Supporter"}


class AnswerError(ValueError):
    """A judge's text that is not a valid answer."""


def dialogue_context(dialogue: Dialogue) -> str:
    """The conversation up to and including the final seeker turn, one line per turn."""
    return turns_context(dialogue.turns)


def turns_context(turns: Iterable[Any]) -> str:
    """Turns (anything with a ``role``, seeker or supporter, and a ``text``) as a judge is
    shown them: one ``Speaker: text`` line per turn."""
    return "\n".join(f"{SPEAKERS[Role(t.role)]}: {t.text.strip()}" for t in turns)


JSON_INSTRUCTION = "Which reply is better for this seeker? Answer with the JSON object only."
_CONTEXT_HEADING = "Conversation so far:\n"
_REPLY_A_HEADING = "\n\nReply A (as heard):\n"
_REPLY_B_HEADING = "\n\nReply B (as heard):\n"


def user_message(
    context: str, reply_a: str, reply_b: str, instruction: str = JSON_INSTRUCTION
) -> str:
    """The question put to a judge: the conversation, the two replies, what to answer."""
    return (
        f"{_CONTEXT_HEADING}{context}{_REPLY_A_HEADING}{reply_a.strip()}"
        f"{_REPLY_B_HEADING}{reply_b.strip()}\n\n{instruction}"
    )


def context_of(message: str) -> str:
    """The conversation part of a ``user_message``."""
    return message.split(_REPLY_A_HEADING)[0].removeprefix(_CONTEXT_HEADING)


def parts_of(message: str) -> tuple[str, str, str]:
    """(context, reply A, reply B) of a ``user_message`` asked with ``JSON_INSTRUCTION``."""
    head, _, rest = message.partition(_REPLY_A_HEADING)
    reply_a, _, rest = rest.partition(_REPLY_B_HEADING)
    reply_b = rest.removesuffix(JSON_INSTRUCTION).removesuffix("\n\n")
    return head.removeprefix(_CONTEXT_HEADING), reply_a, reply_b


def judge_messages(rubric: str, context: str, reply_a: str, reply_b: str) -> list[dict[str, str]]:
    return [
        {"role": "system", "content": rubric.strip()},
        {"role": "user", "content": user_message(context, reply_a, reply_b)},
    ]


def answer_schema(*, rationale_max_chars: int | None = None) -> dict:
    """The JSON schema of an answer for providers' structured output: no references, every
    field required, nothing extra (what strict modes and grammar builders accept)."""
    side_or_null = {"anyOf": [{"type": "string", "enum": ["A", "B"]}, {"type": "null"}]}
    rationale: dict = {"type": "string"}
    if rationale_max_chars:
        rationale["maxLength"] = rationale_max_chars
    dims = ["H", "E", "A", "R", "T"]
    return {
        "type": "object",
        "properties": {
            "winner": {"type": "string", "enum": ["A", "B"]},
            "strength": {"type": "integer", "enum": [1, 2, 3, 4, 5]},
            "dimensions": {
                "type": "object",
                "properties": {d: side_or_null for d in dims},
                "required": dims,
                "additionalProperties": False,
            },
            "rationale": rationale,
        },
        "required": ["winner", "strength", "dimensions", "rationale"],
        "additionalProperties": False,
    }


def verdict_key(
    *, rubric_sha256: str, judge: str, context: str, reply_a: str, reply_b: str, order: str
) -> str:
    payload = json.dumps(
        [rubric_sha256, judge, context, reply_a, reply_b, order], ensure_ascii=False
    )
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def _candidates(raw: str):
    text = raw.strip()
    yield text
    for block in _FENCE.findall(text):
        yield block.strip()
    decoder = json.JSONDecoder(strict=False)
    for match in re.finditer(r"\{", text):
        try:
            obj, _ = decoder.raw_decode(text, match.start())
        except json.JSONDecodeError:
            continue
        if isinstance(obj, dict):
            yield obj


def parse_answer(raw: str | None) -> JudgeAnswer:
    """The first JSON object in ``raw`` that is a valid answer; AnswerError if there is none."""
    if raw is None or not raw.strip():
        raise AnswerError("empty answer")
    problem = None  # the first (outermost) object's problem is the one worth reporting
    for candidate in _candidates(raw):
        if isinstance(candidate, str):
            try:
                candidate = json.loads(candidate, strict=False)  # raw newlines inside strings
            except json.JSONDecodeError:
                continue
        if not isinstance(candidate, dict):
            continue
        try:
            return JudgeAnswer.model_validate(candidate)
        except ValidationError as exc:
            loc, msg = first_error(exc)
            problem = problem or f"{loc}: {msg}"
    raise AnswerError(problem or "no JSON object found")
