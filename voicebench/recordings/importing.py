"""A real call becomes a test (``voicebench dialogues import recording``): the caller's turns
cut from a recording into dialogue items and audio fixtures, so the same caller can be replayed
against another agent, or the next version of this one.

Each recording is read and timed as ``recordings analyze`` reads it (``folder.hear_call``): its
caller utterances, what the caller said and what the agent answered (Whisper). It becomes one
item, as in an analysis's ``dialogues.jsonl``: the caller's words as seeker turns, the agent's as
supporter turns, up to the last turn the agent answered, whose answer is the item's reference,
so a replay's replies are judged pairwise against what the agent said in the recorded call.
Each utterance is cut from the caller's channel (16 kHz) with ``LEAD_S`` before its first
sound and ``TAIL_S`` after its end of speech (less where the caller's previous or next
utterance is nearer) and written as a fixture whose voice is ``recorded``: its speech start
and end are those read off the recording, so a replay's TTFA runs from the caller's end of
speech as the recording has it.

Writes ``OUT/items.jsonl`` and ``OUT/fixtures/`` (its manifest and WAVs); items already there
from other recordings are kept, one from the same recording is replaced. Replay with
``voicebench run --dialogues OUT/items.jsonl --fixtures OUT/fixtures``. A fixture is found by
its text, so two utterances transcribed alike in one folder share the later one's audio.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from voicebench.dialogues import Dialogue, load_dialogues, save_dialogues
from voicebench.errors import InputError
from voicebench.fixtures import FixtureEntry, Manifest, load_manifest, save_manifest, write_wav
from voicebench.fixtures.manifest import file_sha256
from voicebench.fixtures.synth import RECORDED_VOICE, recorded_key
from voicebench.recordings.analyze import RATE, check_recording
from voicebench.recordings.folder import (
    CALLER_SIDES,
    HeardCall,
    call_ids,
    call_item,
    hear_call,
    recording_files,
)

LEAD_S = 0.3
TAIL_S = 0.3
ITEMS_FILE = "items.jsonl"
FIXTURES_DIR = "fixtures"


def import_recordings(
    paths: Sequence[Path],
    out_dir: Path,
    *,
    caller: str = "left",
    transcribe: Callable,
    progress: Callable[[int, int, Path], None] | None = None,
) -> list[Dialogue]:
    """Each recording in ``paths`` (files or folders) as a dialogue item with its caller's
    utterances as fixtures, written to ``out_dir``; returns the items made."""
    if caller not in CALLER_SIDES:
        raise InputError(f"must be {', '.join(CALLER_SIDES)}", field="caller")
    files = recording_files(paths)
    for f in files:
        check_recording(f)  # refused naming the file, before anything is written
    items_path, fixtures = out_dir / ITEMS_FILE, out_dir / FIXTURES_DIR
    kept = {d.id: d for d in load_dialogues(items_path)} if items_path.is_file() else {}
    made = []
    for k, (path, call_id) in enumerate(zip(files, call_ids(files), strict=True)):
        heard = hear_call(path, call_id, caller, transcribe)
        entries = load_manifest(fixtures).by_key()
        for entry in _cut(heard, fixtures):
            entries[entry.key] = entry
        save_manifest(fixtures, Manifest(entries=tuple(entries.values())))
        item = call_item(heard.call)
        kept[item.id] = item
        made.append(item)
        save_dialogues(kept.values(), items_path)
        if progress is not None:
            progress(k + 1, len(files), path)
    return made


def _cut(heard: HeardCall, fixtures: Path) -> list[FixtureEntry]:
    """Each caller utterance of the call as a recorded fixture in ``fixtures``."""
    pcm, turns = heard.recording.caller, heard.call.turns
    out = []
    for n, (t, text) in enumerate(zip(turns, heard.call.said, strict=True)):
        before = turns[n - 1].end_s if n else 0.0
        after = turns[n + 1].start_s if n + 1 < len(turns) else pcm.size / RATE
        lo = round(max(before, t.start_s - LEAD_S) * RATE)
        hi = round(min(after, t.end_s + TAIL_S) * RATE)
        clip = np.ascontiguousarray(pcm[lo:hi])
        start = round(t.start_s * RATE) - lo
        end = min(round(t.end_s * RATE) - lo, clip.size)
        if clip.size == 0 or not 0 <= start < end:
            continue
        key = recorded_key(text)
        path = Path("audio") / f"{key}.wav"
        write_wav(fixtures / path, clip, RATE)
        out.append(
            FixtureEntry(
                key=key,
                text=text,
                voice=RECORDED_VOICE,
                sample_rate=RATE,
                path=path.as_posix(),
                sha256=file_sha256(fixtures / path),
                num_samples=clip.size,
                speech_start_sample=start,
                speech_end_sample=end,
            )
        )
    return out
