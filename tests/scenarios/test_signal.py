"""Noise at a set SNR and the phone line, checked on known signals."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from voicebench.fixtures import BUILTIN_FIXTURES
from voicebench.fixtures.audio import read_wav
from voicebench.fixtures.manifest import load_manifest
from voicebench.scenarios import (
    NOISE_KINDS,
    PhoneLine,
    alaw_decode,
    alaw_encode,
    mix_at_snr,
    mulaw_decode,
    mulaw_encode,
    noise,
    snr_db,
)

RATE = 16_000


def tone(hz: float, seconds: float = 1.0, rate: int = RATE, dbfs: float = -10.0) -> np.ndarray:
    t = np.arange(int(seconds * rate)) / rate
    return np.round(10 ** (dbfs / 20) * 32767 * np.sin(2 * np.pi * hz * t)).astype(np.int16)


def level_db(pcm: np.ndarray) -> float:
    """RMS level of the middle of a signal (filter edges left out), dB full scale."""
    mid = pcm[pcm.size // 4 : 3 * pcm.size // 4].astype(float)
    return float(20 * np.log10(np.sqrt(np.mean(mid**2)) / 32767))


@pytest.fixture(scope="module")
def utterances() -> list[np.ndarray]:
    entries = load_manifest(BUILTIN_FIXTURES).entries[:6]
    return [read_wav(BUILTIN_FIXTURES / e.path) for e in entries]


@pytest.mark.parametrize("kind", NOISE_KINDS)
@pytest.mark.parametrize("target", [20.0, 10.0, 5.0])
def test_noise_is_mixed_at_the_snr_asked_for(utterances, kind: str, target: float):
    speech, others = utterances[0], utterances[1:]
    rng = np.random.default_rng(7)
    mixed = mix_at_snr(speech, noise(kind, speech.size, rng, others), target)
    assert mixed.dtype == np.int16 and mixed.size == speech.size
    assert abs(snr_db(speech, mixed) - target) <= 0.5


def test_a_mix_that_would_clip_is_scaled_down_and_keeps_its_snr():
    loud = tone(440, dbfs=-0.5)
    rng = np.random.default_rng(1)
    mixed = mix_at_snr(loud, noise("white", loud.size, rng), 5.0)
    assert np.abs(mixed.astype(int)).max() <= 32767
    assert abs(snr_db(loud, mixed) - 5.0) <= 0.5


def test_pink_noise_has_equal_power_per_octave():
    pink = noise("pink", 2**18, np.random.default_rng(3))
    power = np.abs(np.fft.rfft(pink)) ** 2
    freqs = np.fft.rfftfreq(pink.size, 1 / RATE)
    octaves = [power[(freqs >= f) & (freqs < 2 * f)].sum() for f in (250, 500, 1000, 2000)]
    assert max(octaves) / min(octaves) < 1.3  # white noise would double each octave


def test_the_same_seed_gives_the_same_audio(utterances):
    speech, others = utterances[0], utterances[1:]

    def degrade(seed: int) -> np.ndarray:
        rng = np.random.default_rng(seed)
        noisy = mix_at_snr(speech, noise("babble", speech.size, rng, others), 10.0)
        return PhoneLine(loss_pct=5.0).carry(noisy, RATE, rng).pcm

    assert np.array_equal(degrade(11), degrade(11))
    assert not np.array_equal(degrade(11), degrade(12))


def test_mulaw_round_trip_on_known_values_and_a_tone():
    assert mulaw_encode(np.array([0, 32767, -32768], dtype=np.int16)) == bytes([0xFF, 0x80, 0x00])
    # Companding: 8-bit mu-law keeps about the same SNR (32-39 dB) from a loud tone to one 37 dB
    # quieter, where 8 linear bits would lose all 37 dB.
    for dbfs in (-3.0, -20.0, -40.0):
        sine = tone(1000, dbfs=dbfs)
        back = mulaw_decode(mulaw_encode(sine))
        error = back.astype(float) - sine
        assert 10 * np.log10(np.mean(sine.astype(float) ** 2) / np.mean(error**2)) > 31


def test_mulaw_is_the_standard_librarys_codec_byte_for_byte():
    """Every 16-bit sample and every code, against ``audioop`` where this Python still has it
    (it is gone from 3.13): the phone line sounds as it did when it used that codec."""
    audioop = pytest.importorskip("audioop")
    pcm = np.arange(-32768, 32768, dtype=np.int16)
    assert mulaw_encode(pcm) == audioop.lin2ulaw(pcm.astype("<i2").tobytes(), 2)
    codes = bytes(range(256))
    assert mulaw_decode(codes).tobytes() == audioop.ulaw2lin(codes, 2)
    assert mulaw_decode(codes).dtype == np.dtype("<i2")


def test_the_phone_line_keeps_the_telephone_band_only():
    clean = PhoneLine(loss_pct=0.0, jitter_ms=0.0)
    rng = np.random.default_rng(0)
    gain = {
        hz: level_db(clean.carry(tone(hz), RATE, rng).pcm) - level_db(tone(hz))
        for hz in (100, 1000, 3000, 6000)
    }
    assert abs(gain[1000]) < 0.5 and abs(gain[3000]) < 1.0  # in the band
    assert gain[100] < -40.0  # below 300 Hz
    assert gain[6000] < -40.0  # above the 4 kHz of an 8 kHz line


def test_the_phone_line_loses_packets_in_bursts_at_the_rate_asked_for():
    line = PhoneLine(loss_pct=3.0, burst_packets=3.0, jitter_ms=0.0)
    signal = tone(1000, seconds=400.0)  # 20,000 packets
    result = line.carry(signal, RATE, np.random.default_rng(5))
    assert result.packets == 20_000
    assert abs(result.loss_pct - 3.0) < 0.6
    # A lost packet plays as silence, 20 ms at a time.
    per_packet = RATE // 50
    quiet = [
        np.abs(result.pcm[k * per_packet + 40 : (k + 1) * per_packet - 40]).max() < 200
        for k in range(result.packets)
    ]
    assert abs(sum(quiet) - result.lost) <= result.lost * 0.1
    runs = np.diff(np.flatnonzero(np.diff(np.r_[0, np.array(quiet, int), 0])))[::2]
    assert 2.0 < runs.mean() < 4.0  # bursts, not single packets


def test_jitter_beyond_the_buffer_counts_as_loss():
    late = PhoneLine(loss_pct=0.0, jitter_ms=60.0, buffer_ms=60.0)
    result = late.carry(tone(1000, seconds=100.0), RATE, np.random.default_rng(2))
    # |N(0, 60 ms)| > 60 ms about 31.7% of the time
    assert abs(result.loss_pct - 31.7) < 2.0
    assert result.delay_ms == 60.0


def _audioop():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return pytest.importorskip("audioop")


def test_alaw_is_the_standard_librarys_codec_byte_for_byte():
    """Every 16-bit sample and every code, against ``audioop`` as mu-law is."""
    audioop = _audioop()
    pcm = np.arange(-32768, 32768, dtype=np.int16)
    assert alaw_encode(pcm) == audioop.lin2alaw(pcm.astype("<i2").tobytes(), 2)
    codes = bytes(range(256))
    assert alaw_decode(codes).tobytes() == audioop.alaw2lin(codes, 2)
    assert alaw_decode(codes).dtype == np.dtype("<i2")


def test_alaw_round_trip_on_known_values_and_a_tone():
    # silence is 0xD5 (0x55 with the sign bit set), full scale 0xAA and 0x2A
    assert alaw_encode(np.array([0, 32767, -32768], dtype=np.int16)) == bytes([0xD5, 0xAA, 0x2A])
    for dbfs in (-3.0, -20.0, -40.0):
        sine = tone(1000, dbfs=dbfs)
        back = alaw_decode(alaw_encode(sine))
        error = back.astype(float) - sine
        assert 10 * np.log10(np.mean(sine.astype(float) ** 2) / np.mean(error**2)) > 30
