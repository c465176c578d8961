"""What the LiveKit tests share: a spec naming an agent of ``livekit_scripted.py``, and the
scripted servers its plugins call (known TTFT, transcription and first-audio delays), their
URLs in the environment where the agent reads them."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from short_set import SHORT_REPLY

from voicebench.agentspec import AgentSpec, LiveKitSpec
from voicebench.testing.scripted_server import ScriptedLLMServer
from voicebench.testing.scripted_speech import ScriptedSpeechServer

HELPERS = Path(__file__).resolve().parent
TTFT_MS, STT_MS, TTS_MS = 300.0, 100.0, 150.0
HOPS_MS = 95.0
"""What the plugins' HTTP round trips and LiveKit's own queues may add to a set delay: under
the smallest set delay (``STT_MS``), so a stage that took in a neighbour's delay is still told
apart, and far above what they add on a quiet machine (a few ms), so a machine whose cores are
taken by other work still passes."""


def livekit(entrypoint: str) -> AgentSpec:
    return AgentSpec(
        name="lk-scripted",
        family="scripted",
        livekit=LiveKitSpec(entrypoint=f"livekit_scripted:{entrypoint}", path=str(HELPERS)),
    )


@contextlib.asynccontextmanager
async def scripted_servers(
    monkeypatch: pytest.MonkeyPatch, speech_plan: dict | None = None, **llm_options
) -> AsyncIterator[ScriptedLLMServer]:
    """The scripted LLM (``llm_options`` over a short reply) and speech endpoints (with
    ``speech_plan``, a stall plan: ``ScriptedSpeechServer``'s keywords), the LLM yielded with
    the speech server as its ``speech``."""
    llm_options = {"reply": SHORT_REPLY, **llm_options}
    async with (
        ScriptedLLMServer(ttft_ms=TTFT_MS, token_delay_ms=5, **llm_options) as llm,
        ScriptedSpeechServer(stt_ms=STT_MS, tts_ms=TTS_MS, **(speech_plan or {})) as speech,
    ):
        monkeypatch.setenv("SCRIPTED_LLM_URL", llm.base_url)
        monkeypatch.setenv("SCRIPTED_SPEECH_URL", speech.base_url)
        llm.speech = speech  # type: ignore[attr-defined]
        yield llm
