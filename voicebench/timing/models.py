"""Per-turn timing: milestones on one monotonic clock and the latency figures derived from them.

Every milestone is a ``perf_counter_ns`` reading (or an injected clock's) on the run's clock.
The anchor is ``speech_end_ns``: the true end of the user's speech, taken from the fixture
manifest's sample offset and the moment the replay played that sample, not the VAD's guess.

TTFT is ``llm_first_token_ns - llm_request_ns``: the model's own time, from the request's last
byte written to its first answer token's bytes arriving (the kernel's stamp, where there is
one: ``voicebench.llm.arrival``), whether or not that token is then held. An agent that asks the
LLM before the turn is confirmed (``[turn] speculate``) holds the reply until the turn ends;
that wait is its own stage: ``turn_hold``, up to ``llm_release_ns``, when the reply's text is
held, or ``audio_hold``, up to ``audio_release_ns``, when its synthesized audio is. TTFA is
``audio_out_ns - speech_end_ns``. A speech-to-speech agent (``[s2s]``) has its own milestones
within the same stages: the end of the turn (its local VAD's stop, or the model's own
``speech_stopped`` as it arrived), the answer asked for (local turn detection only), the
model's first audio, and the first audible sample.
The waterfall cuts TTFA into consecutive stages at the milestones, in pipeline order. Stage
boundaries are made monotone (a boundary earlier than the one before it is moved up to it),
so no stage is negative and the stages always add up to TTFA exactly. A missing milestone
gives that stage ``None``; the following stage then starts at the last known boundary. With
only the first audio known (a remote agent, timed as a black box) every stage is ``None``.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field, computed_field, model_validator

from voicebench._model import FrozenModel

NS_PER_MS = 1_000_000

STAGES: tuple[tuple[str, str, str], ...] = (
    # (stage name, milestone that ends it, what it covers)
    ("endpointing", "vad_stop_ns", "true end of speech to the VAD's stop"),
    ("asr", "transcript_ns", "VAD stop to the final transcript"),
    ("turn_end", "llm_request_ns", "final transcript to the LLM request"),
    (
        "model_audio",
        "model_audio_ns",
        "a speech-to-speech model's end of turn (or its answer asked for) to its first audio",
    ),
    ("llm_ttft", "llm_first_token_ns", "LLM request to its first token received"),
    (
        "turn_hold",
        "llm_release_ns",
        "first token received to its release: parsing it, and a speculative reply's wait",
    ),
    (
        "text_aggregation",
        "tts_request_ns",
        "first token released to the first sentence sent to TTS",
    ),
    ("tts_first_audio", "tts_first_audio_ns", "TTS request to its first audio frame"),
    (
        "audio_hold",
        "audio_release_ns",
        "first audio frame to its release (turn confirmed), when the audio is what is held",
    ),
    ("output", "audio_out_ns", "first audio released to the first audible sample played"),
)
STAGE_NAMES: tuple[str, ...] = tuple(s[0] for s in STAGES)
STAGE_LABELS = {
    "endpointing": "endpointing",
    "asr": "ASR",
    "turn_end": "turn end",
    "model_audio": "model first audio",
    "llm_ttft": "LLM TTFT",
    "turn_hold": "turn hold",
    "text_aggregation": "text aggregation",
    "tts_first_audio": "TTS first audio",
    "audio_hold": "audio hold",
    "output": "output",
}
"""Stage names as people read them (tables and figures)."""


_DERIVED = frozenset({"ttft_ms", "ttfa_ms", "stages_ms"})


def ns_to_ms(ns: int) -> float:
    return ns / NS_PER_MS


class TurnTiming(FrozenModel):
    """Milestones of one turn, in ns on the run's monotonic clock."""

    speech_end_ns: int
    """True end of the user's speech (anchor)."""
    vad_stop_ns: int | None = None
    """The VAD stop that ended the user's last speech segment."""
    transcript_ns: int | None = None
    """The final transcript of the turn."""
    llm_request_ns: int | None = None
    """The LLM request was sent."""
    llm_first_token_ns: int | None = None
    """The first token of the reply arrived from the provider."""
    llm_release_ns: int | None = None
    """The first token went on to the speaker: when it arrived, unless a speculative reply
    was held until the turn was confirmed. None in run logs of schema 1, whose
    ``llm_first_token_ns`` was this release (see ``runlog.models``)."""
    model_audio_ns: int | None = Field(default=None, exclude_if=lambda v: v is None)
    """A speech-to-speech model's first audio of the reply arrived (``[s2s]`` agents only:
    it hears and speaks, so there is no transcript, token or TTS between)."""
    tts_request_ns: int | None = None
    """The first sentence of the reply went to TTS."""
    tts_first_audio_ns: int | None = None
    """TTS produced its first audio frame."""
    audio_release_ns: int | None = None
    """The reply's first audio frame went on to the speaker, for an agent that holds a
    speculative reply's audio rather than its text (``[turn] hold = "audio"``): when TTS made
    it, unless the turn had not been confirmed yet. None for every other agent."""
    audio_out_ns: int | None = None
    """The first audible sample of the bot's reply was played."""

    @model_validator(mode="before")
    @classmethod
    def _drop_derived(cls, data: Any) -> Any:
        # The derived figures are written for readers of the JSON; they are recomputed on load.
        if isinstance(data, dict):
            data = {k: v for k, v in data.items() if k not in _DERIVED}
        return data

    @computed_field  # type: ignore[prop-decorator]
    @property
    def ttft_ms(self) -> float | None:
        """LLM time to first token: request sent to first token received."""
        if self.llm_request_ns is None or self.llm_first_token_ns is None:
            return None
        return ns_to_ms(self.llm_first_token_ns - self.llm_request_ns)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def ttfa_ms(self) -> float | None:
        """Time to first audio: true end of user speech to the first audible bot sample."""
        if self.audio_out_ns is None:
            return None
        return ns_to_ms(self.audio_out_ns - self.speech_end_ns)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def stages_ms(self) -> dict[str, float | None]:
        """The waterfall: stage name to ms; the non-null stages sum to ``ttfa_ms`` (none are
        non-null for a black box)."""
        return {
            name: (None if ns is None else ns_to_ms(ns)) for name, ns in self.stages_ns().items()
        }

    def stages_ns(self) -> dict[str, int | None]:
        """The waterfall in ns (exact integers)."""
        out: dict[str, int | None] = {}
        if self.audio_out_ns is None or all(getattr(self, m) is None for _, m, _ in STAGES[:-1]):
            # No audio, or a black box (a remote agent): no stage was observed.
            return {name: None for name in STAGE_NAMES}
        boundary = self.speech_end_ns
        for name, milestone, _ in STAGES:
            value = getattr(self, milestone)
            if value is None:
                out[name] = None
                continue
            value = max(value, boundary)
            if milestone != "audio_out_ns":
                value = min(value, self.audio_out_ns)
            out[name] = value - boundary
            boundary = value
        return out


REPORTED_STAGES: tuple[tuple[str, str], ...] = (
    ("end_of_turn_ms", "end of turn"),
    ("llm_ttft_ms", "LLM TTFT"),
    ("tts_ttfb_ms", "TTS TTFB"),
)
"""The figures a framework's own latency formula adds up (LiveKit's documented total
latency: end of turn + LLM TTFT + TTS TTFB), with their labels."""


class ReportedLatency(FrozenModel):
    """What the agent's own framework reported for a turn (a LiveKit agent's per-message
    metrics), in ms; None where it reported nothing. Beside the measured waterfall, never
    in it: the framework times from its own guess of the end of speech."""

    framework: str = "livekit"
    end_of_turn_ms: float | None = None
    """From the end of speech (as its VAD placed it) to its decision that the turn was over."""
    transcription_ms: float | None = None
    """From the end of speech to the final transcript."""
    on_user_turn_completed_ms: float | None = None
    """The agent's own ``on_user_turn_completed`` hook."""
    llm_ttft_ms: float | None = None
    """Its ``llm_node`` to its first token."""
    tts_ttfb_ms: float | None = None
    """Its ``tts_node`` to its first audio."""
    e2e_ms: float | None = None
    """Its end-to-end figure: the end of speech to the moment it began to play the reply."""

    def accounting(self, ttfa_ms: float) -> dict[str, float] | None:
        """The measured TTFA cut as the framework's formula cuts it: its figures, then what
        they leave out (``unreported``: negative where they add up to more than was heard);
        the parts sum to ``ttfa_ms`` exactly. None where a figure of the formula is missing."""
        parts = {name: getattr(self, name) for name, _ in REPORTED_STAGES}
        if any(v is None for v in parts.values()):
            return None
        out = {name: float(v) for name, v in parts.items()}
        out["unreported_ms"] = ttfa_ms - sum(out.values())
        return out
