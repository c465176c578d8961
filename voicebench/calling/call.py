"""Simulated calls: a seeker LLM playing each item's persona talks with the agent in real time.

For each item, the call opens with the item's greeting (its first supporter turn, as the
history both sides share) and the caller's first line is the item's own first seeker turn, its
answer to that greeting. Then, up to ``turns`` lines in all: the seeker is asked for its next
line (``seeker.Seeker``), the line is synthesized with Piper into ``OUT/fixtures`` (so the end of
its speech is known to the sample) and spoken to the agent, and the agent's turn is timed and
recorded exactly as a replayed turn (``replaying.speak_turn``; the run's scenarios apply to
it: when the caller's next line draws a barge-in, that line is asked for before the reply is
heard, the transcript saying the caller cut in, and it is said over the reply). The agent's
reply, transcribed from its audio, is what the seeker hears next. The caller's first line is
synthesized before the agent is called, so nothing keeps the caller from hearing the agent's
opening out (an IVR menu waiting a few seconds for its digits, a greeting timed from the
dial). A call ends at ``turns``
seeker lines, when the seeker says goodbye, when the agent fails a turn, or when the seeker
broke role ``MAX_ROLE_BREAKS`` times (the call is then invalid: kept, counted, and never
judged).

The output folder is a run (``run.json``, ``turns.jsonl``, ``audio/``; mode ``simulated``,
the seeker named in the header), plus:

- ``calls.jsonl``: one ``CallRecord`` per finished call (how it ended, the seeker's lines and
  what it heard, its role breaks, its own report of the call);
- ``items.jsonl``, ``items.personas.jsonl`` and ``fixtures/``: each valid call as a dialogue
  item (the seeker's lines, the agent's replies as heard, the last reply as the reference),
  its caller's card, and the lines' audio, so
  ``voicebench run --dialogues OUT/items.jsonl --fixtures OUT/fixtures`` replays it,
  teacher-forced, against any agent;
- ``calls/CALL.wav``: each call as it happened, the caller on the left and the agent on the
  right, on the clock its turns were timed on (``recordings.calls``; each turn's ``call`` says
  where it lies);
- ``seeker-cache.jsonl``: the seeker's answers by request.

A call is the unit of resumption: its turns are written when it ends, so a killed run loses
at most the call under way, and rerunning the command redoes only that one.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path

from voicebench._jsonl import append_record, write_atomic
from voicebench.agent.interface import Agent, AgentFactory
from voicebench.agentspec import AgentSpec
from voicebench.budgets import TURN_TIMEOUT_S
from voicebench.calling.records import (
    CACHE_FILE,
    CALL_AUDIO_DIR,
    CALLS_FILE,
    FIXTURES_DIR,
    CallProgress,
    CallRecord,
    EndedBy,
    Exchange,
    call_item,
    greeting_of,
    opening_of,
    read_calls,
    save_item,
)
from voicebench.calling.roles import says_goodbye, spoken
from voicebench.calling.seeker import (
    CUT_IN,
    MAX_ROLE_BREAKS,
    Seeker,
    SeekerCache,
    SeekerLine,
    SeekerSpec,
    open_seeker,
)
from voicebench.calling.voice import Lines
from voicebench.dialogues import Dialogue, Role, Turn
from voicebench.dialogues.personas import Persona
from voicebench.recordings.calls import CallTape
from voicebench.replaying.folder import AgentSlot, open_run, run_header
from voicebench.replaying.play import turn_history, turn_record
from voicebench.replaying.speak import drawn_scenario, hand_over_ms, speak_turn
from voicebench.runlog import TURNS_FILE, ReplayMode, TurnRecord
from voicebench.scenarios import draw_turn, parse_scenario


async def converse(
    spec: AgentSpec,
    *,
    spec_path: Path,
    dialogues: Sequence[Dialogue],
    dialogues_path: Path,
    personas: dict[str, Persona],
    seeker_spec: SeekerSpec,
    out_dir: Path,
    turns: int = 6,
    seed: int = 0,
    scenarios: Sequence[str] = (),
    turn_timeout_s: float = TURN_TIMEOUT_S,
    progress: Callable[[CallProgress], None] | None = None,
    agent_factory: AgentFactory | None = None,
    transcribe: Callable | None = None,
) -> list[CallRecord]:
    """One simulated call per item of ``dialogues``, each of at most ``turns`` seeker lines;
    returns every finished call of the folder, old and new."""
    played = [parse_scenario(text) for text in scenarios]
    fixtures_dir = out_dir / FIXTURES_DIR
    header = run_header(
        spec,
        out_dir=out_dir,
        spec_path=spec_path,
        dialogues=dialogues,
        dialogues_path=dialogues_path,
        mode=ReplayMode.SIMULATED,
        fixtures_dir=fixtures_dir,
        turn_timeout_s=turn_timeout_s,
        scenarios=scenarios,
        seed=seed,
        seeker=seeker_spec.llm.id,
    )
    # the callers' lines are spoken as they are said, so no item's audio is made up front
    with open_run(out_dir, header, spoken=[], played=played) as run:
        records = run.records
        calls = read_calls(out_dir)
        done = {c.call_id for c in calls}
        if any(r.dialogue_id not in done for r in records):  # killed as a call was written
            kept = [r for r in records if r.dialogue_id in done]
            write_atomic(out_dir / TURNS_FILE, "".join(r.model_dump_json() + "\n" for r in kept))
        todo = [d for d in dialogues if d.id not in done]
        if not todo:
            return calls
        lines = Lines(fixtures_dir)
        if transcribe is None:
            from voicebench.pipeline.stt import Transcriber

            transcribe = Transcriber()
        async with contextlib.AsyncExitStack() as stack:
            clients = await open_seeker(seeker_spec, stack, seed=seed)
            seeker = Seeker(
                seeker_spec,
                clients.lines,
                SeekerCache(out_dir / CACHE_FILE),
                reporter=clients.report,
                again=clients.again,
                seed=seed,
            )
            slot = await stack.enter_async_context(AgentSlot(spec, agent_factory))
            for n, dialogue in enumerate(todo, start=len(done) + 1):
                if first := spoken(opening_of(dialogue)):  # (ready before the agent answers)
                    await asyncio.to_thread(lines.add, first)
                agent, cold = await slot.get()
                call, records = await _call(
                    agent,
                    spec,
                    dialogue,
                    personas[dialogue.id],
                    seeker,
                    lines,
                    transcribe,
                    run_id=header.run_id,
                    turns=turns,
                    seed=seed,
                    played=played,
                    timeout_s=turn_timeout_s,
                    cold=cold,
                    audio_dir=run.store.audio_dir,
                    on_turn=_reporter(progress, n, len(dialogues), dialogue.id),
                )
                item = call_item(call.item_id or "", call.greeting, call.exchanges, dialogue)
                if item is not None and call.valid:
                    save_item(out_dir, item, call.persona)
                else:
                    call = call.model_copy(update={"item_id": None})
                for record in records:
                    run.store.append(record)
                append_record(out_dir / CALLS_FILE, call)
                calls.append(call)
                if progress:
                    progress(CallProgress(n, len(dialogues), dialogue.id, finished=call))
                if call.ended_by == "agent":
                    await slot.stop()
        return calls


def _barges(played: Sequence, seed: int, call_id: str, k: int) -> bool:
    """Whether the caller's line at turn ``k`` draws a barge-in."""
    drawn = draw_turn(played, seed, call_id, k) if played else None
    return drawn is not None and drawn.name == "barge-in"


def _reporter(
    progress: Callable[[CallProgress], None] | None, n: int, total: int, call_id: str
) -> Callable[[TurnRecord], None]:
    def report(record: TurnRecord) -> None:
        if progress is not None:
            progress(CallProgress(n, total, call_id, record=record))

    return report


async def _call(
    agent: Agent,
    spec: AgentSpec,
    base: Dialogue,
    card: Persona,
    seeker: Seeker,
    lines: Lines,
    transcribe: Callable,
    *,
    run_id: str,
    turns: int,
    seed: int,
    played: Sequence,
    timeout_s: float,
    cold: bool,
    audio_dir: Path,
    on_turn: Callable[[TurnRecord], object],
) -> tuple[CallRecord, list[TurnRecord]]:
    started_at = datetime.now(UTC).isoformat(timespec="milliseconds")
    greeting = greeting_of(base)
    said: list[Turn] = [Turn(role=Role.SUPPORTER, text=greeting)]
    exchanges: list[Exchange] = []
    records: list[TurnRecord] = []
    earlier: dict[int, TurnRecord] = {}
    breaks = 0
    ended_by: EndedBy = "turns"
    tape = CallTape(audio_dir.parent, f"{CALL_AUDIO_DIR}/{base.id}.wav", fresh=True)
    pending: SeekerLine | None = None  # the next line, asked for early: it cuts in
    barged = False  # this line is said over the agent's reply to the one before
    for j in range(turns):
        heard_so_far = [(e.said, e.heard) for e in exchanges]
        if j == 0:  # the caller opens with what the item's seeker said to this greeting
            line = SeekerLine(opening_of(base), ())
        elif pending is not None:
            line, pending = pending, None
        else:
            line = await seeker.next_line(card, greeting, heard_so_far, MAX_ROLE_BREAKS - breaks)
        breaks += len(line.breaks)
        if breaks >= MAX_ROLE_BREAKS:
            ended_by = "role"
            break
        text = spoken(line.text)
        goodbye = says_goodbye(line.text)
        if not text:  # the end mark alone: the caller hangs up without a word
            ended_by = "goodbye"
            if records:  # the agent's last answer is the call's last turn
                records[-1] = records[-1].model_copy(update={"final": True})
            break
        lines.add(text)
        if said[-1].role is Role.SEEKER:  # the agent said nothing heard: a silent turn
            said.append(Turn(role=Role.SUPPORTER, text="..."))
        said.append(Turn(role=Role.SEEKER, text=text))
        k = len(said) - 1
        dialogue = base.model_copy(update={"turns": tuple(said)})
        # The caller's next line is always turn k + 2 (an unheard reply is a silent turn).
        # When it draws a barge-in, the caller cuts in on the reply to this one: the line is
        # asked for now, before the reply is heard, and this turn hands over mid-reply. The
        # scenarios are then drawn, and the hand-over timed, on the call with that line in
        # it, as a replay's are on its dialogue.
        planned, hand_over = dialogue, None
        if not goodbye and j + 1 < turns and _barges(played, seed, base.id, k + 2):
            pending = await seeker.next_line(
                card, greeting, [*heard_so_far, (text, CUT_IN)], MAX_ROLE_BREAKS - breaks
            )
            if breaks + len(pending.breaks) < MAX_ROLE_BREAKS:  # else it ends the call
                cut_in = spoken(pending.text)
                lines.add(cut_in)
                cuts = (Turn(role=Role.SUPPORTER, text="..."), Turn(role=Role.SEEKER, text=cut_in))
                planned = base.model_copy(update={"turns": (*said, *cuts)})
                hand_over = hand_over_ms(played, seed, planned, k, k + 2, lines.manifest)
        turn_started = datetime.now(UTC).isoformat(timespec="milliseconds")
        result = await speak_turn(
            agent,
            spec,
            dialogue,
            k,
            lines.manifest,
            lines.folder,
            turn_history(dialogue, k, ReplayMode.FREE_RUNNING, earlier),
            timeout_s=timeout_s,
            scenario=drawn_scenario(played, seed, planned, k),
            seed=seed,
            hand_over_ms=hand_over,
            barge_in=barged,
        )
        barged = hand_over is not None
        last = goodbye or j == turns - 1
        record = turn_record(
            spec,
            dialogue,
            k,
            result,
            run_id=run_id,
            final=last,
            cold=cold and j == 0,
            started_at=turn_started,
            audio_dir=audio_dir,
            call=tape,
        )
        earlier[k] = record
        records.append(record)
        on_turn(record)
        heard = (transcribe(result.heard.audio) if result.heard.audio.size else "").strip()
        exchanges.append(Exchange(turn_index=k, said=text, heard=heard, role_breaks=line.breaks))
        if heard:
            said.append(Turn(role=Role.SUPPORTER, text=heard))
        if record.error is not None:
            ended_by = "agent"
            break
        if goodbye:
            ended_by = "goodbye"
            break
    valid = breaks < MAX_ROLE_BREAKS
    report = None
    if valid and exchanges:
        report = await seeker.report(card, greeting, [(e.said, e.heard) for e in exchanges])
    audio_path = tape.name if tape.path.is_file() else None
    call = CallRecord(
        call_id=base.id,
        agent_name=spec.name,
        seeker=seeker.spec.llm.id,
        persona=card,
        greeting=greeting,
        exchanges=tuple(exchanges),
        ended_by=ended_by,
        valid=valid,
        role_breaks=breaks,
        report=report,
        item_id=f"call-{base.id}",
        started_at=started_at,
        finished_at=datetime.now(UTC).isoformat(timespec="milliseconds"),
        seed=seed,
        audio_path=audio_path,
    )
    return call, records
