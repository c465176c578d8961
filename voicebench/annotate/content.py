"""What the rating page may show, found once when it starts: each item's conversation, the
seeker's last turn as audio, and every judged reply as heard, with its audio. For a judging of
whole calls (``voicebench converse``): who the caller is and how the calls opened, and each
agent's whole call as heard, with its audio.

Audio is named by opaque ids drawn at start (``secrets.token_urlsafe``): a request can only
pick among the files listed here, never name a path. Contestant names stay on this side:
the page gets a task's text and clip ids, nothing that says whose reply is which.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from pathlib import Path

from voicebench._folder import Outside
from voicebench.calling.records import read_calls
from voicebench.dialogues import Dialogue
from voicebench.errors import InputError
from voicebench.fixtures.manifest import Manifest, load_manifest
from voicebench.fixtures.synth import lookup_fixture
from voicebench.judging import Reply, judged_items, judged_runs, read_judging_header, read_replies
from voicebench.judging.models import JudgedUnit
from voicebench.runlog import read_header


def fixture_folders(run_dirs: list[Path]) -> list[tuple[Path, Manifest]]:
    """The runs' fixture folders that have a manifest, each read once."""
    folders = dict.fromkeys(Path(read_header(d).fixtures_dir) for d in run_dirs)
    return [(f, load_manifest(f)) for f in folders if (f / "manifest.json").is_file()]


def seeker_audio(folders: list[tuple[Path, Manifest]], dialogue: Dialogue) -> Path | None:
    """The fixture that speaks the item's final seeker turn."""
    text = dialogue.turns[dialogue.final_turn_index].text
    for folder, manifest in folders:
        entry = lookup_fixture(manifest, text)
        if entry is not None and (folder / entry.path).is_file():
            return folder / entry.path
    return None


@dataclass(frozen=True)
class Line:
    """One line of what the page shows before the two replies."""

    speaker: str
    text: str


@dataclass
class Library:
    """A judging folder's items, replies and audio, ready to serve."""

    dialogues: dict[str, Dialogue]
    replies: dict[tuple[str, str], Reply]
    unit: JudgedUnit = "reply"
    """``call``: each reply is a whole simulated call."""
    openings: dict[str, tuple[Line, ...]] = field(default_factory=dict)
    """Per call id: the caller, and the greeting the calls opened with."""
    clips: dict[str, Path] = field(default_factory=dict)
    """Opaque id -> audio file."""
    reply_clip: dict[tuple[str, str], str] = field(default_factory=dict)
    seeker_clip: dict[str, str] = field(default_factory=dict)
    refused: dict[tuple[str, str], str] = field(default_factory=dict)
    """Replies whose recorded audio path led out of its folder, and why."""

    def _clip(self, path: Path | None) -> str | None:
        if path is None or not path.is_file():
            return None
        clip = secrets.token_urlsafe(12)
        self.clips[clip] = path.resolve()
        return clip

    def conversation(self, item_id: str) -> tuple[Line, ...]:
        if self.unit == "call":
            return self.openings[item_id]
        return tuple(Line(t.speaker, t.text) for t in self.dialogues[item_id].turns)

    @property
    def missing_audio(self) -> list[str]:
        """Replies whose audio file is not there (they are rated from their text)."""
        return sorted(f"{i} {c}" for (i, c) in self.replies if (i, c) not in self.reply_clip)


def load_library(judging_dir: Path) -> Library:
    header = read_judging_header(judging_dir)
    run_dirs = judged_runs(judging_dir, header)
    replies = {(r.item_id, r.contestant): r for r in read_replies(judging_dir) if r.failed is None}
    if not replies:
        raise InputError("no judged replies to rate", file=judging_dir / "replies.jsonl")
    dialogues = judged_items(run_dirs)
    rated = {item for item, _ in replies}
    lib = Library(
        dialogues={i: d for i, d in dialogues.items() if i in rated},
        replies=replies,
        unit=header.unit,
    )
    if header.unit == "call":
        for run_dir in run_dirs:
            for call in read_calls(run_dir):
                lib.openings[call.call_id] = (
                    Line("Caller", call.persona.summary),
                    Line("Supporter", call.greeting),
                )
        return _clips(lib, judging_dir, [])
    return _clips(lib, judging_dir, fixture_folders(run_dirs))


def _clips(lib: Library, judging_dir: Path, folders: list[tuple[Path, Manifest]]) -> Library:
    """Opaque ids for every reply's audio and (from ``folders``) each item's last seeker
    turn."""
    replies = lib.replies
    for key, reply in sorted(replies.items()):
        try:
            clip = lib._clip(reply.audio_file(judging_dir))
        except Outside as exc:
            lib.refused[key] = str(exc)  # rated from its text, like a reply with no audio
            continue
        if clip is not None:
            lib.reply_clip[key] = clip
    for item_id, dialogue in sorted(lib.dialogues.items()):
        clip = lib._clip(seeker_audio(folders, dialogue))
        if clip is not None:
            lib.seeker_clip[item_id] = clip
    return lib
