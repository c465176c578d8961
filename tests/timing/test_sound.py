"""How a reply sounds: speaking rate, loudness, clipping and clicks, on audio whose figures are
known."""

from __future__ import annotations

import numpy as np
import pytest

from voicebench.timing.sound import sound_of

RATE = 16_000


def _tone(seconds: float, amplitude: float, fade_ms: float = 10.0) -> np.ndarray:
    """A 440 Hz tone that fades in and out as speech does."""
    t = np.arange(int(seconds * RATE)) / RATE
    wave = amplitude * np.sin(2 * np.pi * 440 * t)
    fade = np.minimum(1.0, np.minimum(t, t[::-1]) / (fade_ms / 1000))
    return (wave * fade * 32767).astype(np.int16)


def _silence(seconds: float) -> np.ndarray:
    return np.zeros(int(seconds * RATE), np.int16)


def test_the_rate_is_the_words_over_the_audible_time_and_the_loudness_is_bs1770():
    audio = np.concatenate([_silence(0.5), _tone(3.0, 0.1), _silence(1.0)])
    sound = sound_of(audio, RATE, "one two three four five six seven eight nine ten")
    assert sound is not None
    assert sound.words_per_minute == pytest.approx(10 / 3 * 60, abs=0.5)  # silences not counted
    louder = sound_of(np.concatenate([_silence(0.5), _tone(3.0, 0.2)]), RATE, "a b")
    assert louder is not None and sound.loudness_lufs is not None
    assert louder.loudness_lufs == pytest.approx(sound.loudness_lufs + 6.02, abs=0.05)
    assert -24.5 < sound.loudness_lufs < -22.5  # a -23 dBFS RMS tone
    assert (sound.clipped_share, sound.clicks_ms) == (0.0, ())


def test_clipped_samples_and_abrupt_starts_and_stops_are_found():
    clipped = np.clip(_tone(1.0, 1.0) * 1.5, -32767, 32767).astype(np.int16)  # cut flat
    sound = sound_of(clipped, RATE, "")
    assert sound is not None and sound.words_per_minute is None
    assert 0.2 < sound.clipped_share < 0.6
    # a tone that starts mid-waveform after silence, and one cut off by a clear
    t = np.arange(RATE // 2) / RATE
    abrupt = (0.5 * np.cos(2 * np.pi * 440 * t) * 32767).astype(np.int16)  # starts at its peak
    cut = _tone(0.5, 0.5, fade_ms=10.0)[: RATE // 4 + 9]  # stopped near a peak
    audio = np.concatenate([_silence(0.2), abrupt, _silence(0.3), cut, _silence(0.2)])
    found = sound_of(audio, RATE, "")
    assert found is not None
    starts = [c for c in found.clicks_ms if abs(c - 200) < 1]
    assert starts, found.clicks_ms
    assert any(1000 < c < 1300 for c in found.clicks_ms)  # where the clear cut it
    assert sound_of(_silence(1.0), RATE) is None
