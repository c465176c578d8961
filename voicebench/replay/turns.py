"""The user's turn ends when the last thing they said has been transcribed.

A segmented ASR (local Whisper) transcribes each VAD speech segment after the segment's VAD
stop. When the speaker pauses at a comma long enough for the VAD to stop, the stock
speech-timeout rule ends the turn once *any* transcript exists, which can be the first
half's, while the second half is still being transcribed: the LLM is then asked about half a
sentence, cancelled and asked again. ``PendingTranscriptStopStrategy`` counts segments the
ASR still owes a result for and waits until none are pending (or ``stop_timeout`` passes).
``TranscriptGate`` counts them: the ASR adds a segment when it queues one (before the VAD stop
travels on), the strategy settles it when the segment's transcript reaches the aggregator
(frames arrive in order), and the ASR settles a segment that produced no text itself.
"""

from __future__ import annotations

import asyncio

from pipecat.frames.frames import (
    Frame,
    TranscriptionFrame,
    VADUserStartedSpeakingFrame,
    VADUserStoppedSpeakingFrame,
)
from pipecat.turns.types import ProcessFrameResult
from pipecat.turns.user_stop.speech_timeout_user_turn_stop_strategy import (
    SpeechTimeoutUserTurnStopStrategy,
)


class TranscriptGate:
    """Counts speech segments sent to the ASR and those it has finished."""

    def __init__(self) -> None:
        self.pending = 0
        self._strategies: list[PendingTranscriptStopStrategy] = []

    def attach(self, strategy: PendingTranscriptStopStrategy) -> None:
        self._strategies.append(strategy)

    def segment_started(self) -> None:
        """Called by the ASR when a segment is queued, before the VAD stop travels on."""
        self.pending += 1

    def settle_one(self) -> None:
        self.pending = max(0, self.pending - 1)

    async def segment_without_text(self) -> None:
        """Called by the ASR when a segment produced no transcript."""
        self.settle_one()
        if self.pending == 0:
            for s in self._strategies:
                await s.transcripts_settled()


class PendingTranscriptStopStrategy(SpeechTimeoutUserTurnStopStrategy):
    """Speech-timeout turn end that also waits for every pending segment's transcript."""

    def __init__(self, gate: TranscriptGate, *, stop_timeout: float, **kwargs) -> None:
        super().__init__(**kwargs)
        self._gate = gate
        self._stop_timeout = stop_timeout
        self._timeout_task: asyncio.Task | None = None
        gate.attach(self)

    async def process_frame(self, frame: Frame) -> ProcessFrameResult:
        if isinstance(frame, VADUserStoppedSpeakingFrame):
            self._arm_timeout()
        elif isinstance(frame, VADUserStartedSpeakingFrame):
            self._disarm_timeout()
        elif isinstance(frame, TranscriptionFrame):
            self._gate.settle_one()
        return await super().process_frame(frame)

    async def transcripts_settled(self) -> None:
        await self._maybe_trigger_user_turn_stopped()

    async def _maybe_trigger_user_turn_stopped(self) -> None:
        if self._gate.pending > 0:
            return
        await super()._maybe_trigger_user_turn_stopped()

    def _arm_timeout(self) -> None:
        self._disarm_timeout()
        self._timeout_task = self.task_manager.create_task(
            self._give_up_waiting(), f"{self}::give_up_waiting"
        )

    def _disarm_timeout(self) -> None:
        if self._timeout_task is not None:
            self._timeout_task.cancel()
            self._timeout_task = None

    async def _give_up_waiting(self) -> None:
        await asyncio.sleep(self._stop_timeout)
        self._timeout_task = None
        self._gate.pending = 0
        await super()._maybe_trigger_user_turn_stopped()

    async def handle_user_turn_stopped(self) -> None:
        self._disarm_timeout()
        await super().handle_user_turn_stopped()

    async def cleanup(self) -> None:
        self._disarm_timeout()
        await super().cleanup()
