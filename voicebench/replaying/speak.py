"""Speaking one seeker turn to an agent and reading what came back: the turn record's fields,
or the failure, by kind, with a reason naming the stage."""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from voicebench.agent.interface import Agent, HeardTurn, TurnCue
from voicebench.agentspec import AgentSpec, api_key
from voicebench.budgets import TURN_TIMEOUT_S
from voicebench.dialogues import Dialogue
from voicebench.errors import RunError, redact
from voicebench.fixtures import Manifest, lookup_fixture, read_wav
from voicebench.replaying.shaping import shape_heard, shape_said
from voicebench.runlog import ScenarioOutcome, TurnError
from voicebench.scenarios import Scenario, TurnScenario, draw_dialogue
from voicebench.scenarios.apply import audio_rng
from voicebench.text import wer
from voicebench.timing import (
    EventKind,
    TurnEvent,
    TurnTiming,
    derive_timing,
    reply_text,
    user_transcript,
)

RATE = 16_000
SILENT_TTS_CONTEXT = "completed with no audio"
"""How pipecat's error for a reply's TTS context that ended with no audio ends."""


@dataclasses.dataclass(frozen=True)
class SpokenTurn:
    """One seeker turn spoken to an agent: what came back (``heard``, its audio as the caller
    heard it) and the turn record's measured fields, or the failure."""

    heard: HeardTurn
    timing: TurnTiming
    user_transcript: str
    """What the agent's ASR heard."""
    asr_wer: float | None
    reply_text: str
    llm_requests: int
    llm_calls: int | None
    error: TurnError | None
    scenario: ScenarioOutcome | None = None
    said: tuple[tuple[int, np.ndarray], ...] = ()
    """What the caller said, each utterance with the clock reading of its sample 0 (the
    turn's, and a backchannel word's): the caller's side of the call's recording."""


def _interpret(
    heard: HeardTurn,
    *,
    user_text: str,
    secret: str | None = None,
    timeout_s: float = TURN_TIMEOUT_S,
) -> SpokenTurn:
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
    return SpokenTurn(
        heard=heard,
        timing=timing,
        user_transcript=transcript,
        asr_wer=wer(user_text, transcript) if transcript else None,
        reply_text=reply,
        llm_requests=sum(e.kind is EventKind.LLM_REQUEST for e in heard.events),
        llm_calls=llm_calls,
        error=error,
    )


def _turn_error(
    heard: HeardTurn,
    timing: TurnTiming,
    transcript: str,
    reply: str,
    llm_calls: int | None,
    timeout_s: float,
) -> TurnError | None:
    """Why the turn failed, by kind, with a reason naming the stage; None if it did not."""
    events = heard.events
    has = {e.kind for e in events}
    reported = _reported_error(heard, llm_calls)
    if reported is not None:
        return reported
    if heard.speech_to_speech:
        return _speech_to_speech_error(heard, timing, timeout_s)
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


def _silent_tts(event: TurnEvent) -> bool:
    """pipecat's report that a reply's TTS yielded no audio: the turn's ``no_audio``, said in
    the harness's own words, not a TTS failure."""
    return event.source == "tts" and event.text.endswith(SILENT_TTS_CONTEXT)


def _reported_error(heard: HeardTurn, llm_calls: int | None) -> TurnError | None:
    """A failure the agent reported: one it knows of itself, or its first error event."""
    if heard.failure is not None:
        return heard.failure
    errors = [e for e in heard.events if e.kind is EventKind.ERROR and not _silent_tts(e)]
    if not errors:
        return None
    first = errors[0]
    reason = first.text
    if first.source == "llm":
        tokens = sum(e.kind is EventKind.LLM_TOKEN and e.ns < first.ns for e in heard.events)
        if tokens:
            reason = f"the reply stream broke off after {tokens} token(s): {reason}"
        if llm_calls and llm_calls > 1:
            reason += f" ({llm_calls} requests: the client retried)"
    return TurnError(
        kind=f"{first.source}_error" if first.source else "pipeline_error", reason=reason
    )


def spoken_opening(
    heard: HeardTurn, *, secret: str | None = None, timeout_s: float = TURN_TIMEOUT_S
) -> SpokenTurn:
    """What an agent said when its call started (``interface.opening_of``), timed from the
    call's start: nothing was said to it, so it failed only by an error, by not ending within
    ``timeout_s`` or by playing nothing audible."""
    timing = derive_timing(heard.events, heard.speech_end_ns)
    llm_calls = sum(e.kind is EventKind.LLM_SENT for e in heard.events) or None
    error = _reported_error(heard, llm_calls)
    if error is None and heard.timed_out:
        error = TurnError(kind="timeout", reason=f"the opening did not end within {timeout_s:g} s")
    if error is None and timing.audio_out_ns is None:
        error = TurnError(kind="no_audio", reason="no audible bot audio was played")
    if error is not None:
        error = error.model_copy(update={"reason": redact(error.reason, secret)})
    return SpokenTurn(
        heard=heard,
        timing=timing,
        user_transcript="",
        asr_wer=None,
        reply_text=reply_text(heard.events, timing),
        llm_requests=sum(e.kind is EventKind.LLM_REQUEST for e in heard.events),
        llm_calls=llm_calls,
        error=error,
        scenario=heard.scenario,
    )


def _speech_to_speech_error(
    heard: HeardTurn, timing: TurnTiming, timeout_s: float
) -> TurnError | None:
    """Why a speech-to-speech model's turn failed: it heard no end of the turn, did not
    answer, or answered without audio."""
    has = {e.kind for e in heard.events}
    answered = EventKind.MODEL_AUDIO in has or EventKind.LLM_END in has
    if heard.timed_out:
        what = "no complete answer" if answered else "the model did not answer"
        return TurnError(kind="timeout", reason=f"{what} within {timeout_s:g} s")
    if timing.audio_out_ns is not None:
        return None
    if not answered and EventKind.VAD_START not in has:
        return TurnError(kind="no_transcript", reason="no speech was heard in the seeker's audio")
    if EventKind.MODEL_AUDIO not in has:
        return TurnError(kind="no_audio", reason="the model's answer had no audio")
    return TurnError(kind="no_audio", reason="no audible bot audio was played")


async def speak_turn(
    agent: Agent,
    spec: AgentSpec,
    dialogue: Dialogue,
    k: int,
    manifest: Manifest,
    fixtures_dir: Path,
    history: list[dict[str, str]],
    *,
    timeout_s: float = TURN_TIMEOUT_S,
    scenario: TurnScenario | None = None,
    seed: int = 0,
    hand_over_ms: float | None = None,
    barge_in: bool = False,
) -> SpokenTurn:
    """Speak seeker turn ``k`` to ``agent`` after ``history`` and interpret what came back.
    With a ``scenario``, the agent hears the speech through it and the recorded reply is what
    the caller would hear.

    ``hand_over_ms``: the next turn barges in, its first sound this long after this reply's
    first audible sample, so this turn returns with the agent still speaking. ``barge_in``:
    the previous turn did that, so this utterance is said over the reply still playing."""
    turn = dialogue.turns[k]
    pcm, entry = _fixture(manifest, fixtures_dir, turn.text, f"{dialogue.id} turn {k}")
    said = shape_said(
        scenario,
        pcm,
        entry,
        TurnCue(barge_in=barge_in, hand_over_ms=hand_over_ms),
        word=lambda w: _fixture(manifest, fixtures_dir, w, f"the backchannel {w!r}"),
        others=lambda: _other_utterances(manifest, fixtures_dir, turn.text),
        rng=audio_rng(seed, dialogue.id, k, 0),
    )
    heard = await agent.speak(
        history, said.pcm, said.speech_end_sample, timeout_s=timeout_s, cue=said.cue
    )
    spoken = _interpret(heard, user_text=turn.text, secret=api_key(spec), timeout_s=timeout_s)
    caller = [(heard.start_ns, said.pcm)]
    if said.cue.aside is not None and heard.aside_ns is not None:
        caller.append((heard.aside_ns, said.cue.aside))
    spoken = dataclasses.replace(spoken, said=tuple(caller))
    if scenario is None:
        return spoken
    heard, outcome = shape_heard(
        scenario,
        said,
        heard,
        answered=spoken.error is None,
        rng=audio_rng(seed, dialogue.id, k, 1),
    )
    return dataclasses.replace(spoken, heard=heard, scenario=outcome)


def drawn_scenario(
    played: Sequence[Scenario], seed: int, dialogue: Dialogue, k: int
) -> TurnScenario | None:
    """What seeker turn ``k`` plays (``scenarios.draw_dialogue``)."""
    if not played:
        return None
    return draw_dialogue(played, seed, dialogue.id, dialogue.seeker_turn_indices)[k]


def hand_over_ms(
    played: Sequence[Scenario],
    seed: int,
    dialogue: Dialogue,
    k: int,
    next_k: int | None,
    manifest: Manifest,
) -> float | None:
    """When turn ``next_k``, spoken right after turn ``k`` of the same dialogue, barges in:
    how long after turn ``k``'s reply's first audible sample to hand over, so that its first
    sound comes at its drawn delay. None when it does not (or when ``next_k`` is not the next
    seeker turn: a turn in between is already done)."""
    after = [j for j in dialogue.seeker_turn_indices if j > k]
    if next_k is None or not after or after[0] != next_k:
        return None
    scenario = drawn_scenario(played, seed, dialogue, next_k)
    if scenario is None or scenario.name != "barge-in":
        return None
    entry = lookup_fixture(manifest, dialogue.turns[next_k].text)
    lead_ms = entry.speech_start_sample * 1000 / RATE if entry else 0.0
    return max(0.0, float(scenario.params["delay_ms"]) - lead_ms)


def _fixture(manifest: Manifest, fixtures_dir: Path, text: str, what: str):
    """The fixture audio that says ``text``, and its manifest entry."""
    entry = lookup_fixture(manifest, text)
    if entry is None:
        raise RunError(f"no audio fixture for {what}; run `voicebench synth`")
    path = fixtures_dir / entry.path
    try:
        return _fixture_pcm(path, path.stat().st_mtime_ns), entry
    except OSError:
        return read_wav(path, expect_rate=RATE), entry  # which says what is wrong with it


def _other_utterances(manifest: Manifest, fixtures_dir: Path, text: str) -> list[np.ndarray]:
    """Every other seeker utterance of the fixture folder's own (babble is made of them): not
    the built-in audio made on first use elsewhere, which differs from machine to machine."""
    paths = [
        fixtures_dir / e.path
        for e in manifest.entries
        if e.text != text and not Path(e.path).is_absolute()
    ]
    return [_fixture_pcm(p, p.stat().st_mtime_ns) for p in paths]


@functools.lru_cache(maxsize=512)
def _fixture_pcm(path: Path, mtime_ns: int) -> np.ndarray:
    """A fixture WAV, read once however many babble turns use it (a rewritten file, with a new
    ``mtime_ns``, is read again)."""
    pcm = read_wav(path, expect_rate=16_000)
    pcm.flags.writeable = False
    return pcm
