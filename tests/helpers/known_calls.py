"""Two-channel call recordings built with a known truth: real speech (Piper) placed on each
channel at set times, so a test knows every end of speech, first answer and overlap to the
sample."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import numpy as np

from voicebench.fixtures.audio import resample, speech_bounds
from voicebench.fixtures.synth import PiperSpeaker

RATE = 16_000
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


@dataclass
class KnownCall:
    caller: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int16))
    agent: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int16))
    truth: list[dict] = field(default_factory=list)

    def place(self, channel: str, pcm: np.ndarray, at_s: float) -> tuple[float, float]:
        track = getattr(self, channel)
        start = round(at_s * RATE)
        end = start + pcm.size
        if track.size < end:
            track = np.concatenate([track, np.zeros(end - track.size, np.int16)])
        track[start:end] = pcm
        setattr(self, channel, track)
        return start / RATE, end / RATE

    def stereo(self, tail_s: float = 1.0) -> np.ndarray:
        n = max(self.caller.size, self.agent.size) + int(tail_s * RATE)
        out = np.zeros((n, 2), np.int16)
        out[: self.caller.size, 0] = self.caller
        out[: self.agent.size, 1] = self.agent
        return out


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


def with_noise(pcm: np.ndarray, snr_db: float, seed: int = 0) -> np.ndarray:
    """White noise at ``snr_db`` below the speech's power, over the whole channel."""
    x = pcm.astype(np.float64)
    power = np.mean(x[np.abs(x) > 300] ** 2)
    noise = np.random.default_rng(seed).normal(0, np.sqrt(power / 10 ** (snr_db / 10)), x.size)
    return np.clip(x + noise, -32768, 32767).astype(np.int16)


def write(path: Path, stereo: np.ndarray, rate: int = RATE, subtype: str = "PCM_16") -> Path:
    import soundfile

    data = stereo.astype(np.float64) / 32768.0
    if rate != RATE:
        data = np.stack([resample(data[:, k], RATE, rate) for k in (0, 1)], axis=1)
    soundfile.write(str(path), data, rate, subtype=subtype)
    return path
