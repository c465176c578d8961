"""Building a pipeline leaves its event loop free: the models it loads (Whisper, the Piper
voice, each most of a second on two cores and far longer on a busy machine) load in worker
threads, so that `voicebench serve` answers a second caller's handshake, and keeps the first
caller's audio flowing, while a call's pipeline is being built."""

from __future__ import annotations

import threading

import pytest

from voicebench.pipeline import agent as agent_module
from voicebench.pipeline import stt as stt_module
from voicebench.pipeline import tts as tts_module
from voicebench.pipeline.agent import VoiceAgent
from voicebench.speechspec import TTSSpec

pytestmark = pytest.mark.slow


async def test_a_pipelines_models_load_off_its_event_loop(monkeypatch: pytest.MonkeyPatch):
    from scripted_agent import scripted

    loop_thread = threading.get_ident()
    loaded: dict[str, int] = {}

    def watch(name: str, load):
        def wrapped(*args, **kwargs):
            loaded[name] = threading.get_ident()
            return load(*args, **kwargs)

        return wrapped

    monkeypatch.setattr(stt_module, "load_whisper", watch("whisper", stt_module.load_whisper))
    monkeypatch.setattr(tts_module, "tts_service", watch("tts", tts_module.tts_service))
    monkeypatch.setattr(agent_module, "silero_vad", watch("vad", agent_module.silero_vad))
    for spec in (scripted(), scripted(tts=TTSSpec(provider="openai"))):
        loaded.clear()
        async with VoiceAgent(spec):
            pass
        assert set(loaded) == {"whisper", "tts", "vad"}
        assert loop_thread not in loaded.values(), loaded
