"""How a reply sounds: its speaking rate, loudness, clipping and clicks, read off the audio the
caller heard (16-bit PCM, as a turn keeps it).

- **Speaking rate**: the reply's words per minute over its audible time (first audible sample
  to the end of the last, its pauses included, kept as ``audible_ms``). In a run, the words
  are what the agent said it spoke (``TurnRecord.reply_text``), for a reply that played to
  its end; none where the agent gives no text (a black box that sends audio alone). Once the
  reply has been transcribed back for judging, the report counts the words heard instead
  (``with_heard_words``), for every kind of agent.
- **Loudness**: integrated loudness in LUFS (ITU-R BS.1770-4, gated, by ``pyloudnorm``) of the
  reply's audible stretch; none for a reply shorter than the meter's 400 ms block.
- **Clipping**: the share of the reply's audible stretch's samples at full scale
  (``CLIP_LEVEL``), where the waveform was cut flat.
- **Clicks**: where sound starts or stops abruptly, as when audio begins mid-waveform or a
  clear cuts it off: a sample of at least ``CLICK_LEVEL`` of full scale right after (or right
  before) ``CLICK_QUIET_MS`` of silence. Speech fades in and out over several milliseconds,
  so none is found in it.
"""

from __future__ import annotations

import numpy as np

from voicebench._model import FrozenModel
from voicebench.fixtures.audio import SPEECH_THRESHOLD

CLIP_LEVEL = 32_700
"""A 16-bit sample this far from zero or further is clipped (full scale is 32,767)."""
CLICK_LEVEL = 0.25
"""A sound that starts or stops this loud (of full scale), next to silence, is a click."""
CLICK_QUIET_MS = 5.0
"""The silence a click borders on."""
MIN_LOUDNESS_MS = 400.0
"""The loudness meter's block: a shorter reply has no integrated loudness."""


class Sound(FrozenModel):
    """How one reply sounds (see the module docstring for each rule)."""

    words_per_minute: float | None = None
    audible_ms: float | None = None
    """The reply's audible time, which its speaking rate is over (None in older logs)."""
    """Its speaking rate; None without the reply's text or under a second of audio."""
    loudness_lufs: float | None = None
    """Integrated loudness; None under 400 ms of audio or for a reply all below the gate."""
    clipped_share: float
    """The share of its samples at full scale."""
    clicks_ms: tuple[float, ...] = ()
    """Where in its audio (ms) sound starts or stops abruptly."""


def sound_of(audio: np.ndarray, rate: int, text: str = "") -> Sound | None:
    """How the reply in ``audio`` (16-bit PCM at ``rate``) sounds, its words from ``text``;
    None when nothing in it is audible."""
    pcm = audio.astype(np.int32)
    loud = np.flatnonzero(np.abs(pcm) > SPEECH_THRESHOLD * 32768.0)
    if loud.size == 0:
        return None
    first, last = int(loud[0]), int(loud[-1]) + 1
    heard = pcm[first:last]
    audible_ms = heard.size * 1000 / rate
    return Sound(
        words_per_minute=words_per_minute(text, audible_ms),
        audible_ms=round(audible_ms, 1),
        loudness_lufs=_loudness(heard, rate) if audible_ms >= MIN_LOUDNESS_MS else None,
        clipped_share=round(float(np.mean(np.abs(heard) >= CLIP_LEVEL)), 6),
        clicks_ms=tuple(round(k * 1000 / rate, 1) for k in _clicks(pcm, rate)),
    )


def words_per_minute(text: str, audible_ms: float) -> float | None:
    """The rate of ``text``'s words over ``audible_ms``; None for no words or under 1 s."""
    words = len(text.split())
    return round(words / audible_ms * 60_000, 1) if words and audible_ms >= 1000 else None


def with_heard_words(sound: Sound | None, heard: str) -> Sound | None:
    """``sound`` with its speaking rate counted from ``heard``, the transcript of the reply's
    audio; as it was when there is none, or no audible time to count it over."""
    if sound is None or sound.audible_ms is None or not heard.strip():
        return sound
    return sound.model_copy(update={"words_per_minute": words_per_minute(heard, sound.audible_ms)})


def _loudness(pcm: np.ndarray, rate: int) -> float | None:
    import pyloudnorm  # loaded when first needed (it loads scipy)

    value = float(pyloudnorm.Meter(rate).integrated_loudness(pcm / 32768.0))
    return round(value, 2) if np.isfinite(value) else None


def _clicks(pcm: np.ndarray, rate: int) -> list[int]:
    """The samples where sound starts or stops at ``CLICK_LEVEL`` or more next to silence
    (before the audio and after it, the caller heard silence)."""
    quiet = int(CLICK_QUIET_MS * rate / 1000)
    mag = np.abs(pcm)
    sounding = np.concatenate([[0], np.cumsum(mag > SPEECH_THRESHOLD * 32768.0)])
    strong = np.flatnonzero(mag >= CLICK_LEVEL * 32768.0)
    before = sounding[strong] - sounding[np.maximum(0, strong - quiet)]
    after = sounding[np.minimum(mag.size, strong + 1 + quiet)] - sounding[strong + 1]
    return [int(k) for k in strong[(before == 0) | (after == 0)]]
