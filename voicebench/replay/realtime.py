"""A caller's real-time microphone and loudspeaker, shared by every transport that plays one
(the in-process replay, the remote-agent client, ``voicebench serve``).

``Microphone`` lays queued utterances out on a stream of 20 ms frames, silence between them.
Frame k covers ``[origin + k * 20 ms, origin + (k + 1) * 20 ms)`` and exists once its 20 ms
have been recorded; sample i of an utterance whose first frame is window w happens at
``w + i / rate``, which is how the true end of the user's speech is placed on the clock.

``Playout`` is a loudspeaker with a one-chunk device buffer: a chunk starts playing when it
arrives or when the previous one has finished, whichever is later.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

import numpy as np

FRAME_MS = 20
NS_PER_S = 1_000_000_000
FRAME_NS = FRAME_MS * 1_000_000


@dataclass
class Utterance:
    """An utterance queued for the microphone; ``started`` resolves to its sample 0 time (ns),
    ``finished`` to the end of its last frame."""

    pcm: np.ndarray
    started: asyncio.Future[int]
    finished: asyncio.Future[int] = field(
        default_factory=lambda: asyncio.get_running_loop().create_future()
    )


class Microphone:
    def __init__(self, rate: int) -> None:
        self.rate = rate
        self.samples = rate * FRAME_MS // 1000
        self._silence = np.zeros(self.samples, dtype=np.int16)
        self._queue: asyncio.Queue[Utterance] = asyncio.Queue()
        self._current: Utterance | None = None
        self._pos = 0

    def say(self, pcm: np.ndarray) -> Utterance:
        """Queue 16-bit PCM to be spoken from the next frame on."""
        utt = Utterance(
            pcm=pcm.astype(np.int16), started=asyncio.get_running_loop().create_future()
        )
        self._queue.put_nowait(utt)
        return utt

    def frame(self, window_start_ns: int) -> np.ndarray:
        """The 20 ms of audio recorded in the window starting at ``window_start_ns``."""
        if self._current is None and not self._queue.empty():
            self._current, self._pos = self._queue.get_nowait(), 0
            self._current.started.set_result(window_start_ns)
        if self._current is None:
            return self._silence
        n = self.samples
        chunk = self._current.pcm[self._pos : self._pos + n]
        self._pos += n
        if chunk.size < n:
            chunk = np.concatenate([chunk, self._silence[: n - chunk.size]])
        if self._pos >= self._current.pcm.size:
            self._current.finished.set_result(window_start_ns + FRAME_NS)
            self._current = None
        return chunk


class Playout:
    def __init__(self) -> None:
        self.next_free_ns = 0

    def place(self, now_ns: int, samples: int, rate: int) -> int:
        """When a chunk of ``samples`` arriving at ``now_ns`` starts playing."""
        start = max(now_ns, self.next_free_ns)
        self.next_free_ns = start + samples * NS_PER_S // rate
        return start

    async def play(self, now_ns: int, samples: int, rate: int) -> int:
        """``place`` the chunk, then wait until it starts playing; returns that moment."""
        start = self.place(now_ns, samples, rate)
        if start > now_ns:
            await asyncio.sleep((start - now_ns) / NS_PER_S)
        return start
