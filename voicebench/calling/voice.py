"""The caller's voice: each seeker line synthesized with Piper into the call folder's
``fixtures/`` as it comes (so the end of its speech is known to the sample)."""

from __future__ import annotations

from pathlib import Path

from voicebench.fixtures import Manifest, load_manifest, save_manifest
from voicebench.fixtures.manifest import fixture_key
from voicebench.fixtures.synth import (
    DEFAULT_VOICE,
    FIXTURE_SAMPLE_RATE,
    SYNTH_SETTINGS,
    PiperSpeaker,
    render_fixture,
)


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
