"""The scripted voice agent's reply (spoken once by the packaged Piper voice) and its stall
plan: when each piece of the reply is sent."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from voicebench.errors import RunError
from voicebench.fixtures.audio import resample, speech_bounds, to_int16
from voicebench.timing.stalls import Playback, Stall, playback_of

FRAME_MS = 20.0
"""One 20 ms frame: how near a measured stall must come to the one it is held to."""


def reply_audio(text: str, rate: int, pause_ms: float = 0.0) -> np.ndarray:
    """The reply spoken by the packaged Piper voice, trimmed to start on its first audible
    sample; with ``pause_ms``, that much silence between its sentences (a pause it means,
    sent as audio)."""
    from voicebench.fixtures.synth import PiperSpeaker

    speaker = PiperSpeaker()
    pause = np.zeros(int(pause_ms * speaker.sample_rate / 1000), dtype=np.float32)
    parts: list[np.ndarray] = []
    for sentence in speaker.sentences(text):
        parts += [pause, sentence] if parts else [sentence]
    audio = np.concatenate(parts)
    pcm = to_int16(resample(audio, speaker.sample_rate, rate))
    bounds = speech_bounds(pcm)
    if bounds is None:
        raise RunError(f"the reply {text!r} was spoken as silence")
    return pcm[bounds[0] : bounds[1]]


def send_time_ns(reply_ns: int, holds: Iterable[tuple[int, int]], pace: float, lead_ns: int) -> int:
    """When a stall plan sends the audio ``reply_ns`` into the reply, from the reply's start
    (all in ns). At a ``pace`` below 1, ``lead_ns`` ahead at first, then falling behind. Else
    ``lead_ns`` ahead of when the caller is to play it, with the ``holds`` (after ``a`` of
    reply, nothing heard for ``h``): the audio after a hold's point waits until the hold is
    over, then what the lead covers goes at once."""
    if pace != 1.0:
        return int(max(0, reply_ns - lead_ns) / pace)
    release, held = 0, 0
    for at, hold in sorted(holds):
        if reply_ns >= at:
            held += hold
            release = at + held
    return max(release, reply_ns + held - lead_ns)


def sent_playback(answer: dict) -> Playback | None:
    """The stalls of a reply as the agent sent it, by the harness's rule: from its log entry
    of the answer (``ScriptedVoiceAgent.turns()``), where each stretch of what it sent must
    play, by the kernel's send stamps. A busy agent sends late and stalls beyond its plan;
    this is what the caller's measure must match."""
    audio = np.full(answer["reply_samples"], 10_000, dtype=np.int16)
    return playback_of([tuple(p) for p in answer["placed"]], audio, answer["rate"])


def short_of_plan(sent: Playback, plan: Iterable[tuple[float, float]]) -> list[tuple[float, float]]:
    """The planned holds (after ``at`` ms of reply, ``ms`` of nothing) by whose point the reply
    as sent had stalled less than the plan's holds up to there, less a frame, as ``(at, stalled
    by then)``. An agent that sends late before a hold stalls earlier, and the hold's own stall
    is shorter by that much (the caller is still playing when it ends): lateness moves stall
    time earlier and adds to it, never takes from the total, so a busy agent's reply is short
    of its plan only if the plan was not kept."""
    short, planned = [], 0.0
    for at, ms in sorted(plan):
        planned += ms
        stalled = sum(s.ms for s in sent.stalls if s.audio_ms <= at + FRAME_MS)
        if stalled < planned - FRAME_MS:
            short.append((at, stalled))
    return short


def unmatched(these: Playback, those: Playback) -> list[Stall]:
    """The stalls of ``these`` longer than a frame with none of ``those`` within a frame of
    it, in place and length (one a frame or shorter, at the jitter buffer's edge, may be
    bridged on one side of the wire and not the other)."""
    return [
        s
        for s in these.stalls
        if s.ms > FRAME_MS
        and not any(
            abs(s.audio_ms - t.audio_ms) <= FRAME_MS and abs(s.ms - t.ms) <= FRAME_MS
            for t in those.stalls
        )
    ]
