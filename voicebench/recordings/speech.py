"""Where one channel of a call recording holds speech, and where it falls silent inside a talk.

Speech. A channel (16 kHz) goes through Silero VAD (the model the pipeline uses, shipped in
pipecat) in frames of 32 ms (512 samples): a frame is speech when the model's confidence is at
least ``THRESHOLD``. Runs of speech frames are spans; spans closer than ``JOIN_S`` are one span (a
breath between words) and spans shorter than ``MIN_SPEECH_S`` are dropped (a click, a cough). The
model's confidence outlasts the speech by a frame or more (longer in noise), so each span's edges
are then moved on the signal's energy, in 10 ms windows, and, on a clean line (a noise floor well
below the speech threshold), to the first and last sample above it, the rule voicebench's own
fixtures mark their end of speech by (``speech_spans``). In noise, times are on the 10 ms grid.
Moved edges can make spans meet (a span carried over a short pause onto the next, which reaches
back over it): spans that overlap or touch are then one span, so no stretch of a channel is
read, or transcribed, twice, and its edges are moved to the sample again as a whole.

Silences inside a talk. The agent's talk is its spans with no silence of ``TALK_GAP_S`` inside.
On a clean line the sample rule carries a span over any pause shorter than that, so the silences
inside a talk are read apart from its spans (``talk_silences``), by the same rules as its edges:
on a clean line, a run of samples none of them audible (above the speech threshold, the agent's
rule), to the sample; in noise, a run of 10 ms windows that are quiet (``_refined``'s rule), to
10 ms.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from voicebench.agent.realtime import TALK_GAP_NS
from voicebench.fixtures.audio import PEAK_FRACTION, SPEECH_THRESHOLD

RATE = 16_000
FRAME = 512
FRAME_S = FRAME / RATE
"""The VAD's frame: every time read off a recording is on this grid (32 ms)."""
THRESHOLD = 0.5
JOIN_S = 0.25
MIN_SPEECH_S = 0.1
TALK_GAP_S = TALK_GAP_NS / 1e9
"""Silence that ends the agent's talk (``agent.realtime.TALK_GAP_NS``): a pause between its
sentences is shorter; a span's edges are carried over sound less than this beyond them."""


@dataclass(frozen=True)
class Span:
    start_s: float
    end_s: float


def speech_frames(pcm: np.ndarray) -> np.ndarray:
    """Per 32 ms frame of 16 kHz audio, whether Silero VAD hears speech in it."""
    from pipecat.audio.vad.silero import SileroVADAnalyzer

    vad = SileroVADAnalyzer()
    vad.set_sample_rate(RATE)
    frames = pcm.size // FRAME
    out = np.zeros(frames, dtype=bool)
    for k in range(frames):
        chunk = pcm[k * FRAME : (k + 1) * FRAME].astype(np.int16).tobytes()
        out[k] = vad.voice_confidence(chunk) >= THRESHOLD
    return out


def spans_of(frames: np.ndarray) -> list[Span]:
    """Runs of speech frames as spans, near ones joined and short ones dropped."""
    near: list[list[int]] = []
    for a, b in _runs(frames):
        if near and (a - near[-1][1]) * FRAME_S < JOIN_S:
            near[-1][1] = b
        else:
            near.append([a, b])
    return [
        Span(round(a * FRAME_S, 3), round(b * FRAME_S, 3))
        for a, b in near
        if (b - a) * FRAME_S >= MIN_SPEECH_S
    ]


WINDOW = 160
"""10 ms at 16 kHz: the grain of the energy refinement of a span's edges."""
REFINE_S = 0.2
NOISE_MARGIN = 1.5
"""A window is quiet within this factor of the channel's noise floor (its 10th percentile)."""


def _refined(span: Span, rms: np.ndarray, floor: float) -> Span:
    """The span's edges moved to where the sound is: the VAD's confidence lags the end of
    speech by a frame or more (longer in noise). The end moves back (at most ``REFINE_S``)
    past the 10 ms windows that are quiet: below a twentieth of the span's median level or
    within ``NOISE_MARGIN`` of the channel's noise floor, whichever is louder; the start
    moves back over windows that are not."""
    a, b = int(span.start_s * RATE) // WINDOW, int(span.end_s * RATE) // WINDOW
    inside = rms[a:b]
    if inside.size == 0:
        return span
    quiet = max(0.05 * float(np.median(inside)), NOISE_MARGIN * floor)
    reach = int(REFINE_S * RATE) // WINDOW
    end = b
    while end > a + 1 and b - end < reach and rms[end - 1] < quiet:
        end -= 1
    start = a
    while start > 0 and a - start < reach and rms[start - 1] >= quiet:
        start -= 1
    return Span(round(start * WINDOW / RATE, 3), round(end * WINDOW / RATE, 3))


def _to_samples(span: Span, pcm: np.ndarray, agent: bool) -> Span:
    """On a clean line, the span's edges moved to the samples, by the rule voicebench times its
    own calls by, within a window either side: on the caller's channel the fixtures' ends of
    speech (``fixtures.audio.speech_bounds``: the first and last sample above the speech
    threshold and a fiftieth of the span's peak); on the agent's, an audible sample (above the
    speech threshold: ``agent.realtime.Audible``). Then its edges are carried over any such
    sound less than ``TALK_GAP_S`` beyond them (a soft onset, or a word cut off mid-syllable,
    too short for the VAD's frames), as the harness reads a talk off the samples it plays."""
    a = max(0, round(span.start_s * RATE) - WINDOW)
    b = min(pcm.size, round(span.end_s * RATE) + WINDOW)
    mag = np.abs(pcm.astype(np.int32))
    level = SPEECH_THRESHOLD * 32768.0
    if not agent and b > a:
        level = max(level, PEAK_FRACTION * float(mag[a:b].max()))
    above = np.flatnonzero(mag[a:b] > level)
    if above.size == 0:
        return span
    start, end, reach = a + int(above[0]), a + int(above[-1]) + 1, int(TALK_GAP_S * RATE)
    while True:
        after = np.flatnonzero(mag[end : end + reach] > level)
        if after.size == 0:
            break
        end += int(after[-1]) + 1
    while start > 0:
        lo = max(0, start - reach)
        before = np.flatnonzero(mag[lo:start] > level)
        if before.size == 0:
            break
        start = lo + int(before[0])
    return Span(round(start / RATE, 4), round(end / RATE, 4))


def speech_spans(
    pcm: np.ndarray, *, agent: bool = False, frames: np.ndarray | None = None
) -> list[Span]:
    """Where a channel (16 kHz) holds speech: Silero's spans, their edges refined on the
    signal's energy (``_refined``), then to the sample where the line is clean (its noise
    floor well below the speech threshold: ``_to_samples``, by the caller's rule, or the
    agent's with ``agent``). ``frames``: the channel's ``speech_frames``, when already run."""
    spans = spans_of(speech_frames(pcm) if frames is None else frames)
    rms, floor, clean = _levels(pcm)
    refined = [_refined(s, rms, floor) for s in spans]
    if not clean:
        return _met(refined)
    placed = [_to_samples(s, pcm, agent) for s in refined]
    # a span made of several is placed again as a whole: the caller's rule sets its level by
    # the peak of the whole (its loudest part's), as the fixtures' rule does an utterance's
    return _met(
        [
            _to_samples(m, pcm, agent)
            if sum(m.start_s <= s.start_s < m.end_s for s in placed) > 1
            else m
            for m in _met(placed)
        ]
    )


def _met(spans: list[Span]) -> list[Span]:
    """Spans that overlap or touch as one (``joined`` with no gap), in order."""
    return joined(sorted(spans, key=lambda s: s.start_s), 0.0)


def joined(spans: list[Span], gap_s: float) -> list[Span]:
    """Spans (in order of their starts) with less than ``gap_s`` between them joined into one:
    a caller's utterance (``PAUSE_S``), an agent's talk (``TALK_GAP_S``); with ``gap_s`` 0,
    spans that overlap or touch."""
    out: list[Span] = []
    for s in spans:
        if out and (s.start_s - out[-1].end_s < gap_s or s.start_s <= out[-1].end_s):
            out[-1] = Span(out[-1].start_s, max(out[-1].end_s, s.end_s))
        else:
            out.append(s)
    return out


def _levels(pcm: np.ndarray) -> tuple[np.ndarray, float, bool]:
    """A channel's level in 10 ms windows, its noise floor (their 10th percentile), and whether
    the line is clean (the floor well below the speech threshold)."""
    n = pcm.size // WINDOW
    rms = np.sqrt(np.mean(pcm[: n * WINDOW].astype(np.float64).reshape(n, WINDOW) ** 2, axis=1))
    floor = float(np.percentile(rms, 10)) if n else 0.0
    return rms, floor, NOISE_MARGIN * floor < SPEECH_THRESHOLD * 32768


def _runs(quiet: np.ndarray) -> list[tuple[int, int]]:
    """The runs of True in ``quiet``, as ``(first, one past the last)``."""
    edges = np.flatnonzero(np.diff(np.concatenate([[0], quiet.astype(np.int8), [0]])))
    return [(int(a), int(b)) for a, b in zip(edges[::2], edges[1::2], strict=True)]


def talk_silences(pcm: np.ndarray, spans: Sequence[Span], min_s: float) -> list[Span]:
    """The silences of ``min_s`` or more, and shorter than ``TALK_GAP_S``, inside the agent's
    talks: ``spans`` (its ``speech_spans``) joined across silences shorter than ``TALK_GAP_S``.
    On a clean line each lies between two audible samples, to the sample; in noise, over 10 ms
    windows quieter than a twentieth of the talk's median level and ``NOISE_MARGIN`` over the
    channel's noise floor, whichever is louder."""
    rms, floor, clean = _levels(pcm)
    out: list[Span] = []
    for talk in joined(list(spans), TALK_GAP_S):
        if clean:
            a, b = round(talk.start_s * RATE), round(talk.end_s * RATE)
            loud = np.abs(pcm[a:b].astype(np.int32)) > SPEECH_THRESHOLD * 32768.0
            found = [(a + x, a + y, RATE) for x, y in _runs(~loud) if x > 0 and y < b - a]
        else:
            a, b = round(talk.start_s * RATE) // WINDOW, round(talk.end_s * RATE) // WINDOW
            inside = rms[a:b]
            if inside.size == 0:
                continue
            quiet = inside < max(0.05 * float(np.median(inside)), NOISE_MARGIN * floor)
            found = [(a + x, a + y, RATE // WINDOW) for x, y in _runs(quiet) if x > 0 and y < b - a]
        out += [
            Span(round(x / per_s, 4), round(y / per_s, 4))
            for x, y, per_s in found
            if min_s <= (y - x) / per_s < TALK_GAP_S
        ]
    return out
