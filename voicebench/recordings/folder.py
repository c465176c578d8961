"""Recorded calls written as a run folder (``voicebench recordings analyze``), so ``check``,
``compare``, ``report`` and the pytest plugin read them as they read a replay.

Each recording becomes one dialogue (its id the file's name) and each caller utterance one turn:
its TTFA is the response latency read off the recording (end of speech to the agent's first
audio after it; the agent is a black box, so a turn has no stages), a turn the agent never
answered is a failed turn (``no_answer``), and a barge-in is recorded as the ``barge-in``
scenario with the agent's stop time, so the report's interruption figures include it. Both
channels are transcribed with the Whisper model replies are heard with; the caller's words
and the agent's replies also make the folder's ``dialogues.jsonl``, an item per call.

Beside the run's files:

- ``calls/CALL.wav``: the recording as analyzed (16 kHz, the caller on the left, the agent on the
  right), each turn's ``call`` pointing into it, so its milestones are moments of it;
- ``calls.jsonl``: one ``RecordedCall`` per recording: which channel was the caller's (given,
  read off the recording's own comment, or guessed and why), and every turn as read off it
  (talk-over, dead air, barge-ins, the gaps inside each reply).

A recording is finished when its call line is written (after its turns and its item); a killed
analysis run again with the same recordings and ``--out`` keeps the finished ones and does the
rest.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

import numpy as np

from voicebench._jsonl import append_record, read_models, write_atomic
from voicebench._model import FrozenModel
from voicebench._version import __version__
from voicebench.agentspec import AgentSpec
from voicebench.dialogues import Dialogue, Role, Turn
from voicebench.errors import InputError
from voicebench.fixtures.audio import write_wav
from voicebench.fixtures.manifest import file_sha256
from voicebench.recordings.analyze import (
    MIN_GAP_S,
    RecordedTurn,
    Recording,
    check_recording,
    guess_caller,
    read_recording,
    recorded_turns,
)
from voicebench.recordings.calls import CALLER_COMMENT, CALLS_DIR, written_caller
from voicebench.recordings.speech import RATE, Span, speech_frames, speech_spans, talk_silences
from voicebench.remotespec import RemoteSpec
from voicebench.runlog import (
    TURNS_FILE,
    CallRef,
    ReplayMode,
    RunHeader,
    RunStore,
    ScenarioOutcome,
    TurnError,
    TurnRecord,
)
from voicebench.timing import TurnTiming

SUFFIXES = (".wav", ".flac", ".ogg", ".opus")
INAUDIBLE = "(inaudible)"
CALLS_FILE = "calls.jsonl"
DIALOGUES_FILE = "dialogues.jsonl"
CALLER_SIDES = ("left", "right", "auto")


class RecordedCall(FrozenModel):
    """One recording as analyzed (a line of ``calls.jsonl``)."""

    call_id: str
    file: str
    """The recording as given."""
    caller: str
    """The caller's channel: ``left`` or ``right``."""
    caller_source: Literal["given", "recording", "guessed"] = "given"
    """Where that channel came from: given (``--caller left`` or ``right``), read off the
    recording's comment (``--caller auto`` on a call voicebench recorded:
    ``calls.written_caller``), or guessed from the speech (``--caller auto`` on any other)."""
    caller_guess: str | None = None
    """Why that channel, when it was guessed."""
    duration_s: float
    turns: tuple[RecordedTurn, ...]
    said: tuple[str, ...]
    """What the caller said in each turn (Whisper)."""
    replies: tuple[str, ...]
    """What the agent said after each turn, up to the caller's next utterance."""


@dataclass(frozen=True)
class HeardCall:
    """A recording read, timed and transcribed: its turns, and each turn's words and reply."""

    recording: Recording
    call: RecordedCall
    said_spans: tuple[tuple[Span, ...], ...]
    """Each turn's caller speech."""


def recording_files(paths: Sequence[Path]) -> list[Path]:
    """The recordings named: files as given, folders by their audio files (sorted)."""
    out: list[Path] = []
    for p in paths:
        if p.is_dir():
            found = sorted(f for f in p.iterdir() if f.suffix.lower() in SUFFIXES)
            if not found:
                raise InputError(f"no recordings ({', '.join(SUFFIXES)}) in it", file=p)
            out += found
        else:
            out.append(p)
    return out


def call_ids(files: Sequence[Path]) -> list[str]:
    """A dialogue id per recording, from its name, made unique."""
    taken: set[str] = set()
    out = []
    for path in files:
        base = re.sub(r"[^A-Za-z0-9._-]+", "-", path.stem).strip("-.") or "call"
        name, k = base[:120], 2
        while name in taken:
            name, k = f"{base[:110]}-{k}", k + 1
        taken.add(name)
        out.append(name)
    return out


def _said(pcm: np.ndarray, spans: Sequence[Span], transcribe: Callable) -> str:
    parts = [pcm[int(s.start_s * RATE) : int(s.end_s * RATE)] for s in spans]
    text = " ".join(t for p in parts if p.size and (t := transcribe(p).strip()))
    return text or INAUDIBLE


def hear_call(
    path: Path, call_id: str, caller: str, transcribe: Callable, *, gap_s: float = MIN_GAP_S
) -> HeardCall:
    """One recording read, its caller's channel given or, with ``auto``, read off the
    recording's comment where voicebench wrote one and guessed where not, timed turn by turn
    (each reply's gaps of ``gap_s`` or more) and both channels transcribed."""
    rec = read_recording(path)
    frames = (speech_frames(rec.caller), speech_frames(rec.agent))  # the VAD, once a channel
    guess, source = None, "given"
    if caller == "auto" and (written := written_caller(path)) is not None:
        caller, source = written, "recording"
    elif caller == "auto":
        caller, guess = guess_caller(
            speech_spans(rec.caller, frames=frames[0]), speech_spans(rec.agent, frames=frames[1])
        )
        source = "guessed"
    if caller == "right":
        rec = Recording(path=rec.path, rate=rec.rate, caller=rec.agent, agent=rec.caller)
        frames = frames[::-1]
    said = speech_spans(rec.caller, frames=frames[0])
    heard = speech_spans(rec.agent, agent=True, frames=frames[1])
    turns = recorded_turns(said, heard, rec.duration_s, talk_silences(rec.agent, heard, gap_s))
    if not turns:
        raise InputError("no speech on the caller's channel", file=path, field="caller")
    words, replies, spans = [], [], []
    for t in turns:
        mine = tuple(s for s in said if t.start_s <= s.start_s < t.end_s)
        after = [t2 for t2 in turns if t2.start_s > t.end_s]
        until = after[0].start_s if after else rec.duration_s
        answer = [s for s in heard if t.end_s <= s.start_s < until]
        words.append(_said(rec.caller, mine, transcribe))
        replies.append(_said(rec.agent, answer, transcribe) if answer else "")
        spans.append(mine)
    return HeardCall(
        rec,
        RecordedCall(
            call_id=call_id,
            file=str(path),
            caller=caller,
            caller_source=source,
            caller_guess=guess,
            duration_s=round(rec.duration_s, 3),
            turns=tuple(turns),
            said=tuple(words),
            replies=tuple(replies),
        ),
        tuple(spans),
    )


def _fingerprint(files: Sequence[Path], caller: str, gap_s: float) -> str:
    """What makes two analyses the same one: the recordings' contents, the caller's side and
    the shortest gap (when not ``MIN_GAP_S``, so folders written before gaps were read resume)."""
    h = hashlib.sha256(caller.encode())
    if gap_s != MIN_GAP_S:
        h.update(f"gap_s={gap_s}".encode())
    for f in files:
        h.update(file_sha256(f).encode())
    return h.hexdigest()


def analyze_recordings(
    paths: Sequence[Path],
    out_dir: Path,
    *,
    caller: str = "left",
    name: str = "recorded",
    transcribe: Callable,
    gap_s: float = MIN_GAP_S,
    progress: Callable[[int, int, Path], None] | None = None,
) -> list[TurnRecord]:
    """Time every recording in ``paths`` (files or folders) and write them as one run folder
    at ``out_dir``, each recording as it is finished; returns its turns. ``transcribe`` turns
    16 kHz speech into text; ``gap_s``: the shortest silence inside a reply that is a gap;
    ``progress(done, total, file)`` is told after each recording."""
    if caller not in CALLER_SIDES:
        raise InputError(f"must be {', '.join(CALLER_SIDES)}", field="caller")
    files = recording_files(paths)
    for f in files:
        check_recording(f)  # refused naming the file, before anything is written
    ids = call_ids(files)
    header = RunHeader(
        run_id=out_dir.name,
        created_at=datetime.now(UTC).isoformat(timespec="seconds"),
        voicebench_version=__version__,
        agent=AgentSpec(
            name=name, family="recorded", remote=RemoteSpec(url="ws://recording.invalid/")
        ),
        agent_spec_path=", ".join(str(f) for f in files)[:2000],
        dialogues_path=str(out_dir / DIALOGUES_FILE),
        dialogues_sha256=_fingerprint(files, caller, gap_s),
        dialogue_ids=tuple(ids),
        mode=ReplayMode.RECORDED,
        fixtures_dir="",
    )
    if (out_dir / "run.json").exists():
        if not (out_dir / CALLS_FILE).exists():
            raise InputError("holds a run already: choose a new --out", file=out_dir)
    else:
        out_dir.mkdir(parents=True, exist_ok=True)
        (out_dir / CALLS_FILE).touch()
    store = RunStore(out_dir)
    records = store.open(header)
    done = {c.call_id for c in read_models(out_dir / CALLS_FILE, RecordedCall)}
    if any(r.dialogue_id not in done for r in records):  # killed while one was written
        records = [r for r in records if r.dialogue_id in done]
        write_atomic(out_dir / TURNS_FILE, "".join(r.model_dump_json() + "\n" for r in records))
    items = [d for d in _read_items(out_dir) if d.id in done]
    write_atomic(out_dir / DIALOGUES_FILE, "".join(d.model_dump_json() + "\n" for d in items))
    for k, (path, call_id) in enumerate(zip(files, ids, strict=True)):
        if call_id not in done:
            heard = hear_call(path, call_id, caller, transcribe, gap_s=gap_s)
            new = _write_call(out_dir, name, heard)
            records += new
        if progress is not None:
            progress(k + 1, len(files), path)
    return records


def _read_items(out_dir: Path) -> list[Dialogue]:
    return read_models(out_dir / DIALOGUES_FILE, Dialogue)


def _write_call(out_dir: Path, name: str, heard: HeardCall) -> list[TurnRecord]:
    """One analyzed recording into the folder: its audio, turns, item, then its call line."""
    call = heard.call
    audio = f"{CALLS_DIR}/{call.call_id}.wav"
    stereo = np.stack([heard.recording.caller, heard.recording.agent], axis=1)
    write_wav(out_dir / audio, stereo, RATE, comment=CALLER_COMMENT)
    last = len(call.turns) - 1
    records = [
        _record(out_dir.name, name, call.call_id, t, words, reply, audio, final=t.index == last)
        for t, words, reply in zip(call.turns, call.said, call.replies, strict=True)
    ]
    for r in records:
        append_record(out_dir / TURNS_FILE, r)
    append_record(out_dir / DIALOGUES_FILE, call_item(call))
    append_record(out_dir / CALLS_FILE, call)
    return records


def call_item(call: RecordedCall) -> Dialogue:
    """A recorded call as a dialogue item: the caller's words as seeker turns, the agent's
    as supporter turns, up to the last turn the agent answered, whose answer is the item's
    reference (what a replay's reply is judged against); later turns had no answer to judge
    against and are left out."""
    answered = [k for k, t in enumerate(call.turns) if t.response_s is not None]
    last = answered[-1] if answered else len(call.turns) - 1
    turns: list[Turn] = []
    for words, reply in zip(call.said[:last], call.replies[:last], strict=True):
        turns += [
            Turn(role=Role.SEEKER, text=words),
            Turn(role=Role.SUPPORTER, text=reply or INAUDIBLE),
        ]
    turns.append(Turn(role=Role.SEEKER, text=call.said[last]))
    file = Path(call.file).name
    return Dialogue(
        id=call.call_id,
        problem_type="recorded call",
        emotion_type="unknown",
        situation=f"A recorded call ({file}).",
        turns=tuple(turns),
        reference_reply=call.replies[last] or INAUDIBLE,
        source=f"recording:{file}",
    )


def _record(
    run_id: str,
    name: str,
    call: str,
    t: RecordedTurn,
    words: str,
    reply: str,
    audio: str,
    *,
    final: bool,
) -> TurnRecord:
    """Utterance ``t`` as a turn: the seeker turn ``2 t.index`` of the call's dialogue, its
    milestones the moments of the recording (``call``)."""
    scenario = None
    if t.barge_in:
        scenario = ScenarioOutcome(
            name="barge-in",
            params={},
            agent_speaking=True,
            stop_ms=None if t.stop_s is None else round(1000 * t.stop_s, 1),
            yielded=t.stop_s is not None and t.stop_s <= 2.0,
            talk_over_s=t.talk_over_s,
            answered=t.response_s is not None,
        )
    end_ns = round(t.end_s * 1e9)
    return TurnRecord(
        run_id=run_id,
        contestant=f"recorded/{name}",
        agent_name=name,
        dialogue_id=call,
        turn_index=2 * t.index,
        final=final,
        user_text=words,
        user_transcript=words,
        asr_wer=None,
        reply_text=reply,
        call=CallRef(path=audio, start_ns=0),
        timing=TurnTiming(
            speech_end_ns=end_ns,
            audio_out_ns=None if t.response_s is None else round(t.response_s * 1e9),
        ),
        error=None
        if t.response_s is not None
        else TurnError(kind="no_answer", reason="the agent did not speak after this turn"),
        scenario=scenario,
        started_at=datetime.now(UTC).isoformat(timespec="milliseconds"),
    )
