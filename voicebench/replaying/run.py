"""Replaying a dialogue set through an agent and writing the run log, one finished turn at a time.

Every seeker turn of every selected dialogue is spoken; each gives one ``TurnRecord``. A
failure inside a turn (no reply, no audio, an error frame, a timeout) is recorded on that
turn and the pipeline is rebuilt before the next one, so one bad turn never ends the run.
Restarting the same command resumes: finished turns are read back and skipped. What the agent
says when it starts, before it is spoken to (a greeting), is its call's opening, kept in
``openings.jsonl`` (``voicebench.runlog.openings``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from voicebench.agent.interface import AgentFactory
from voicebench.agentspec import AgentSpec
from voicebench.budgets import TURN_TIMEOUT_S
from voicebench.dialogues import Dialogue
from voicebench.errors import InputError
from voicebench.recordings.calls import CallTape, call_name
from voicebench.replaying.folder import AgentSlot, open_run, run_header
from voicebench.replaying.play import play_dialogue
from voicebench.runlog import ReplayMode, TurnRecord, append_opening
from voicebench.scenarios import parse_scenario


@dataclass(frozen=True)
class RunProgress:
    """Reported after every turn."""

    done: int
    total: int
    record: TurnRecord | None


def plan_turns(
    dialogues: Sequence[Dialogue], final_only: bool = False
) -> list[tuple[Dialogue, int]]:
    """Every seeker turn to replay, in order; with ``final_only``, each item's final one."""
    if final_only:
        return [(d, d.final_turn_index) for d in dialogues]
    return [(d, k) for d in dialogues for k in d.seeker_turn_indices]


def _by_dialogue(
    todo: Sequence[tuple[int, Dialogue, int]],
) -> list[tuple[int, Dialogue, list[int]]]:
    """The turns to play, grouped by pass and dialogue in order."""
    out: list[tuple[int, Dialogue, list[int]]] = []
    for repeat, dialogue, k in todo:
        if out and out[-1][0] == repeat and out[-1][1].id == dialogue.id:
            out[-1][2].append(k)
        else:
            out.append((repeat, dialogue, [k]))
    return out


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
    agent_factory: AgentFactory | None = None,
    scenarios: Sequence[str] = (),
    seed: int = 0,
    final_only: bool = False,
    repeats: int = 1,
) -> list[TurnRecord]:
    """Replay ``dialogues`` through the agent; returns every record of the run, old and new.
    ``scenarios`` are ``--scenario`` options: each turn plays one, drawn with ``seed``.
    ``final_only``: only each item's final seeker turn (teacher-forced only). ``repeats``:
    every item is replayed that many times, one whole pass after another, each pass drawing
    with its own seed."""
    if repeats < 1:
        raise InputError(f"must be at least 1, not {repeats}", field="repeat")
    played = [parse_scenario(text) for text in scenarios]
    header = run_header(
        spec,
        out_dir=out_dir,
        spec_path=spec_path,
        dialogues=dialogues,
        dialogues_path=dialogues_path,
        mode=mode,
        fixtures_dir=fixtures_dir,
        turn_timeout_s=turn_timeout_s,
        scenarios=scenarios,
        seed=seed,
        final_only=final_only,
        repeats=repeats,
    )
    with open_run(out_dir, header, spoken=dialogues, played=played) as run:
        records = run.records
        done = {(r.repeat, r.dialogue_id, r.turn_index): r for r in records}
        plan = [(r, d, k) for r in range(repeats) for d, k in plan_turns(dialogues, final_only)]
        todo = [(r, d, k) for r, d, k in plan if (r, d.id, k) not in done]
        if progress:
            progress(RunProgress(len(plan) - len(todo), len(plan), None))
        if not todo:
            return records
        async with AgentSlot(spec, agent_factory) as slot:
            for repeat, dialogue, turns in _by_dialogue(todo):
                call = CallTape(out_dir, call_name(dialogue.id, repeat))
                while turns:
                    playing, cold = await slot.get()
                    earlier = {
                        j: done[(repeat, dialogue.id, j)]
                        for j in dialogue.seeker_turn_indices
                        if (repeat, dialogue.id, j) in done
                    }
                    async for record in play_dialogue(
                        playing,
                        spec,
                        dialogue,
                        turns,
                        run_id=header.run_id,
                        manifest=run.manifest,
                        fixtures_dir=fixtures_dir,
                        timeout_s=header.turn_timeout_s,
                        mode=mode,
                        earlier=earlier,
                        played=played,
                        seed=seed,
                        cold=cold,
                        audio_dir=run.store.audio_dir,
                        repeat=repeat,
                        call=call,
                    ):
                        if record.opening:  # not one of the turns: kept in openings.jsonl
                            append_opening(out_dir, record)
                            if progress:
                                progress(RunProgress(len(done), len(plan), record))
                            continue
                        await asyncio.to_thread(run.store.append, record)
                        done[(repeat, dialogue.id, record.turn_index)] = record
                        records.append(record)
                        turns = turns[1:]
                        if record.error is not None:
                            await slot.stop()  # a failed turn: the next one starts it again
                        if progress:
                            progress(RunProgress(len(done), len(plan), record))
        return records


def select_dialogues(
    dialogues: Sequence[Dialogue],
    *,
    limit: int | None,
    ids: Sequence[str] | None = None,
    file: Path | None = None,
) -> list[Dialogue]:
    """The dialogues a run replays: by id if given, then the first ``limit`` (at least 1)."""
    if limit is not None and limit < 1:
        raise InputError(f"limit must be at least 1, not {limit}", file=file, field="limit")
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
