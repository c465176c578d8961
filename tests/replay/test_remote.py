"""A remote voice agent over WebSocket, timed as a black box: a scripted agent on 127.0.0.1 with
a known response delay, in both protocols, and its failures recorded on the turn."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from voicebench.agentspec import AgentSpec, RemoteSpec
from voicebench.dialogues import BUILTIN_DIALOGUES, load_dialogues
from voicebench.fixtures import BUILTIN_FIXTURES, read_wav, speech_bounds
from voicebench.replay import replay
from voicebench.runlog import read_turns
from voicebench.testing.scripted_voice import ScriptedVoiceAgent

pytestmark = pytest.mark.slow

DELAY_MS = 800.0


def remote(url: str, protocol: str = "pcm", **over) -> AgentSpec:
    return AgentSpec(
        name="far-bot",
        family="acme",
        remote=RemoteSpec(url=url, protocol=protocol, quiet_secs=0.8, **over),
    )


def dialogue(turns: int = 2):
    return next(d for d in load_dialogues(BUILTIN_DIALOGUES) if len(d.seeker_turn_indices) == turns)


async def _replay(spec: AgentSpec, out: Path, d=None, **kwargs):
    d = d or dialogue()
    return await replay(
        spec,
        spec_path=Path("far.toml"),
        dialogues=[d],
        dialogues_path=BUILTIN_DIALOGUES,
        fixtures_dir=BUILTIN_FIXTURES,
        out_dir=out,
        **kwargs,
    )


@pytest.mark.parametrize("protocol", ["pcm", "pipecat"])
async def test_a_remote_agent_is_timed_from_the_end_of_speech(tmp_path: Path, protocol: str):
    async with ScriptedVoiceAgent(delay_ms=DELAY_MS, protocol=protocol) as agent:
        records = await _replay(remote(agent.url, protocol), tmp_path / "run")
        answered = agent.turns()
    assert len(records) == 2 and len(answered) == 2
    for r in records:
        assert r.error is None, r.error
        assert r.contestant == "remote/far-bot"
        # The agent sends its first audible sample DELAY_MS after the end of speech; the
        # caller cannot hear it sooner, and on loopback it arrives within milliseconds.
        assert DELAY_MS - 5 <= r.timing.ttfa_ms < DELAY_MS + 300, r.timing
        assert r.timing.stages_ms["endpointing"] is None  # a black box has no stages
        bot = read_wav(tmp_path / "run" / r.audio_path, expect_rate=16_000)
        first, last = speech_bounds(bot)
        assert (last - first) / 16_000 > 2.0  # the whole spoken reply was recorded
    assert [r.cold for r in records] == [True, False]
    assert read_turns(tmp_path / "run") == records


async def test_remote_failures_are_recorded_on_their_turns(tmp_path: Path):
    d = dialogue(3)
    # Call 0 is refused at the handshake, call 1 is closed as its reply starts, call 2 never
    # answers; the replay reconnects after each failed turn.
    async with ScriptedVoiceAgent(delay_ms=800, faults=["refuse", "close", "silent"]) as agent:
        records = await _replay(remote(agent.url), tmp_path / "run", d, turn_timeout_s=4.0)
    kinds = [r.error.kind if r.error else None for r in records]
    assert kinds == ["handshake", "closed_mid_turn", "timeout"]
    assert "503" in records[0].error.reason
    assert records[2].error.reason == "nothing audible within 4 s"
    assert all(r.cold for r in records)


async def test_connection_refused_is_a_turn_failure(tmp_path: Path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again before the call: nobody listens there
    records = await _replay(remote(f"ws://127.0.0.1:{port}"), tmp_path / "run")
    assert {r.error.kind for r in records} == {"connection_refused"}
    assert f"ws://127.0.0.1:{port}" in records[0].error.reason
