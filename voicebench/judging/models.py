"""What judging reads and writes: replies as heard, comparisons, judge answers and verdicts.

A judging directory (``voicebench judge ... --out DIR``) holds::

    judging.json     JudgingHeader: runs, judges, rubric and its hash
    replies.jsonl    one Reply per contestant and item: what the listener heard
    verdicts.jsonl   one Verdict per (judge, pair, order), appended as each is decided

Verdicts are keyed by ``Verdict.key``, a hash of everything the judge saw (rubric, judge
model, context, reply A, reply B, order): a re-run finds them and asks nothing twice.
``combine_orders`` and ``combine_judges`` turn verdicts into ``PairResult``s by the rules in
their docstrings; ratings are fitted on those.
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path, PurePath
from typing import Literal

from pydantic import Field, field_validator

from voicebench._folder import inside
from voicebench._model import FrozenModel, Versioned
from voicebench.runlog import HEADER_FILE as RUN_HEADER

JUDGING_SCHEMA_VERSION = 1
DIMENSIONS = ("H", "E", "A", "R", "T")
DIMENSION_NAMES = {
    "H": "human alignment",
    "E": "empathic responsiveness",
    "A": "attunement",
    "R": "resonance",
    "T": "task-following",
}
HUMAN_FAMILY = "human"

Side = Literal["A", "B"]
JudgedUnit = Literal["reply", "call"]


class ContestantKind(StrEnum):
    AGENT = "agent"
    """A voice agent's run."""
    HUMAN = "human"
    """A human reply, spoken by the reference voice."""


class Reply(FrozenModel):
    """One contestant's answer to one item's final seeker turn, as the listener heard it."""

    item_id: str
    """The dialogue id."""
    contestant: str
    """Who answered: an agent run's name, ``human/reference`` or ``human/NAME``."""
    kind: ContestantKind
    family: str
    """Model family (from the agent spec) or ``human``; a judge rates its own family only
    where its spec exempts it (``rates_own_family``)."""
    heard: str
    """The transcript of the reply's audio: what judges see."""
    text: str
    """What was meant to be said: the LLM's text, or the human reply as written."""
    word_diff: str = ""
    """Word-level difference from ``text`` to ``heard`` (``-dropped +inserted``), empty when
    equal."""
    heard_wer: float | None = None
    """Word error rate of ``heard`` against ``text``."""
    audio_path: str | None = None
    """The audio that was transcribed."""
    run_dir: str | None = None
    """The run directory an agent's reply comes from."""
    failed: str | None = None
    """Why there is no usable reply (the turn failed, nothing audible); such replies are not
    judged."""

    def audio_file(self, judging_dir: Path) -> Path | None:
        """Where the audio is: ``audio_path`` inside the run folder for an agent's reply; a
        human reply's file by its name in the judging folder's ``audio/``, where judging spoke
        it. None when there is none; ``Outside`` when the recorded path leads out of its folder
        (an absolute path, ``..``, a link): such a clip is never served or copied."""
        if self.audio_path is None:
            return None
        if self.run_dir is not None:
            return inside(locate_run(self.run_dir, judging_dir), self.audio_path)
        return inside(judging_dir / "audio", PurePath(self.audio_path).name)


def locate_run(stored: str | Path, judging_dir: Path) -> Path:
    """A run folder as a judging folder recorded it (often relative to where the command
    ran); when it is not there, its path's last parts under each of the judging folder's
    parents, so a campaign or demo folder moved whole, or read from another folder, still
    finds its runs."""
    stored = Path(stored)
    if (stored / RUN_HEADER).is_file():
        return stored
    tails = [Path(*stored.parts[-k:]) for k in range(1, min(3, len(stored.parts)) + 1)]
    near = (p / tail for p in list(Path(judging_dir).resolve().parents)[:3] for tail in tails)
    return next((p for p in near if (p / RUN_HEADER).is_file()), stored)


class DimensionMarks(FrozenModel):
    """Per dimension, the side with a clear advantage, or null where neither is clearly better."""

    H: Side | None
    E: Side | None
    A: Side | None
    R: Side | None
    T: Side | None


class JudgeAnswer(FrozenModel):
    """The judge's answer for one ordered pair: the strict schema it must reply in."""

    winner: Side
    """The better reply overall; no ties."""
    strength: int = Field(ge=1, le=5)
    """How clear the win is: 1 barely ... 5 overwhelmingly."""
    dimensions: DimensionMarks
    rationale: str = Field(min_length=1, max_length=2000)
    """A short reason."""
    margin: float | None = None
    """Letter judges only: log P("A") - log P("B") of the first answer token, in nats (the
    mean over the questions asked). Orders are combined by summing it (see ``combine``)."""
    dimension_margins: dict[str, float] | None = None
    """Letter judges that ask each dimension: that question's margin, by letter."""
    question_margins: dict[str, float] | None = None
    """Pointwise and checklist judges: each question's score of reply A minus reply B's (in
    nats, turned so that higher is better for A)."""

    @field_validator("dimension_margins")
    @classmethod
    def _letters(cls, margins: dict[str, float] | None) -> dict[str, float] | None:
        if margins is not None and not set(margins) <= set(DIMENSIONS):
            raise ValueError(f"keys must be among {', '.join(DIMENSIONS)}")
        return margins


class Verdict(Versioned):
    """One judge's decision on one ordered pair, or the record that it could not be had."""

    schema_version: int = JUDGING_SCHEMA_VERSION
    key: str
    """sha256 of (rubric hash, judge model, context, reply A, reply B, order)."""
    item_id: str
    judge: str
    """The judge's id, ``provider/model``."""
    smoke: bool = False
    """Whether the judge is an offline smoke judge whose quality figures mean nothing."""
    rubric_sha256: str
    contestant_a: str
    """Shown first, as reply A."""
    contestant_b: str
    answer: JudgeAnswer | None = None
    """The parsed answer; absent when the verdict failed."""
    failure: str | None = None
    """Why no answer could be parsed (after retries): kind and reason."""
    raw: str | None = None
    """The judge's last raw text when it could not be parsed."""
    attempts: int = 1
    """Requests made, retries included."""
    latency_ms: float | None = None
    """Time of the successful request."""

    @property
    def winner(self) -> str | None:
        """The winning contestant, or None for a failed verdict."""
        if self.answer is None:
            return None
        return self.contestant_a if self.answer.winner == "A" else self.contestant_b

    def dimension_winner(self, dim: str) -> str | None:
        if self.answer is None:
            return None
        side = getattr(self.answer.dimensions, dim)
        if side is None:
            return None
        return self.contestant_a if side == "A" else self.contestant_b


class PairResult(FrozenModel):
    """The outcome of one unordered pair on one item, after combining orders (and judges)."""

    item_id: str
    first: str
    """The pair, in sorted order."""
    second: str
    winner: str | None
    """The winning contestant; None when the orders (or judges) disagreed, or all failed."""
    strength: float = 0.0
    """Mean strength of the agreeing decisions (1-5); 0 with no winner."""
    dimensions: dict[str, str | None] = Field(default_factory=dict)
    """Per dimension, the contestant with a clear advantage in every agreeing decision."""
    consistent: bool = True
    """False when a judge's two orders named different winners (a position flip)."""
    judges: tuple[str, ...] = ()
    """The judges whose verdicts formed it."""
    failed: int = 0
    """Verdicts that failed and so did not count."""


class JudgingHeader(Versioned):
    """What a judging job is: written once as ``judging.json``."""

    schema_version: int = JUDGING_SCHEMA_VERSION
    created_at: str
    run_dirs: tuple[str, ...]
    judge_spec_path: str
    judges: tuple[str, ...]
    """Judge ids."""
    smoke: bool
    """True when any judge is an offline smoke judge."""
    rubric_path: str
    rubric_sha256: str
    human_replies: tuple[str, ...] = ()
    """Extra human-reply files added as contestants."""
    unit: JudgedUnit = "reply"
    """What a reply is: ``reply``, an agent's final turn on an item (teacher-forced runs), or
    ``call``, a whole simulated call as the caller heard it (``voicebench converse``)."""
    keys: tuple[str, ...] | None = None
    """The keys of the verdicts this judging asked for. A folder judged again with another
    spec keeps the earlier spec's verdicts, which do not count; None (folders written
    before, or a job killed before it scheduled its pairs): every verdict counts."""
    weights: dict[str, dict[str, float]] | None = None
    """Checklist judges' weights by judge id, applied to their recorded question margins."""
    judge_families: dict[str, str] = Field(default_factory=dict)
    """Each judge's model family by judge id, so that the folder says which contestants a
    judge of their own family rated (``voicebench.judging.families``); empty in folders
    written before it was kept (the judge spec is read then)."""
