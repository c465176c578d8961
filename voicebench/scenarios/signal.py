"""What a caller's line does to speech: noise at a set signal-to-noise ratio, and a phone line.

Every function is pure and seeded: the same samples, parameters and random generator give the
same output, on every machine.

Noise. The SNR is the speech's power over its active part (``speech_bounds``: lead-in and tail
silence do not dilute it) against the noise's power over the same samples. White noise is flat,
pink noise falls 3 dB an octave (equal power per octave, like most room and traffic noise), and
babble is other voices talking at once: several other seeker utterances, each from a random
point, summed. A mix that would clip is scaled down as a whole, which keeps its SNR.

Phone line (``PhoneLine``): what a narrowband call does, in order:

- resampled to 8 kHz and limited to the telephone band, 300-3,400 Hz (a zero-phase Butterworth
  band-pass, 6 dB down at both edges, so no sample moves in time);
- G.711 mu-law, 8 bits a sample, as Twilio and Telnyx media streams carry it (the standard
  library's ``audioop`` codec, byte for byte, written here in numpy: ``audioop`` is deprecated
  and gone from Python 3.13; A-law, the other G.711 law that a SIP call may carry, is here
  too, byte for byte ``audioop``'s as well);
- sent in 20 ms packets, of which some are lost in bursts (a two-state Gilbert-Elliott chain:
  a lost packet is followed by another with probability ``1 - 1 / burst_packets``), and each
  delayed by the network by a random jitter. A fixed jitter buffer plays packet k at
  ``k * 20 ms + buffer_ms``; a packet that arrives after its slot is as good as lost. A lost
  packet plays as silence (no concealment).
- decoded and resampled back to the caller's rate. The buffer's delay is reported
  (``LineResult.delay_ms``), not applied: the samples keep their times, so the true end of
  speech stays where the fixture says it is.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.signal import butter, sosfiltfilt

from voicebench.fixtures.audio import resample, speech_bounds, to_int16

NOISE_KINDS = ("white", "pink", "babble")
PHONE_RATE = 8_000
PACKET_MS = 20
BAND_HZ = (300.0, 3_400.0)
BABBLE_VOICES = 4
FULL_SCALE = 32767.0


def white_noise(n: int, rng: np.random.Generator) -> np.ndarray:
    """Gaussian noise with unit RMS."""
    return rng.standard_normal(n)


def pink_noise(n: int, rng: np.random.Generator) -> np.ndarray:
    """Noise whose power falls as 1/f (3 dB an octave), with unit RMS."""
    spectrum = np.fft.rfft(rng.standard_normal(n))
    f = np.arange(spectrum.size, dtype=float)
    f[0] = 1.0  # no DC boost
    pink = np.fft.irfft(spectrum / np.sqrt(f), n)
    return pink / np.sqrt(np.mean(pink**2))


def babble_noise(
    talkers: Sequence[np.ndarray], n: int, rng: np.random.Generator, *, voices: int = BABBLE_VOICES
) -> np.ndarray:
    """``voices`` of ``talkers`` (16-bit PCM utterances) talking at once, each from a random
    point and looped to ``n`` samples, summed to unit RMS."""
    speech = [p[b[0] : b[1]] for p in talkers if (b := speech_bounds(p)) is not None]
    if len(speech) < voices:
        raise ValueError(f"babble needs {voices} other utterances with speech, got {len(speech)}")
    mix = np.zeros(n)
    for i in rng.choice(len(speech), size=voices, replace=False):
        voice = speech[int(i)].astype(float)
        voice /= np.sqrt(np.mean(voice**2))
        start = int(rng.integers(voice.size))
        mix += np.resize(np.roll(voice, -start), n)
    return mix / np.sqrt(np.mean(mix**2))


def noise(
    kind: str, n: int, rng: np.random.Generator, talkers: Sequence[np.ndarray] = ()
) -> np.ndarray:
    """Unit-RMS noise of ``kind`` (one of ``NOISE_KINDS``)."""
    if kind == "white":
        return white_noise(n, rng)
    if kind == "pink":
        return pink_noise(n, rng)
    if kind == "babble":
        return babble_noise(talkers, n, rng)
    raise ValueError(f"unknown noise {kind!r}; known: {', '.join(NOISE_KINDS)}")


def _speech_span(pcm: np.ndarray) -> slice:
    bounds = speech_bounds(pcm)
    if bounds is None:
        raise ValueError("the utterance is silent: an SNR needs speech")
    return slice(*bounds)


def mix_at_snr(speech: np.ndarray, noise_samples: np.ndarray, snr_db: float) -> np.ndarray:
    """16-bit ``speech`` with ``noise_samples`` (at least as long) added at ``snr_db``."""
    span = _speech_span(speech)
    s = speech.astype(float)
    n = noise_samples[: s.size].astype(float)
    gain = np.sqrt(np.mean(s[span] ** 2) / (np.mean(n[span] ** 2) * 10 ** (snr_db / 10)))
    mixed = s + gain * n
    peak = np.max(np.abs(mixed))
    if peak > FULL_SCALE:
        mixed *= FULL_SCALE / peak  # both scaled alike: the SNR holds
    return np.round(mixed).astype(np.int16)


def snr_db(speech: np.ndarray, mixed: np.ndarray) -> float:
    """The SNR of ``mixed`` against the clean ``speech`` it was made from, over the speech.

    A mix scaled down to avoid clipping is first scaled back by least squares."""
    span = _speech_span(speech)
    s, m = speech[span].astype(float), mixed[span].astype(float)
    scale = float(np.dot(m, s) / np.dot(s, s))
    residual = m / scale - s
    return float(10 * np.log10(np.mean(s**2) / np.mean(residual**2)))


def band_limit(samples: np.ndarray, rate: int, band: tuple[float, float] = BAND_HZ) -> np.ndarray:
    """The telephone band of float ``samples``: a 4th-order zero-phase Butterworth band-pass."""
    sos = butter(4, band, btype="bandpass", fs=rate, output="sos")
    return sosfiltfilt(sos, samples)


_MULAW_BIAS = 0x84
_MULAW_CLIP = 8159
"""The largest magnitude mu-law codes, on the 14-bit scale G.711 works on."""
_MULAW_SEGMENTS = np.array([0x3F, 0x7F, 0xFF, 0x1FF, 0x3FF, 0x7FF, 0xFFF, 0x1FFF])
"""The top of each segment's magnitudes (biased, 14-bit)."""


def mulaw_encode(pcm: np.ndarray) -> bytes:
    """16-bit PCM to G.711 mu-law, one byte a sample: the sample's top 14 bits, its magnitude
    biased and put in one of 8 segments of 16 steps, every bit inverted."""
    x = pcm.astype("<i2").astype(np.int32) >> 2
    negative = x < 0
    magnitude = np.minimum(np.where(negative, -x, x), _MULAW_CLIP) + (_MULAW_BIAS >> 2)
    segment = np.searchsorted(_MULAW_SEGMENTS, magnitude)  # the first top >= magnitude
    code = np.where(segment < 8, (segment << 4) | ((magnitude >> (segment + 1)) & 0xF), 0x7F)
    return (code ^ np.where(negative, 0x7F, 0xFF)).astype(np.uint8).tobytes()


def mulaw_decode(data: bytes) -> np.ndarray:
    """G.711 mu-law bytes to 16-bit PCM."""
    code = ~np.frombuffer(data, dtype=np.uint8).astype(np.int32) & 0xFF
    magnitude = (((code & 0x0F) << 3) + _MULAW_BIAS) << ((code & 0x70) >> 4)
    return np.where(code & 0x80, _MULAW_BIAS - magnitude, magnitude - _MULAW_BIAS).astype("<i2")


_ALAW_SEGMENTS = np.array([0x1F, 0x3F, 0x7F, 0xFF, 0x1FF, 0x3FF, 0x7FF, 0xFFF])
"""The top of each A-law segment's magnitudes (13-bit)."""


def alaw_encode(pcm: np.ndarray) -> bytes:
    """16-bit PCM to G.711 A-law, one byte a sample: the sample's top 13 bits, its magnitude
    (one less for a negative sample) put in one of 8 segments of 16 steps, the first two
    segments of equal steps, the even bits inverted."""
    x = pcm.astype("<i2").astype(np.int32) >> 3
    negative = x < 0
    magnitude = np.where(negative, -x - 1, x)  # at most 0xFFF: always in a segment
    segment = np.searchsorted(_ALAW_SEGMENTS, magnitude)  # the first top >= magnitude
    code = (segment << 4) | ((magnitude >> np.maximum(segment, 1)) & 0xF)
    return (code ^ np.where(negative, 0x55, 0xD5)).astype(np.uint8).tobytes()


def alaw_decode(data: bytes) -> np.ndarray:
    """G.711 A-law bytes to 16-bit PCM."""
    code = np.frombuffer(data, dtype=np.uint8).astype(np.int32) ^ 0x55
    segment = (code & 0x70) >> 4
    step = ((code & 0x0F) << 4) + 8
    magnitude = np.where(segment == 0, step, (step + 0x100) << np.maximum(segment - 1, 0))
    return np.where(code & 0x80, magnitude, -magnitude).astype("<i2")


@dataclass(frozen=True)
class LineResult:
    """A signal after the phone line, and what the line did to it."""

    pcm: np.ndarray
    """16-bit PCM at the caller's rate, sample-aligned with the input."""
    packets: int
    lost: int
    """Packets lost on the way or arriving after their playout slot."""
    delay_ms: float
    """The jitter buffer's delay, which a caller hears on top of the agent's own."""

    @property
    def loss_pct(self) -> float:
        return 100.0 * self.lost / self.packets if self.packets else 0.0


@dataclass(frozen=True)
class PhoneLine:
    """A narrowband call path; see the module docstring for what each setting does."""

    loss_pct: float = 2.0
    """Packets lost on the network, on average (%)."""
    burst_packets: float = 3.0
    """Mean length of a loss burst, in packets."""
    jitter_ms: float = 20.0
    """Standard deviation of the network delay's variation."""
    buffer_ms: float = 60.0
    """Jitter buffer: how long after it was sent a packet is played."""
    band: tuple[float, float] = BAND_HZ

    def carry(self, pcm: np.ndarray, rate: int, rng: np.random.Generator) -> LineResult:
        """``pcm`` (16-bit, at ``rate``) as it comes out at the far end."""
        narrow = band_limit(resample(pcm.astype(float) / FULL_SCALE, rate, PHONE_RATE), PHONE_RATE)
        coded = mulaw_decode(mulaw_encode(to_int16(narrow))).astype(float)
        per_packet = PHONE_RATE * PACKET_MS // 1000
        packets = -(-coded.size // per_packet)
        lost = self._lost(packets, rng)
        for k in np.flatnonzero(lost):
            coded[k * per_packet : (k + 1) * per_packet] = 0.0
        out = to_int16(resample(coded / FULL_SCALE, PHONE_RATE, rate))
        out = np.pad(out, (0, max(0, pcm.size - out.size)))[: pcm.size]
        return LineResult(out, packets, int(lost.sum()), self.buffer_ms)

    def _lost(self, packets: int, rng: np.random.Generator) -> np.ndarray:
        """Which packets never play: lost in a burst, or later than the buffer allows."""
        p_loss = self.loss_pct / 100.0
        leave_burst = 1.0 / max(1.0, self.burst_packets)
        enter_burst = p_loss * leave_burst / (1.0 - p_loss) if p_loss < 1.0 else 1.0
        lost = np.zeros(packets, dtype=bool)
        bad = rng.random() < p_loss  # start in the chain's steady state
        draws = rng.random(packets)
        for k in range(packets):
            lost[k] = bad
            bad = draws[k] >= leave_burst if bad else draws[k] < enter_burst
        late = np.abs(rng.normal(0.0, self.jitter_ms, packets)) > self.buffer_ms
        return lost | late
