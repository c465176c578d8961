"""Transports that stand in for a caller's microphone and loudspeaker.

``ReplayInputTransport`` is a live microphone fed from fixture WAVs: it delivers one 20 ms
frame per 20 ms, each once its 20 ms have "been recorded", against the run clock. Between
utterances it delivers silence, so the VAD hears what it would hear on a call. A sample ``i``
of an utterance happens at ``window_start_ns + i / rate``, which is how the true end of the
user's speech is placed on the run clock.

``CaptureOutputTransport`` is a loudspeaker: it plays each chunk in real time (the next write
waits until the previous chunk has started playing, a one-chunk device buffer), keeps what
was played for the current turn, and stamps the moment the first audible sample is played.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

import numpy as np
from pipecat.frames.frames import InputAudioRawFrame, OutputAudioRawFrame, StartFrame
from pipecat.transports.base_input import BaseInputTransport
from pipecat.transports.base_output import BaseOutputTransport
from pipecat.transports.base_transport import BaseTransport, TransportParams

from voicebench.fixtures.audio import first_speech_sample
from voicebench.timing.events import EventKind
from voicebench.timing.observer import TimingObserver

FRAME_MS = 20
NS_PER_S = 1_000_000_000


@dataclass
class Utterance:
    """An utterance queued for the microphone; ``started`` resolves to its sample 0 time (ns)."""

    pcm: np.ndarray
    started: asyncio.Future[int]
    finished: asyncio.Future[int] = field(default_factory=lambda: asyncio.get_running_loop().create_future())


class ReplayInputTransport(BaseInputTransport):
    """A real-time microphone that speaks queued utterances and is silent otherwise."""

    def __init__(self, params: TransportParams, **kwargs) -> None:
        super().__init__(params, **kwargs)
        self._queue: asyncio.Queue[Utterance] = asyncio.Queue()
        self._pace_task: asyncio.Task | None = None

    def say(self, pcm: np.ndarray) -> Utterance:
        """Queue 16-bit PCM (at the input sample rate) to be spoken from the next frame on."""
        loop = asyncio.get_running_loop()
        utt = Utterance(pcm=pcm.astype(np.int16), started=loop.create_future())
        self._queue.put_nowait(utt)
        return utt

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
        rate = self.sample_rate
        n = rate * FRAME_MS // 1000
        frame_ns = FRAME_MS * 1_000_000
        silence = np.zeros(n, dtype=np.int16)
        origin = clock.get_time()
        k = 0
        current: Utterance | None = None
        pos = 0
        while True:
            window_start = origin + k * frame_ns
            if current is None and not self._queue.empty():
                current, pos = self._queue.get_nowait(), 0
                current.started.set_result(window_start)
            if current is not None:
                chunk = current.pcm[pos : pos + n]
                pos += n
                if chunk.size < n:
                    chunk = np.concatenate([chunk, silence[: n - chunk.size]])
                if pos >= current.pcm.size:
                    current.finished.set_result(window_start + frame_ns)
                    current = None
            else:
                chunk = silence
            # A frame exists once its 20 ms have been captured.
            delay = (window_start + frame_ns - clock.get_time()) / NS_PER_S
            if delay > 0:
                await asyncio.sleep(delay)
            await self.push_audio_frame(
                InputAudioRawFrame(audio=chunk.tobytes(), sample_rate=rate, num_channels=1)
            )
            k += 1


class CaptureOutputTransport(BaseOutputTransport):
    """A real-time loudspeaker that records each turn and stamps its first audible sample."""

    def __init__(self, params: TransportParams, observer: TimingObserver, **kwargs) -> None:
        super().__init__(params, **kwargs)
        self._observer = observer
        self._next_free_ns = 0
        self._heard = False
        self._recording: list[bytes] = []

    def begin_turn(self) -> None:
        """Start a new recording; the next audible sample is this turn's first audio."""
        self._heard = False
        self._recording = []

    def take_recording(self) -> np.ndarray:
        """Everything played since ``begin_turn``."""
        return np.frombuffer(b"".join(self._recording), dtype=np.int16).copy()

    async def start(self, frame: StartFrame) -> None:
        await super().start(frame)
        await self.set_transport_ready(frame)

    async def write_audio_frame(self, frame: OutputAudioRawFrame) -> bool:
        clock = self.get_clock()
        now = clock.get_time()
        play_start = max(now, self._next_free_ns)
        if play_start > now:
            await asyncio.sleep((play_start - now) / NS_PER_S)
        pcm = np.frombuffer(frame.audio, dtype=np.int16)
        rate = frame.sample_rate
        if not self._heard:
            idx = first_speech_sample(pcm)
            if idx is not None:
                self._heard = True
                self._observer.record(EventKind.AUDIO_OUT, play_start + idx * NS_PER_S // rate)
        self._recording.append(frame.audio)
        self._next_free_ns = play_start + pcm.size * NS_PER_S // rate
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
