"""LiveKit's quick-start as it is written: a worker entrypoint taking a ``JobContext`` that
starts its session on ``ctx.room`` with the OpenAI plugins at their defaults (mp3 from the TTS)
and greets the caller. voicebench stands in for the job, so the session hears voicebench's
microphone and speaks on its loudspeaker."""

from __future__ import annotations

from pathlib import Path

import pytest
from livekit_run import TTFT_MS, TTS_MS, livekit, scripted_servers
from short_set import SHORT_REPLY

from voicebench.errors import RunError
from voicebench.replaying import replay

pytestmark = pytest.mark.slow


@pytest.fixture
async def servers(monkeypatch: pytest.MonkeyPatch):
    async with scripted_servers(monkeypatch) as llm:
        yield llm


async def test_a_quickstart_worker_entrypoint_is_measured_on_voicebenchs_audio(
    tmp_path: Path, short_set, servers
):
    items = [short_set.item("short-dog")]
    records = await replay(livekit("entrypoint"), **short_set.run(items, tmp_path / "run"))
    assert [r.turn_index for r in records] == [1, 3]
    for r in records:
        assert r.error is None, r.error
        # It heard the caller on voicebench's microphone...
        assert r.user_transcript == "I have been feeling low lately."
        # ...and what it said, in mp3 from openai.TTS() as the quick-start leaves it, played
        # on voicebench's loudspeaker, each set delay found in its own stage (bounded below
        # only: a busy machine adds to each).
        assert r.reply_text == SHORT_REPLY
        assert r.timing is not None
        stages = r.timing.stages_ms
        assert (stages["llm_ttft"] or 0) >= TTFT_MS
        assert (stages["tts_first_audio"] or 0) >= TTS_MS
        # mp3 starts with its encoder's delay, played as silence before the first sound
        assert (stages["output"] or 0) >= 20
        assert r.reported is not None and r.reported.llm_ttft_ms is not None
    # The LLM was asked for the greeting first, then once a turn, each after the agent's own
    # instructions.
    bodies = servers.history()
    assert len(bodies) == 3
    assert all(b["messages"][0]["content"] == "You are a supportive listener." for b in bodies)


async def test_an_entrypoint_that_starts_no_session_on_the_room_is_refused_naming_it(
    tmp_path: Path, short_set, monkeypatch: pytest.MonkeyPatch
):
    items = list(short_set.dialogues[:1])
    with pytest.raises(RunError, match=r"entrypoint_idle returned without starting"):
        await replay(livekit("entrypoint_idle"), **short_set.run(items, tmp_path / "r"))
