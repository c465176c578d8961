"""Replaying a dialogue set through an agent and writing the run log, one finished turn at a time.

Every seeker turn of every selected dialogue is spoken; each gives one ``TurnRecord``. A
failure inside a turn (no reply, no audio, an error frame, a timeout) is recorded on that
turn and the pipeline is rebuilt before the next one, so one bad turn never ends the run.
Restarting the same command resumes: finished turns are read back and skipped.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from voicebench import __version__
from voicebench.agentspec import AgentSpec, api_key
from voicebench.dialogues import Dialogue, Role
from voicebench.errors import InputError, RunError, redact
from voicebench.fixtures import (
    Manifest,
    lookup_fixture,
    read_wav,
    synthesize_fixtures,
    write_wav,
)
from voicebench.runlog import ReplayMode, RunHeader, RunStore, TurnError, TurnRecord
from voicebench.text import wer
from voicebench.timing import EventKind, derive_timing, reply_text, user_transcript

TURN_TIMEOUT_S = 60.0


@dataclass(frozen=True)
class RunProgress:
    """Reported after every turn."""

    done: int
    total: int
    record: TurnRecord | None


def turn_history(
    dialogue: Dialogue, k: int, mode: ReplayMode, earlier: dict[int, TurnRecord]
) -> list[dict[str, str]]:
    """Messages before seeker turn ``k``.

    Teacher-forced: the dialogue's own turns. Free-running: the turns before the first seeker
    turn (the greeting), then for each earlier seeker turn what the agent heard and what it
    answered.
    """

    def message(role: Role, text: str) -> dict[str, str]:
        return {"role": "user" if role is Role.SEEKER else "assistant", "content": text}

    if mode is ReplayMode.TEACHER_FORCED:
        return [message(t.role, t.text) for t in dialogue.turns[:k]]
    first_seeker = dialogue.seeker_turn_indices[0]
    messages = [message(t.role, t.text) for t in dialogue.turns[:first_seeker]]
    for j in dialogue.seeker_turn_indices:
        if j >= k:
            break
        rec = earlier.get(j)
        messages.append(
            message(
                Role.SEEKER,
                rec.user_transcript if rec and rec.user_transcript else dialogue.turns[j].text,
            )
        )
        if rec and rec.reply_text:
            messages.append(message(Role.SUPPORTER, rec.reply_text))
    return messages


def _interpret(
    heard, *, user_text: str, secret: str | None = None, timeout_s: float = TURN_TIMEOUT_S
) -> tuple[dict, TurnError | None]:
    timing = derive_timing(heard.events, heard.speech_end_ns)
    transcript = user_transcript(heard.events, timing)
    if heard.black_box:
        # Only the audio is observed: what it said is whatever the agent reported.
        reply = " ".join(
            e.text.strip() for e in heard.events if e.kind is EventKind.LLM_TOKEN and e.text.strip()
        )
    else:
        reply = reply_text(heard.events, timing)
    llm_calls = sum(e.kind is EventKind.LLM_SENT for e in heard.events) or None
    error = _turn_error(heard, timing, transcript, reply, llm_calls, timeout_s)
    if error is not None:
        error = error.model_copy(update={"reason": redact(error.reason, secret)})
    fields = {
        "llm_requests": sum(e.kind is EventKind.LLM_REQUEST for e in heard.events),
        "llm_calls": llm_calls,
        "user_transcript": transcript,
        "asr_wer": wer(user_text, transcript) if transcript else None,
        "reply_text": reply,
        "timing": timing,
    }
    return fields, error


def _turn_error(
    heard, timing, transcript: str, reply: str, llm_calls: int | None, timeout_s: float
) -> TurnError | None:
    """Why the turn failed, by kind, with a reason naming the stage; None if it did not."""
    events = heard.events
    has = {e.kind for e in events}
    errors = [e for e in events if e.kind is EventKind.ERROR]
    if heard.failure is not None:
        return heard.failure
    if errors:
        first = errors[0]
        reason = first.text
        if first.source == "llm":
            tokens = sum(e.kind is EventKind.LLM_TOKEN and e.ns < first.ns for e in events)
            if tokens:
                reason = f"the reply stream broke off after {tokens} token(s): {reason}"
            if llm_calls and llm_calls > 1:
                reason += f" ({llm_calls} requests: the client retried)"
        return TurnError(
            kind=f"{first.source}_error" if first.source else "pipeline_error", reason=reason
        )
    if heard.black_box:
        if heard.timed_out and timing.audio_out_ns is None:
            return TurnError(kind="timeout", reason=f"nothing audible within {timeout_s:g} s")
        if heard.timed_out:
            return TurnError(kind="timeout", reason=f"no complete answer within {timeout_s:g} s")
        if timing.audio_out_ns is None:
            return TurnError(kind="no_audio", reason="no audible bot audio was played")
        return None
    if not transcript and EventKind.LLM_REQUEST not in has:
        if EventKind.VAD_START not in has:
            return TurnError(
                kind="no_transcript", reason="the agent's VAD heard no speech in the seeker's audio"
            )
        return TurnError(kind="no_transcript", reason="the ASR produced no text for the turn")
    if heard.timed_out:
        if EventKind.LLM_REQUEST in has and EventKind.LLM_TOKEN not in has:
            what = "the LLM sent no token"
        elif EventKind.LLM_TOKEN in has and EventKind.LLM_END not in has:
            what = "the LLM reply did not finish"
        elif EventKind.LLM_REQUEST not in has:
            what = "the agent did not take its turn (no LLM request)"
        else:
            what = "no complete answer"
        return TurnError(kind="timeout", reason=f"{what} within {timeout_s:g} s")
    if timing.llm_first_token_ns is None:
        return TurnError(kind="no_reply", reason="the LLM returned no tokens")
    if timing.audio_out_ns is None:
        if EventKind.TTS_AUDIO not in has:
            return TurnError(
                kind="no_audio", reason=f"the TTS yielded no audio for the reply {reply[:80]!r}"
            )
        return TurnError(kind="no_audio", reason="no audible bot audio was played")
    return None


def plan_turns(dialogues: Sequence[Dialogue]) -> list[tuple[Dialogue, int]]:
    return [(d, k) for d in dialogues for k in d.seeker_turn_indices]


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


async def replay(
    spec: AgentSpec,
    *,
    spec_path: Path,
    dialogues: Sequence[Dialogue],
    dialogues_path: Path,
    fixtures_dir: Path,
    out_dir: Path,
    mode: ReplayMode = ReplayMode.TEACHER_FORCED,
    turn_timeout_s: float = TURN_TIMEOUT_S,
    progress: Callable[[RunProgress], None] | None = None,
    agent_factory: Callable[[AgentSpec], Any] | None = None,
) -> list[TurnRecord]:
    """Replay ``dialogues`` through the agent; returns every record of the run, old and new."""
    manifest = synthesize_fixtures(dialogues, fixtures_dir).manifest
    header = RunHeader(
        run_id=out_dir.name,
        created_at=datetime.now(UTC).isoformat(timespec="seconds"),
        voicebench_version=__version__,
        agent=spec,
        agent_spec_path=str(spec_path),
        dialogues_path=str(dialogues_path),
        dialogues_sha256=_sha256(dialogues_path),
        dialogue_ids=tuple(d.id for d in dialogues),
        mode=mode,
        fixtures_dir=str(fixtures_dir),
        turn_timeout_s=turn_timeout_s,
    )
    store = RunStore(out_dir)
    records = store.open(header)
    done = {(r.dialogue_id, r.turn_index): r for r in records}
    plan = plan_turns(dialogues)
    todo = [(d, k) for d, k in plan if (d.id, k) not in done]
    if progress:
        progress(RunProgress(len(plan) - len(todo), len(plan), None))
    if not todo:
        return records
    factory = agent_factory
    if factory is None:
        if spec.remote is not None:
            from voicebench.replay.remote import RemoteAgent

            factory = RemoteAgent
        else:
            from voicebench.replay.agent import VoiceAgent

            factory = VoiceAgent
    agent: Any = None
    try:
        for dialogue, k in todo:
            cold = agent is None
            if cold:
                agent = factory(spec)
                await agent.__aenter__()
            record = await _replay_turn(
                agent,
                spec,
                header,
                dialogue,
                k,
                manifest,
                fixtures_dir,
                store,
                done,
                mode,
                cold=cold,
            )
            store.append(record)
            done[(dialogue.id, k)] = record
            records.append(record)
            if record.error is not None:
                await agent.__aexit__(None, None, None)
                agent = None
            if progress:
                progress(RunProgress(len(done), len(plan), record))
    finally:
        if agent is not None:
            await agent.__aexit__(None, None, None)
    return records


async def speak_turn(
    agent,
    spec: AgentSpec,
    dialogue: Dialogue,
    k: int,
    manifest: Manifest,
    fixtures_dir: Path,
    history: list[dict[str, str]],
    *,
    timeout_s: float = TURN_TIMEOUT_S,
) -> tuple:
    """Speak seeker turn ``k`` to ``agent`` after ``history`` and interpret what came back:
    ``(heard, TurnRecord fields, TurnError or None)``."""
    turn = dialogue.turns[k]
    entry = lookup_fixture(manifest, turn.text)
    if entry is None:
        raise RunError(f"no audio fixture for {dialogue.id} turn {k}; run `voicebench synth`")
    pcm = read_wav(fixtures_dir / entry.path, expect_rate=16_000)
    heard = await agent.speak(history, pcm, entry.speech_end_sample, timeout_s=timeout_s)
    fields, error = _interpret(
        heard, user_text=turn.text, secret=api_key(spec), timeout_s=timeout_s
    )
    return heard, fields, error


async def _replay_turn(
    agent,
    spec: AgentSpec,
    header: RunHeader,
    dialogue: Dialogue,
    k: int,
    manifest: Manifest,
    fixtures_dir: Path,
    store: RunStore,
    done: dict,
    mode: ReplayMode,
    *,
    cold: bool,
) -> TurnRecord:
    turn = dialogue.turns[k]
    earlier = {
        j: done[(dialogue.id, j)]
        for j in dialogue.seeker_turn_indices
        if j < k and (dialogue.id, j) in done
    }
    started_at = datetime.now(UTC).isoformat(timespec="milliseconds")
    heard, fields, error = await speak_turn(
        agent,
        spec,
        dialogue,
        k,
        manifest,
        fixtures_dir,
        turn_history(dialogue, k, mode, earlier),
        timeout_s=header.turn_timeout_s,
    )
    audio_path = None
    if heard.audio.size:
        audio_path = f"audio/{dialogue.id}__t{k:02d}.wav"
        write_wav(store.dir / audio_path, heard.audio, 16_000)
    return TurnRecord(
        run_id=header.run_id,
        contestant=spec.id,
        agent_name=spec.name,
        dialogue_id=dialogue.id,
        turn_index=k,
        final=k == dialogue.final_turn_index,
        adversarial=dialogue.adversarial,
        user_text=turn.text,
        audio_path=audio_path,
        error=error,
        cold=cold,
        started_at=started_at,
        **fields,
    )


def select_dialogues(
    dialogues: Sequence[Dialogue],
    *,
    limit: int | None,
    ids: Sequence[str] | None = None,
    file: Path | None = None,
) -> list[Dialogue]:
    """The dialogues a run replays: by id if given, then the first ``limit``."""
    chosen = list(dialogues)
    if ids:
        known = {d.id: d for d in dialogues}
        missing = [i for i in ids if i not in known]
        if missing:
            raise InputError(f"unknown dialogue id(s): {', '.join(missing)}", file=file)
        chosen = [known[i] for i in ids]
    if limit is not None:
        chosen = chosen[:limit]
    return chosen


def demo_items(dialogues: Sequence[Dialogue], n: int) -> list[Dialogue]:
    """``n`` items spread evenly over the set, so a short demo meets several problem types
    and, in the built-in set's order, an adversarial seeker."""
    if n >= len(dialogues):
        return list(dialogues)
    return [dialogues[(i * len(dialogues)) // n] for i in range(n)]


def run_replay(spec: AgentSpec, **kwargs) -> list[TurnRecord]:
    """Synchronous entry point for the CLI."""
    return asyncio.run(replay(spec, **kwargs))
