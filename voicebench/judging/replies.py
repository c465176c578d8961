"""Contestants' replies as the listener heard them.

Judges read transcripts of audio, never the text an LLM meant to say: a reply that TTS
mangled or that was cut off is judged as it sounded. For every agent run, the final turn of
each item has its captured audio transcribed with faster-whisper (the packaged tiny.en,
the same model the agents hear the user with); the LLM's text is kept beside it with the
word-level difference. Human replies (the dataset's reference reply, plus any from
``--human-replies`` files) are spoken by the same Piper voice and transcribed the same way,
so humans and models meet on equal footing.

Human-reply files are JSONL, one reply per line::

    {"item_id": "reg-job-loss-01", "name": "alice", "reply": "That sounds exhausting..."}

``name`` becomes the contestant ``human/NAME`` (letters, digits, ``._-``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
from pydantic import Field

from voicebench._jsonl import json_lines
from voicebench._model import FrozenModel, validate_record
from voicebench.dialogues import Dialogue
from voicebench.errors import InputError
from voicebench.fixtures.audio import read_wav, write_wav
from voicebench.judging.models import HUMAN_FAMILY, ContestantKind, Reply
from voicebench.runlog import ReplayMode, read_header, read_turns
from voicebench.text import wer, word_diff

REFERENCE = "human/reference"
SAMPLE_RATE = 16_000


class HumanReplyRecord(FrozenModel):
    """One line of a human-replies file."""

    item_id: str = Field(min_length=1)
    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,40}$")
    reply: str = Field(min_length=1, max_length=4000)


def load_human_replies(path: Path, items: set[str]) -> list[HumanReplyRecord]:
    """Validate a human-replies file; errors name the file, the line and the field."""
    records: list[HumanReplyRecord] = []
    seen: set[tuple[str, str]] = set()
    for line, data in json_lines(path, tail="keep"):
        rec = validate_record(HumanReplyRecord, data, file=path, record=line)
        if rec.item_id not in items:
            raise InputError(
                f"no judged item has id {rec.item_id!r}",
                file=path,
                record=line,
                field="item_id",
            )
        if rec.name == "reference" or (rec.name, rec.item_id) in seen:
            raise InputError(
                f"a second reply by {rec.name!r} for this item",
                file=path,
                record=line,
                field="name",
            )
        seen.add((rec.name, rec.item_id))
        records.append(rec)
    if not records:
        raise InputError("no replies in the file", file=path)
    return records


class HumanVoice:
    """The reference Piper voice, speaking a human reply to a 16 kHz WAV. It is repeatable: a
    reply sounds the same in every judging folder, so it is heard the same and its verdicts'
    cache keys match."""

    def __init__(self) -> None:
        from voicebench.fixtures.synth import PiperSpeaker

        self._speaker = PiperSpeaker(repeatable=True)

    def __call__(self, text: str) -> np.ndarray:
        from voicebench.fixtures.synth import render_utterance

        return render_utterance(
            self._speaker.sentences(text), self._speaker.sample_rate, SAMPLE_RATE
        )


def _heard(text: str, heard: str) -> dict:
    return {
        "heard": heard,
        "text": text,
        "word_diff": word_diff(text, heard),
        "heard_wer": round(wer(text, heard), 4) if text.strip() else None,
    }


def agent_replies(
    run_dir: Path, transcribe: Callable[[np.ndarray], str], done: set[tuple[str, str]]
) -> list[Reply]:
    """The final-turn replies of one run not in ``done`` ((contestant, item) pairs); of a
    repeated run, the first pass's."""
    header = read_header(run_dir)
    if header.mode is not ReplayMode.TEACHER_FORCED:
        raise InputError(
            "judging needs a teacher-forced run, so every contestant answers the same history",
            file=run_dir / "run.json",
            field="mode",
        )
    name, family = header.agent.name, header.agent.family
    out: list[Reply] = []
    for rec in read_turns(run_dir):
        if not rec.final or rec.repeat or (name, rec.dialogue_id) in done:
            continue
        base = {
            "item_id": rec.dialogue_id,
            "contestant": name,
            "kind": ContestantKind.AGENT,
            "family": family,
            "run_dir": str(run_dir),
            "audio_path": rec.audio_path,
        }
        if rec.error is not None:
            out.append(
                Reply(
                    **base,
                    heard="",
                    text=rec.reply_text,
                    failed=f"turn failed: {rec.error.kind}: {rec.error.reason}",
                )
            )
            continue
        audio = (
            read_wav(run_dir / rec.audio_path, expect_rate=SAMPLE_RATE) if rec.audio_path else None
        )
        heard = transcribe(audio) if audio is not None else ""
        failed = None if heard.strip() else "nothing intelligible was heard"
        out.append(Reply(**base, **_heard(rec.reply_text, heard), failed=failed))
    return out


def human_replies(
    dialogues: Sequence[Dialogue],
    extra: Sequence[HumanReplyRecord],
    audio_dir: Path,
    transcribe: Callable[[np.ndarray], str],
    speak: Callable[[str], np.ndarray],
    done: set[tuple[str, str]],
) -> list[Reply]:
    """The reference reply of every item, and the extra human replies, spoken and transcribed."""
    wanted = [(REFERENCE, d.id, d.reference_reply) for d in dialogues]
    wanted += [(f"human/{r.name}", r.item_id, r.reply) for r in extra]
    out: list[Reply] = []
    for contestant, item_id, text in wanted:
        if (contestant, item_id) in done:
            continue
        digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
        path = audio_dir / f"{contestant.replace('/', '__')}__{item_id}__{digest}.wav"
        if path.exists():
            pcm = read_wav(path, expect_rate=SAMPLE_RATE)
        else:
            pcm = speak(text)
            path.parent.mkdir(parents=True, exist_ok=True)
            write_wav(path, pcm, SAMPLE_RATE)
        heard = transcribe(pcm)
        out.append(
            Reply(
                item_id=item_id,
                contestant=contestant,
                kind=ContestantKind.HUMAN,
                family=HUMAN_FAMILY,
                audio_path=str(path),
                **_heard(text, heard),
                failed=None if heard.strip() else "nothing intelligible was heard",
            )
        )
    return out


def answered_by(run_dirs: Sequence[Path]) -> dict[tuple[str, str], Path]:
    """The run each (agent name, item) final reply comes from. A contestant is an agent name;
    its items may come from several runs (a campaign's dialogue sets), but one item from one
    run only."""
    answered: dict[tuple[str, str], Path] = {}
    for run_dir in run_dirs:
        name = read_header(run_dir).agent.name
        for r in read_turns(run_dir):
            if not r.final or r.repeat:  # a repeated run's first pass is judged
                continue
            other = answered.setdefault((name, r.dialogue_id), run_dir)
            if other != run_dir:
                raise InputError(
                    f"agent name {name!r} answers {r.dialogue_id!r} here and in {other}; "
                    "contestants need distinct names",
                    file=run_dir / "run.json",
                    field="agent.name",
                )
    return answered
