"""Recorded calls written as a run folder (``voicebench recordings analyze``), so ``check``,
``compare``, ``report`` and the pytest plugin read them as they read a replay.

Each recording becomes one dialogue (its id the file's name) and each caller utterance one turn:
its TTFA is the response latency read off the recording (end of speech to the agent's first
audio after it; the agent is a black box, so a turn has no stages), a turn the agent never
answered is a failed turn (``no_answer``), and a barge-in is recorded as the ``barge-in``
scenario with the agent's stop time, so the report's interruption figures include it. Both
channels are transcribed with the Whisper model replies are heard with; the caller's words
and the agent's replies also make the folder's ``dialogues.jsonl``, an item per call.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path

from voicebench._version import __version__
from voicebench.agentspec import AgentSpec
from voicebench.dialogues import Dialogue, Role, Turn, save_dialogues
from voicebench.errors import InputError
from voicebench.fixtures.manifest import file_sha256
from voicebench.recordings.analyze import (
    RATE,
    RecordedTurn,
    Side,
    Span,
    read_recording,
    recorded_turns,
    speech_spans,
)
from voicebench.remotespec import RemoteSpec
from voicebench.runlog import (
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


def _call_id(path: Path, taken: set[str]) -> str:
    base = re.sub(r"[^A-Za-z0-9._-]+", "-", path.stem).strip("-.") or "call"
    name, k = base[:120], 2
    while name in taken:
        name, k = f"{base[:110]}-{k}", k + 1
    taken.add(name)
    return name


def _said(pcm, spans: Sequence[Span], transcribe: Callable) -> str:
    parts = [pcm[int(s.start_s * RATE) : int(s.end_s * RATE)] for s in spans]
    text = " ".join(t for p in parts if p.size and (t := transcribe(p).strip()))
    return text or INAUDIBLE


def analyze_recordings(
    paths: Sequence[Path],
    out_dir: Path,
    *,
    caller: Side = "left",
    name: str = "recorded",
    transcribe: Callable,
    progress: Callable[[int, int, Path], None] | None = None,
) -> list[TurnRecord]:
    """Time every recording in ``paths`` (files or folders) and write them as one run folder
    at ``out_dir``; returns its turns. ``transcribe`` turns 16 kHz speech into text;
    ``progress(done, total, file)`` is told after each recording."""
    if (out_dir / "run.json").exists():
        raise InputError("holds a run already: choose a new --out", file=out_dir)
    files = recording_files(paths)
    items: list[Dialogue] = []
    records: list[TurnRecord] = []
    taken: set[str] = set()
    for k, path in enumerate(files):
        rec = read_recording(path, caller=caller)
        said, heard = speech_spans(rec.caller), speech_spans(rec.agent)
        turns = recorded_turns(said, heard)
        if not turns:
            raise InputError("no speech on the caller's channel", file=path, field="caller")
        call = _call_id(path, taken)
        lines = []
        for t in turns:
            mine = [s for s in said if t.start_s <= s.start_s < t.end_s]
            after = [t2 for t2 in turns if t2.start_s > t.end_s]
            until = after[0].start_s if after else rec.duration_s
            answer = [s for s in heard if t.end_s <= s.start_s < until]
            reply = _said(rec.agent, answer, transcribe) if answer else ""
            lines.append((t, _said(rec.caller, mine, transcribe), reply))
        items.append(_item(call, path, lines))
        last = len(lines) - 1
        records += [
            _record(out_dir.name, name, call, t, words, reply, final=t.index == last)
            for t, words, reply in lines
        ]
        if progress is not None:
            progress(k + 1, len(files), path)
    out_dir.mkdir(parents=True, exist_ok=True)
    dialogues = out_dir / "dialogues.jsonl"
    save_dialogues(items, dialogues)
    header = RunHeader(
        run_id=out_dir.name,
        created_at=datetime.now(UTC).isoformat(timespec="seconds"),
        voicebench_version=__version__,
        agent=AgentSpec(
            name=name, family="recorded", remote=RemoteSpec(url="ws://recording.invalid/")
        ),
        agent_spec_path=", ".join(str(f) for f in files)[:2000],
        dialogues_path=str(dialogues),
        dialogues_sha256=file_sha256(dialogues),
        dialogue_ids=tuple(d.id for d in items),
        mode=ReplayMode.RECORDED,
        fixtures_dir="",
    )
    store = RunStore(out_dir)
    store.open(header)
    for r in records:
        store.append(r)
    return records


def _item(call: str, path: Path, lines: list[tuple[RecordedTurn, str, str]]) -> Dialogue:
    turns: list[Turn] = []
    for _, words, reply in lines[:-1]:
        turns += [
            Turn(role=Role.SEEKER, text=words),
            Turn(role=Role.SUPPORTER, text=reply or INAUDIBLE),
        ]
    last = lines[-1]
    turns.append(Turn(role=Role.SEEKER, text=last[1]))
    return Dialogue(
        id=call,
        problem_type="recorded call",
        emotion_type="unknown",
        situation=f"A recorded call ({path.name}).",
        turns=tuple(turns),
        reference_reply=last[2] or INAUDIBLE,
        source=f"recording:{path.name}",
    )


def _record(
    run_id: str, name: str, call: str, t: RecordedTurn, words: str, reply: str, *, final: bool
) -> TurnRecord:
    """Utterance ``t`` as a turn: the seeker turn ``2 t.index`` of the call's dialogue."""
    latency = t.latency_s
    scenario = None
    if t.barge_in:
        scenario = ScenarioOutcome(
            name="barge-in",
            params={},
            agent_speaking=True,
            stop_ms=None if t.stop_s is None else round(1000 * t.stop_s, 1),
            yielded=t.stop_s is not None and t.stop_s <= 2.0,
            talk_over_s=t.talk_over_s,
            answered=latency is not None,
        )
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
        timing=None
        if latency is None
        else TurnTiming(speech_end_ns=0, audio_out_ns=round(latency * 1e9)),
        error=None
        if latency is not None
        else TurnError(kind="no_answer", reason="the agent did not speak after this turn"),
        scenario=scenario,
        started_at=datetime.now(UTC).isoformat(timespec="milliseconds"),
    )
