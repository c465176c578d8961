"""The real pipeline end to end: real-time fixture audio, Silero VAD, Whisper tiny.en, a scripted
OpenAI-compatible server over HTTP on 127.0.0.1, Piper, paced playback."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from voicebench.agentspec import AgentSpec, LLMSpec, VADSpec
from voicebench.dialogues import BUILTIN_DIALOGUES, load_dialogues
from voicebench.fixtures import BUILTIN_FIXTURES, read_wav, speech_bounds
from voicebench.fixtures.audio import to_int16
from voicebench.fixtures.synth import PiperSpeaker
from voicebench.replay import replay
from voicebench.replay.agent import VoiceAgent
from voicebench.runlog import read_header, read_turns
from voicebench.timing import EventKind, derive_timing, user_transcript

pytestmark = pytest.mark.slow

REPLY = "I hear how heavy this is. What feels hardest right now?"


def scripted(ttft_ms: float = 200, **over) -> AgentSpec:
    return AgentSpec(
        name="scripted", family="scripted",
        llm=LLMSpec(provider="scripted", model="scripted-llm", ttft_ms=ttft_ms,
                    token_delay_ms=5, reply=REPLY),
        **over,
    )


async def test_replay_times_every_turn_and_resumes_without_redoing_any(tmp_path: Path):
    dialogue = load_dialogues(BUILTIN_DIALOGUES)[0]
    out = tmp_path / "run"
    kwargs = dict(spec_path=Path("agents/scripted.toml"), dialogues=[dialogue],
                  dialogues_path=BUILTIN_DIALOGUES, fixtures_dir=BUILTIN_FIXTURES, out_dir=out)
    records = await replay(scripted(), **kwargs)

    assert [r.turn_index for r in records] == list(dialogue.seeker_turn_indices)
    assert [r.final for r in records] == [False] * (len(records) - 1) + [True]
    for r in records:
        assert r.error is None, r.error
        assert r.contestant == "scripted/scripted-llm"
        t = r.timing
        # The server waits 200 ms before its first token: nothing can be measured below that.
        assert 200.0 <= t.ttft_ms < 1200.0
        assert t.stages_ms["llm_ttft"] == t.ttft_ms
        assert sum(t.stages_ns().values()) == t.audio_out_ns - t.speech_end_ns
        assert t.speech_end_ns <= t.vad_stop_ns <= t.transcript_ns <= t.llm_request_ns
        assert r.reply_text == REPLY
        assert r.asr_wer is not None and r.asr_wer <= 0.2, (r.user_text, r.user_transcript)
        bot = read_wav(out / r.audio_path, expect_rate=16_000)
        assert speech_bounds(bot) is not None and bot.size > 16_000  # over a second of speech

    header = read_header(out)
    assert header.dialogue_ids == (dialogue.id,) and header.mode == "teacher-forced"
    assert read_turns(out) == records

    def must_not_build(_spec):
        raise AssertionError("a resumed run with nothing left must not start a pipeline")

    again = await replay(scripted(), agent_factory=must_not_build, **kwargs)
    assert again == records
    assert len((out / "turns.jsonl").read_text().splitlines()) == len(records)


def _comma_pause_utterance() -> tuple[np.ndarray, int]:
    """'I have been feeling so lost lately,' <0.6 s pause> 'and nobody at home listens.'"""
    speaker = PiperSpeaker()
    rate = speaker.sample_rate
    first = np.concatenate(speaker.sentences("I have been feeling so lost lately,"))
    second = np.concatenate(speaker.sentences("and nobody at home really listens to me."))
    audio = np.concatenate([np.zeros(int(0.3 * rate)), first, np.zeros(int(0.6 * rate)),
                            second, np.zeros(int(0.2 * rate))]).astype(np.float32)
    from voicebench.fixtures.audio import resample

    pcm = to_int16(resample(audio, rate, 16_000))
    return pcm, speech_bounds(pcm)[1]


async def test_a_pause_at_a_comma_does_not_end_the_turn():
    pcm, speech_end = _comma_pause_utterance()
    # A short VAD stop makes sure the pause really splits the speech into two segments.
    spec = scripted(ttft_ms=100, vad=VADSpec(stop_secs=0.3))
    async with VoiceAgent(spec) as agent:
        heard = await agent.speak([{"role": "assistant", "content": "Hi, how are you?"}],
                                  pcm, speech_end)
    assert not heard.timed_out
    events = heard.events
    timing = derive_timing(events, heard.speech_end_ns)
    requests = [e for e in events if e.kind is EventKind.LLM_REQUEST]
    vad_stops = [e for e in events if e.kind is EventKind.VAD_STOP and e.ns <= requests[0].ns]
    assert len(vad_stops) >= 2, "the pause should have produced a VAD stop mid-sentence"
    assert len(requests) == 1, "the turn ended early and the LLM was asked twice"
    heard_text = user_transcript(events, timing).lower()
    assert "lost" in heard_text and "listens" in heard_text
