"""Import dialogue items from ESConv (Liu et al., ACL 2021), the way HEART made its items.

Input format (ESConv JSON, one file)::

    [{"experience_type": "Previous Experience", "emotion_type": "anxiety",
      "problem_type": "job crisis", "situation": "I lost my job last week.",
      "survey_score": {...},
      "dialog": [{"speaker": "supporter", "annotation": {"strategy": "Question"},
                  "content": "Hi, how are you feeling today?"},
                 {"speaker": "seeker", "annotation": {}, "content": "Not great."}, ...]},
     ...]

- ``speaker`` is ``seeker`` / ``supporter``; a released variant says ``speaker`` (the seeker)
  / ``listener`` (the supporter). Both give identical items.
- ``emotion_type``, ``problem_type``, ``situation`` and ``dialog`` are required, non-empty.
  ``experience_type`` is not used (when present, it must be a string). Of ``survey_score``,
  only ``seeker.initial_emotion_intensity`` (1-5, a number or its digits) is read, into the
  items' persona cards (``esconv_personas``); other keys are ignored.
- Each ``dialog`` entry needs a known ``speaker`` and a non-empty string ``content``;
  ``annotation`` is optional, an object, whose ``strategy`` (a string) is kept on supporter turns
  and whose ``feedback`` (the seeker's 1-5 rating of the replies so far, a number or its digits)
  on seeker turns; the gold pairs built from the corpus (``voicebench.judging.corpus``) read it.

Conversations are numbered from 0 in file order. Any problem raises ``InputError`` naming the
file, the conversation (``conversation 3``) and the field (``dialog[5].speaker``); the whole
file is validated before anything is returned.

Merging: consecutive entries by one role become one turn, texts joined with a single space;
the distinct non-empty strategies of a merged supporter turn are joined with ``"; "``.

Item selection, per conversation (after merging):

1. A candidate is a seeker turn that has at least one earlier turn and is followed by a
   supporter turn. That supporter turn is the item's ``reference_reply``; the history is every
   turn from the start up to and including the candidate.
2. Pleasantries are dropped: a turn with a thanks/greeting/goodbye marker, no distress or
   conflict cue, no question mark and at most 25 words.
3. Safety screen (keywords, deliberately over-inclusive): the candidate is dropped when the
   situation, the history or the reference reply mentions suicide or self-harm, contains hate
   phrases, or contains an e-mail address or a phone-number-like run of 9+ digits. Later
   candidates of that conversation share the history, so they are dropped too.
4. Response potential, a sum over the seeker turn's text (lower-cased):
   +2 per distinct distress cue (at most +6), +3 per distinct help-request cue (at most +6),
   +2 per distinct conflict cue (at most +4), +1 for a question mark, +1 per full 15 words
   (at most +3). Candidates scoring below 2 are dropped.
5. The highest-scoring candidates are taken, ties to the earlier turn, up to
   ``max_items_per_conversation``; a candidate fewer than 2 seeker turns away from one
   already taken is passed over. A candidate whose situation, history or reply holds a text
   longer than a ``Turn`` allows is not eligible either, nor is a conversation whose labels
   are too long for its caller's card (``LABEL_CHARS``).

Items keep file order and turn order. Ids are ``esconv-{conversation}-t{turn}``, where ``turn``
is the index of the final seeker turn in the merged turns; ``source`` is
``esconv:{conversation}``. A conversation with no item is skipped; a file with none is an error.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from voicebench._model import NESTED_TOO_DEEPLY, read_utf8, validate_record
from voicebench.dialogues.esconv_cues import is_pleasantry, is_unsafe, potential
from voicebench.dialogues.io import save_dialogues
from voicebench.dialogues.models import Dialogue, Role
from voicebench.dialogues.personas import (
    Persona,
    persona_from_dialogue,
    personas_path,
    save_personas,
)
from voicebench.errors import InputError

LABEL_CHARS = {"problem_type": 200, "emotion_type": 200, "situation": 1000}
"""The longest a conversation's labels may be for its caller's card to hold them (a type is a
few words, a situation a paragraph); a conversation with longer ones is not eligible."""

SPEAKER_ROLES = {
    "seeker": Role.SEEKER,
    "supporter": Role.SUPPORTER,
    "speaker": Role.SEEKER,
    "listener": Role.SUPPORTER,
}
MIN_SCORE = 2
MIN_SEEKER_GAP = 2
_MAX_TEXT = 4000  # Turn.text and Dialogue.reference_reply allow no more

_Fail = Callable[[str, str | None], InputError]


INTENSITY_FIELD = "initial_emotion_intensity"


@dataclass(frozen=True)
class _Turn:
    role: Role
    text: str
    strategy: str | None
    feedback: int | None = None
    """On a seeker turn: the seeker's rating (1-5) of the supporter's replies so far, where
    the corpus records one (``annotation.feedback``; the last of a merged turn's)."""


@dataclass(frozen=True)
class Conversation:
    index: int
    problem_type: str
    emotion_type: str
    situation: str
    turns: tuple[_Turn, ...]
    intensity: int | None = None
    """The seeker's own rating of their emotion's intensity before the chat (the survey's
    ``initial_emotion_intensity``, 1-5), when given."""


def import_esconv(path: str | Path, *, max_items_per_conversation: int = 2) -> list[Dialogue]:
    """Read an ESConv JSON file and return its items, selected as the module docstring says."""
    return [d for d, _ in _import(Path(path), max_items_per_conversation)]


def esconv_personas(path: str | Path, *, max_items_per_conversation: int = 2) -> list[Persona]:
    """The items' persona cards, derived from each conversation's situation, emotion, problem
    type and survey (its initial intensity; 3 where the survey gives none)."""
    return [
        persona_from_dialogue(d, intensity=conv.intensity or 3)
        for d, conv in _import(Path(path), max_items_per_conversation)
    ]


def _import(path: Path, max_items_per_conversation: int) -> list[tuple[Dialogue, Conversation]]:
    if max_items_per_conversation < 1:
        raise ValueError("max_items_per_conversation must be at least 1")
    return esconv_items(_read_json(path), path, max_items_per_conversation)


def esconv_conversations(path: str | Path, data: Any = None) -> list[Conversation]:
    """Every conversation of an ESConv JSON file, validated and merged, numbered from 0;
    ``data``, when given, is that file's content already parsed (errors still name ``path``)."""
    path = Path(path)
    if data is None:
        data = _read_json(path)
    if not isinstance(data, list):
        raise InputError(
            f"expected a list of conversations at the top level, got {_kind(data)}", file=path
        )
    if not data:
        raise InputError("no conversations in file", file=path)
    return [_parse_conversation(raw, i, path) for i, raw in enumerate(data)]


def esconv_items(
    data: Any, path: Path, max_items_per_conversation: int = 2
) -> list[tuple[Dialogue, Conversation]]:
    """The items of already parsed ESConv JSON ``data`` (read from ``path``, which errors
    name), each with its conversation: the selection the module docstring describes."""
    conversations = esconv_conversations(path, data)
    items = [
        (_make_item(conv, k, path), conv)
        for conv in conversations
        for k in _select(conv, max_items_per_conversation)
    ]
    if not items:
        raise InputError(
            f"no usable items: none of the {len(conversations)} conversations has a seeker"
            " turn that passes the selection rule",
            file=path,
        )
    return items


def import_esconv_to_file(
    src: str | Path, dest: str | Path, *, max_items_per_conversation: int = 2
) -> list[Dialogue]:
    """Import ``src`` and write the items to ``dest`` and their persona cards beside it
    (``personas_path(dest)``, which ``voicebench converse`` finds); nothing is written on
    failure."""
    found = _import(Path(src), max_items_per_conversation)
    items = [d for d, _ in found]
    cards = [persona_from_dialogue(d, intensity=conv.intensity or 3) for d, conv in found]
    save_dialogues(items, dest)
    save_personas(cards, personas_path(Path(dest)))
    return items


def _read_json(path: Path) -> Any:
    text = read_utf8(path)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(
            f"not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})", file=path
        ) from None
    except RecursionError:
        raise InputError(f"not valid JSON ({NESTED_TOO_DEEPLY})", file=path) from None


def _kind(value: Any) -> str:
    names = {dict: "an object", list: "a list", str: "a string", bool: "a boolean"}
    if value is None:
        return "null"
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return "a number"
    return names.get(type(value), type(value).__name__)


def _parse_conversation(raw: Any, index: int, path: Path) -> Conversation:
    record = f"conversation {index}"

    def fail(message: str, field: str | None = None) -> InputError:
        return InputError(message, file=path, record=record, field=field)

    if not isinstance(raw, dict):
        raise fail(f"expected an object, got {_kind(raw)}")
    if "experience_type" in raw and not isinstance(raw["experience_type"], str):
        raise fail(f"expected a string, got {_kind(raw['experience_type'])}", "experience_type")
    labels: dict[str, str] = {}
    for key in ("problem_type", "emotion_type", "situation"):
        labels[key] = _required_text(raw, key, fail, key)
    if "dialog" not in raw:
        raise fail("missing field", "dialog")
    dialog = raw["dialog"]
    if not isinstance(dialog, list):
        raise fail(f"expected a list, got {_kind(dialog)}", "dialog")
    if not dialog:
        raise fail("is empty", "dialog")
    entries = [_parse_entry(entry, f"dialog[{i}]", fail) for i, entry in enumerate(dialog)]
    return Conversation(
        index=index, turns=_merge(entries), intensity=_intensity(raw, fail), **labels
    )


def _intensity(raw: dict, fail: _Fail) -> int | None:
    """The survey's initial intensity (a number 1-5, or its digits as a string), or None."""
    survey = raw.get("survey_score")
    seeker = survey.get("seeker") if isinstance(survey, dict) else None
    value = seeker.get(INTENSITY_FIELD) if isinstance(seeker, dict) else None
    if value is None or value == "":
        return None
    return _rating(value, f"survey_score.seeker.{INTENSITY_FIELD}", fail)


def _required_text(obj: dict, key: str, fail: _Fail, field: str) -> str:
    if key not in obj:
        raise fail("missing field", field)
    value = obj[key]
    if not isinstance(value, str):
        raise fail(f"expected a string, got {_kind(value)}", field)
    if not value.strip():
        raise fail("is empty", field)
    return value.strip()


def _parse_entry(entry: Any, where: str, fail: _Fail) -> _Turn:
    if not isinstance(entry, dict):
        raise fail(f"expected an object, got {_kind(entry)}", where)
    speaker = _required_text(entry, "speaker", fail, f"{where}.speaker")
    role = SPEAKER_ROLES.get(speaker)
    if role is None:
        known = ", ".join(SPEAKER_ROLES)
        raise fail(f"unknown speaker {speaker!r} (expected one of {known})", f"{where}.speaker")
    text = _required_text(entry, "content", fail, f"{where}.content")
    annotation = entry.get("annotation")
    strategy = None
    if annotation is not None:
        if not isinstance(annotation, dict):
            raise fail(f"expected an object, got {_kind(annotation)}", f"{where}.annotation")
        strategy = annotation.get("strategy")
        if strategy is not None and not isinstance(strategy, str):
            raise fail(f"expected a string, got {_kind(strategy)}", f"{where}.annotation.strategy")
    # a strategy describes a supporter's move; on a seeker turn it would mean nothing
    kept = strategy.strip() if role is Role.SUPPORTER and strategy else ""
    feedback = None
    if role is Role.SEEKER and annotation and annotation.get("feedback") not in (None, ""):
        feedback = _rating(annotation["feedback"], f"{where}.annotation.feedback", fail)
    return _Turn(role, text, kept or None, feedback)


def _rating(value: Any, field: str, fail: _Fail) -> int:
    """A 1-5 rating, given as a number or its digits."""
    try:
        level = int(value)
    except (TypeError, ValueError):
        raise fail(f"expected a number 1-5, got {value!r}", field) from None
    if not 1 <= level <= 5:
        raise fail(f"expected a number 1-5, got {level}", field)
    return level


def _merge(entries: list[_Turn]) -> tuple[_Turn, ...]:
    groups: list[list[_Turn]] = []
    for entry in entries:
        if groups and groups[-1][0].role is entry.role:
            groups[-1].append(entry)
        else:
            groups.append([entry])
    merged = []
    for group in groups:
        strategies = list(dict.fromkeys(t.strategy for t in group if t.strategy))
        ratings = [t.feedback for t in group if t.feedback is not None]
        merged.append(
            _Turn(
                role=group[0].role,
                text=" ".join(t.text for t in group),
                strategy="; ".join(strategies) or None,
                feedback=ratings[-1] if ratings else None,
            )
        )
    return tuple(merged)


def _select(conv: Conversation, limit: int) -> list[int]:
    """Indices into ``conv.turns`` of the seeker turns that become items, in turn order."""
    if any(len(getattr(conv, key)) > most for key, most in LABEL_CHARS.items()):
        return []
    candidates: list[tuple[int, int, int]] = []  # (score, turn index, seeker ordinal)
    ordinal = -1
    for k, turn in enumerate(conv.turns):
        if turn.role is not Role.SEEKER:
            continue
        ordinal += 1
        if k == 0 or k + 1 >= len(conv.turns) or is_pleasantry(turn.text):
            continue
        texts = [t.text for t in conv.turns[: k + 2]]
        if any(len(t) > _MAX_TEXT for t in [conv.situation, *texts]) or is_unsafe(
            [conv.situation, *texts]
        ):
            continue
        score = potential(turn.text)
        if score >= MIN_SCORE:
            candidates.append((score, k, ordinal))
    candidates.sort(key=lambda c: (-c[0], c[1]))
    chosen: list[tuple[int, int]] = []
    for _, k, ordinal in candidates:
        if len(chosen) == limit:
            break
        if all(abs(ordinal - other) >= MIN_SEEKER_GAP for _, other in chosen):
            chosen.append((k, ordinal))
    return sorted(k for k, _ in chosen)


def _make_item(conv: Conversation, k: int, path: Path) -> Dialogue:
    data = {
        "id": f"esconv-{conv.index}-t{k}",
        "problem_type": conv.problem_type,
        "emotion_type": conv.emotion_type,
        "situation": conv.situation,
        "turns": [
            {"role": t.role.value, "text": t.text, "strategy": t.strategy}
            for t in conv.turns[: k + 1]
        ],
        "reference_reply": conv.turns[k + 1].text,
        "adversarial": False,
        "source": f"esconv:{conv.index}",
    }
    return validate_record(Dialogue, data, file=path, record=f"conversation {conv.index}")
