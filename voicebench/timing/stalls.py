"""Stalls: where a reply's playout ran dry after its first audio, though the reply was not over.

The rule, in one place. The caller's loudspeaker plays each chunk of the agent's audio when it
arrives, or once the chunk before it has played (``agent.realtime.Playout``); the tape keeps
where each unbroken stretch began to play (``agent.realtime.Placed``). A break between two
stretches is a moment the playout had nothing to play. It is part of a stall when it lies
between the reply's first audible sample and its last, and the caller's jitter buffer cannot
bridge it. The buffer is a phone's: it holds ``JITTER_ALLOWANCE_MS`` of audio, each break
spends some of it, and a break longer than what is left runs it dry; the caller then hears
nothing until the audio is back and the buffer has filled again. So a hold of N ms is heard as
a stall of N ms (when the buffer was full), chunks a few milliseconds late are heard as
nothing, and a reply that arrives at 0.8x real time stalls, in 25 ms stalls, for a quarter of
its length (less at most what the buffer bridges after the last).

Silence the agent sent as audio is not a stall: it is in the samples (a pause it meant), and
the playout had it to play. A recording, or a WebRTC track that sends silence whenever the
agent has nothing to say, cannot tell the two apart; there, silences inside the agent's talk
are reported as gaps (``voicebench recordings analyze``), never as stalls.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np

from voicebench._model import FrozenModel
from voicebench.fixtures.audio import SPEECH_THRESHOLD

JITTER_ALLOWANCE_MS = 20.0
"""The audio the caller's jitter buffer holds: one 20 ms frame."""
NS_PER_MS = 1_000_000


class Stall(FrozenModel):
    """One moment the playout had nothing to play inside a reply."""

    at_ms: float
    """When the playout ran dry, in ms after the reply's first audio began to play."""
    audio_ms: float
    """Where it falls in the reply's audio as kept (its WAV, which closes breaks up), in ms
    from the start of that audio."""
    ms: float
    """How long the caller heard nothing: from when the jitter buffer ran dry to when it had
    filled again."""


class Playback(FrozenModel):
    """How a reply played after its first audio: its stalls and how long it lasted."""

    stalls: tuple[Stall, ...] = ()
    """Each stall, in order."""
    audio_ms: float
    """The reply's audio from its first audible sample to the end of its last, in ms (its
    meant pauses included, its stalls not)."""

    @property
    def stall_count(self) -> int:
        return len(self.stalls)

    @property
    def stalled_ms(self) -> float:
        """All the stalls together, in ms."""
        return sum(s.ms for s in self.stalls)

    @property
    def longest_stall_ms(self) -> float:
        """The longest stall in ms; 0 without one."""
        return max((s.ms for s in self.stalls), default=0.0)

    @property
    def stalled_share(self) -> float | None:
        """The share of the reply's playing time (its audio and its stalls) spent stalled;
        None for a reply with no audible audio."""
        total = self.audio_ms + self.stalled_ms
        return self.stalled_ms / total if total > 0 else None


def playback_of(
    placed: Sequence[tuple[int, int]],
    audio: np.ndarray,
    rate: int,
    *,
    start_ns: int | None = None,
    allowance_ms: float = JITTER_ALLOWANCE_MS,
) -> Playback | None:
    """The stalls of a reply whose ``audio`` (16-bit PCM at ``rate``) played as ``placed``
    says: ``(sample of the audio, ns it began to play)`` for each unbroken stretch, in order.
    With ``start_ns`` (the reply's first audio), what played before it is not the reply's (the
    end of the agent's talk before, which the caller spoke over). None when nothing audible
    played."""
    if not placed:
        return None
    skip = 0 if start_ns is None else sample_at(placed, start_ns, rate)
    loud = skip + np.flatnonzero(np.abs(audio[skip:].astype(np.int32)) > SPEECH_THRESHOLD * 32768.0)
    if loud.size == 0:
        return None
    first, last = int(loud[0]), int(loud[-1]) + 1
    first_ns = _clock_of(placed, first, rate)
    slack_ns = allowance_ms * NS_PER_MS
    stalls: list[Stall] = []
    for (sample, start_ns), (next_sample, next_ns) in itertools.pairwise(placed):
        end_ns = start_ns + (next_sample - sample) * 1_000_000_000 / rate
        gap_ns = next_ns - end_ns
        if gap_ns <= 0 or not first < next_sample < last:
            continue  # no break, or one before the reply's first audio or after its end
        if gap_ns <= slack_ns:
            slack_ns -= gap_ns  # bridged by what the buffer held
            continue
        heard_ns = gap_ns - slack_ns + allowance_ms * NS_PER_MS
        slack_ns = allowance_ms * NS_PER_MS
        if heard_ns > 0:
            stalls.append(
                Stall(
                    at_ms=round((end_ns - first_ns) / NS_PER_MS, 3),
                    audio_ms=round(next_sample * 1000 / rate, 3),
                    ms=round(heard_ns / NS_PER_MS, 3),
                )
            )
    return Playback(stalls=tuple(stalls), audio_ms=round((last - first) * 1000 / rate, 3))


def sample_at(placed: Sequence[tuple[int, int]], ns: int, rate: int) -> int:
    """The sample of the audio playing at ``ns`` (the next one to play, in a break)."""
    for (sample, at_ns), following in itertools.zip_longest(placed, placed[1:]):
        if ns < at_ns:
            return sample  # before this stretch began: in the break before it
        here = sample + (ns - at_ns) * rate // 1_000_000_000
        if following is None or here < following[0]:
            return int(here)
    return 0


def _clock_of(placed: Sequence[tuple[int, int]], sample: int, rate: int) -> float:
    """When ``sample`` of the audio began to play, in ns."""
    at, ns = placed[0]
    for s, n in placed:
        if s > sample:
            break
        at, ns = s, n
    return ns + (sample - at) * 1_000_000_000 / rate
