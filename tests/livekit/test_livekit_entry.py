"""LiveKit's quick-start as it is written: a worker entrypoint taking a ``JobContext`` that
starts its session on ``ctx.room`` with the OpenAI plugins at their defaults (mp3 from the TTS)
and greets the caller. voicebench stands in for the job, so the session hears voicebench's
microphone and speaks on its loudspeaker."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import soundfile
from livekit_run import TTFT_MS, TTS_MS, livekit, scripted_servers
from short_set import SHORT_REPLY

from voicebench.api import Run, report
from voicebench.errors import RunError
from voicebench.fixtures import load_manifest
from voicebench.live import read_load, run_load
from voicebench.replaying import replay
from voicebench.runlog import read_openings, read_turns

LOUD = 1000
"""A sample this far from zero is sound, not silence."""

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


async def test_the_greeting_is_the_calls_opening_timed_from_the_session_start_and_heard_out(
    tmp_path: Path, short_set, servers
):
    items = [short_set.item("short-dog")]
    out = tmp_path / "run"
    run = short_set.run(items, out)
    [turn] = await replay(livekit("entrypoint"), **run, final_only=True)
    assert turn.error is None, turn.error
    # The greeting is recorded like a turn, apart from the turns.
    [opening] = read_openings(out)
    assert read_turns(out) == [turn]
    assert opening.opening and not turn.opening
    assert (opening.dialogue_id, opening.turn_index, opening.final) == ("short-dog", 3, False)
    assert opening.error is None, opening.error
    assert opening.user_text == "" and opening.reply_text == SHORT_REPLY
    # Its TTFA runs from the session's start: the LLM's and the TTS's set delays are in it,
    # each in its own stage, and the stages sum to it.
    t = opening.timing
    assert t is not None and t.ttfa_ms is not None
    stages = {k: v for k, v in t.stages_ms.items() if v is not None}
    assert stages["llm_ttft"] >= TTFT_MS and stages["tts_first_audio"] >= TTS_MS
    assert t.ttfa_ms >= TTFT_MS + TTS_MS
    assert sum(stages.values()) == pytest.approx(t.ttfa_ms, abs=1e-6)
    assert opening.reported is not None and (opening.reported.llm_ttft_ms or 0) >= TTFT_MS
    # It was heard to its end before the caller's first word: on the call's recording, all of
    # the greeting's sound lies before the caller's first sound.
    assert opening.call is not None and opening.call == turn.call
    greeting, _ = soundfile.read(out / (opening.audio_path or ""), dtype="int16")
    call, _ = soundfile.read(out / opening.call.path, dtype="int16")
    caller_starts = int(np.argmax(np.abs(call[:, 0]) > LOUD))
    heard_before = np.sum(np.abs(call[:caller_starts, 1]) > LOUD)
    assert heard_before >= 0.95 * np.sum(np.abs(greeting) > LOUD) > 0
    # The summary and the report show it, as a figure of its own.
    summary = Run.load(out).summary
    assert (summary.turns, summary.openings, summary.openings_failed) == (1, 1, 0)
    row = summary.rows[-1]
    assert (row.name, row.n, row.p50) == ("opening TTFA", 1, pytest.approx(t.ttfa_ms))
    page = (report([out], out=tmp_path / "report").out_dir / "report.md").read_text()
    assert "opening TTFA (1)" in page


async def test_a_load_waits_for_each_calls_greeting_and_measures_the_callers_turns(
    tmp_path: Path, short_set, servers
):
    items = [short_set.item("short-dog")]
    out = tmp_path / "load"
    turns = await run_load(
        livekit("entrypoint"),
        items,
        load_manifest(short_set.fixtures_dir),
        short_set.fixtures_dir,
        out,
        callers=1,
        duration_s=1.0,
        turn_timeout_s=15,
    )
    assert read_load(out)[1] == turns
    assert [(t.call, t.turn.turn_index, t.turn.opening) for t in turns] == [
        (0, 1, False),
        (0, 3, False),
    ]
    assert all(t.turn.error is None for t in turns), [t.turn.error for t in turns]
