"""Two-channel call recordings built with a known truth (``voicebench.testing.known_calls``):
real speech (Piper) placed on each channel at set times, so a test knows every end of speech,
first answer and overlap to the sample."""

from __future__ import annotations

from functools import cache

import numpy as np

from voicebench.fixtures.audio import resample, speech_bounds
from voicebench.fixtures.synth import PiperSpeaker
from voicebench.testing.known_calls import RATE, KnownCall, write
from voicebench.testing.known_calls import with_noise as noisy

__all__ = [
    "AGENT_LINES",
    "CALLER_LINES",
    "RATE",
    "KnownCall",
    "gapped_call",
    "known_call",
    "speech",
    "with_noise",
    "write",
]

CALLER_LINES = (
    "I have been feeling so alone since I moved here.",
    "Nobody at work even knows my name.",
    "Maybe I should just go back home.",
)
AGENT_LINES = (
    "That sounds really lonely. Moving somewhere new is hard.",
    "It hurts to feel invisible at work.",
    "Going home is one option. What would you miss about staying?",
)


@cache
def speech(text: str) -> np.ndarray:
    """``text`` said by the packaged voice at 16 kHz, trimmed to its speech."""
    speaker = PiperSpeaker(repeatable=True)
    audio = resample(np.concatenate(speaker.sentences(text)), speaker.sample_rate, RATE)
    pcm = np.clip(audio * 32767, -32768, 32767).astype(np.int16)
    bounds = speech_bounds(pcm)
    assert bounds is not None
    return pcm[bounds[0] : bounds[1]]


def known_call(latencies_s=(0.6, 1.2), barge_after_s: float = 1.0, stop_s: float = 0.4):
    """Caller lines answered after ``latencies_s``; then the caller barges in ``barge_after_s``
    into the last answer, which stops ``stop_s`` later."""
    call = KnownCall()
    t = 0.5
    for k, latency in enumerate(latencies_s):
        said = call.place("caller", speech(CALLER_LINES[k]), t)
        answer = call.place("agent", speech(AGENT_LINES[k]), said[1] + latency)
        call.truth.append({"end_s": said[1], "response_s": answer[0], "barge_in": False})
        t = answer[1] + 0.8
    reply = speech(AGENT_LINES[-1])[: int((barge_after_s + stop_s) * RATE)]
    heard = speech_bounds(reply)
    assert heard is not None  # the agent's last audible sample before it stopped
    barged = call.place("agent", reply, t)
    said = call.place("caller", speech(CALLER_LINES[-1]), barged[0] + barge_after_s)
    stopped = heard[1] / RATE - barge_after_s
    call.truth.append({"end_s": said[1], "response_s": None, "barge_in": True, "stop_s": stopped})
    return call


def gapped_call() -> tuple[KnownCall, float, float]:
    """A caller line answered by a reply with a silence of 0.4 s inside it (a gap) and, later,
    one of 0.1 s (between words); then another line answered with no silence inside; with
    where each silence begins, in seconds after the reply's first audio."""
    call = KnownCall()
    said = call.place("caller", speech(CALLER_LINES[0]), 0.5)
    first, second, third = (speech(line) for line in AGENT_LINES)
    pause, breath = np.zeros(int(0.4 * RATE), np.int16), np.zeros(int(0.1 * RATE), np.int16)
    reply = np.concatenate([second, pause, first, breath, third])
    answered = call.place("agent", reply, said[1] + 0.6)
    said = call.place("caller", speech(CALLER_LINES[1]), answered[1] + 0.8)
    call.place("agent", speech(AGENT_LINES[1]), said[1] + 0.6)
    at = second.size / RATE
    return call, at, at + 0.4 + first.size / RATE


def with_noise(pcm: np.ndarray, snr_db: float, seed: int = 0) -> np.ndarray:
    """White noise at ``snr_db`` below the speech's power, over the whole channel."""
    return noisy(pcm, snr_db, np.random.default_rng(seed))
