"""The turn loop: one dialogue's seeker turns spoken to an agent, one ``TurnRecord`` each.

``play_dialogue`` serves every caller of agents: a run (``voicebench.replaying.run``, which
campaign cells use too) and each call of a load (``voicebench.live.load``). It never asks what
kind of agent it speaks to. A turn that fails ends the dialogue's play there: the caller
decides whether to start the agent again (a run does) or to hang up (a load's call does).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

from voicebench.agent.interface import Agent, opening_of
from voicebench.agentspec import AgentSpec, api_key
from voicebench.dialogues import Dialogue, Role
from voicebench.fixtures import Manifest, write_wav
from voicebench.recordings.calls import CallTape
from voicebench.replaying.speak import (
    SpokenTurn,
    drawn_scenario,
    hand_over_ms,
    speak_turn,
    spoken_opening,
)
from voicebench.runlog import ReplayMode, TurnRecord
from voicebench.scenarios import Scenario
from voicebench.timing.sound import sound_of
from voicebench.timing.stalls import playback_of, sample_at

AUDIO_RATE = 16_000
"""The rate a turn's recorded reply is written at."""


def repeat_seed(seed: int, repeat: int) -> int:
    """The seed pass ``repeat`` of a repeated run draws its scenarios, noise and losses with:
    the run's own seed for the first pass, a different one, fixed by both, for each later one."""
    return seed if repeat == 0 else int(np.random.SeedSequence([seed, repeat]).generate_state(1)[0])


def turn_history(
    dialogue: Dialogue, k: int, mode: ReplayMode, earlier: Mapping[int, TurnRecord | SpokenTurn]
) -> list[dict[str, str]]:
    """Messages before seeker turn ``k`` (``earlier``: the turns heard before it, as records or
    as just spoken).

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


def _how_it_played(spoken: SpokenTurn) -> dict:
    """The reply's ``playback`` (its stalls) and ``sound``, from its first audio on (what
    played before it, the talk the caller spoke over, is not the reply); its speaking rate only
    for a reply that played to its end."""
    heard, timing = spoken.heard, spoken.timing
    start = None if timing is None else timing.audio_out_ns
    skip = 0 if start is None or not heard.placed else sample_at(heard.placed, start, AUDIO_RATE)
    whole = spoken.error is None and not (spoken.scenario and spoken.scenario.yielded)
    return {
        "playback": playback_of(heard.placed, heard.audio, AUDIO_RATE, start_ns=start),
        "sound": sound_of(heard.audio[skip:], AUDIO_RATE, spoken.reply_text if whole else ""),
    }


def turn_record(
    spec: AgentSpec,
    dialogue: Dialogue,
    k: int,
    spoken: SpokenTurn,
    *,
    run_id: str,
    final: bool,
    cold: bool,
    started_at: str,
    audio_dir: Path | None,
    repeat: int = 0,
    audio_prefix: str = "",
    call: CallTape | None = None,
    opening: bool = False,
) -> TurnRecord:
    """The record of seeker turn ``k`` of ``dialogue`` as spoken in pass ``repeat`` (or, with
    ``opening``, of what the agent said before it, when the call started); its reply's audio
    is written to ``audio_dir`` (None keeps none), its name after ``audio_prefix``, and the
    turn laid on its ``call``'s recording."""
    audio_path = None
    if audio_dir is not None and spoken.heard.audio.size:
        which = "opening" if opening else f"t{k:02d}"
        name = f"{dialogue.id}__{which}" + (f"__r{repeat}" if repeat else "") + ".wav"
        name = audio_prefix + name
        audio_path = f"{audio_dir.name}/{name}"
        write_wav(audio_dir / name, spoken.heard.audio, AUDIO_RATE)
    where = None if call is None else call.add(spoken.said, spoken.heard)
    return TurnRecord(
        run_id=run_id,
        contestant=spec.id,
        agent_name=spec.name,
        dialogue_id=dialogue.id,
        turn_index=k,
        opening=opening,
        final=final,
        adversarial=dialogue.adversarial,
        user_text="" if opening else dialogue.turns[k].text,
        user_transcript=spoken.user_transcript,
        asr_wer=spoken.asr_wer,
        reply_text=spoken.reply_text,
        llm_requests=spoken.llm_requests,
        llm_calls=spoken.llm_calls,
        audio_path=audio_path,
        call=where,
        timing=spoken.timing,
        reported=spoken.heard.reported,
        **_how_it_played(spoken),
        error=spoken.error,
        scenario=spoken.scenario,
        repeat=repeat,
        cold=cold,
        started_at=started_at,
    )


async def play_dialogue(
    agent: Agent,
    spec: AgentSpec,
    dialogue: Dialogue,
    turns: Sequence[int],
    *,
    run_id: str,
    manifest: Manifest,
    fixtures_dir: Path,
    timeout_s: float,
    mode: ReplayMode = ReplayMode.TEACHER_FORCED,
    earlier: Mapping[int, TurnRecord] | None = None,
    played: Sequence[Scenario] = (),
    seed: int = 0,
    cold: bool = False,
    audio_dir: Path | None = None,
    starting: Callable[[int], None] | None = None,
    repeat: int = 0,
    audio_prefix: str = "",
    final_audio_only: bool = False,
    call: CallTape | None = None,
) -> AsyncIterator[TurnRecord]:
    """Speak seeker turns ``turns`` of ``dialogue`` (in order) to a started ``agent`` and
    yield each one's record as it ends; stop after a failed one.

    ``earlier``: records of this dialogue's turns played before (a free-running history is
    made of them). ``cold``: the agent was just started, so the first turn is its cold one.
    ``played``: the run's scenarios, each turn's drawn with ``seed``; when the next turn
    barges in, this one returns with the agent still speaking. ``audio_dir``: where each
    reply's audio is written (``run_dir/audio``; None keeps none). ``starting(k)`` is called
    just before turn ``k`` is spoken. ``repeat``: which pass of a repeated run this is (its
    draws use ``repeat_seed``). ``audio_prefix`` starts each reply's audio file name;
    ``final_audio_only`` keeps only the final turn's (a load's calls). ``call``: the
    recording the turns are laid on (``recordings.calls``), from a new stretch of it: the agent
    may be a new one, on its own clock.

    An agent that was just started and spoke first (``interface.opening_of``: a greeting,
    heard to its end here) has that opening yielded first, its record's ``opening`` set,
    before the turn it came before."""
    seed = repeat_seed(seed, repeat)
    if call is not None:
        call.begin()
    heard = await opening_of(agent) if cold else None
    if heard is not None and turns:
        yield turn_record(
            spec,
            dialogue,
            turns[0],
            spoken_opening(heard, secret=api_key(spec), timeout_s=timeout_s),
            run_id=run_id,
            final=False,
            cold=True,
            started_at=datetime.now(UTC).isoformat(timespec="milliseconds"),
            audio_dir=None if final_audio_only else audio_dir,
            repeat=repeat,
            audio_prefix=audio_prefix,
            call=call,
            opening=True,
        )
    done: dict[int, TurnRecord | SpokenTurn] = dict(earlier or {})

    def speak(i: int, barge_in: bool) -> tuple[asyncio.Task[SpokenTurn], str, bool]:
        """Start speaking turn ``turns[i]``: its task, its start, and whether the next turn
        barges in on its reply."""
        k = turns[i]
        next_k = turns[i + 1] if i + 1 < len(turns) else None
        if starting is not None:
            starting(k)
        started_at = datetime.now(UTC).isoformat(timespec="milliseconds")
        hand_over = hand_over_ms(played, seed, dialogue, k, next_k, manifest)
        speaking = asyncio.ensure_future(
            speak_turn(
                agent,
                spec,
                dialogue,
                k,
                manifest,
                fixtures_dir,
                turn_history(dialogue, k, mode, done),
                timeout_s=timeout_s,
                scenario=drawn_scenario(played, seed, dialogue, k),
                seed=seed,
                hand_over_ms=hand_over,
                barge_in=barge_in,
            )
        )
        return speaking, started_at, hand_over is not None

    ahead = speak(0, barge_in=False) if turns else None
    try:
        for i, k in enumerate(turns):
            assert ahead is not None
            speaking, started_at, handed_over = ahead
            spoken = await speaking
            ahead = None
            done[k] = spoken
            if handed_over and spoken.error is None and i + 1 < len(turns):
                # The next turn barges in on this one's reply: it starts now, and this turn's
                # audio and recording go to disk (and its record to the caller) while it plays,
                # so that no disk holds up the barge-in.
                ahead = speak(i + 1, barge_in=True)
            record = await asyncio.to_thread(
                turn_record,
                spec,
                dialogue,
                k,
                spoken,
                run_id=run_id,
                final=k == dialogue.final_turn_index,
                cold=cold and i == 0,
                started_at=started_at,
                audio_dir=audio_dir
                if k == dialogue.final_turn_index or not final_audio_only
                else None,
                repeat=repeat,
                audio_prefix=audio_prefix,
                call=call,
            )
            done[k] = record
            yield record
            if record.error is not None:
                return
            if ahead is None and i + 1 < len(turns):
                ahead = speak(i + 1, barge_in=False)
    finally:
        if ahead is not None:  # the caller stopped listening mid-turn
            ahead[0].cancel()
            await asyncio.gather(ahead[0], return_exceptions=True)
