"""Persona cards: who the seeker of an item is, for a simulated caller to play.

File format (JSON Lines, one ``Persona`` per line, ``id`` naming its dialogue item)::

    {"id": "reg-job-crisis-01", "who": "A single father of two, ...",
     "what_happened": "...", "emotion": "anxiety", "intensity": 4,
     "wants": "To calm down enough to think, ...", "turn_length": "long",
     "hesitant": false, "resistance": null,
     "hangs_up": "If the supporter promises it will all work out ...", "source": "builtin"}

The built-in items' cards are ``audio_fixtures/personas.jsonl``; an ESConv import's are derived
from each conversation (``persona_from_dialogue``, the survey's initial intensity) and written
beside the set as ``NAME.personas.jsonl``.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Literal

from pydantic import Field

from voicebench import builtin
from voicebench._jsonl import write_atomic
from voicebench._model import FrozenModel
from voicebench.dialogues.io import load_by_id
from voicebench.dialogues.models import DIALOGUE_ID_PATTERN, Dialogue, EscalationProfile
from voicebench.errors import MissingFileError

BUILTIN_PERSONAS = builtin.FIXTURES / "personas.jsonl"

TURN_WORDS = {"short": 25, "long": 60}
"""The most words a seeker line may have, by the card's ``turn_length``."""


class Persona(FrozenModel):
    """A seeker as a simulated caller plays them."""

    id: str = Field(pattern=DIALOGUE_ID_PATTERN)
    """The dialogue item this seeker belongs to."""
    who: str = Field(min_length=1, max_length=400)
    """Who they are, in a sentence."""
    what_happened: str = Field(min_length=1, max_length=1000)
    """What brought them to call."""
    emotion: str = Field(min_length=1)
    """Their dominant emotion (ESConv's vocabulary)."""
    intensity: int = Field(ge=1, le=5)
    """How strong the emotion is as the call begins (1 mild - 5 overwhelming)."""
    wants: str = Field(min_length=1, max_length=400)
    """What they hope to get from the call."""
    turn_length: Literal["short", "long"] = "short"
    """How they talk: a sentence or two (``short``), or a few (``long``)."""
    hesitant: bool = False
    """Whether they hesitate and trail off."""
    resistance: EscalationProfile | None = None
    """How they resist help (the adversarial profiles), or None."""
    hangs_up: str = Field(min_length=1, max_length=400)
    """What would make them end the call early."""
    source: str = "builtin"

    @property
    def summary(self) -> str:
        """Who the caller is, in a line, for a page that shows their call."""
        return f"{self.who} {self.what_happened} ({self.emotion}, {self.intensity} of 5)"

    @property
    def max_words(self) -> int:
        """The most words one of their lines may have."""
        return TURN_WORDS[self.turn_length]


def load_personas(path: str | Path = BUILTIN_PERSONAS) -> list[Persona]:
    """Load and validate persona cards; any problem names the file, the line and the field."""
    return load_by_id(Persona, path, "persona cards")


def save_personas(cards: Iterable[Persona], path: str | Path) -> None:
    """Write persona cards atomically."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, "".join(c.model_dump_json() + "\n" for c in cards))


def persona_from_dialogue(dialogue: Dialogue, intensity: int = 3) -> Persona:
    """A card derived from an item that has none (an ESConv import: its situation, emotion and
    problem type, and the survey's initial intensity, given as ``intensity``)."""
    words = sum(len(t.text.split()) for t in dialogue.turns if t.role.value == "seeker")
    turns = max(1, len(dialogue.seeker_turn_indices))
    return Persona(
        id=dialogue.id,
        who=f"Someone dealing with {dialogue.problem_type}.",
        what_happened=dialogue.situation,
        emotion=dialogue.emotion_type,
        intensity=min(5, max(1, intensity)),
        wants=f"To be heard about {dialogue.problem_type} and to find a way through it.",
        turn_length="long" if words / turns > 30 else "short",
        resistance=dialogue.escalation_profile,
        hangs_up="If they feel dismissed or lectured.",
        source=dialogue.source,
    )


def personas_path(dialogues_path: Path) -> Path:
    """Where a dialogue set's own persona cards are: ``NAME.personas.jsonl`` beside
    ``NAME.jsonl`` (an ESConv import writes them there)."""
    return dialogues_path.with_name(f"{dialogues_path.stem}.personas.jsonl")


def personas_for(
    dialogues: Iterable[Dialogue], path: Path | None = None, *, dialogues_path: Path | None = None
) -> dict[str, Persona]:
    """Each item's card: from ``path`` (else the set's own cards beside ``dialogues_path``,
    else the built-in cards) where it has one, else derived from the item."""
    if path is not None and not path.is_file():
        raise MissingFileError("persona file", path)
    cards: dict[str, Persona] = {}
    source = path if path is not None else BUILTIN_PERSONAS
    if path is None and dialogues_path is not None and personas_path(dialogues_path).exists():
        source = personas_path(dialogues_path)
    if source.exists():
        cards = {c.id: c for c in load_personas(source)}
    return {d.id: cards.get(d.id) or persona_from_dialogue(d) for d in dialogues}
