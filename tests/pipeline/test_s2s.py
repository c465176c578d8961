"""A speech-to-speech agent (``[s2s]``) built on pipecat's OpenAI Realtime and Gemini Live
services, against the scripted servers of each protocol on 127.0.0.1: they find the end of
speech in the audio they receive and answer with known audio a known delay after it."""

from __future__ import annotations

from pathlib import Path

import pytest
from short_set import ShortSet
from stall_check import FRAME_MS, held_as_planned

from voicebench.agentspec import AgentSpec
from voicebench.llm.realtime import RealtimeEndpoint
from voicebench.pipeline.stt import load_whisper, transcribe_pcm
from voicebench.replaying import replay
from voicebench.runlog import read_turns
from voicebench.testing.scripted_plan import sent_playback
from voicebench.testing.scripted_voice import GEMINI, REALTIME, ScriptedVoiceAgent
from voicebench.testing.scripted_voice_agent import heard_end_shift_ms
from voicebench.text import wer

pytestmark = pytest.mark.slow

DELAY_MS = 700.0
REPLY = "I hear you. Losing your job like that would shake anyone, and it makes sense to feel lost."


MODELS = {REALTIME: "gpt-realtime", GEMINI: "gemini-3.8-live"}


def s2s(url: str, protocol: str = REALTIME, **over) -> AgentSpec:
    return AgentSpec(
        name="speaks-itself",
        family="acme",
        s2s=RealtimeEndpoint(
            provider=protocol,
            model=MODELS[protocol],
            base_url=url,
            api_key_env="S2S_TEST_KEY",
            **over,
        ),
    )


async def _replay(spec: AgentSpec, out: Path, short: ShortSet, items, **kwargs):
    return await replay(spec, **short.run(items, out, Path("s2s.toml")), **kwargs)


# times the scripted model, another process, against what it logged: run alone (make test)
@pytest.mark.alone
async def test_three_items_through_a_speech_to_speech_agent_are_timed_exactly(
    tmp_path: Path, short_set, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv("S2S_TEST_KEY", "not-a-real-key")
    items = list(short_set.dialogues[:3])
    async with ScriptedVoiceAgent(delay_ms=DELAY_MS, protocol=REALTIME, reply=REPLY) as model:
        records = await _replay(s2s(model.url), tmp_path / "run", short_set, items)
        answered = model.turns()
    spoken = sum(len(d.seeker_turn_indices) for d in items)
    assert len(records) == spoken == len(answered)
    whisper = load_whisper(AgentSpec.model_fields["stt"].default)
    for r, a in zip(records, answered, strict=True):
        assert r.error is None, r.error
        # A soft last sound can fall under the speech threshold at 24 kHz a little early.
        expected = DELAY_MS - heard_end_shift_ms(fixture_pcm(short_set, r.user_text), REALTIME)
        assert r.contestant == "openai-realtime/gpt-realtime"
        # The model placed its first audio DELAY_MS after the end of speech it heard...
        assert a["first_audio_sent_ns"] - a["speech_end_ns"] >= DELAY_MS * 1e6
        # ...which the caller hears no sooner, and, on loopback with nothing resampled on
        # the way, within a few milliseconds (the pipeline's own hops, both ways).
        assert expected - 2 <= r.timing.ttfa_ms < expected + 40, (r.timing, expected)
        stages = {k: v for k, v in r.timing.stages_ms.items() if v is not None}
        assert set(stages) == {"endpointing", "model_audio", "output"}
        assert sum(stages.values()) == pytest.approx(r.timing.ttfa_ms, abs=1e-6)
        # The model's own VAD ended the turn after its 600 ms of silence (later on a busy
        # machine: the model is another process), and the caller's endpointing runs to when
        # that word arrived here: as the model placed it, within the same few milliseconds.
        model_endpointing = (a["found_end_ns"] - a["speech_end_ns"]) / 1e6
        assert model_endpointing >= 600
        shift = DELAY_MS - expected
        assert -2 <= stages["endpointing"] - (model_endpointing - shift) < 40, stages
        assert r.timing.ttft_ms is None  # no tokens: one model hears and speaks
        assert r.reply_text == REPLY  # the transcript the model reported
        # What it said, transcribed from the audio the caller heard.
        heard = transcribe_pcm(whisper, _wav(tmp_path / "run" / r.audio_path))
        assert len(heard.split()) >= 5 and wer(REPLY, heard) < 0.3, heard
    assert read_turns(tmp_path / "run") == records
    # The report knows it for a speech-to-speech agent, with its own stages in the waterfall.
    from voicebench.metrics import agent_latency
    from voicebench.runlog import read_header

    run = tmp_path / "run"
    report = agent_latency(run, read_header(run), records, budget_ttft_ms=500, budget_ttfa_ms=1000)
    assert report.kind == "speech-to-speech"
    assert report.stage_p50_ms["model_audio"] is not None and report.stage_p50_ms["asr"] is None
    assert report.ttft.n == 0 and report.ttfa.n == spoken


async def test_a_speech_to_speech_agent_with_local_turn_detection_is_asked_to_answer(
    tmp_path: Path, short_set, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv("S2S_TEST_KEY", "not-a-real-key")
    item = short_set.dialogues[0]
    async with ScriptedVoiceAgent(delay_ms=300, protocol=REALTIME) as model:
        spec = s2s(model.url, turn_detection="local")
        records = await _replay(spec, tmp_path / "run", short_set, [item])
    for r in records:
        assert r.error is None, r.error
        t = r.timing
        # Silero's stop, then the turn's wait, then the model asked: it answers at once, its
        # own delay long past by then.
        assert t.vad_stop_ns < t.llm_request_ns < t.model_audio_ns < t.audio_out_ns
        stages = r.timing.stages_ms
        assert stages["turn_end"] == pytest.approx(350, abs=40)  # user_speech_timeout
        assert stages["model_audio"] < 100
        assert sum(v for v in stages.values() if v is not None) == pytest.approx(t.ttfa_ms)


@pytest.mark.parametrize("protocol", [REALTIME, GEMINI])
async def test_a_speech_to_speech_models_failures_are_recorded_on_their_turns(
    tmp_path: Path, short_set, monkeypatch: pytest.MonkeyPatch, protocol: str
):
    monkeypatch.setenv("S2S_TEST_KEY", "not-a-real-key")
    d = next(d for d in short_set.dialogues if len(d.seeker_turn_indices) == 3)
    # Call 0 closes the socket where its answer would start, call 1 sends an error (OpenAI:
    # an error event; Gemini: a close with an error code and reason), call 2 answers with no
    # audio. OpenAI's agent is started again after each; Gemini's opens a session per turn.
    async with ScriptedVoiceAgent(
        delay_ms=DELAY_MS, protocol=protocol, faults=["close", "error", "silent"]
    ) as model:
        records = await _replay(s2s(model.url, protocol), tmp_path / "run", short_set, [d])
    kinds = [r.error.kind if r.error else None for r in records]
    assert kinds == ["closed_mid_turn", "model_error", "no_audio"], [r.error for r in records]
    assert "closed its connection" in records[0].error.reason
    assert "scripted model error" in records[1].error.reason
    assert records[2].error.reason == "the model's answer had no audio"
    if protocol == REALTIME:
        assert all(r.cold for r in records)


async def test_gemini_live_turns_are_timed_exactly_from_the_true_end_of_speech(
    tmp_path: Path, short_set, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv("S2S_TEST_KEY", "not-a-real-key")
    d = next(d for d in short_set.dialogues if len(d.seeker_turn_indices) == 3)
    async with ScriptedVoiceAgent(delay_ms=DELAY_MS, protocol=GEMINI, reply=REPLY) as model:
        records = await _replay(s2s(model.url, GEMINI), tmp_path / "run", short_set, [d])
        answered = model.turns()
    assert len(records) == len(answered) == 3
    whisper = load_whisper(AgentSpec.model_fields["stt"].default)
    for r, a in zip(records, answered, strict=True):
        assert r.error is None, r.error
        assert r.contestant == "gemini-live/gemini-3.8-live"
        assert a["first_audio_sent_ns"] - a["speech_end_ns"] >= DELAY_MS * 1e6
        # The caller is heard at 16 kHz as the protocol takes it: nothing shifts the end.
        assert DELAY_MS - 2 <= r.timing.ttfa_ms < DELAY_MS + 40, r.timing
        # The model says nothing when it takes the turn to have ended: no endpointing stage,
        # its first audio timed from the true end of speech.
        stages = {k: v for k, v in r.timing.stages_ms.items() if v is not None}
        assert set(stages) == {"model_audio", "output"}
        assert sum(stages.values()) == pytest.approx(r.timing.ttfa_ms, abs=1e-6)
        assert r.reply_text == REPLY
        heard = transcribe_pcm(whisper, _wav(tmp_path / "run" / r.audio_path))
        assert len(heard.split()) >= 5 and wer(REPLY, heard) < 0.3, heard
    # Each turn's session was opened with the history asked for (none before the first).
    seeded = [k for k in d.seeker_turn_indices if k > 0]
    histories = model.histories()
    assert [len(h) for h in histories] == seeded
    for k, history in zip(seeded, histories, strict=True):
        said = [t.text for t in d.turns[:k]]
        assert [part["text"] for turn in history for part in turn["parts"]] == said


async def test_gemini_live_with_local_turn_detection_answers_at_the_activitys_end(
    tmp_path: Path, short_set, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv("S2S_TEST_KEY", "not-a-real-key")
    async with ScriptedVoiceAgent(delay_ms=300, protocol=GEMINI) as model:
        spec = s2s(model.url, GEMINI, turn_detection="local")
        records = await _replay(spec, tmp_path / "run", short_set, [short_set.dialogues[0]])
    for r in records:
        assert r.error is None, r.error
        t = r.timing
        assert t.vad_stop_ns < t.llm_request_ns < t.model_audio_ns < t.audio_out_ns
        assert r.timing.stages_ms["turn_end"] == pytest.approx(350, abs=40)
        assert r.timing.stages_ms["model_audio"] < 100


def fixture_pcm(short: ShortSet, text: str):
    from voicebench.fixtures import load_manifest, lookup_fixture, read_wav

    entry = lookup_fixture(load_manifest(short.fixtures_dir), text)
    assert entry is not None
    return read_wav(short.fixtures_dir / entry.path, expect_rate=16_000)


def _wav(path: Path):
    from voicebench.fixtures import read_wav

    return read_wav(path, expect_rate=16_000)


async def test_a_speech_to_speech_models_held_audio_is_a_stall_of_its_length(
    tmp_path: Path, short_set, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv("S2S_TEST_KEY", "not-a-real-key")
    items = list(short_set.dialogues[:1])
    # after 600 ms of its answer the model holds the rest back: the caller hears nothing for
    # 300 ms (what it was sent ahead, 200 ms, played out first)
    async with ScriptedVoiceAgent(
        delay_ms=DELAY_MS, protocol=REALTIME, reply=REPLY, holds=((600.0, 300.0),), lead_ms=200.0
    ) as model:
        records = await _replay(s2s(model.url), tmp_path / "run", short_set, items)
        answered = model.turns()
    assert records and len(records) == len(answered)
    for r, answer in zip(records, answered, strict=True):
        assert r.error is None, r.error
        # The hold was sent as planned, or later (a busy machine can make the model send late)
        sent = sent_playback(answer)
        assert sent is not None and r.playback is not None
        held_as_planned(sent, [(600.0, 300.0)])
        # and the caller heard it where it is in the audio. How long, beyond the model's own
        # sending, also counts the pipeline run here between the model and the caller, whose
        # hops a busy machine delays unevenly: benchmarks/stalls.py measures the length on a
        # machine doing nothing else (within 5.5 ms of the plan).
        heard = [s for s in r.playback.stalls if abs(s.audio_ms - 600) <= FRAME_MS]
        assert len(heard) == 1 and heard[0].ms > FRAME_MS, r.playback.stalls
