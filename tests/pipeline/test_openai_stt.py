"""A cascade that hears the caller through an OpenAI-compatible transcription endpoint
(``[stt] provider = "openai"``): each segment the VAD cuts is posted as WAV, the endpoint's
transcript is what the LLM is asked about, and its time is the ASR stage."""

from __future__ import annotations

from pathlib import Path

import pytest
from livekit_run import STT_MS, scripted_servers

from voicebench.agentspec import AgentSpec, LLMSpec, STTSpec, TTSSpec
from voicebench.replaying import replay

pytestmark = pytest.mark.slow

TRANSCRIPT = "I have been feeling low lately."
"""What the scripted speech endpoint hears in any audio (``ScriptedSpeechServer``'s default)."""
MS = 1_000_000


async def test_a_cascade_hears_the_caller_through_a_transcription_endpoint(
    tmp_path: Path, short_set, monkeypatch: pytest.MonkeyPatch
):
    items = list(short_set.dialogues[:1])
    async with scripted_servers(monkeypatch) as llm:
        speech_url = llm.speech.base_url
        spec = AgentSpec(
            name="cascade-openai-stt",
            family="scripted",
            stt=STTSpec(provider="openai", base_url=speech_url),
            llm=LLMSpec(provider="openai-compatible", model="m", base_url=llm.base_url),
            tts=TTSSpec(provider="openai", base_url=speech_url, model="tts-1"),
        )
        records = await replay(spec, **short_set.run(items, tmp_path, Path("c.toml")))
        requests = llm.requests(at_least=len(records))

    assert spec.stt.model == "whisper-1"
    assert records and all(r.error is None for r in records), [r.error for r in records]
    for r in records:
        # the endpoint's words, not a local Whisper's reading of the fixture
        assert r.user_transcript == TRANSCRIPT
        assert r.timing is not None and r.timing.vad_stop_ns is not None
        assert r.timing.transcript_ns is not None
        # the ASR stage holds the endpoint's scripted delay
        assert r.timing.transcript_ns - r.timing.vad_stop_ns >= STT_MS * MS
        assert r.reply_text
    assert len(requests) >= len(records)
