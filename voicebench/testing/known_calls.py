"""Two-channel call recordings with a known truth, for testing whatever reads recordings
(``voicebench.recordings``): speech placed on each channel at set times, so every end of
speech, first answer and overlap is known to the sample, then written in any format a phone
platform records in, with noise if asked."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from voicebench.fixtures.audio import resample

RATE = 16_000


@dataclass
class KnownCall:
    """The caller's and the agent's channels (16 kHz), built piece by piece; ``truth`` is the
    caller's to keep (what each turn should read as)."""

    caller: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int16))
    agent: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int16))
    truth: list[dict] = field(default_factory=list)

    def place(self, channel: str, pcm: np.ndarray, at_s: float) -> tuple[float, float]:
        """``pcm`` on ``channel`` (``caller`` or ``agent``) from ``at_s``, over what was there;
        returns where it lies, in seconds, to the sample."""
        track = getattr(self, channel)
        start = round(at_s * RATE)
        end = start + pcm.size
        if track.size < end:
            track = np.concatenate([track, np.zeros(end - track.size, np.int16)])
        track[start:end] = pcm
        setattr(self, channel, track)
        return start / RATE, end / RATE

    def stereo(self, tail_s: float = 1.0) -> np.ndarray:
        """Both channels, the caller first, with ``tail_s`` of silence after the last sound."""
        n = max(self.caller.size, self.agent.size) + int(tail_s * RATE)
        out = np.zeros((n, 2), np.int16)
        out[: self.caller.size, 0] = self.caller
        out[: self.agent.size, 1] = self.agent
        return out


def with_noise(pcm: np.ndarray, snr_db: float, rng: np.random.Generator) -> np.ndarray:
    """White noise at ``snr_db`` below the speech's power, over the whole channel."""
    x = pcm.astype(np.float64)
    power = np.mean(x[np.abs(x) > 300] ** 2)
    noise = rng.normal(0, np.sqrt(power / 10 ** (snr_db / 10)), x.size)
    return np.clip(x + noise, -32768, 32767).astype(np.int16)


def write(path: Path, stereo: np.ndarray, rate: int = RATE, subtype: str = "PCM_16") -> Path:
    """Two 16 kHz channels written at ``rate`` in ``subtype`` (``PCM_16``, ``ULAW`` at 8 kHz
    as Twilio records, ``OPUS`` in an ``.ogg``...), the format the path's suffix names."""
    import soundfile

    data = stereo.astype(np.float64) / 32768.0
    if rate != RATE:
        data = np.stack([resample(data[:, k], RATE, rate) for k in (0, 1)], axis=1)
    soundfile.write(str(path), data, rate, subtype=subtype)
    return path
