"""What a simulated call leaves on disk: each finished call (``calls.jsonl``), and each valid
call as a dialogue item (``items.jsonl``) that a replay speaks again."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import Field

from voicebench._jsonl import json_lines
from voicebench._model import FrozenModel, validate_record
from voicebench.calling.seeker import CallerReport
from voicebench.dialogues import Dialogue, Role, Turn, load_dialogues, save_dialogues
from voicebench.dialogues.personas import Persona, load_personas, personas_path, save_personas
from voicebench.runlog import TurnRecord

CALLS_FILE = "calls.jsonl"
ITEMS_FILE = "items.jsonl"
FIXTURES_DIR = "fixtures"
CACHE_FILE = "seeker-cache.jsonl"
CALL_AUDIO_DIR = "calls"
DEFAULT_GREETING = "Hi, thanks for calling. How are you doing today?"

EndedBy = Literal["turns", "goodbye", "agent", "role"]
ENDINGS: dict[str, str] = {
    "turns": "reached the turn limit",
    "goodbye": "the caller said goodbye",
    "agent": "the agent failed a turn",
    "role": "invalid: the caller broke role twice",
}
"""How each ending is said."""


class Exchange(FrozenModel):
    """One seeker line and the agent's answer as the seeker heard it."""

    turn_index: int
    said: str
    """The seeker's line, as spoken."""
    heard: str
    """The agent's reply transcribed from its audio ("" when it said nothing)."""
    role_breaks: tuple[str, ...] = ()
    """Why each line the seeker was asked again for broke role."""


class CallRecord(FrozenModel):
    """One finished call."""

    call_id: str
    """The item (and persona) the call played."""
    agent_name: str
    seeker: str
    """The seeker's LLM (``provider/model``)."""
    persona: Persona
    greeting: str
    exchanges: tuple[Exchange, ...]
    ended_by: EndedBy
    """``turns`` (the limit), ``goodbye`` (the seeker ended it), ``agent`` (a failed turn) or
    ``role`` (the seeker broke role too often)."""
    valid: bool
    """False when the seeker broke role ``MAX_ROLE_BREAKS`` times: kept, never judged."""
    role_breaks: int
    report: CallerReport | None
    """The seeker's own account of the call (None for an invalid call, or none given)."""
    item_id: str | None
    """The call saved as a dialogue item in ``items.jsonl`` (None when it was not)."""
    started_at: str
    finished_at: str
    seed: int = Field(default=0)
    audio_path: str | None = None
    """The call as it happened (``calls/CALL.wav`` in the folder): the caller on the left,
    the agent on the right, on the turns' clock (``recordings.calls``)."""


@dataclass(frozen=True)
class CallProgress:
    """Reported after every agent turn and every call."""

    call: int
    calls: int
    call_id: str
    record: TurnRecord | None = None
    """The turn just timed (None when a call ends)."""
    finished: CallRecord | None = None


def read_calls(out_dir: Path) -> list[CallRecord]:
    """The finished calls of a converse folder."""
    path = Path(out_dir) / CALLS_FILE
    return [
        validate_record(CallRecord, data, file=path, record=record)
        for record, data in json_lines(path)
    ]


def greeting_of(dialogue: Dialogue) -> str:
    """How the call opens: the item's first supporter turn."""
    first = dialogue.turns[0]
    return first.text if first.role is Role.SUPPORTER else DEFAULT_GREETING


def opening_of(dialogue: Dialogue) -> str:
    """The caller's first line: the item's first seeker turn (its answer to the greeting)."""
    return dialogue.turns[dialogue.seeker_turn_indices[0]].text


def call_item(
    call_id: str, greeting: str, exchanges: Sequence[Exchange], base: Dialogue
) -> Dialogue | None:
    """The call as a dialogue item ending on the seeker's last answered line, the agent's
    answer to it as the reference; None when no line was answered."""
    answered = [e for e in exchanges if e.heard.strip()]
    if not answered:
        return None
    last = len(exchanges) - 1
    while not exchanges[last].heard.strip():
        last -= 1
    turns = [Turn(role=Role.SUPPORTER, text=greeting)]
    for e in exchanges[:last]:
        turns.append(Turn(role=Role.SEEKER, text=e.said))
        turns.append(Turn(role=Role.SUPPORTER, text=e.heard.strip() or "..."))
    turns.append(Turn(role=Role.SEEKER, text=exchanges[last].said))
    return Dialogue(
        id=call_id,
        problem_type=base.problem_type,
        emotion_type=base.emotion_type,
        situation=base.situation,
        turns=tuple(turns),
        reference_reply=exchanges[last].heard.strip(),
        adversarial=base.adversarial,
        escalation_profile=base.escalation_profile,
        source=f"call:{base.id}",
    )


def saved_items(out_dir: Path) -> list[Dialogue]:
    """The calls saved as items so far."""
    path = Path(out_dir) / ITEMS_FILE
    return load_dialogues(path) if path.exists() else []


def save_item(out_dir: Path, item: Dialogue, card: Persona) -> None:
    """Add (or replace) a call saved as an item, and its caller's card beside the items
    (``items.personas.jsonl``, where a converse of the items finds it)."""
    path = Path(out_dir) / ITEMS_FILE
    save_dialogues([*(d for d in saved_items(out_dir) if d.id != item.id), item], path)
    cards_path = personas_path(path)
    cards = load_personas(cards_path) if cards_path.exists() else []
    card = card.model_copy(update={"id": item.id})
    save_personas([*(c for c in cards if c.id != item.id), card], cards_path)
