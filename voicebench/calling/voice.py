"""The caller's voice: each seeker line synthesized with Piper into the call folder's
``fixtures/`` as it comes (so the end of its speech is known to the sample), and a whole call's
audio to listen to."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from voicebench.fixtures import Manifest, load_manifest, save_manifest
from voicebench.fixtures.audio import read_wav, speech_bounds
from voicebench.fixtures.manifest import fixture_key
from voicebench.fixtures.synth import (
    DEFAULT_VOICE,
    FIXTURE_SAMPLE_RATE,
    SYNTH_SETTINGS,
    PiperSpeaker,
    render_fixture,
)
from voicebench.replaying.play import AUDIO_RATE

CALL_GAP_S = 0.5
"""The silence between two turns in a call's audio."""


class Lines:
    """The seeker's lines as fixtures in ``OUT/fixtures``, synthesized as they come."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.manifest = load_manifest(folder)
        self._speaker: PiperSpeaker | None = None

    def add(self, text: str) -> Manifest:
        key = fixture_key(text, DEFAULT_VOICE, FIXTURE_SAMPLE_RATE, SYNTH_SETTINGS)
        entries = self.manifest.by_key()
        if key not in entries:
            if self._speaker is None:
                self._speaker = PiperSpeaker()
            entries[key] = render_fixture(self._speaker, self.folder, text)
            self.manifest = Manifest(entries=tuple(entries.values()))
            save_manifest(self.folder, self.manifest)
        return self.manifest

    def audio(self, text: str) -> np.ndarray:
        """The line as synthesized (16 kHz)."""
        key = fixture_key(text, DEFAULT_VOICE, FIXTURE_SAMPLE_RATE, SYNTH_SETTINGS)
        entry = self.manifest.by_key()[key]
        return read_wav(self.folder / entry.path, expect_rate=FIXTURE_SAMPLE_RATE)


def call_audio(parts: Sequence[np.ndarray]) -> np.ndarray:
    """A call's turns one after another (caller, agent, caller...), each trimmed to its speech
    and followed by ``CALL_GAP_S`` of silence: the whole call to listen to, its pauses
    shortened (the timings are in the run log)."""
    gap = np.zeros(int(CALL_GAP_S * AUDIO_RATE), dtype=np.int16)
    out: list[np.ndarray] = []
    for pcm in parts:
        bounds = speech_bounds(pcm) if pcm.size else None
        if bounds is None:
            continue
        pad = AUDIO_RATE // 20  # 50 ms either side, so no soft onset is clipped
        lo, hi = max(0, bounds[0] - pad), min(pcm.size, bounds[1] + pad)
        out += [pcm[lo:hi].astype(np.int16), gap]
    return np.concatenate(out) if out else np.zeros(0, dtype=np.int16)
