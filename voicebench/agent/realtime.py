"""A caller's real-time microphone and loudspeaker, shared by every transport that plays one
(the in-process replay, the remote-agent client, ``voicebench serve``).

``Microphone`` lays queued utterances out on a stream of 20 ms frames, silence between them.
Frame k covers ``[origin + k * 20 ms, origin + (k + 1) * 20 ms)`` and exists once its 20 ms
have been recorded; sample i of an utterance whose first frame is window w happens at
``w + i / rate``, which is how the true end of the user's speech is placed on the clock.

``Playout`` is a loudspeaker with a one-chunk device buffer: a chunk starts playing when it
arrives or when the previous one has finished, whichever is later.

``Audible`` is what a loudspeaker has played, as spans of audible audio on the clock. The
agent's *talk* is audible audio with no silence of ``TALK_GAP_NS`` or more inside it: a reply
begins (its onset, which times first audio) with the first audible sample after such a
silence and ends (its stop, which an interruption measures) with the last audible sample
before one. A sample is audible above ``SPEECH_THRESHOLD``, the fixtures' own rule.

``Tape`` is what a loudspeaker played in a turn, each chunk with the moment it began to play,
so the reply can be laid on the call's timeline (``voicebench.recordings.calls``).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

import numpy as np

from voicebench.fixtures.audio import SPEECH_THRESHOLD, resample, to_int16

FIXTURE_RATE = 16_000
"""The rate of the fixtures' speech, and of the audio a turn keeps."""
FRAME_MS = 20
NS_PER_S = 1_000_000_000
FRAME_NS = FRAME_MS * 1_000_000
TALK_GAP_NS = 500_000_000
"""Silence that ends the agent's talk: longer than a pause between its sentences, shorter
than any caller's turn plus the agent's wait before answering it."""
_JOIN_NS = 100_000_000
"""Spans closer than this are kept as one (between words), which keeps the record small."""


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


class Audible:
    """The audible spans a loudspeaker played, and the onsets of the agent's talk."""

    def __init__(self) -> None:
        self.spans: list[tuple[int, int]] = []
        """``(first audible sample, one past the last)`` in ns, in order, joined across gaps
        shorter than ``_JOIN_NS``."""
        self._threshold = SPEECH_THRESHOLD * 32768.0

    def add(self, play_start_ns: int, pcm: np.ndarray, rate: int) -> int | None:
        """Note a chunk that started playing at ``play_start_ns``. Returns the time of its first
        audible sample when that begins the agent's talk (after ``TALK_GAP_NS`` of silence, or
        the first ever), else None."""
        above = np.flatnonzero(np.abs(pcm.astype(np.int32)) > self._threshold)
        if above.size == 0:
            return None
        first = play_start_ns + int(above[0]) * NS_PER_S // rate
        last = play_start_ns + (int(above[-1]) + 1) * NS_PER_S // rate
        onset = not self.spans or first - self.spans[-1][1] >= TALK_GAP_NS
        if self.spans and first - self.spans[-1][1] < _JOIN_NS:
            self.spans[-1] = (self.spans[-1][0], max(last, self.spans[-1][1]))
        else:
            self.spans.append((first, last))
        return first if onset else None

    def since(self, ns: int) -> tuple[tuple[int, int], ...]:
        """Spans from ``ns`` on, with the whole of any talk under way at ``ns`` (one that had
        fallen silent less than ``TALK_GAP_NS`` before it included)."""
        i = len(self.spans)
        while i > 0 and self.spans[i - 1][1] > ns - TALK_GAP_NS:
            i -= 1
        while 0 < i < len(self.spans) and self.spans[i][0] - self.spans[i - 1][1] < TALK_GAP_NS:
            i -= 1
        return tuple(self.spans[i:])

    def cut(self, ns: int) -> None:
        """Nothing plays from ``ns`` on: the queued audio was dropped (a ``clear``)."""
        self.spans = [(s, min(e, ns)) for s, e in self.spans if s < ns]

    def forget_before(self, ns: int) -> None:
        """Let go of spans from talks that ended before ``ns``."""
        kept = self.since(ns)
        if len(kept) < len(self.spans):
            self.spans = list(kept)


Placed = tuple[tuple[int, int], ...]
"""Where a turn's reply audio lies on the clock: ``(sample of the audio, ns it began to play)``
for each stretch of it that played without a break."""


class Tape:
    """The chunks a loudspeaker played in one turn, each with when it began to play."""

    def __init__(self, rate: int) -> None:
        self.rate = rate
        self.chunks: list[tuple[int, np.ndarray]] = []

    def add(self, start_ns: int, pcm: np.ndarray, rate: int | None = None) -> None:
        """Note a chunk that began to play at ``start_ns``. A chunk at another ``rate`` is
        resampled to the tape's, unless it is the first: the tape then takes its rate."""
        if rate is not None and rate != self.rate:
            if self.chunks:
                pcm = at_rate(pcm, self.rate, rate)
            else:
                self.rate = rate
        self.chunks.append((start_ns, pcm))

    def end_ns(self, start_ns: int, pcm: np.ndarray) -> int:
        return start_ns + pcm.size * NS_PER_S // self.rate

    def cut(self, ns: int) -> None:
        """Nothing played from ``ns`` on (a ``clear`` dropped it)."""
        kept = []
        for start, pcm in self.chunks:
            if start >= ns:
                break
            kept.append((start, pcm[: (ns - start) * self.rate // NS_PER_S]))
        self.chunks = kept

    @property
    def samples(self) -> int:
        return sum(pcm.size for _, pcm in self.chunks)

    def take(self, since_ns: int = 0, rate: int = FIXTURE_RATE) -> tuple[np.ndarray, Placed]:
        """The audio played from the chunk playing at ``since_ns`` on, at ``rate``, and where
        each unbroken stretch of it began to play."""
        chunks = [(s, pcm) for s, pcm in self.chunks if self.end_ns(s, pcm) > since_ns]
        placed: list[tuple[int, int]] = []
        offset, free = 0, None
        for start, pcm in chunks:
            if start != free:
                placed.append((offset * rate // self.rate, start))
            offset += pcm.size
            free = self.end_ns(start, pcm)
        audio = np.concatenate([pcm for _, pcm in chunks]) if chunks else np.zeros(0, np.int16)
        return at_rate(audio.astype(np.int16), rate, self.rate), tuple(placed)

    def before(self, ns: int, rate: int = FIXTURE_RATE) -> tuple[tuple[int, np.ndarray], ...]:
        """What finished playing by ``ns`` (the talk an utterance was said over), as
        ``(ns it began to play, audio at rate)``, one per chunk."""
        return tuple(
            (s, at_rate(pcm.astype(np.int16), rate, self.rate))
            for s, pcm in self.chunks
            if self.end_ns(s, pcm) <= ns
        )


_ON_THE_LINE: dict[tuple[int, int], tuple[np.ndarray, np.ndarray]] = {}
"""Fixture utterances already resampled to a line's rate, by the fixture array."""


def at_rate(pcm: np.ndarray, rate: int, source_rate: int = FIXTURE_RATE) -> np.ndarray:
    """16-bit ``pcm`` at ``source_rate`` resampled to ``rate`` (whole, so no delay is added); a
    shared read-only fixture is resampled once for every call that says it."""
    if rate == source_rate:
        return pcm
    cacheable = source_rate == FIXTURE_RATE and not pcm.flags.writeable
    key = (id(pcm), rate)
    kept = _ON_THE_LINE.get(key)
    if cacheable and kept is not None and kept[0] is pcm:
        return kept[1]
    out = to_int16(resample(pcm.astype(np.float32) / 32768.0, source_rate, rate))
    if cacheable:
        if len(_ON_THE_LINE) >= 256:
            _ON_THE_LINE.pop(next(iter(_ON_THE_LINE)))
        _ON_THE_LINE[key] = (pcm, out)
    return out
