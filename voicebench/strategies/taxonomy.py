"""The 15 support strategies (HEART's taxonomy) and how a classifier is asked about one reply.

A classifier (any judge model) reads the conversation and one reply as heard, and marks every
strategy ``present``, ``absent`` or ``uncertain``, quoting a short span of the reply as
evidence for each one it marks present. The answer is one JSON object; the schema below is
given to providers with structured output and spelled out in the prompt for the rest. An
answer is accepted only if it marks all 15 strategies with a known mark.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Literal

from pydantic import ValidationError

from voicebench._model import FrozenModel, first_error

LABELS_VERSION = "strategies-v1"
"""Part of every cache key: bump it when the definitions or the prompt change."""

Mark = Literal["present", "absent", "uncertain"]
MARKS: tuple[str, ...] = ("present", "absent", "uncertain")
EVIDENCE_MAX_CHARS = 160

STRATEGIES: dict[str, tuple[str, str]] = {
    "affirmation": ("Affirmation", "points out the seeker's strengths, efforts or good choices"),
    "avoid_judgment": (
        "Avoid judgment and criticism",
        "tells the seeker plainly that they are not to blame or are not being "
        "judged for what they feel or did",
    ),
    "clarification": (
        "Clarification",
        "asks a question to understand the situation or the feelings better",
    ),
    "collaborative_planning": (
        "Collaborative planning",
        "invites the seeker to work out next steps together",
    ),
    "emotional_validation": (
        "Emotional validation",
        "names what the seeker feels and says it makes sense",
    ),
    "normalize": (
        "Normalize experiences",
        "says that many people go through this or feel this way",
    ),
    "offer_hope": ("Offer hope", "says that things can get better or that there is a way through"),
    "self_care": (
        "Promote self-care practices",
        "encourages rest, sleep, food, movement or time for oneself",
    ),
    "perspectives": (
        "Provide different perspectives",
        "offers another way of seeing the situation or another person's view",
    ),
    "reflective": ("Reflective statements", "says back, in other words, what the seeker has said"),
    "reframe": (
        "Reframe negative thoughts",
        "questions a harsh belief the seeker holds about themselves and recasts it",
    ),
    "share_information": (
        "Share information",
        "gives facts, explanations or resources the seeker may not know",
    ),
    "stress_management": (
        "Stress management",
        "offers a technique to calm down or cope in the moment, such as "
        "breathing or taking one small step at a time",
    ),
    "suggest_options": ("Suggest options", "proposes a concrete action the seeker could take"),
    "chit_chat": ("Chit chat", "small talk or pleasantries that are not about the problem"),
}
LABELS: tuple[str, ...] = tuple(STRATEGIES)

SYSTEM_PROMPT = (
    "You label the support strategies a listener used in one reply to a person who is "
    "struggling. For each strategy below, mark it present if the reply clearly uses it, absent "
    "if it does not, and uncertain only when the reply could be read either way. A reply "
    "often uses two or three strategies and rarely more than five. For each strategy marked "
    "present, copy the few words of the reply that show it as evidence; otherwise leave the "
    "evidence empty.\n\n"
    + "\n".join(f"- {key} ({name}): {meaning}." for key, (name, meaning) in STRATEGIES.items())
)

JSON_INSTRUCTION = (
    'Answer with one JSON object and nothing else: {"strategies": {"affirmation": {"mark": '
    '"present" | "absent" | "uncertain", "evidence": "..."}, ...}} with every one of the 15 '
    "strategy keys above."
)


def answer_schema() -> dict:
    entry = {
        "type": "object",
        "properties": {
            "mark": {"type": "string", "enum": list(MARKS)},
            "evidence": {"type": "string", "maxLength": EVIDENCE_MAX_CHARS},
        },
        "required": ["mark", "evidence"],
        "additionalProperties": False,
    }
    return {
        "type": "object",
        "properties": {
            "strategies": {
                "type": "object",
                "properties": {k: entry for k in LABELS},
                "required": list(LABELS),
                "additionalProperties": False,
            }
        },
        "required": ["strategies"],
        "additionalProperties": False,
    }


def label_messages(context: str, reply: str) -> list[dict[str, str]]:
    return [
        {"role": "system", "content": SYSTEM_PROMPT},
        {
            "role": "user",
            "content": f"Conversation so far:\n{context}\n\nThe listener's "
            f"reply (as heard):\n{reply.strip()}\n\n{JSON_INSTRUCTION}",
        },
    ]


def label_key(*, classifier: str, context: str, reply: str) -> str:
    payload = json.dumps([LABELS_VERSION, classifier, context, reply], ensure_ascii=False)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


class StrategyMark(FrozenModel):
    mark: Mark
    evidence: str = ""


class StrategyAnswer(FrozenModel):
    strategies: dict[str, StrategyMark]


def parse_labels(raw: str) -> dict[str, StrategyMark]:
    """Every strategy's mark from a classifier's text; ValueError saying what is wrong."""
    if not raw or not raw.strip():
        raise ValueError("empty answer")
    text = re.sub(r"^```(?:json)?|```$", "", raw.strip()).strip()
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end < start:
        raise ValueError("no JSON object found")
    try:
        data = json.loads(text[start : end + 1], strict=False)
        answer = StrategyAnswer.model_validate(data)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not valid JSON ({exc.msg})") from None
    except ValidationError as exc:
        loc, msg = first_error(exc)
        raise ValueError(f"{loc}: {msg}") from None
    missing = [k for k in LABELS if k not in answer.strategies]
    if missing:
        raise ValueError(f"no mark for {', '.join(missing)}")
    return {
        k: StrategyMark(
            mark=answer.strategies[k].mark,
            evidence=answer.strategies[k].evidence[:EVIDENCE_MAX_CHARS],
        )
        for k in LABELS
    }
