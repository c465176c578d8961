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

``SpeculativeStopStrategy`` separates thinking from speaking. With a short VAD stop the ASR
transcribes each segment early; as soon as the VAD has stopped and every segment is
transcribed, the LLM is asked on a provisional context (pipecat's speculation), while the
turn itself still ends only after the full silence window. The LLM service holds the reply
until that turn end confirms it; the user speaking again, or a transcript that changed,
withdraws it and the agent asks again. The listener never hears an answer to words they
had not finished, yet the ASR and the LLM's first token overlap the silence window.

With ``unfinished_timeout`` the window depends on the words: when the transcript so far stops
mid-sentence (``voicebench.text.unfinished``: no full stop, question or exclamation mark, or
a last word such as "and" or "the"), the turn ends only that long after the VAD stop. A
caller searching for a word pauses longer than between sentences. Whisper often ends a
fragment with a full stop, so it catches some such pauses, not all: of the fixture
utterances cut where the pause scenario pauses, 33 of 79 read as unfinished to tiny.en, and 1
of the 84 whole ones (``benchmarks/unfinished.py``).
"""

from __future__ import annotations

import asyncio

from pipecat.frames.frames import (
    Frame,
    TranscriptionFrame,
    VADUserStartedSpeakingFrame,
    VADUserStoppedSpeakingFrame,
)
from pipecat.turns.types import ProcessFrameResult, UserTurnSpeculation
from pipecat.turns.user_stop.speech_timeout_user_turn_stop_strategy import (
    SpeechTimeoutUserTurnStopStrategy,
)

from voicebench.text import unfinished


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
    """Speech-timeout turn end that also waits for every pending segment's transcript, and
    with ``unfinished_timeout`` waits that long after the VAD stop when the words so far stop
    mid-sentence (``voicebench.text.unfinished``)."""

    def __init__(
        self,
        gate: TranscriptGate,
        *,
        stop_timeout: float,
        unfinished_timeout: float | None = None,
        **kwargs,
    ) -> None:
        super().__init__(**kwargs)
        self._gate = gate
        self._stop_timeout = stop_timeout
        self._timeout_task: asyncio.Task | None = None
        self._unfinished_timeout = unfinished_timeout
        self._stopped_at: float | None = None
        self._unfinished_task: asyncio.Task | None = None
        self._unfinished_waited = False
        gate.attach(self)

    async def process_frame(self, frame: Frame) -> ProcessFrameResult:
        if isinstance(frame, VADUserStoppedSpeakingFrame):
            self._arm_timeout()
            self._stopped_at = asyncio.get_running_loop().time()
        elif isinstance(frame, VADUserStartedSpeakingFrame):
            self._disarm_timeout()
            self._disarm_unfinished()
        elif isinstance(frame, TranscriptionFrame):
            self._gate.settle_one()
        return await super().process_frame(frame)

    async def transcripts_settled(self) -> None:
        await self._maybe_trigger_user_turn_stopped()

    async def _maybe_trigger_user_turn_stopped(self) -> None:
        if self._gate.pending > 0 or self._waits_for_unfinished():
            return
        await super()._maybe_trigger_user_turn_stopped()

    def _waits_for_unfinished(self) -> bool:
        """Whether the turn would end now on words that stop mid-sentence, before
        ``unfinished_timeout`` has passed since the VAD stop (the wait is then armed)."""
        if (
            self._unfinished_timeout is None
            or self._unfinished_waited
            or self._stopped_at is None
            or self._vad_user_speaking
            or not (self._user_speech_wait_done and self._stt_wait_done)
            or not unfinished(self._text)
        ):
            return False
        left = self._unfinished_timeout - (asyncio.get_running_loop().time() - self._stopped_at)
        if left <= 0:
            return False
        if self._unfinished_task is None:
            self._unfinished_task = self.task_manager.create_task(
                self._wait_unfinished(left), f"{self}::wait_unfinished"
            )
        return True

    async def _wait_unfinished(self, seconds: float) -> None:
        await asyncio.sleep(seconds)
        self._unfinished_task = None
        self._unfinished_waited = True
        await self._maybe_trigger_user_turn_stopped()

    def _disarm_unfinished(self) -> None:
        if self._unfinished_task is not None:
            self._unfinished_task.cancel()
            self._unfinished_task = None
        self._unfinished_waited = False

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
        self._disarm_unfinished()
        self._stopped_at = None
        await super().handle_user_turn_stopped()

    async def cleanup(self) -> None:
        self._disarm_timeout()
        self._disarm_unfinished()
        await super().cleanup()


class SpeculativeStopStrategy(PendingTranscriptStopStrategy):
    """Asks the LLM once the early VAD stop's transcripts are in; speaks after the turn ends."""

    def __init__(self, gate: TranscriptGate, **kwargs) -> None:
        super().__init__(gate, **kwargs)
        self._speculation: UserTurnSpeculation | None = None
        self._decided = False

    async def process_frame(self, frame: Frame) -> ProcessFrameResult:
        result = await super().process_frame(frame)
        if isinstance(frame, VADUserStartedSpeakingFrame):
            await self._withdraw()
        elif isinstance(frame, TranscriptionFrame):
            await self._maybe_speculate()
        return result

    async def transcripts_settled(self) -> None:
        await self._maybe_speculate()
        await super().transcripts_settled()

    async def _maybe_speculate(self) -> None:
        ready = (
            not self._decided
            and self._vad_stopped
            and not self._vad_user_speaking
            and self._gate.pending == 0
            and self._text.strip()
        )
        if not ready:
            return
        if self._speculation is not None:
            if self._speculation.text == self._text:
                return
            await self._withdraw()
        self._speculation = UserTurnSpeculation(text=self._text)
        await self.trigger_user_turn_inference_triggered(speculation=self._speculation)

    async def _withdraw(self) -> None:
        if self._speculation is None:
            return
        self._speculation = None
        await self.trigger_user_turn_speculation_cancelled()

    async def trigger_user_turn_stopped(self, *, enable_user_speaking_frames: bool | None = None):
        self._decided = True
        if self._speculation is not None and self._speculation.text == self._text:
            self._speculation = None
            await self.trigger_user_turn_finalized(
                enable_user_speaking_frames=enable_user_speaking_frames,
                confirms_speculation=True,
            )
            return
        await self._withdraw()  # it answered words the user then added to
        await super().trigger_user_turn_stopped(
            enable_user_speaking_frames=enable_user_speaking_frames
        )

    async def handle_user_turn_started(self) -> None:
        await self._withdraw()
        self._decided = False
        await super().handle_user_turn_started()

    async def handle_user_turn_stopped(self) -> None:
        await self._withdraw()
        await super().handle_user_turn_stopped()
