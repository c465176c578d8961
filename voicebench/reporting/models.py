"""What a report holds: ``report.json``, written beside ``index.html`` and ``report.md``.

A report folder (``voicebench report PATH... --out DIR``) holds::

    index.html       the page: one self-contained file (figures inlined), opens offline
    report.md        the same tables in Markdown, figures linked from figures/
    report.json      Report, below: every figure the page shows, as numbers
    figures/         each figure as NAME.png and NAME.svg
    audio/           each judged reply's audio, linked from the page's Replies section

Latencies are in ms. Percentile intervals are 95% percentile-bootstrap intervals over the
turns of one run (1,000 resamples, seeded), so they say how well the run pins the figure
down, not how the agent varies from day to day.
"""

from __future__ import annotations

from pydantic import Field

from voicebench._model import FrozenModel
from voicebench.judging import JudgeHealth
from voicebench.judging.cards import JudgeCard
from voicebench.rating import RatingTable
from voicebench.runlog.scenario_figures import ScenarioFigures
from voicebench.strategies.diversity import StrategySummary

REPORT_SCHEMA_VERSION = 1
QUANTILES = (50, 90, 95, 99)


class Quantile(FrozenModel):
    q: int
    """The percentile: 50, 90, 95 or 99."""
    value_ms: float
    ci_ms: tuple[float, float]
    """95% bootstrap interval."""


class Distribution(FrozenModel):
    """One latency over a set of turns."""

    n: int
    """Turns that have the figure."""
    mean_ms: float | None = None
    quantiles: tuple[Quantile, ...] = ()
    budget_ms: float
    within_budget: float | None = None
    """Share of these ``n`` turns at or under ``budget_ms``."""

    def quantile(self, q: int) -> Quantile | None:
        return next((x for x in self.quantiles if x.q == q), None)


class SlowTurn(FrozenModel):
    """One of a run's slowest turns, with what made it slow."""

    dialogue_id: str
    turn_index: int
    cold: bool
    user_text: str
    ttfa_ms: float
    ttft_ms: float | None
    slowest_stage: str
    """The stage that took longest in this turn."""
    stages_ms: dict[str, float | None]


class FailedTurn(FrozenModel):
    dialogue_id: str
    turn_index: int
    kind: str
    reason: str


class AgentLatency(FrozenModel):
    """The latency budget report of one run."""

    run_dir: str
    run_id: str
    agent_name: str
    """The run's name in the report: the agent's, or a campaign cell's label."""
    judged_as: str | None = None
    """The agent name its replies were judged under, when ``agent_name`` is a cell's label."""
    contestant: str
    """The agent's id, ``provider/model``."""
    family: str
    mode: str
    created_at: str
    turns: int
    failed: int
    failed_by_kind: dict[str, int] = Field(default_factory=dict)
    """Failed turns by ``TurnError.kind``, the most common first."""
    ttft: Distribution
    ttfa: Distribution
    ttft_warm: Distribution
    ttfa_warm: Distribution
    ttfa_cold: Distribution
    """The agent's first turn after each (re)start: model loading and new connections."""
    ttfa_censored: Distribution | None = None
    """TTFA with each failed turn counted as the turn timeout (``censored_at_ms``), so failures
    raise the percentiles instead of vanishing; None when no turn failed."""
    censored_at_ms: float | None = None
    cold_turns: int
    within_budget: float | None
    """Share of all turns (failed ones count as misses) within both budgets."""
    waterfall_ms: dict[str, float]
    """Mean of each stage over the turns with a TTFA; the stages sum to ``waterfall_total_ms``."""
    waterfall_total_ms: float | None
    """Mean TTFA over the same turns."""
    stage_p50_ms: dict[str, float | None]
    asr_wer_mean: float | None
    """Mean word error rate of the agent's ASR on the seeker's audio."""
    asr_wer_turns: int
    asr_turns_with_errors: int
    """Turns whose transcript differs from what was said."""
    llm_calls_per_turn: float | None
    slowest: tuple[SlowTurn, ...] = ()
    failures: tuple[FailedTurn, ...] = ()
    scenarios: tuple[ScenarioFigures, ...] = ()
    """With ``--scenario``: each group of turns by what it played (``clean``, ``noise pink
    10 dB``, ``barge-in``...), with its figures and 95% intervals."""


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
    ratings: RatingTable | None = None
    no_ratings: str | None = None
    """Why there are no ratings (every pair undecided), when there are none."""


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


class Report(FrozenModel):
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
    figures: tuple[str, ...] = Field(default=())
    """Figure names; each is ``figures/NAME.png`` and ``figures/NAME.svg``."""
