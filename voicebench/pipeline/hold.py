"""Holding a speculative reply's audio, rather than its text, until the turn is confirmed.

pipecat holds a speculative reply inside the LLM service (its ``SpeculationGate``): the tokens
wait there until the turn end confirms them, so TTS starts only then and the listener waits
for the first sentence to be synthesized after the turn has ended. With ``[turn] hold =
"audio"`` the tokens go on at once, TTS synthesizes the reply during the silence window, and
``AudioHold`` (placed after TTS) keeps its frames until the verdict. A confirmed reply is
played at once; a withdrawn one is dropped unheard. The cost is TTS work on replies that are
withdrawn.

The LLM service keeps its gate, so it still knows when its inference is speculative and stops
generating a withdrawn one, but ``PassingGate`` holds nothing. It numbers each speculation,
marks the reply's ``LLMFullResponseStartFrame`` with that number (frames keep their order
through TTS), and turns the turn's verdict (``UserStoppedSpeakingFrame`` confirms;
``EagerEndOfTurnCancelFrame`` or an interruption withdraws) into a
``SpeculationVerdictFrame`` naming the speculation. The verdict is a system frame, so it
passes TTS at once: a reply already held is released or dropped then, and a verdict that
arrives before its reply's frames is remembered until they come.

The timing observer is told what was dropped, so a withdrawn reply leaves no LLM reply or TTS
events behind, and the first audio frame pushed on after each reply's start is stamped as
``audio_release``: the end of the ``audio_hold`` stage (zero when nothing was held).
"""

from __future__ import annotations

from dataclasses import dataclass

from pipecat.frames.frames import (
    EndFrame,
    Frame,
    LLMFullResponseEndFrame,
    LLMFullResponseStartFrame,
    SystemFrame,
    TTSAudioRawFrame,
    UserStoppedSpeakingFrame,
)
from pipecat.processors.frame_processor import FrameDirection, FrameProcessor
from pipecat.turns.speculation_gate import GatedFrame, SpeculationGate

from voicebench.timing.events import EventKind
from voicebench.timing.observer import TimingObserver

SPECULATION_KEY = "voicebench.speculation"
"""``Frame.metadata`` key on a speculative reply's start frame: the speculation's number."""
KEPT_VERDICTS = 8
"""Verdicts remembered for replies not yet seen (only the latest can still arrive)."""


@dataclass
class SpeculationVerdictFrame(SystemFrame):
    """The turn settled speculation ``speculation``: its reply may be played, or not."""

    speculation: int = 0
    confirmed: bool = False


class PassingGate(SpeculationGate):
    """The LLM service's gate when the audio is held downstream: it holds nothing itself."""

    def __init__(self, *, name: str = "PassingGate") -> None:
        super().__init__(name=name)
        self._number = 0

    def begin_speculation(self, speculation: bool) -> None:
        super().begin_speculation(speculation)
        if self.is_speculating:
            self._number += 1

    def process(self, frame: Frame, direction: FrameDirection) -> list[GatedFrame]:
        if direction != FrameDirection.DOWNSTREAM:
            return [(frame, direction)]
        if isinstance(frame, SystemFrame):
            was = self.is_speculating
            # Nothing is ever held here, so the parent only keeps its books: whether the
            # inference in flight is speculative and whether the turn has ended.
            emitted = super().process(frame, direction)
            if was and not self.is_speculating:
                confirmed = isinstance(frame, UserStoppedSpeakingFrame)
                emitted.append((SpeculationVerdictFrame(self._number, confirmed), direction))
            return emitted
        if isinstance(frame, LLMFullResponseStartFrame) and self.is_speculating:
            frame.metadata[SPECULATION_KEY] = self._number
        return [(frame, direction)]


class AudioHold(FrameProcessor):
    """After TTS: keeps a speculative reply's frames until its verdict."""

    def __init__(self, observer: TimingObserver, **kwargs) -> None:
        super().__init__(**kwargs)
        self._observer = observer
        self._holding: int | None = None
        self._held: list[GatedFrame] = []
        self._dropping = False
        self._verdicts: dict[int, bool] = {}
        self._first_audio = False

    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        await super().process_frame(frame, direction)
        if direction != FrameDirection.DOWNSTREAM:
            await self.push_frame(frame, direction)
        elif isinstance(frame, SpeculationVerdictFrame):
            await self._settle(frame.speculation, frame.confirmed)
        elif isinstance(frame, SystemFrame):
            await self.push_frame(frame, direction)
        elif isinstance(frame, EndFrame):
            await self._drop()
            await self.push_frame(frame, direction)
        elif isinstance(frame, LLMFullResponseStartFrame):
            await self._start(frame, direction)
        elif self._holding is not None:
            self._held.append((frame, direction))
        elif self._dropping and frame.interruptible:
            self._dropping = not isinstance(frame, LLMFullResponseEndFrame)
            self._observer.retract([frame])
        else:
            await self._pass(frame, direction)

    async def _start(self, frame: LLMFullResponseStartFrame, direction: FrameDirection) -> None:
        await self._drop()  # whatever was held or dropped before is over: a new reply began
        number = frame.metadata.get(SPECULATION_KEY)
        verdict = self._verdicts.pop(number, None) if number is not None else True
        if verdict is None:
            self._holding, self._held = number, [(frame, direction)]
        elif verdict:
            self._first_audio = True
            await self._pass(frame, direction)
        else:
            self._dropping = True
            self._observer.retract([frame])

    async def _settle(self, number: int, confirmed: bool) -> None:
        if self._holding != number:
            self._verdicts[number] = confirmed
            for old in [n for n in self._verdicts if n <= number - KEPT_VERDICTS]:
                del self._verdicts[old]
            return
        held, self._held, self._holding = self._held, [], None
        if confirmed:
            self._first_audio = True
            for f, d in held:
                await self._pass(f, d)
            return
        ended = any(isinstance(f, LLMFullResponseEndFrame) for f, _ in held)
        await self._discard(held)
        self._dropping = not ended

    async def _drop(self) -> None:
        held, self._held, self._holding, self._dropping = self._held, [], None, False
        await self._discard(held)

    async def _discard(self, frames: list[GatedFrame]) -> None:
        """Drop a withdrawn reply; frames that may not be interrupted still go on."""
        self._observer.retract([f for f, _ in frames if f.interruptible])
        for f, d in frames:
            if not f.interruptible:
                await self._pass(f, d)

    async def _pass(self, frame: Frame, direction: FrameDirection) -> None:
        if self._first_audio and isinstance(frame, TTSAudioRawFrame):
            self._first_audio = False
            self._observer.record(EventKind.AUDIO_RELEASE, self.get_clock().get_time())
        await self.push_frame(frame, direction)
