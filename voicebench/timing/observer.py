"""The timing observer: watches frames go by and records turn events on the run's clock.

It never patches a service. The first token's arrival, which a speculating LLM service holds
back with the token itself, is read from the service's time-to-first-answer-token metrics
frame: a system frame, pushed as the token arrives and never held. Every frame push carries
the pipeline clock's reading at the moment of the push (``FramePushed.timestamp``), so the
observer's own queueing delay does not enter the figures. The pipeline clock is a
``RunClock``: ``perf_counter_ns`` in a run, a fake in tests.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable

from pipecat.clocks.base_clock import BaseClock
from pipecat.frames.frames import (
    BotStoppedSpeakingFrame,
    ErrorFrame,
    Frame,
    LLMFullResponseEndFrame,
    LLMFullResponseStartFrame,
    LLMTextFrame,
    MetricsFrame,
    TranscriptionFrame,
    TTSAudioRawFrame,
    TTSStartedFrame,
    VADUserStartedSpeakingFrame,
    VADUserStoppedSpeakingFrame,
)
from pipecat.metrics.metrics import TTFATMetricsData
from pipecat.observers.base_observer import BaseObserver, FramePushed
from pipecat.services.llm_service import LLMService
from pipecat.services.stt_service import STTService
from pipecat.services.tts_service import TTSService

from voicebench.timing.events import EventKind, TurnEvent


class RunClock(BaseClock):
    """The one clock of a run: an injected ns counter (``time.perf_counter_ns`` by default).

    Unlike pipecat's system clock it is not reset when the pipeline starts, so stamps from
    the transports, the observer and the driver share one time base.
    """

    def __init__(self, now_ns: Callable[[], int] = time.perf_counter_ns) -> None:
        self._now_ns = now_ns

    def get_time(self) -> int:
        return self._now_ns()

    def start(self) -> None:  # nothing to reset: readings are absolute
        pass


_FRAME_EVENTS: tuple[tuple[type, EventKind], ...] = (
    (VADUserStartedSpeakingFrame, EventKind.VAD_START),
    (VADUserStoppedSpeakingFrame, EventKind.VAD_STOP),
    (TranscriptionFrame, EventKind.TRANSCRIPT),
    (LLMFullResponseStartFrame, EventKind.LLM_REQUEST),
    (LLMTextFrame, EventKind.LLM_TOKEN),
    (LLMFullResponseEndFrame, EventKind.LLM_END),
    (TTSStartedFrame, EventKind.TTS_REQUEST),
    (TTSAudioRawFrame, EventKind.TTS_AUDIO),
    (BotStoppedSpeakingFrame, EventKind.BOT_STOPPED),
    (ErrorFrame, EventKind.ERROR),
)


def error_source(frame: ErrorFrame) -> str:
    """The stage whose service raised ``frame``: ``asr``, ``llm``, ``tts``, or empty."""
    for cls, stage in ((STTService, "asr"), (LLMService, "llm"), (TTSService, "tts")):
        if isinstance(frame.processor, cls):
            return stage
    return ""


class TimingObserver(BaseObserver):
    """Records the frames that mark a turn's milestones, in the order they were pushed."""

    def __init__(self) -> None:
        super().__init__(observe_every_push=False)
        self._events: list[TurnEvent] = []
        self._retracted: set[int] = set()
        """Ids of frames whose events are taken back; applied lazily, so that dropping a
        withdrawn reply frame by frame costs nothing while the pipeline is busy."""

    @property
    def events(self) -> list[TurnEvent]:
        """Every event kept (since the last ``forget_before``), in the order recorded."""
        return [e for e in self._events if not self._taken_back(e)]

    def _taken_back(self, event: TurnEvent) -> bool:
        return event.frame_id is not None and event.frame_id in self._retracted

    def record(
        self,
        kind: EventKind,
        ns: int,
        text: str = "",
        source: str = "",
        frame_id: int | None = None,
    ) -> None:
        """Record an event seen outside a frame push (the output transport's first audible
        sample)."""
        self._events.append(TurnEvent(kind, ns, text, source, frame_id))

    def retract(self, frames: Iterable[Frame]) -> None:
        """Forget the events of frames that were dropped unheard (a withdrawn speculative
        reply whose audio was held): the turn is timed as if they had never been pushed."""
        self._retracted.update(f.id for f in frames)

    def forget_before(self, ns: int) -> None:
        """Let go of the events stamped before ``ns`` (turns already taken), so that reading
        a turn's events costs what that turn recorded, not what the whole run has."""
        kept = [e for e in self._events if e.ns >= ns and not self._taken_back(e)]
        # An id stays taken back until its events are gone: one may still be on its way.
        self._retracted -= {e.frame_id for e in self._events if self._taken_back(e)}
        self._events = kept

    async def on_push_frame(self, data: FramePushed) -> None:
        frame = data.frame
        if isinstance(frame, MetricsFrame):
            if isinstance(data.source, LLMService) and any(
                isinstance(m, TTFATMetricsData) for m in frame.data
            ):
                self.record(EventKind.LLM_TOKEN_RECEIVED, data.timestamp)
            return
        for cls, kind in _FRAME_EVENTS:
            if isinstance(frame, cls):
                text = source = ""
                if isinstance(frame, (TranscriptionFrame, LLMTextFrame)):
                    text = frame.text
                elif isinstance(frame, ErrorFrame):
                    text, source = frame.error, error_source(frame)
                self.record(kind, data.timestamp, text, source, frame.id)
                return

    def since(self, start_ns: int) -> list[TurnEvent]:
        """Events stamped at or after ``start_ns``, in clock order."""
        return sorted(
            (e for e in self._events if e.ns >= start_ns and not self._taken_back(e)),
            key=lambda e: e.ns,
        )
