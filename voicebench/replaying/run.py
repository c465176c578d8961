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
from voicebench._folder import claimed
from voicebench.agentspec import AgentSpec
from voicebench.dialogues import Dialogue, Role
from voicebench.errors import InputError
from voicebench.fixtures import Manifest, synthesize_fixtures, write_wav
from voicebench.replaying.speak import TURN_TIMEOUT_S, drawn_scenario, hand_over_ms, speak_turn
from voicebench.runlog import ReplayMode, RunHeader, RunStore, TurnRecord
from voicebench.scenarios import TurnScenario, parse_scenario
from voicebench.scenarios.apply import backchannel_texts


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
    scenarios: Sequence[str] = (),
    seed: int = 0,
) -> list[TurnRecord]:
    """Replay ``dialogues`` through the agent; returns every record of the run, old and new.
    ``scenarios`` are ``--scenario`` options: each turn plays one, drawn with ``seed``."""
    played = [parse_scenario(text) for text in scenarios]
    with claimed(out_dir, "run"):
        manifest = synthesize_fixtures(
            dialogues, fixtures_dir, extra=backchannel_texts(played)
        ).manifest
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
            scenarios=tuple(scenarios),
            seed=seed,
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
                from voicebench.replaying.remote import RemoteAgent

                factory = RemoteAgent
            else:
                from voicebench.replaying.agent import VoiceAgent

                factory = VoiceAgent
        agent: Any = None
        handed_over = False  # the last turn returned with the agent still speaking
        try:
            for i, (dialogue, k) in enumerate(todo):
                cold = agent is None
                if cold:
                    agent = factory(spec)
                    await agent.__aenter__()
                    handed_over = False
                following = todo[i + 1] if i + 1 < len(todo) else None
                next_k = following[1] if following and following[0].id == dialogue.id else None
                hand_over = hand_over_ms(played, seed, dialogue, k, next_k, manifest)
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
                    scenario=drawn_scenario(played, seed, dialogue, k),
                    hand_over_ms=hand_over,
                    barge_in=handed_over,
                )
                store.append(record)
                done[(dialogue.id, k)] = record
                records.append(record)
                handed_over = hand_over is not None
                if record.error is not None:
                    await agent.__aexit__(None, None, None)
                    agent = None
                if progress:
                    progress(RunProgress(len(done), len(plan), record))
        finally:
            if agent is not None:
                await agent.__aexit__(None, None, None)
        return records


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
    scenario: TurnScenario | None = None,
    hand_over_ms: float | None = None,
    barge_in: bool = False,
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
        scenario=scenario,
        seed=header.seed,
        hand_over_ms=hand_over_ms,
        barge_in=barge_in,
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
