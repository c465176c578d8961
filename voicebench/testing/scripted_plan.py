"""The scripted voice agent's reply (spoken once by the packaged Piper voice) and its stall
plan: when each piece of the reply is sent."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from voicebench.errors import RunError
from voicebench.fixtures.audio import resample, speech_bounds, to_int16
from voicebench.timing.stalls import Playback, playback_of


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
