"""Stalls of agents run in this process, against the scripted speech endpoints' stall plan: a
cascade voicebench builds whose TTS is an OpenAI-compatible speech endpoint, and a LiveKit
agent whose ``openai.TTS`` plugin calls it. The plan is held back on the endpoint's side of
the HTTP stream; the caller must hear each hold where it lies in the reply, and a pause the
endpoint sent as silence as no stall at all.

As for a speech-to-speech agent, what lies between the endpoint and the caller's playout
(pipecat's or LiveKit's queues) is part of the agent, and a busy machine delays its hops
unevenly: the stall's length is held to the plan by ``benchmarks/stalls.py`` on a machine
doing nothing else, and here to more than a frame, at its place."""

from __future__ import annotations

from pathlib import Path

import pytest
from livekit_run import livekit, scripted_servers
from stall_check import FRAME_MS, held_as_planned

from voicebench.agentspec import AgentSpec, LLMSpec, TTSSpec
from voicebench.replaying import replay
from voicebench.runlog import TurnRecord
from voicebench.testing.scripted_plan import sent_playback
from voicebench.testing.scripted_speech import WORD_S

pytestmark = pytest.mark.slow

REPLY = (
    "I can hear how much this has been weighing on you lately and I am right here "
    "with you for as long as you need."
)
"""One sentence (one request to the speech endpoint) of 25 words: 3 s of tone."""
HOLDS = ((600.0, 300.0), (1500.0, 200.0))
LEAD_MS = 200.0
PAUSE_MS = 600.0


def cascade(speech_url: str, llm_url: str | None = None) -> AgentSpec:
    """The cascade voicebench builds (local Whisper, the scripted LLM) speaking through the
    speech endpoint at ``speech_url``."""
    return AgentSpec(
        name="cascade-openai-tts",
        family="scripted",
        llm=LLMSpec(
            provider="scripted", model="scripted-llm", ttft_ms=200, token_delay_ms=5, reply=REPLY
        ),
        tts=TTSSpec(provider="openai", base_url=speech_url, model="tts-1"),
    )


def check_holds(records: list[TurnRecord], answers: list[dict]) -> None:
    assert records and len(answers) >= len(records)
    for r, answer in zip(records, answers, strict=False):
        assert r.error is None, r.error
        sent = sent_playback(answer)
        assert sent is not None and r.playback is not None
        # sent as planned, or later (a busy machine can make the endpoint send late) ...
        held_as_planned(sent, HOLDS)
        for at, _ms in HOLDS:
            # ... and heard where it lies in the reply
            heard = [s for s in r.playback.stalls if abs(s.audio_ms - at) <= FRAME_MS]
            assert len(heard) == 1 and heard[0].ms > FRAME_MS, r.playback.stalls


def check_pauses(records: list[TurnRecord]) -> None:
    tone_ms = len(REPLY.split()) * WORD_S * 1000
    for r in records:
        assert r.error is None, r.error
        assert r.playback is not None
        # the pause was played as audio, the whole reply with it ...
        assert r.playback.audio_ms >= tone_ms + PAUSE_MS - FRAME_MS, r.playback
        # ... and is no stall
        assert not any(s.ms >= PAUSE_MS / 2 for s in r.playback.stalls), r.playback.stalls


async def test_a_cascade_with_a_streaming_speech_endpoint_stalls_where_it_holds(
    tmp_path: Path, short_set, monkeypatch: pytest.MonkeyPatch
):
    items = list(short_set.dialogues[:1])
    held_plan = {"holds": HOLDS, "lead_ms": LEAD_MS}
    async with scripted_servers(monkeypatch, speech_plan=held_plan) as llm:
        spec = cascade(llm.speech.base_url)
        held = await replay(spec, **short_set.run(items, tmp_path / "held", Path("c.toml")))
        check_holds(held, llm.speech.answers())
    pause_plan = {"lead_ms": LEAD_MS, "pause_ms": PAUSE_MS}
    async with scripted_servers(monkeypatch, speech_plan=pause_plan) as llm:
        spec = cascade(llm.speech.base_url)
        paused = await replay(spec, **short_set.run(items, tmp_path / "paused", Path("c.toml")))
    check_pauses(paused)


async def test_a_livekit_agents_tts_plugin_stalls_where_its_endpoint_holds(
    tmp_path: Path, short_set, monkeypatch: pytest.MonkeyPatch
):
    items = list(short_set.dialogues[:1])
    held_plan = {"holds": HOLDS, "lead_ms": LEAD_MS}
    async with scripted_servers(monkeypatch, speech_plan=held_plan, reply=REPLY) as llm:
        held = await replay(livekit("build"), **short_set.run(items, tmp_path / "held"))
        check_holds(held, llm.speech.answers())
    pause_plan = {"lead_ms": LEAD_MS, "pause_ms": PAUSE_MS}
    async with scripted_servers(monkeypatch, speech_plan=pause_plan, reply=REPLY) as llm:
        paused = await replay(livekit("build"), **short_set.run(items, tmp_path / "paused"))
    check_pauses(paused)
