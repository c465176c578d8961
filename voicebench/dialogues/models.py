"""Dialogue items: a support conversation that ends on a seeker turn awaiting one supporter reply.

File format (JSON Lines, one ``Dialogue`` object per line)::

    {"id": "rg-job-01", "problem_type": "job crisis", "emotion_type": "anxiety",
     "situation": "...", "adversarial": false, "escalation_profile": null,
     "turns": [{"role": "supporter", "text": "Hi, how are you doing today?"},
               {"role": "seeker", "text": "..."}, ...],
     "reference_reply": "...", "source": "builtin"}

Rules checked at load: the turns alternate strictly between roles, the last turn is the
seeker's, an adversarial item names its escalation profile and a regular one does not.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import Field, field_validator, model_validator

from voicebench._model import FrozenModel

DIALOGUE_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$"


class Role(StrEnum):
    """Who speaks a turn."""

    SEEKER = "seeker"
    SUPPORTER = "supporter"


class EscalationProfile(StrEnum):
    """How the seeker's hostility develops over an adversarial dialogue (HEART)."""

    ALWAYS_10 = "always-10"
    LINEAR_RAMP = "linear-ramp"
    MID_SPIKE = "mid-spike"
    MID_RAMP = "mid-ramp"


class Turn(FrozenModel):
    """One spoken turn of a dialogue."""

    role: Role
    """Who speaks it."""
    text: str = Field(min_length=1, max_length=4000)
    """What is said, as plain text."""
    strategy: str | None = None
    """The support strategy annotated on a supporter turn, when the source has one."""

    @field_validator("text")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        value = value.strip()
        if not value:
            raise ValueError("turn text is empty")
        return value

    @property
    def speaker(self) -> str:
        """Who speaks it, as a page shows it: ``Seeker`` or ``Supporter``."""
        return self.role.value.capitalize()


class Dialogue(FrozenModel):
    """One item: the history so far, ending on a seeker turn, and the human reply that followed."""

    id: str = Field(pattern=DIALOGUE_ID_PATTERN)
    """Unique id within a set, used in file names and run logs."""
    problem_type: str = Field(min_length=1)
    """The seeker's problem, in ESConv's vocabulary (e.g. ``job crisis``)."""
    emotion_type: str = Field(min_length=1)
    """The seeker's dominant emotion (e.g. ``anxiety``)."""
    situation: str = Field(min_length=1)
    """A one- or two-sentence description of the seeker's situation."""
    turns: tuple[Turn, ...] = Field(min_length=1)
    """The history, oldest first; the last turn is the seeker's and awaits a reply."""
    reference_reply: str = Field(min_length=1, max_length=4000)
    """The human supporter's reply to the last seeker turn: the human baseline contestant."""
    adversarial: bool = False
    """Whether the seeker turns were written to resist help."""
    escalation_profile: EscalationProfile | None = None
    """For an adversarial item, how hostility develops over the seeker turns."""
    intensity: tuple[int, ...] | None = None
    """For an adversarial item made by ``voicebench dialogues adversarial``: the target
    hostility (0 calm - 10 openly hostile) of each seeker turn, in order."""
    source: str = "builtin"
    """Where the item comes from, e.g. ``builtin`` or ``esconv:17``."""

    @model_validator(mode="after")
    def _check_shape(self) -> Dialogue:
        for i in range(1, len(self.turns)):
            if self.turns[i].role == self.turns[i - 1].role:
                raise ValueError(
                    f"turns {i - 1} and {i} are both {self.turns[i].role.value} turns;"
                    " roles must alternate"
                )
        if self.turns[-1].role is not Role.SEEKER:
            raise ValueError("the last turn must be a seeker turn (the one awaiting a reply)")
        if self.adversarial and self.escalation_profile is None:
            raise ValueError("an adversarial dialogue needs an escalation_profile")
        if not self.adversarial and self.escalation_profile is not None:
            raise ValueError("escalation_profile is only for adversarial dialogues")
        if self.intensity is not None:
            if not self.adversarial:
                raise ValueError("intensity is only for adversarial dialogues")
            if len(self.intensity) != len(self.seeker_turn_indices):
                raise ValueError(
                    f"intensity has {len(self.intensity)} values for "
                    f"{len(self.seeker_turn_indices)} seeker turns"
                )
            if any(not 0 <= v <= 10 for v in self.intensity):
                raise ValueError("intensity values must be 0-10")
        if not self.reference_reply.strip():
            raise ValueError("reference_reply is empty")
        return self

    @property
    def seeker_turn_indices(self) -> tuple[int, ...]:
        """Indices into ``turns`` of every seeker turn; the last one is the judged turn."""
        return tuple(i for i, t in enumerate(self.turns) if t.role is Role.SEEKER)

    @property
    def final_turn_index(self) -> int:
        """Index of the seeker turn whose reply is judged."""
        return len(self.turns) - 1
