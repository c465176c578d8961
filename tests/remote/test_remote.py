"""A remote voice agent over WebSocket, timed as a black box: a scripted agent on 127.0.0.1 with
a known response delay, in both protocols, and its failures recorded on the turn."""

from __future__ import annotations

import asyncio
import socket
import time
from pathlib import Path

import pytest
from short_set import ShortSet

from voicebench.agent.realtime import Microphone
from voicebench.agentspec import AgentSpec, RemoteSpec
from voicebench.fixtures import (
    load_manifest,
    lookup_fixture,
    read_wav,
    speech_bounds,
)
from voicebench.replaying import replay
from voicebench.runlog import read_turns
from voicebench.testing.scripted_voice import ScriptedVoiceAgent
from voicebench.testing.scripted_voice_agent import heard_end_shift_ms

pytestmark = pytest.mark.slow

DELAY_MS = 800.0


def remote(url: str, protocol: str = "pcm", **over) -> AgentSpec:
    return AgentSpec(
        name="far-bot",
        family="acme",
        remote=RemoteSpec(url=url, protocol=protocol, quiet_secs=0.8, **over),
    )


def fixture_pcm(short: ShortSet, text: str):
    entry = lookup_fixture(load_manifest(short.fixtures_dir), text)
    assert entry is not None
    return read_wav(short.fixtures_dir / entry.path, expect_rate=16_000)


def dialogue(short: ShortSet, turns: int = 2):
    return next(d for d in short.dialogues if len(d.seeker_turn_indices) == turns)


async def _replay(spec: AgentSpec, out: Path, short: ShortSet, d=None, **kwargs):
    """A dialogue of the short set (two spoken turns unless ``d`` is given) through ``spec``."""
    return await replay(
        spec,
        **short.run([d or dialogue(short)], out, Path("far.toml")),
        **kwargs,
    )


@pytest.mark.parametrize("protocol", ["pcm", "pipecat", "twilio", "telnyx"])
async def test_a_remote_agent_is_timed_from_the_end_of_speech(
    tmp_path: Path, short_set, protocol: str
):
    async with ScriptedVoiceAgent(delay_ms=DELAY_MS, protocol=protocol) as agent:
        records = await _replay(remote(agent.url, protocol), tmp_path / "run", short_set)
        answered = agent.turns()
    assert len(records) == 2 and len(answered) == 2
    for r in records:
        assert r.error is None, r.error
        assert r.contestant == "remote/far-bot"
        # The agent sends its first audible sample DELAY_MS after the end of speech it heard
        # (on a phone line, up to 0.2 s before the true end); the caller cannot hear it
        # sooner, and on loopback it arrives within milliseconds.
        expected = DELAY_MS - heard_end_shift_ms(fixture_pcm(short_set, r.user_text), protocol)
        assert expected - 5 <= r.timing.ttfa_ms < expected + 300, r.timing
        assert r.timing.stages_ms["endpointing"] is None  # a black box has no stages
        bot = read_wav(tmp_path / "run" / r.audio_path, expect_rate=16_000)
        first, last = speech_bounds(bot)
        assert (last - first) / 16_000 > 2.0  # the whole spoken reply was recorded
    assert [r.cold for r in records] == [True, False]
    assert read_turns(tmp_path / "run") == records
    if protocol in ("twilio", "telnyx"):
        # Each reply's mark came back once the reply had played out on the caller's side.
        marks = agent.marks()
        assert [m["mark"] for m in marks] == ["reply-0", "reply-0"]
        for m, a in zip(marks, answered, strict=True):
            assert -5_000_000 < m["acked_ns"] - a["reply_ends_ns"] < 100_000_000


async def test_a_caller_held_up_at_the_end_of_speech_is_timed_as_the_agent_answered(
    tmp_path: Path, short_set, monkeypatch
):
    # The caller's loop is held up for 150 ms as it makes the frame that holds each utterance's
    # last sample, as a busy machine would: that frame reaches the agent about 130 ms late,
    # and the frames after it catch up. The scripted agent places the end of speech by its
    # least delayed frame and answers DELAY_MS after it; the turn's TTFA is what it did.
    made = Microphone.frame

    def held_up(self, window_start_ns):
        utt, before = self._current, self._pos
        chunk = made(self, window_start_ns)
        if utt is not None:
            bounds = speech_bounds(utt.pcm)
            assert bounds is not None
            if before <= bounds[1] - 1 < before + self.samples:
                time.sleep(0.15)
        return chunk

    monkeypatch.setattr(Microphone, "frame", held_up)
    async with ScriptedVoiceAgent(delay_ms=DELAY_MS) as agent:
        records = await _replay(remote(agent.url), tmp_path / "run", short_set)
        answered = agent.turns()
    assert len(records) == 2 and len(answered) == 2
    for r, a in zip(records, answered, strict=True):
        assert r.error is None, r.error
        did = (a["first_audio_sent_ns"] - a["speech_end_ns"]) / 1e6
        assert did >= DELAY_MS
        assert abs(r.timing.ttfa_ms - did) < 25, (r.timing.ttfa_ms, did)


@pytest.mark.parametrize("protocol", ["pcm", "twilio"])
async def test_remote_failures_are_recorded_on_their_turns(
    tmp_path: Path, short_set, protocol: str
):
    d = dialogue(short_set, 3)
    # Call 0 is refused at the handshake, call 1 is closed as its reply starts, call 2 never
    # answers; the replay reconnects after each failed turn.
    async with ScriptedVoiceAgent(
        delay_ms=800, faults=["refuse", "close", "silent"], protocol=protocol
    ) as agent:
        records = await _replay(
            remote(agent.url, protocol), tmp_path / "run", short_set, d, turn_timeout_s=4.0
        )
    kinds = [r.error.kind if r.error else None for r in records]
    assert kinds == ["handshake", "closed_mid_turn", "timeout"]
    assert "503" in records[0].error.reason
    assert records[2].error.reason == "nothing audible within 4 s"
    assert all(r.cold for r in records)


async def test_connection_refused_is_a_turn_failure(tmp_path: Path, short_set):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again before the call: nobody listens there
    records = await _replay(remote(f"ws://127.0.0.1:{port}"), tmp_path / "run", short_set)
    assert {r.error.kind for r in records} == {"connection_refused"}
    assert f"ws://127.0.0.1:{port}" in records[0].error.reason


async def test_an_agent_that_never_answers_the_handshake_fails_saying_how_long_it_waited():
    from voicebench.remote.caller import RemoteAgent

    async def mute(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read(1 << 16)  # the upgrade request, never answered
        await asyncio.sleep(30)

    server = await asyncio.start_server(mute, "127.0.0.1", 0)
    async with server:
        port = server.sockets[0].getsockname()[1]
        url = f"ws://127.0.0.1:{port}"
        spec = AgentSpec(
            name="mute", family="x", remote=RemoteSpec(url=url, connect_timeout_secs=0.5)
        )
        async with RemoteAgent(spec) as far:
            failure = far._failure
    assert failure is not None and failure.kind == "connection_refused"
    assert failure.reason == f"{url}: no connection within 0.5 s"


async def test_a_token_is_presented_and_kept_out_of_everything_written(
    tmp_path: Path, short_set, monkeypatch: pytest.MonkeyPatch
):
    secret = "tok-4f9a1c2e7b"
    monkeypatch.setenv("FAR_TOKEN", secret)
    header = {"token_env": "FAR_TOKEN"}  # Authorization: Bearer TOKEN
    query = {"token_env": "FAR_TOKEN", "header": None, "query": "token"}
    async with ScriptedVoiceAgent(delay_ms=300, protocol="twilio", token_env="FAR_TOKEN") as agent:
        by_header = await _replay(
            remote(agent.url, "twilio", auth=header), tmp_path / "a", short_set
        )
        by_query = await _replay(remote(agent.url, "twilio", auth=query), tmp_path / "b", short_set)
        without = await _replay(remote(agent.url, "twilio"), tmp_path / "c", short_set)
    assert all(r.error is None for r in by_header + by_query)
    assert {r.error.kind for r in without} == {"handshake"}
    assert "401" in without[0].error.reason
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert secret.encode() not in path.read_bytes(), path
