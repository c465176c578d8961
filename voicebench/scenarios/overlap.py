"""The scenarios where the caller and the agent overlap: a barge-in, a backchannel, a pause
mid-sentence. How the seeker's audio is made for them, and what is read off the agent's
audible spans afterwards.

The agent's *talk* is its audible audio with no silence of ``TALK_GAP_NS`` (0.5 s) inside
(``replay.realtime.Audible``, which records the spans). The talk under way when the caller
begins is the one the caller interrupts, and its **stop** is its last audible sample:

- an in-process agent *yielded* when pipecat's interruption reached its loudspeaker during
  that talk (``audio_cut``, observed on the frames) within ``YIELD_WINDOW_NS`` of the caller's
  first audible sample;
- a remote agent is a black box: it yielded when its talk stopped within ``YIELD_WINDOW_NS``.
  (A reply that ends on its own that soon reads as a yield; the in-process reading has no
  such blind spot.)
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from voicebench.fixtures.audio import PEAK_FRACTION, SPEECH_THRESHOLD, speech_bounds

NS_PER_S = 1_000_000_000
TALK_GAP_NS = 500_000_000
"""The silence that ends the agent's talk (the same rule as ``replay.realtime``)."""
YIELD_WINDOW_NS = 2 * NS_PER_S
"""An agent that stops talking within this long of the caller's first sound yielded."""
_FRAME = 160
"""10 ms at 16 kHz: the step at which a place for a pause is looked for."""

Spans = Sequence[tuple[int, int]]


def talks(spans: Spans) -> list[tuple[int, int]]:
    """The agent's talks: spans joined across silences shorter than ``TALK_GAP_NS``."""
    out: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if out and start - out[-1][1] < TALK_GAP_NS:
            out[-1] = (out[-1][0], max(end, out[-1][1]))
        else:
            out.append((start, end))
    return out


def talk_at(spans: Spans, ns: int) -> tuple[int, int] | None:
    """The talk under way at ``ns`` (begun, and not yet followed by ``TALK_GAP_NS`` of
    silence), or None when the agent was quiet."""
    for start, end in talks(spans):
        if start <= ns < end + TALK_GAP_NS:
            return start, end
    return None


def overlap_s(spans: Spans, start_ns: int, end_ns: int) -> float:
    """Seconds of the agent's audible audio inside ``[start_ns, end_ns)``."""
    total = sum(max(0, min(e, end_ns) - max(s, start_ns)) for s, e in spans)
    return total / NS_PER_S


def _yielded(talk: tuple[int, int], at_ns: int, cuts: Sequence[int] | None) -> bool:
    stop = talk[1]
    if cuts is None:
        return stop - at_ns <= YIELD_WINDOW_NS
    return any(at_ns <= c <= min(at_ns + YIELD_WINDOW_NS, stop + TALK_GAP_NS) for c in cuts)


def barge_in_outcome(
    spans: Spans, cuts: Sequence[int] | None, speech_start_ns: int, speech_end_ns: int
) -> dict:
    """What a barge-in did: the seeker spoke over the agent from its first audible sample
    ``speech_start_ns`` to ``speech_end_ns``. ``cuts``: when interruptions reached the
    loudspeaker (in-process), None for a black box."""
    talk = talk_at(spans, speech_start_ns)
    if talk is None:
        return {"agent_speaking": False}
    return {
        "agent_speaking": True,
        "at_ms": round((speech_start_ns - talk[0]) / 1e6, 2),
        "stop_ms": round((talk[1] - speech_start_ns) / 1e6, 2),
        "yielded": _yielded(talk, speech_start_ns, cuts),
        "talk_over_s": round(overlap_s(spans, speech_start_ns, speech_end_ns), 3),
    }


def backchannel_outcome(
    spans: Spans, cuts: Sequence[int] | None, word_start_ns: int, ended_ns: int
) -> dict:
    """What a backchannel did: the agent was talking when the word's first audible sample was
    said at ``word_start_ns``. A *false yield* is the agent stopping for it; the seconds lost
    run from its stop to the next time it spoke (or to ``ended_ns``, the end of the turn)."""
    talk = talk_at(spans, word_start_ns)
    if talk is None:
        return {"agent_speaking": False}
    yielded = _yielded(talk, word_start_ns, cuts)
    out: dict = {
        "agent_speaking": True,
        "at_ms": round((word_start_ns - talk[0]) / 1e6, 2),
        "false_yield": yielded,
    }
    if yielded:
        later = [s for s, _ in talks(spans) if s > talk[1]]
        out["lost_s"] = round(((later[0] if later else ended_ns) - talk[1]) / NS_PER_S, 3)
    return out


def pause_outcome(spans: Spans, speech_start_ns: int, speech_end_ns: int) -> dict:
    """Whether the agent spoke before the true end of the seeker's speech (it took the pause
    for the end of the turn), and how early its first talk began."""
    early = [s for s, _ in talks(spans) if speech_start_ns <= s < speech_end_ns]
    if not early:
        return {"premature": False}
    return {"premature": True, "early_ms": round((speech_end_ns - early[0]) / 1e6, 2)}


SENTENCE_GAP_MS = 150
"""A silence this long inside an utterance is taken for a gap between sentences."""


def sentence_gaps(pcm: np.ndarray, margin: int) -> np.ndarray:
    """Per sample, whether it lies within ``margin`` samples of a silence of
    ``SENTENCE_GAP_MS`` or more (every sample at most the speech threshold of
    ``speech_bounds``)."""
    mag = np.abs(pcm.astype(np.int32))
    threshold = max(SPEECH_THRESHOLD * 32768.0, PEAK_FRACTION * float(mag.max()))
    loud = np.flatnonzero(mag > threshold)
    edges = np.concatenate([[-1], loud, [pcm.size]])
    near = np.zeros(pcm.size + 1, np.int32)
    for start, length in zip(edges[:-1] + 1, np.diff(edges) - 1, strict=True):
        if length >= SENTENCE_GAP_MS * 16:  # samples at 16 kHz
            near[max(0, start - margin)] += 1
            near[min(pcm.size, start + length + margin)] -= 1
    return np.cumsum(near[:-1]) > 0


def insert_pause(pcm: np.ndarray, pause_ms: float, rate: int = 16_000) -> tuple[np.ndarray, int]:
    """The utterance with ``pause_ms`` of silence added mid-sentence: at the quietest 30 ms in
    its middle third of speech (a gap between words), away from any silence of
    ``SENTENCE_GAP_MS`` or more (a gap between sentences, which a turn rule must wait out
    anyway); anywhere in the middle third when there is no such place. Returns the audio and
    where the pause begins (samples)."""
    bounds = speech_bounds(pcm)
    if bounds is None:
        return pcm, 0
    first, last = bounds
    lo, hi = first + (last - first) // 3, first + 2 * (last - first) // 3
    window = 3 * _FRAME
    energy = np.convolve(
        pcm.astype(np.float64) ** 2, np.ones(window) / window, mode="valid"
    )  # energy[i] covers [i, i + window)
    candidates = range(lo, max(lo + 1, hi - window), _FRAME)
    gaps = sentence_gaps(pcm, margin=10 * _FRAME)
    between_words = [i for i in candidates if not gaps[i : i + window].any()]
    at = (
        min(
            between_words or candidates,
            key=lambda i: energy[i] if i < energy.size else np.inf,
        )
        + window // 2
    )
    silence = np.zeros(round(pause_ms * rate / 1000), dtype=pcm.dtype)
    return np.concatenate([pcm[:at], silence, pcm[at:]]), at
