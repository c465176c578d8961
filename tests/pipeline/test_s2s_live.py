"""The shipped speech-to-speech agents against the real providers: run only with
``VOICEBENCH_LIVE_API=1`` and the provider's key set (they cost money and need the network)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from voicebench.agentspec import AgentSpec, load_agent_spec
from voicebench.fixtures import read_wav
from voicebench.pipeline.stt import load_whisper, transcribe_pcm
from voicebench.replaying import replay

pytestmark = [pytest.mark.slow, pytest.mark.live_api]

AGENTS = Path(__file__).resolve().parents[2] / "agents"


@pytest.mark.parametrize(
    ("agent", "variable"),
    [("openai-realtime", "OPENAI_API_KEY"), ("gemini-live", "GOOGLE_API_KEY")],
)
async def test_a_real_speech_to_speech_model_answers_every_turn_aloud(
    tmp_path: Path, short_set, agent: str, variable: str
):
    if not os.environ.get(variable):
        pytest.skip(f"{variable} is not set")
    spec = load_agent_spec(AGENTS / f"{agent}.toml")
    item = short_set.dialogues[0]
    records = await replay(
        spec, **short_set.run([item], tmp_path / "run", AGENTS / f"{agent}.toml")
    )
    whisper = load_whisper(AgentSpec.model_fields["stt"].default)

    for r in records:
        assert r.error is None, r.error
        assert 0 < r.timing.ttfa_ms < 10_000
        stages = [v for v in r.timing.stages_ms.values() if v is not None]
        assert sum(stages) == pytest.approx(r.timing.ttfa_ms, abs=1e-6)
        assert r.reply_text  # the transcript the model reported
        heard = transcribe_pcm(
            whisper, read_wav(tmp_path / "run" / r.audio_path, expect_rate=16_000)
        )
        assert len(heard.split()) >= 3, heard
