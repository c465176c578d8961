"""What a report holds: ``report.json``, written beside ``index.html`` and ``report.md``.

A report folder (``voicebench report PATH... --out DIR``) holds::

    index.html       the page: one self-contained file (figures inlined), opens offline
    report.md        the same tables in Markdown, figures linked from figures/
    report.json      Report, below: every figure the page shows, as numbers
    figures/         each figure as NAME.png and NAME.svg
    audio/           each judged reply's audio, linked from the page's Replies section, and
                     each judged call's

Latencies are in ms. Percentile intervals are 95% percentile-bootstrap intervals over the
turns of one run (1,000 resamples, seeded), so they say how well the run pins the figure
down, not how the agent varies from day to day.
"""

from __future__ import annotations

from pydantic import Field

from voicebench._model import FrozenModel, Versioned
from voicebench.calling.outcomes import CallOutcomes
from voicebench.judging import JudgeHealth, OwnFamily
from voicebench.judging.cards import JudgeCard
from voicebench.metrics.models import AgentLatency
from voicebench.rating import RatingTable
from voicebench.strategies.diversity import StrategySummary
from voicebench.timing.sound import Sound
from voicebench.timing.stalls import Stall

REPORT_SCHEMA_VERSION = 1


class JudgingSummary(FrozenModel):
    """Judging health, and the ratings fitted on the judging folder's verdicts."""

    judging_dir: str
    judges: tuple[str, ...]
    smoke: bool
    """An offline smoke judge was used."""
    card: JudgeCard | None = None
    """The judge's measured gold accuracy (``voicebench judge-check``); None when unmeasured."""
    trust_warning: str | None = None
    """The banner for an unmeasured judge or one below the trust bar; None for a trusted one."""
    rubric_sha256: str
    contestants: tuple[str, ...]
    verdicts: int
    failed_verdicts: int
    failed_by_kind: dict[str, int] = Field(default_factory=dict)
    """Failed verdicts by kind (``server_error``, ``timeout``, ``unparseable``...)."""
    pairs: int
    decided_pairs: int
    health: tuple[JudgeHealth, ...]
    own_family: tuple[OwnFamily, ...] = ()
    """Each contestant a judge of its own family rated (``rates_own_family``): the judge's
    card on that family's replies (``card.by_family``) is shown beside it."""
    ratings: RatingTable | None = None
    no_ratings: str | None = None
    """Why there are no ratings (every pair undecided), when there are none."""


class CallTurnView(FrozenModel):
    """One exchange of a simulated call: the caller's line, the agent's answer as heard, and
    how long the caller waited for it."""

    said: str
    heard: str
    ttfa_ms: float | None = None
    ttft_ms: float | None = None
    failed: str | None = None


class CallFacts(FrozenModel):
    """What a whole call's row shows besides its transcript."""

    ended_by: str
    """How the call ended, in words."""
    turns: tuple[CallTurnView, ...]
    intensity_before: int | None = None
    """The caller's own report (None without one)."""
    intensity_after: int | None = None
    felt_heard: int | None = None
    would_call_again: bool | None = None


class TurnMoment(FrozenModel):
    """A turn's moments in its call's recording, in seconds from the recording's start."""

    turn_index: int
    from_s: float
    """Where playing the turn starts: a few seconds before the caller's end of speech."""
    said_end_s: float
    """The caller's end of speech."""
    first_audio_s: float | None
    """The agent's first audible sample of the reply; None when none came."""
    ttfa_ms: float | None
    failed: str | None = None


class CallMoment(FrozenModel):
    """Where a reply lies in its call's two-channel recording (the caller left, the agent
    right), copied beside the page."""

    audio: str
    """The recording, relative to the report folder."""
    turn: TurnMoment


class CallRecordingView(FrozenModel):
    """One call's two-channel recording to play, with where each turn lies in it."""

    agent_name: str
    dialogue_id: str
    audio: str
    """The recording, relative to the report folder."""
    turns: tuple[TurnMoment, ...]


class ReplyView(FrozenModel):
    """One contestant's final reply to an item, as the listener heard it."""

    contestant: str
    kind: str
    heard: str
    """The transcript of its audio: what the judges read."""
    text: str
    """What was meant to be said."""
    audio: str | None = None
    """The audio, relative to the report folder (``audio/...wav``, or ``audio/...ogg`` as Opus);
    None when there is none."""
    audio_refused: str | None = None
    """Why the reply's audio is not in the report although one was recorded: its path led out
    of its folder, so it was not copied."""
    failed: str | None = None
    moment: CallMoment | None = None
    """The reply in its call's recording, when the run wrote one."""
    sound: Sound | None = None
    """How it sounds (``timing.sound``): speaking rate, loudness, clipping, clicks."""
    stalls: tuple[Stall, ...] = ()
    """Where the caller heard nothing after the reply's first audio, though it was not over
    (``timing.stalls``; ``audio_ms`` places each in the reply's audio as kept)."""
    played_ms: float | None = None
    """The reply's audio as kept, from its first audio (what ``stalls`` are placed in)."""
    call: CallFacts | None = None
    """For a whole simulated call: its turns with their timing, how it ended, the caller's
    report."""


class VerdictView(FrozenModel):
    """One judge's verdict on one ordered pair."""

    judge: str
    contestant_a: str
    contestant_b: str
    winner: str | None
    strength: int | None = None
    rationale: str = ""
    failure: str | None = None


class PersonView(FrozenModel):
    """One person's answer on one pair."""

    rater: str
    contestant_a: str
    contestant_b: str
    rating: int
    """+2 A much better ... -2 B much better."""
    label: str
    comment: str = ""
    repeat: bool = False


class ItemReplies(FrozenModel):
    """One item: the conversation, every reply, and what judges and people said of them."""

    item_id: str
    adversarial: bool
    conversation: tuple[tuple[str, str], ...]
    """(speaker, text), ending with the seeker's final turn."""
    replies: tuple[ReplyView, ...]
    verdicts: tuple[VerdictView, ...] = ()
    people: tuple[PersonView, ...] = ()


class Report(Versioned):
    schema_version: int = REPORT_SCHEMA_VERSION
    created_at: str
    voicebench_version: str
    title: str
    budget_ttft_ms: float
    budget_ttfa_ms: float
    agents: tuple[AgentLatency, ...]
    judging: JudgingSummary | None = None
    strategies: StrategySummary | None = None
    replies: tuple[ItemReplies, ...] = ()
    """Per judged item, what each contestant said (with judging)."""
    calls: tuple[CallOutcomes, ...] = ()
    """Per converse folder, its calls' outcomes."""
    call_judging: JudgingSummary | None = None
    """The judging of whole calls, and its ratings, when there is one."""
    call_replies: tuple[ItemReplies, ...] = ()
    """Per persona, each agent's call as heard, with its audio, turns and verdicts."""
    recordings: tuple[CallRecordingView, ...] = ()
    """Calls to play from the runs' recordings, with each turn's moments (at most
    ``recordings.CALLS_SHOWN`` a run)."""
    recordings_left_out: int = 0
    """Recorded calls beyond those shown."""
    figures: tuple[str, ...] = Field(default=())
    """Figure names; each is ``figures/NAME.png`` and ``figures/NAME.svg``."""
