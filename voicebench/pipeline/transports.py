"""Transports that stand in for a caller's microphone and loudspeaker.

``ReplayInputTransport`` is a live microphone fed from fixture WAVs: it delivers one 20 ms
frame per 20 ms, each once its 20 ms have "been recorded", against the run clock. Between
utterances it delivers silence, so the VAD hears what it would hear on a call. A sample ``i``
of an utterance happens at ``window_start_ns + i / rate``, which is how the true end of the
user's speech is placed on the run clock.

``CaptureOutputTransport`` is a loudspeaker: it plays each chunk in real time (the next write
waits until the previous chunk has started playing, a one-chunk device buffer), keeps what
was played for the current turn, and stamps the first audible sample of each talk the agent
begins (``realtime.Audible``). When pipecat interrupts the agent (the caller talked over it),
the moment the interruption reaches the loudspeaker is stamped too: the queued audio is
dropped there, and the chunk already handed to the device plays out, so the agent's last
audible sample is the end of what had been played by then.
"""

from __future__ import annotations

import asyncio

import numpy as np
from pipecat.frames.frames import (
    InputAudioRawFrame,
    InterruptionFrame,
    OutputAudioRawFrame,
    StartFrame,
)
from pipecat.processors.frame_processor import FrameDirection
from pipecat.transports.base_input import BaseInputTransport
from pipecat.transports.base_output import BaseOutputTransport
from pipecat.transports.base_transport import BaseTransport, TransportParams

from voicebench.agent.realtime import (
    FRAME_NS,
    NS_PER_S,
    Audible,
    Microphone,
    Playout,
    Tape,
    Utterance,
)
from voicebench.timing.events import EventKind
from voicebench.timing.observer import TimingObserver


class ReplayInputTransport(BaseInputTransport):
    """A real-time microphone that speaks queued utterances and is silent otherwise."""

    def __init__(self, params: TransportParams, **kwargs) -> None:
        super().__init__(params, **kwargs)
        self._mic: Microphone | None = None
        self._pace_task: asyncio.Task | None = None

    def say(self, pcm: np.ndarray) -> Utterance:
        """Queue 16-bit PCM (at the input sample rate) to be spoken from the next frame on."""
        return self._microphone().say(pcm)

    def _microphone(self) -> Microphone:
        if self._mic is None:
            self._mic = Microphone(self.sample_rate)  # known once the pipeline has started
        return self._mic

    async def start(self, frame: StartFrame) -> None:
        await super().start(frame)
        await self.set_transport_ready(frame)
        if self._pace_task is None:
            self._pace_task = self.create_task(self._pace())

    async def stop(self, frame) -> None:
        await self._stop_pacing()
        await super().stop(frame)

    async def cancel(self, frame) -> None:
        await self._stop_pacing()
        await super().cancel(frame)

    async def _stop_pacing(self) -> None:
        if self._pace_task is not None:
            await self.cancel_task(self._pace_task)
            self._pace_task = None

    async def _pace(self) -> None:
        clock = self.get_clock()
        mic = self._microphone()
        origin = clock.get_time()
        k = 0
        while True:
            window_start = origin + k * FRAME_NS
            chunk = mic.frame(window_start)
            # A frame exists once its 20 ms have been captured.
            delay = (window_start + FRAME_NS - clock.get_time()) / NS_PER_S
            if delay > 0:
                await asyncio.sleep(delay)
            await self.push_audio_frame(
                InputAudioRawFrame(audio=chunk.tobytes(), sample_rate=mic.rate, num_channels=1)
            )
            k += 1


class CaptureOutputTransport(BaseOutputTransport):
    """A real-time loudspeaker that records each turn and stamps when the agent's talk begins
    and when it was interrupted."""

    def __init__(self, params: TransportParams, observer: TimingObserver, **kwargs) -> None:
        super().__init__(params, **kwargs)
        self._observer = observer
        self._playout = Playout()
        self.audible = Audible()
        self.tape = Tape(params.audio_out_sample_rate or 16_000)
        """What played in the turn, each chunk with when it began (``begin_turn`` starts it;
        ``Tape.take`` reads it)."""

    def begin_turn(self) -> None:
        """Start a new recording."""
        self.tape = Tape(self.tape.rate)

    async def start(self, frame: StartFrame) -> None:
        await super().start(frame)
        await self.set_transport_ready(frame)

    async def process_frame(self, frame, direction: FrameDirection) -> None:
        if isinstance(frame, InterruptionFrame):
            self._observer.record(EventKind.AUDIO_CUT, self.get_clock().get_time())
        await super().process_frame(frame, direction)

    async def write_audio_frame(self, frame: OutputAudioRawFrame) -> bool:
        now = self.get_clock().get_time()
        pcm = np.frombuffer(frame.audio, dtype=np.int16)
        play_start = await self._playout.play(now, pcm.size, frame.sample_rate)
        onset = self.audible.add(play_start, pcm, frame.sample_rate)
        if onset is not None:
            self._observer.record(EventKind.AUDIO_OUT, onset)
        self.tape.add(play_start, pcm, frame.sample_rate)
        return True


class ReplayTransport(BaseTransport):
    """The pair of replay transports for one pipeline."""

    def __init__(self, params: TransportParams, observer: TimingObserver) -> None:
        super().__init__()
        self._input = ReplayInputTransport(params, name="replay-input")
        self._output = CaptureOutputTransport(params, observer, name="replay-output")

    def input(self) -> ReplayInputTransport:
        return self._input

    def output(self) -> CaptureOutputTransport:
        return self._output
