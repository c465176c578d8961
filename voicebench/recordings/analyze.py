"""A two-channel call recording timed turn by turn, from its audio alone.

Reading. WAV (PCM or 8 kHz mu-law/A-law, as phone platforms record), FLAC or Opus in Ogg, at any
common rate; each channel is resampled to 16 kHz. One channel is the caller, the other the agent;
which is which is given (``caller="left"`` or ``"right"``). A mono file, or one that is not
audio, is refused in one line naming the file.

Speech. Each channel goes through Silero VAD (the model the pipeline uses, shipped in pipecat) in
frames of 32 ms (512 samples at 16 kHz): a frame is speech when the model's confidence is at least
``THRESHOLD``. Runs of speech frames are spans; spans closer than ``JOIN_S`` are one span (a breath
between words) and spans shorter than ``MIN_SPEECH_S`` are dropped (a click, a cough). The model's
confidence outlasts the speech by a frame or more (longer in noise), so each span's edges are
then moved on the signal's energy, in 10 ms windows, and, on a clean line (a noise floor well
below the speech threshold), to the first and last sample above it, the rule voicebench's own
fixtures mark their end of speech by (``speech_spans``). In noise, times are on the 10 ms grid.
Moved edges can make spans meet (a span carried over a short pause onto the next, which reaches
back over it): spans that overlap or touch are then one span, so no stretch of a channel is
read, or transcribed, twice, and its edges are moved to the sample again as a whole.

Turns. The caller's spans closer than ``PAUSE_S`` are one utterance (a pause within a sentence).
Each utterance is a turn:

- its end of speech is the end of its last span;
- the agent's first audio after it is the start of the first agent span that starts after the
  end of speech, and the response latency is the gap between them;
- when the agent was already talking as the caller began, the caller barged in, and the agent's
  stop time is from the caller's first sound to the end of that talk. The agent's talk is its
  spans with no silence of ``TALK_GAP_S`` inside (a pause between its sentences is part of its
  talk), as the harness reads an agent's talk off what it plays (``agent.realtime``);
- when the agent began while the caller was still talking, the agent talked over the caller;
- talk-over is the time both spoke at once during the turn;
- dead air is the time neither spoke, in silences of ``DEAD_AIR_S`` or more, from the end of
  speech to the caller's next utterance.

When the caller's channel is not given, ``guess_caller`` guesses it and says why.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np

from voicebench._model import FrozenModel
from voicebench.agent.realtime import TALK_GAP_NS
from voicebench.errors import InputError, MissingFileError
from voicebench.fixtures.audio import (
    PEAK_FRACTION,
    SPEECH_THRESHOLD,
    resample,
    to_int16,
)

RATE = 16_000
FRAME = 512
FRAME_S = FRAME / RATE
"""The VAD's frame: every time read off a recording is on this grid (32 ms)."""
THRESHOLD = 0.5
JOIN_S = 0.25
MIN_SPEECH_S = 0.1
PAUSE_S = 0.7
DEAD_AIR_S = 2.0
"""Silence on both channels this long or longer is dead air."""
YIELD_S = 2.0
"""Talk that ends this soon after the other side starts over it was given up to it."""
TALK_GAP_S = TALK_GAP_NS / 1e9
"""Silence within one utterance of the caller (a pause mid-sentence) is shorter than this."""

Side = Literal["left", "right"]


@dataclass(frozen=True)
class Span:
    start_s: float
    end_s: float


@dataclass(frozen=True)
class Recording:
    path: Path
    rate: int
    """The file's own sample rate."""
    caller: np.ndarray
    agent: np.ndarray
    """Each channel at 16 kHz, 16-bit."""

    @property
    def duration_s(self) -> float:
        return self.caller.size / RATE


class RecordedTurn(FrozenModel):
    """One utterance of the caller and what the agent did about it."""

    index: int
    start_s: float
    """The caller's first sound."""
    end_s: float
    """The caller's end of speech."""
    response_s: float | None
    """The agent's first audio after the end of speech (None: it never spoke again)."""
    barge_in: bool
    """The agent was talking when the caller began."""
    stop_s: float | None
    """After a barge-in: the caller's first sound to the end of the agent's talk."""
    agent_talked_over: bool
    """The agent began while the caller was still talking."""
    talk_over_s: float
    """Seconds both spoke at once, from the caller's first sound to its end of speech."""
    dead_air_s: float = 0.0
    """Seconds neither spoke, in silences of ``DEAD_AIR_S`` or more, from the end of speech
    to the caller's next utterance (or the end of the recording)."""

    @property
    def latency_s(self) -> float | None:
        """End of speech to the agent's first audio after it."""
        return None if self.response_s is None else self.response_s - self.end_s


def check_recording(path: Path) -> None:
    """Refuse a missing, unreadable or mono file, or one at a rate outside 8-48 kHz, naming it,
    from its header alone (before a batch writes anything)."""
    import soundfile

    if not path.is_file():
        raise MissingFileError("recording", path)
    try:
        info = soundfile.info(str(path))
    except (RuntimeError, soundfile.LibsndfileError) as exc:
        raise InputError(f"not a recording that can be read: {exc}", file=path) from None
    if info.channels != 2:
        raise InputError(
            f"has {info.channels} channel(s): a call recording needs two, the caller on one "
            "and the agent on the other",
            file=path,
        )
    if not 8_000 <= info.samplerate <= 48_000:
        raise InputError(
            f"sample rate {info.samplerate} Hz: 8-48 kHz recordings are read", file=path
        )


def read_recording(path: Path, *, caller: Side = "left") -> Recording:
    """Both channels of a call recording at 16 kHz; a missing, unreadable or mono file is bad
    input naming the file."""
    import soundfile

    check_recording(path)
    try:
        data, rate = soundfile.read(str(path), dtype="float32", always_2d=True)
    except (RuntimeError, soundfile.LibsndfileError) as exc:
        raise InputError(f"not a recording that can be read: {exc}", file=path) from None
    left, right = (to_int16(resample(data[:, k].astype(np.float64), rate, RATE)) for k in (0, 1))
    said, heard = (left, right) if caller == "left" else (right, left)
    return Recording(path=path, rate=int(rate), caller=said, agent=heard)


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
    edges = np.flatnonzero(np.diff(np.concatenate([[0], frames.astype(np.int8), [0]])))
    runs = [(int(a), int(b)) for a, b in zip(edges[::2], edges[1::2], strict=True)]
    joined: list[list[int]] = []
    for a, b in runs:
        if joined and (a - joined[-1][1]) * FRAME_S < JOIN_S:
            joined[-1][1] = b
        else:
            joined.append([a, b])
    return [
        Span(round(a * FRAME_S, 3), round(b * FRAME_S, 3))
        for a, b in joined
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
    n = pcm.size // WINDOW
    rms = np.sqrt(np.mean(pcm[: n * WINDOW].astype(np.float64).reshape(n, WINDOW) ** 2, axis=1))
    floor = float(np.percentile(rms, 10)) if n else 0.0
    refined = [_refined(s, rms, floor) for s in spans]
    if NOISE_MARGIN * floor >= SPEECH_THRESHOLD * 32768:
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
    """Spans that overlap or touch as one (``_joined`` with no gap), in order."""
    return _joined(sorted(spans, key=lambda s: s.start_s), 0.0)


def call_turns(rec: Recording) -> list[RecordedTurn]:
    """A recording's turns: its channels' speech, each by its own rule, read as turns."""
    return recorded_turns(
        speech_spans(rec.caller), speech_spans(rec.agent, agent=True), rec.duration_s
    )


def _joined(spans: list[Span], gap_s: float) -> list[Span]:
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


def _overlap(a: Span, b: Span) -> float:
    return max(0.0, min(a.end_s, b.end_s) - max(a.start_s, b.start_s))


def _dead_air(caller: list[Span], agent: list[Span], start_s: float, end_s: float) -> float:
    """Seconds in ``[start_s, end_s)`` that neither channel spoke, in silences of
    ``DEAD_AIR_S`` or more."""
    spoken = sorted(
        (s for s in (*caller, *agent) if s.end_s > start_s and s.start_s < end_s),
        key=lambda s: s.start_s,
    )
    quiet, at = 0.0, start_s
    for s in spoken:
        if s.start_s - at >= DEAD_AIR_S:
            quiet += s.start_s - at
        at = max(at, s.end_s)
    if end_s - at >= DEAD_AIR_S:
        quiet += end_s - at
    return round(quiet, 3)


def recorded_turns(
    caller: list[Span], agent: list[Span], duration_s: float | None = None
) -> list[RecordedTurn]:
    """The caller's utterances as turns, each with what the agent did (module docstring);
    ``duration_s``, the recording's length, bounds the last turn's dead air."""
    turns = []
    talks = _joined(agent, TALK_GAP_S)
    said = _joined(caller, PAUSE_S)
    for k, u in enumerate(said):
        until = said[k + 1].start_s if k + 1 < len(said) else duration_s or u.end_s
        talking = next((a for a in talks if a.start_s < u.start_s < a.end_s), None)
        response = next((a.start_s for a in agent if a.start_s >= u.end_s), None)
        turns.append(
            RecordedTurn(
                index=k,
                start_s=u.start_s,
                end_s=u.end_s,
                response_s=response,
                barge_in=talking is not None,
                stop_s=None if talking is None else round(talking.end_s - u.start_s, 3),
                agent_talked_over=any(u.start_s < a.start_s < u.end_s for a in agent),
                talk_over_s=round(sum(_overlap(u, a) for a in agent), 3),
                dead_air_s=_dead_air(caller, agent, u.end_s, until),
            )
        )
    return turns


def guess_caller(left: list[Span], right: list[Span]) -> tuple[Side, str]:
    """Which channel is the caller's, from the speech alone, and why. An agent stops when it
    is talked over and a caller seldom does: the channel that more often fell silent within
    ``YIELD_S`` of the other starting over it is the agent's. Without such moments, the channel
    that spoke first is the agent's (it answers the call with a greeting), unless the other
    began before it had finished. Failing both, the left (where phone platforms record the
    inbound leg)."""
    yields = {
        side: sum(
            any(t.start_s < o.start_s < t.end_s <= o.start_s + YIELD_S for o in other)
            for t in _joined(mine, TALK_GAP_S)
        )
        for side, mine, other in (("left", left, right), ("right", right, left))
    }
    if yields["left"] != yields["right"]:
        agent = max(yields, key=lambda k: yields[k])
        caller: Side = "right" if agent == "left" else "left"
        return caller, (
            f"guessed: the {agent} channel stopped when talked over {yields[agent]} time(s), "
            f"the {caller} {yields[caller]}, as an agent does"
        )
    if left and right:
        first, second = (left, right) if left[0].start_s <= right[0].start_s else (right, left)
        side = "left" if first is left else "right"
        if second[0].start_s >= first[0].end_s:
            caller = "right" if side == "left" else "left"
            return caller, f"guessed: the {side} channel spoke first, as an agent answering does"
    return "left", "guessed: nothing told the channels apart; the left, as phone platforms record"
