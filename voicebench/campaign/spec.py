"""A campaign file: the matrix of agents, settings, dialogue sets, scenarios and judges that one
``voicebench campaign`` command runs, judges, rates and reports::

    name = "spring-comparison"
    seed = 0
    repeat = 1                             # passes over the items in every cell
    final_only = false                     # true: only each item's final (judged) turn

    [[agents]]
    spec = "../agents/scripted.toml"      # relative to this file
    name = "scripted-300"                 # the contestant's name (default: the spec's)

    [[agents]]
    spec = "../agents/scripted.toml"
    name = "scripted-400"
    set = { "llm.ttft_ms" = 400 }          # overrides, as benchmarks' --set

    [[dialogues]]
    path = "../audio_fixtures/dialogues.jsonl"
    limit = 4                              # items spread over the set (default: all)

    scenarios = [[], ["barge-in", "backchannel"]]   # each: one cell's --scenario options
    judges = ["../judges/local-smoke.toml"]

    [budgets]
    ttfa_ms = 1000
    ttft_ms = 500
    turn_timeout_s = 60

    [judging]
    concurrency = 4                        # requests in flight per judge provider
    providers = { anthropic = 2 }          # a provider's own bound
    pairs_per_item = 20                    # pairs judged per item (default: all)

    [report]
    audio = "opus"                         # the report's calls and replies as Opus in Ogg,
                                           #   about a tenth of the size (default: "wav")

    # mode = "simulated"                   # each cell is a converse folder: a caller who
    # [converse]                           #   reacts, whole calls judged (default:
    # turns = 6                            #   "teacher-forced" replays)
    # seeker = "../seekers/gpt.toml"       # default: the offline seeker
    # personas = "../my-personas.jsonl"    # default: each set's own, else the built-in

A *cell* is one agent variant on one dialogue set with one scenario list: one run folder. The
contestants judged together are the agent variants; a variant's cells are all its runs.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field, model_validator

from voicebench._model import FrozenModel, read_toml, validate_record
from voicebench.budgets import TURN_TIMEOUT_S
from voicebench.budgets import Budgets as LatencyBudgets
from voicebench.errors import MissingFileError
from voicebench.scenarios import barges_in

_SLUG = re.compile(r"[^A-Za-z0-9._-]+")


def slug(text: str) -> str:
    """A folder-safe form of a name."""
    return _SLUG.sub("-", text).strip("-") or "x"


class CampaignAgent(FrozenModel):
    spec: str = Field(min_length=1)
    """The agent spec's path, relative to the campaign file."""
    name: str | None = Field(
        default=None, min_length=1, max_length=80, pattern=r"^[A-Za-z0-9][A-Za-z0-9._ /-]*$"
    )
    """The variant's contestant name (default: the spec's own name)."""
    set: dict[str, str | int | float | bool] = Field(default_factory=dict)
    """Overrides of the spec's fields, by dotted key (``llm.ttft_ms``)."""
    cpus: float | None = Field(default=None, gt=0, le=64)
    """CPUs one of its cells needs (default: 2 for a pipeline run here, 0.25 for a remote
    agent, which only streams audio)."""


class CampaignDialogues(FrozenModel):
    path: str = Field(min_length=1)
    """A dialogue set (JSONL), relative to the campaign file."""
    limit: int | None = Field(default=None, ge=1)
    """Replay this many items, spread over the set (default: all)."""
    fixtures: str | None = None
    """Its audio fixture folder (default: the built-in one)."""


class Budgets(LatencyBudgets):
    turn_timeout_s: float = Field(default=TURN_TIMEOUT_S, gt=0, le=600)


class JudgingLimits(FrozenModel):
    concurrency: int = Field(default=4, ge=1, le=256)
    """Judge requests in flight per provider, across all the campaign's judges."""
    providers: dict[str, Annotated[int, Field(ge=1, le=256)]] = Field(default_factory=dict)
    """A provider's own bound, by provider name (``openai``, ``anthropic``, ``local``...)."""

    pairs_per_item: int | None = Field(default=None, ge=1)
    """Judge this many pairs of contestants per item, drawn with the seed (default: every
    pair). At paper scale, 17 contestants make 136 pairs an item."""

    def bound(self, provider: str) -> int:
        return self.providers.get(provider, self.concurrency)


class ConverseSettings(FrozenModel):
    """How simulated calls are made (``mode = "simulated"``)."""

    turns: int = Field(default=6, ge=1, le=50)
    """The most caller lines in a call."""
    seeker: str | None = Field(default=None, min_length=1)
    """A seeker spec, relative to the campaign file (default: the offline seeker)."""
    personas: str | None = Field(default=None, min_length=1)
    """Persona cards, relative to the campaign file (default: each set's own, else the
    built-in cards)."""


class ReportSettings(FrozenModel):
    """How the campaign's report is written."""

    audio: Literal["wav", "opus"] = "wav"
    """The calls' recordings and the judged replies beside the page: ``wav`` copied as
    recorded, ``opus`` encoded as Opus in Ogg (about a tenth of the size, for a report to
    share); the run folders keep theirs as recorded either way."""


class CampaignSpec(FrozenModel):
    name: str = Field(min_length=1, max_length=80)
    agents: tuple[CampaignAgent, ...] = Field(min_length=1)
    dialogues: tuple[CampaignDialogues, ...] = Field(min_length=1)
    scenarios: tuple[tuple[str, ...], ...] = ((),)
    """Each entry is one cell's ``--scenario`` options; ``[]`` plays clean turns."""
    judges: tuple[str, ...] = ()
    """Judge specs, relative to the campaign file; each judges every variant together."""
    seed: int = 0
    repeat: int = Field(default=1, ge=1, le=100)
    """Every cell replays its items this many times (``voicebench run --repeat``); the first
    pass's final replies are judged."""
    final_only: bool = False
    """Replay only each item's final seeker turn, the one whose reply is judged, on its written
    history (``voicebench run --final-only``): a fraction of the time, fewer turns timed."""
    budgets: Budgets = Budgets()
    judging: JudgingLimits = JudgingLimits()
    mode: Literal["teacher-forced", "simulated"] = "teacher-forced"
    """``teacher-forced``: every cell replays its items' fixed seeker turns, and the final
    replies are judged. ``simulated``: every cell is a converse folder (an LLM caller plays
    each item's persona live), and whole calls are judged."""
    converse: ConverseSettings = ConverseSettings()
    report: ReportSettings = ReportSettings()

    @model_validator(mode="after")
    def _distinct(self) -> CampaignSpec:
        if len(set(self.scenarios)) < len(self.scenarios):
            raise ValueError("scenarios: an entry is given twice")
        if len({d.path for d in self.dialogues}) < len(self.dialogues):
            raise ValueError("dialogues: a set is given twice")
        if self.final_only and self.mode == "simulated":
            raise ValueError("final_only: a simulated call has no written final turn to replay")
        if self.final_only and barges_in(s for played in self.scenarios for s in played):
            raise ValueError(
                "final_only: a barge-in talks over the reply to the turn before, which a final "
                "turn alone does not play (replay every turn: --all-turns in the demo)"
            )
        if self.repeat > 1 and self.mode == "simulated":
            raise ValueError("repeat: simulated calls are made once each (a replay repeats)")
        return self


def load_campaign(path: Path) -> CampaignSpec:
    """Read and check a campaign file; a problem names the file and the field."""
    if not path.is_file():
        raise MissingFileError("campaign file", path)
    return validate_record(CampaignSpec, read_toml(path), file=path)
