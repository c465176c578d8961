"""A real call becomes a test (``voicebench dialogues import recording``): a Twilio-style 8 kHz
mu-law recording with a barge-in cut into a dialogue item and recorded fixtures, then replayed
against another agent with the recording's own ends of speech."""

from __future__ import annotations

from pathlib import Path

import pytest
from known_calls import AGENT_LINES, CALLER_LINES, known_call, speech, write
from typer.testing import CliRunner

from voicebench import api
from voicebench.agentspec import AgentSpec, RemoteSpec
from voicebench.cli import app
from voicebench.fixtures import load_manifest, lookup_fixture, read_wav, speech_bounds
from voicebench.fixtures.synth import RECORDED_VOICE
from voicebench.testing.scripted_voice import ScriptedVoiceAgent

CALL = known_call(latencies_s=(0.6, 1.2), barge_after_s=1.0, stop_s=0.4)
# the agent stops for the barge-in, then answers it
ANSWER = CALL.place("agent", speech(AGENT_LINES[1]), CALL.truth[-1]["end_s"] + 0.9)
DELAY_MS = 800.0  # the scripted agent's answer, after its 600 ms hangover

pytestmark = pytest.mark.slow


async def test_a_recorded_call_is_imported_and_replayed_against_another_agent(tmp_path: Path):
    call = write(tmp_path / "twilio-call.wav", CALL.stereo(), 8_000, "ULAW")
    out = tmp_path / "imported"
    shown = CliRunner().invoke(app, ["dialogues", "import-recording", str(call), "--out", str(out)])
    assert shown.exit_code == 0, shown.output
    assert "1 item(s), 3 caller turn(s)" in shown.output
    (item,) = api.read_dialogues(out / "items.jsonl")
    assert item.id == "twilio-call" and len(item.seeker_turn_indices) == 3
    # the agent's words as the supporter turns (after the second turn, what it said until
    # the caller cut in), its answer to the barge-in the reference
    said = [t.text.lower() for t in item.turns]
    assert "alone" in said[0] and "lonely" in said[1] and "invisible" in said[3]
    assert "home" in said[4] and "invisible" in item.reference_reply.lower()
    manifest = load_manifest(out / "fixtures")
    for k, line in zip(item.seeker_turn_indices, CALLER_LINES, strict=True):
        entry = lookup_fixture(manifest, item.turns[k].text)
        assert entry is not None and entry.voice == RECORDED_VOICE
        pcm = read_wav(out / "fixtures" / entry.path, expect_rate=16_000)
        # the end of speech is where the recording has it, the audio the caller's alone
        assert speech_bounds(pcm)[1] == pytest.approx(entry.speech_end_sample, abs=16)
        assert entry.num_samples - entry.speech_end_sample <= 0.3 * 16_000 + 1
        said_samples = entry.speech_end_sample - entry.speech_start_sample
        assert said_samples == pytest.approx(speech(line).size, abs=512)  # within a VAD frame

    # the same caller, replayed against another agent: each turn timed from the recording's
    # end of speech; nothing is synthesized (every utterance is the recorded one)
    async with ScriptedVoiceAgent(delay_ms=DELAY_MS, reply="I hear you.") as agent:
        spec = AgentSpec(
            name="next-version",
            family="acme",
            remote=RemoteSpec(url=agent.url, protocol="pcm", quiet_secs=0.8),
        )
        run = await api.replay_async(
            spec, out / "items.jsonl", fixtures=out / "fixtures", out=tmp_path / "replay"
        )
    records = list(run.records)
    assert [r.turn_index for r in records] == list(item.seeker_turn_indices)
    for r in records:
        assert r.error is None, r.error
        assert DELAY_MS - 5 <= r.timing.ttfa_ms < DELAY_MS + 300
    assert load_manifest(out / "fixtures") == manifest
