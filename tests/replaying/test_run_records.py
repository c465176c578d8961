"""What the replay loop writes per turn, with a test agent in place of the pipeline: cold turns
after each (re)start, and keys kept out of recorded errors."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np

from voicebench.agent.interface import HeardTurn
from voicebench.agentspec import AgentSpec, LLMSpec
from voicebench.dialogues import BUILTIN_DIALOGUES, load_dialogues
from voicebench.fixtures import BUILTIN_FIXTURES
from voicebench.replaying import replay
from voicebench.runlog import read_turns
from voicebench.timing import EventKind, TurnEvent

MS = 1_000_000
KEY = "sk-live-0123456789abcdefghij"


class EchoingAgent:
    """Answers every turn well, except the second, where the provider's error echoes the key."""

    turns = 0

    def __init__(self, _spec: AgentSpec) -> None:
        pass

    async def __aenter__(self):
        return self

    async def __aexit__(self, *exc):
        return None

    async def speak(self, history, pcm, speech_end_sample, *, timeout_s, cue=None):
        EchoingAgent.turns += 1
        if EchoingAgent.turns == 2:
            events = (TurnEvent(EventKind.ERROR, 5 * MS, f"401 Incorrect API key provided: {KEY}"),)
            return HeardTurn(0, events, np.zeros(0, dtype=np.int16), False)
        events = tuple(
            TurnEvent(kind, ms * MS, text)
            for kind, ms, text in (
                (EventKind.VAD_STOP, 200, ""),
                (EventKind.TRANSCRIPT, 300, "hello there"),
                (EventKind.LLM_REQUEST, 301, ""),
                (EventKind.LLM_SENT, 302, ""),
                (EventKind.LLM_TOKEN, 600, "I hear you."),
                (EventKind.TTS_REQUEST, 601, ""),
                (EventKind.LLM_END, 650, ""),
                (EventKind.TTS_AUDIO, 700, ""),
                (EventKind.AUDIO_OUT, 720, ""),
                (EventKind.BOT_STOPPED, 2000, ""),
            )
        )
        return HeardTurn(0, events, np.full(1600, 1000, dtype=np.int16), False)


async def test_cold_turns_and_redacted_errors(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("VOICEBENCH_TEST_LLM_KEY", KEY)
    spec = AgentSpec(
        name="echo",
        family="test",
        llm=LLMSpec(
            provider="openai-compatible",
            model="m",
            base_url="http://127.0.0.1:9/v1",
            api_key_env="VOICEBENCH_TEST_LLM_KEY",
        ),
    )
    dialogue = next(d for d in load_dialogues(BUILTIN_DIALOGUES) if len(d.seeker_turn_indices) >= 3)
    EchoingAgent.turns = 0
    out = tmp_path / "run"
    records = await replay(
        spec,
        spec_path=Path("echo.toml"),
        dialogues=[dialogue],
        dialogues_path=BUILTIN_DIALOGUES,
        fixtures_dir=BUILTIN_FIXTURES,
        out_dir=out,
        agent_factory=EchoingAgent,
    )
    n = len(records)
    # The agent is rebuilt after the failed second turn, so the third is cold again.
    assert [r.cold for r in records] == [True, False, True] + [False] * (n - 3)
    assert records[1].error.kind == "pipeline_error"
    assert records[1].error.reason == "401 Incorrect API key provided: ***"
    assert records[0].error is None and records[0].timing.ttfa_ms == 720.0
    assert KEY not in (out / "turns.jsonl").read_text() and read_turns(out) == records


class PlacedAgent(EchoingAgent):
    """Answers every turn, its reply laid on the clock (so the call's recording has it)."""

    async def speak(self, history, pcm, speech_end_sample, *, timeout_s, cue=None):
        EchoingAgent.turns = 0
        heard = await super().speak(history, pcm, speech_end_sample, timeout_s=timeout_s)
        return dataclasses.replace(heard, start_ns=MS, placed=((0, 720 * MS),))


async def test_a_turns_files_are_written_off_the_event_loop(tmp_path: Path, monkeypatch):
    # A turn handed over to a barge-in returns with the agent still speaking: the reply's audio,
    # the call's recording and the turn's record must not hold up the loop that hears it.
    import threading

    from voicebench.recordings import calls
    from voicebench.replaying import play
    from voicebench.runlog import store

    loop_thread = threading.get_ident()
    writers: list[tuple[str, int]] = []

    def noting(what, write):
        def noted(*args, **kwargs):
            writers.append((what, threading.get_ident()))
            return write(*args, **kwargs)

        return noted

    monkeypatch.setattr(play, "write_wav", noting("reply audio", play.write_wav))
    monkeypatch.setattr(calls.CallTape, "flush", noting("call recording", calls.CallTape.flush))
    monkeypatch.setattr(store, "append_record", noting("turn record", store.append_record))
    dialogue = next(d for d in load_dialogues(BUILTIN_DIALOGUES) if len(d.seeker_turn_indices) >= 3)
    spec = AgentSpec(
        name="echo",
        family="test",
        llm=LLMSpec(provider="openai-compatible", model="m", base_url="http://127.0.0.1:9/v1"),
    )
    await replay(
        spec,
        spec_path=Path("echo.toml"),
        dialogues=[dialogue],
        dialogues_path=BUILTIN_DIALOGUES,
        fixtures_dir=BUILTIN_FIXTURES,
        out_dir=tmp_path / "run",
        agent_factory=PlacedAgent,
    )
    assert {what for what, _ in writers} == {"reply audio", "call recording", "turn record"}
    assert all(thread != loop_thread for _, thread in writers), writers
