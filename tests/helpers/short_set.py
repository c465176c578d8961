"""The short set: five dialogues whose seeker turns are about 1.5 s of speech (the built-in
ones average 6.5 s), for tests that check bookkeeping (resume, faults, protocols, records) and
not what long speech does. Its audio is synthesized with Piper once per test session."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from voicebench.dialogues import Dialogue, load_dialogues

DIALOGUES = Path(__file__).resolve().parents[1] / "data" / "short" / "dialogues.jsonl"
SHORT_REPLY = "I hear you. That sounds hard."
"""A reply of about 2 s, for tests that do not look at what the agent says."""


@dataclass(frozen=True)
class ShortSet:
    dialogues_path: Path
    fixtures_dir: Path
    dialogues: tuple[Dialogue, ...]

    def item(self, dialogue_id: str) -> Dialogue:
        return next(d for d in self.dialogues if d.id == dialogue_id)

    def run(
        self, dialogues, out_dir: Path, spec_path: Path = Path("agents/scripted.toml")
    ) -> dict[str, Any]:
        """``replay`` arguments for ``dialogues`` of this set, written to ``out_dir``."""
        return dict(
            spec_path=spec_path,
            dialogues=dialogues,
            dialogues_path=self.dialogues_path,
            fixtures_dir=self.fixtures_dir,
            out_dir=out_dir,
        )

    def options(self) -> list[str]:
        """The same set for ``voicebench run``."""
        return ["--dialogues", str(self.dialogues_path), "--fixtures", str(self.fixtures_dir)]


WORDS = ("Yeah.", "Uh huh.", "Right.")
"""The backchannel words, taken from the built-in fixtures rather than synthesized: a word
lasts about a quarter of a second, and one Piper rendition in five of "Yeah." is too short for
the default VAD's 0.2 s start, so a fresh rendition would make a test's false yield a draw."""


def make_short_set(folder: Path) -> ShortSet:
    from voicebench.fixtures import (
        BUILTIN_FIXTURES,
        Manifest,
        load_manifest,
        save_manifest,
        synthesize_fixtures,
    )

    words = [e for e in load_manifest(BUILTIN_FIXTURES).entries if e.text in WORDS]
    assert len(words) == len(WORDS), "a backchannel word is missing from the built-in fixtures"
    for entry in words:
        (folder / entry.path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(BUILTIN_FIXTURES / entry.path, folder / entry.path)
    save_manifest(folder, Manifest(entries=tuple(words)))
    dialogues = tuple(load_dialogues(DIALOGUES))
    synthesize_fixtures(dialogues, folder)
    return ShortSet(DIALOGUES, folder, dialogues)
