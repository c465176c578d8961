"""A LiveKit agent (``[livekit]``) run in-process with no room and no server: LiveKit's own
OpenAI plugins against the scripted LLM (known TTFT) and the scripted speech endpoints (known
transcription and first-audio delays), and LiveKit's Silero VAD."""

from __future__ import annotations

from pathlib import Path

import pytest
from livekit_run import HOPS_MS, STT_MS, TTFT_MS, TTS_MS, livekit, scripted_servers
from short_set import SHORT_REPLY

from voicebench.api import report
from voicebench.errors import InputError, RunError
from voicebench.fixtures import load_manifest
from voicebench.live import read_load, run_load
from voicebench.replaying import replay
from voicebench.replaying.play import turn_history
from voicebench.runlog import ReplayMode, read_turns

pytestmark = pytest.mark.slow


@pytest.fixture
async def servers(monkeypatch: pytest.MonkeyPatch):
    async with scripted_servers(monkeypatch) as llm:
        yield llm


async def test_three_items_through_a_livekit_agent_have_its_stages_and_its_own_figures(
    tmp_path: Path, short_set, servers
):
    items = list(short_set.dialogues[:3])
    out = tmp_path / "run"
    records = await replay(livekit("build"), **short_set.run(items, out, Path("lk.toml")))
    assert len(records) == sum(len(d.seeker_turn_indices) for d in items)
    for r in records:
        assert r.error is None, r.error
        assert r.contestant == "livekit/lk-scripted"
        t = r.timing
        stages = {k: v for k, v in t.stages_ms.items() if v is not None}
        assert set(stages) == {
            "endpointing",
            "asr",
            "turn_end",
            "llm_ttft",
            "turn_hold",
            "text_aggregation",
            "tts_first_audio",
            "output",
        }
        assert sum(stages.values()) == pytest.approx(t.ttfa_ms, abs=1e-6)
        # Each set delay is found in its own stage, measured on voicebench's clock (the
        # session's first transcription also opens the plugin's connection: no bound above).
        assert stages["asr"] >= STT_MS
        assert r.cold or stages["asr"] < STT_MS + HOPS_MS
        assert TTFT_MS <= stages["llm_ttft"] < TTFT_MS + HOPS_MS
        assert TTS_MS <= stages["tts_first_audio"] < TTS_MS + HOPS_MS
        assert stages["output"] < HOPS_MS  # the first chunk plays as it arrives
        # LiveKit's own figures, kept beside them.
        rep = r.reported
        assert rep is not None and rep.framework == "livekit"
        assert TTFT_MS <= rep.llm_ttft_ms < TTFT_MS + HOPS_MS
        assert TTS_MS <= rep.tts_ttfb_ms < TTS_MS + HOPS_MS
        assert rep.end_of_turn_ms is not None and rep.transcription_ms is not None
        parts = rep.accounting(t.ttfa_ms)
        assert parts is not None and set(parts) == {
            "end_of_turn_ms",
            "llm_ttft_ms",
            "tts_ttfb_ms",
            "unreported_ms",
        }
        assert sum(parts.values()) == pytest.approx(t.ttfa_ms, abs=1e-6)
        # The reply as said: the scripted LLM's words, heard on the caller's recording.
        assert r.reply_text == SHORT_REPLY
        assert r.user_transcript == "I have been feeling low lately."
        assert r.call is not None and (out / r.call.path).exists()
        assert (out / r.audio_path).stat().st_size > 10_000
    # The LLM was given the dialogue's own history each turn (teacher-forced), after the
    # agent's own instructions.
    bodies = servers.history()
    for r in records:
        dialogue = short_set.item(r.dialogue_id)
        said = turn_history(dialogue, r.turn_index, ReplayMode.TEACHER_FORCED, {})
        assert any(
            [m for m in b["messages"] if m["role"] != "system"][: len(said)] == said
            and b["messages"][0]["content"] == "You are a supportive listener."
            for b in bodies
        ), r.turn_index
    assert read_turns(out) == records
    # The report shows the same cut: LiveKit's formula, and what it leaves out.
    built = report([out], out=tmp_path / "report")
    page = (built.out_dir / "report.md").read_text()
    assert "TTFA as LiveKit reports it (ms)" in page and "not in its figures" in page


async def test_an_exception_in_the_agents_own_code_is_the_turns_failure(
    tmp_path: Path, short_set, servers
):
    items = list(short_set.dialogues[:1])
    spec = livekit("build_broken")
    run = short_set.run(items, tmp_path / "run", Path("lk.toml"))
    records = await replay(spec, **run, final_only=True)
    assert len(records) == 1
    first = records[0].error
    assert first.kind == "llm_error"
    assert "RuntimeError: the knowledge base is down" in first.reason


async def test_an_entrypoint_that_returns_no_agent_is_refused_naming_it(tmp_path: Path, short_set):
    items = list(short_set.dialogues[:1])
    with pytest.raises(RunError, match=r"livekit_scripted:build_nothing returned int"):
        await replay(livekit("build_nothing"), **short_set.run(items, tmp_path / "r", Path("x")))


async def test_a_load_runs_many_livekit_sessions_in_this_process(
    tmp_path: Path, short_set, servers
):
    items = [d for d in short_set.dialogues if len(d.seeker_turn_indices) == 2][:3]
    out = tmp_path / "load"
    turns = await run_load(
        livekit("build"),
        items,
        load_manifest(short_set.fixtures_dir),
        short_set.fixtures_dir,
        out,
        callers=3,
        ramp_s=1.0,
        duration_s=2.0,
        turn_timeout_s=15,
    )
    assert read_load(out)[1] == turns
    assert {(t.caller, t.call) for t in turns} >= {(0, 0), (1, 0), (2, 0)}
    assert max(t.concurrency for t in turns) >= 2  # sessions at once, in one process
    for t in turns:
        assert t.turn.error is None, t.turn.error
        stages = {k: v for k, v in t.turn.timing.stages_ms.items() if v is not None}
        assert sum(stages.values()) == pytest.approx(t.turn.timing.ttfa_ms, abs=1e-6)
        assert stages["llm_ttft"] >= TTFT_MS
        assert t.turn.reported is not None and t.turn.reported.llm_ttft_ms is not None
    with pytest.raises(InputError, match="--backend local"):
        await run_load(
            livekit("build"),
            items,
            load_manifest(short_set.fixtures_dir),
            short_set.fixtures_dir,
            tmp_path / "ray",
            callers=2,
            duration_s=2.0,
            backend="ray",
        )
