"""The caller's microphone and loudspeaker as a LiveKit ``AgentSession``'s audio input and
output: the session is given these in place of a room's tracks.

``LiveKitMicrophone`` delivers one 20 ms frame per 20 ms, each once its 20 ms have been
recorded (``realtime.Microphone``), so the session's VAD hears a call in real time, silence
between the utterances.

``LiveKitSpeaker`` plays what the session sends it as a device does: it is handed the next
chunk when the one before starts playing (``realtime.Playout``), so a chunk starts when it
arrives or when the previous one ends. It stamps the first audible sample of each talk the
agent begins (``realtime.Audible``) and keeps each turn's audio on the clock (``realtime.Tape``).
Told to stop (``clear_buffer``: the session was interrupted), it drops what is queued and the
chunk already playing plays out. It reports to the session as a room's output does: playback
started when a segment's first chunk starts to play, and finished, once per ``flush``, when its
last chunk has played or the segment was cleared.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Callable

import numpy as np
from livekit import rtc
from livekit.agents.voice import io

from voicebench.agent.realtime import (
    FIXTURE_RATE,
    FRAME_NS,
    NS_PER_S,
    Audible,
    Microphone,
    Playout,
    Tape,
)
from voicebench.timing import EventKind, TimingObserver


class LiveKitMicrophone(io.AudioInput):
    """A real-time microphone that speaks queued utterances and is silent otherwise."""

    def __init__(self, clock: Callable[[], int], rate: int = FIXTURE_RATE) -> None:
        super().__init__(label="voicebench-microphone")
        self.mic = Microphone(rate)
        self._clock = clock
        self._origin: int | None = None
        self._k = 0

    async def __anext__(self) -> rtc.AudioFrame:
        if self._origin is None:
            self._origin = self._clock()
        window = self._origin + self._k * FRAME_NS
        chunk = self.mic.frame(window)
        self._k += 1
        delay = window + FRAME_NS - self._clock()  # a frame exists once it has been recorded
        if delay > 0:
            await asyncio.sleep(delay / NS_PER_S)
        return rtc.AudioFrame(chunk.tobytes(), self.mic.rate, 1, chunk.size)


_END = None
"""A segment's end (``flush``) in the speaker's queue."""


class LiveKitSpeaker(io.AudioOutput):
    """A real-time loudspeaker that records each turn and stamps when the agent's talk begins,
    when it was cut off and when each of its segments ended."""

    def __init__(self, clock: Callable[[], int], observer: TimingObserver) -> None:
        super().__init__(
            label="voicebench-loudspeaker",
            capabilities=io.AudioOutputCapabilities(pause=False),
            sample_rate=None,
        )
        self._clock, self._observer = clock, observer
        self._queue: deque[tuple[int, np.ndarray, int] | None] = deque()
        self._arrived = asyncio.Event()
        self._playout = Playout()
        self._playing_until = 0
        """When the chunk now on the device ends."""
        self._generation = 0
        """Counts ``clear_buffer`` calls: a chunk queued before one is never played."""
        self._segment_playing = False
        """The segment's first chunk has started to play."""
        self._segment_s = 0.0
        self._segment_cleared = False
        self._open = False
        """Frames were captured since the last ``flush``."""
        self.audible = Audible()
        self.tape = Tape(FIXTURE_RATE)
        self._task: asyncio.Task | None = None

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._play())

    async def aclose(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None

    @property
    def idle(self) -> bool:
        """Nothing is playing or waiting to play."""
        return not (self._queue or self._open or self._segment_playing)

    def begin_turn(self) -> None:
        """Start a new recording."""
        self.tape = Tape(self.tape.rate)

    async def capture_frame(self, frame: rtc.AudioFrame) -> None:
        await super().capture_frame(frame)
        self._open = True
        pcm = np.frombuffer(frame.data, dtype=np.int16)
        if frame.num_channels > 1:
            pcm = pcm.reshape(-1, frame.num_channels)[:, 0].copy()
        self._queue.append((self._generation, pcm, frame.sample_rate))
        self._arrived.set()

    def flush(self) -> None:
        super().flush()
        self._open = False
        self._queue.append(_END)
        self._arrived.set()

    def clear_buffer(self) -> None:
        self._generation += 1
        self._observer.record(EventKind.AUDIO_CUT, self._clock())
        pending = any(item is _END for item in self._queue)
        if self._open or pending or self._segment_playing:
            self._segment_cleared = True
        self._queue = deque(item for item in self._queue if item is _END)
        self._arrived.set()

    async def _next(self) -> tuple[int, np.ndarray, int] | None:
        while not self._queue:
            self._arrived.clear()
            await self._arrived.wait()
        return self._queue.popleft()

    async def _play(self) -> None:
        while True:
            item = await self._next()
            if item is _END:
                await self._end_segment()
                continue
            generation, pcm, rate = item
            if generation != self._generation:
                continue
            now = self._clock()
            start = self._playout.place(now, pcm.size, rate)
            if start > now:
                await asyncio.sleep((start - now) / NS_PER_S)
            if generation != self._generation:
                self._playout.next_free_ns = self._playing_until  # it never reached the device
                continue
            self._playing_until = self._playout.next_free_ns
            if not self._segment_playing:
                self._segment_playing = True
                self.on_playback_started(created_at=time.time())
            self._segment_s += pcm.size / rate
            onset = self.audible.add(start, pcm, rate)
            if onset is not None:
                self._observer.record(EventKind.AUDIO_OUT, onset)
            self.tape.add(start, pcm, rate)

    async def _end_segment(self) -> None:
        """The segment's last chunk has been handed over: report once it has played out (the
        chunk on the device plays out after a clear too)."""
        wait = self._playing_until - self._clock()
        if wait > 0:
            await asyncio.sleep(wait / NS_PER_S)
        cleared, played = self._segment_cleared, self._segment_s
        self._segment_playing, self._segment_s, self._segment_cleared = False, 0.0, False
        self._observer.record(EventKind.BOT_STOPPED, min(self._playing_until, self._clock()))
        self.on_playback_finished(playback_position=played, interrupted=cleared)
