"""A run's latency figures as data: percentiles with their intervals, within-budget shares,
cold and warm turns, the waterfall, the slowest and failed turns, and each scenario's figures.

Latencies are in ms. Percentile intervals are 95% percentile-bootstrap intervals over the
turns of one run (1,000 resamples, seeded), so they say how well the run pins the figure
down, not how the agent varies from day to day.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from voicebench._model import FrozenModel
from voicebench.host import Busy, Host
from voicebench.metrics.repeats import PassFigures
from voicebench.metrics.scenarios import ScenarioFigures

QUANTILES = (50, 90, 95, 99)


class Quantile(FrozenModel):
    q: int
    """The percentile: 50, 90, 95 or 99."""
    value_ms: float
    ci_ms: tuple[float, float] | None
    """95% bootstrap interval over resampled dialogues (their turns kept together); None when
    the run has too few dialogues to tell (``bootstrap.clusters_needed``)."""


class Distribution(FrozenModel):
    """One latency over a set of turns."""

    n: int
    """Turns that have the figure."""
    clusters: int = 0
    """Dialogues (or calls) those turns belong to: what the intervals resample."""
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


class StallSummary(FrozenModel):
    """The stalls of a run's replies after their first audio (``timing.stalls``)."""

    replies: int
    """Replies that played something audible."""
    dialogues: int
    """The dialogues they are in."""
    stalled: int
    """Of the replies, those with at least one stall."""
    stalls: int
    longest_ms: float
    """The longest stall of any reply."""
    stalled_share: float
    """The share of a reply's playing time stalled, averaged over the replies."""
    stalled_share_ci: tuple[float, float] | None = None
    """Its 95% interval over resampled dialogues; None with too few to tell."""


class SoundSummary(FrozenModel):
    """How a run's replies sound (``timing.sound``)."""

    replies: int
    """Replies that played something audible."""
    dialogues: int
    words_per_minute: float | None = None
    """The median speaking rate over the replies with text."""
    words_per_minute_ci: tuple[float, float] | None = None
    """Its 95% interval over resampled dialogues; None with too few to tell."""
    rated: int = 0
    """The replies with a speaking rate."""
    loudness_lufs: float | None = None
    """The median integrated loudness."""
    loudness_range_lufs: tuple[float, float] | None = None
    """The quietest and the loudest reply."""
    clipped_share: float
    """The share of a reply's samples at full scale, averaged over the replies."""
    clipped_share_ci: tuple[float, float] | None = None
    clicks: int
    """Clicks in all the replies (sound starting or stopping abruptly)."""
    clicked: int
    """The replies with a click."""


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
    kind: Literal["cascade", "speech-to-speech", "remote", "livekit"] = "cascade"
    """How the agent is built: ASR -> LLM -> TTS here, one speech-to-speech model (``[s2s]``),
    reached elsewhere (``[remote]``), or a LiveKit agent run here (``[livekit]``)."""
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
    opening_ttfa: Distribution | None = None
    """The agent's openings (its greetings, ``runlog.openings``): TTFA from the call's start to
    its first sound, over each opening that played one; None when it never spoke first."""
    openings: int = 0
    openings_failed: int = 0
    cold_turns: int
    within_budget: float | None
    """Share of all turns (failed ones count as misses) within both budgets."""
    waterfall_ms: dict[str, float]
    """Mean of each stage over the turns with a TTFA; the stages sum to ``waterfall_total_ms``."""
    waterfall_total_ms: float | None
    """Mean TTFA over the same turns."""
    stage_p50_ms: dict[str, float | None]
    reported_ms: dict[str, float] = Field(default_factory=dict)
    """TTFA cut as the agent's framework accounts for it (``ReportedLatency.accounting``):
    the mean of each part over the turns that have every part, summing to
    ``reported_total_ms``; empty for an agent whose framework reports nothing."""
    reported_total_ms: float | None = None
    """Mean TTFA over the same turns."""
    reported_e2e_ms: float | None = None
    """The framework's own end-to-end figure, mean over the turns that have it."""
    asr_wer_mean: float | None
    """Mean word error rate of the agent's ASR on the seeker's audio."""
    asr_wer_turns: int
    asr_turns_with_errors: int
    """Turns whose transcript differs from what was said."""
    llm_calls_per_turn: float | None
    stalls: StallSummary | None = None
    """The replies' stalls after their first audio; None when none played (or the report
    was built before they were measured)."""
    sound: SoundSummary | None = None
    """How the replies sound; None when none played (or before it was measured)."""
    slowest: tuple[SlowTurn, ...] = ()
    failures: tuple[FailedTurn, ...] = ()
    scenarios: tuple[ScenarioFigures, ...] = ()
    """With ``--scenario``: each group of turns by what it played (``clean``, ``noise pink
    10 dB``, ``barge-in``...), with its figures and 95% intervals."""
    passes: tuple[PassFigures, ...] = ()
    """With ``--repeat``: each pass over the items with its own figures (``metrics.repeats``);
    the figures above pool every pass, each item's passes resampled together."""
    hosts: tuple[Host, ...] = ()
    """The machine each sitting of the run measured on (``RunHeader.hosts``); empty for a run
    made before hosts were recorded."""
    busy: tuple[Busy, ...] = ()
    """The bounds its hosts passed (``host.busy``): empty unless it was measured on a busy
    machine."""
