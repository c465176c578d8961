"""`voicebench serve` and a plain pipecat bot, each called over WebSocket by the remote-agent
client: real pipelines (VAD, Whisper, scripted LLM over HTTP, Piper) on 127.0.0.1."""

from __future__ import annotations

import re
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from voicebench.agentspec import AgentSpec, LLMSpec, RemoteSpec
from voicebench.dialogues import BUILTIN_DIALOGUES, load_dialogues
from voicebench.fixtures import BUILTIN_FIXTURES, read_wav, speech_bounds
from voicebench.replay import replay

pytestmark = pytest.mark.slow


def _remote(url: str, protocol: str) -> AgentSpec:
    return AgentSpec(name="served", family="scripted",
                     remote=RemoteSpec(url=url, protocol=protocol, quiet_secs=1.0))


async def _call(url: str, protocol: str, out: Path):
    dialogue = next(d for d in load_dialogues(BUILTIN_DIALOGUES) if len(d.seeker_turn_indices) == 2)
    return await replay(_remote(url, protocol), spec_path=Path("served.toml"), dialogues=[dialogue],
                        dialogues_path=BUILTIN_DIALOGUES, fixtures_dir=BUILTIN_FIXTURES,
                        out_dir=out)


def _check(records, out: Path) -> None:
    assert len(records) == 2
    for r in records:
        assert r.error is None, r.error
        # The scripted LLM waits 300 ms for its first token, after VAD, Whisper and the turn end.
        assert r.timing.ttfa_ms > 300
        bot = read_wav(out / r.audio_path, expect_rate=16_000)
        first, last = speech_bounds(bot)
        assert (last - first) / 16_000 > 1.0


def _scripted_processes() -> set[str]:
    found = subprocess.run(["pgrep", "-f", "voicebench.testing.scripted_llm"],
                           capture_output=True, text=True)
    return set(found.stdout.split())


async def test_serve_answers_calls_and_stops_cleanly(tmp_path: Path):
    before = _scripted_processes()
    proc = subprocess.Popen([sys.executable, "-m", "voicebench", "serve", "--agent",
                             "agents/scripted.toml", "--port", "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd=Path(__file__).resolve().parents[2])
    try:
        line = proc.stdout.readline()
        match = re.search(r"on (ws://127\.0\.0\.1:\d+), protocol pcm", line)
        assert match, (line, proc.stderr.read() if proc.poll() is not None else "")
        records = await _call(match.group(1), "pcm", tmp_path / "run")
        _check(records, tmp_path / "run")
    finally:
        proc.send_signal(signal.SIGINT)
        code = proc.wait(timeout=30)
    assert code == 0
    assert _scripted_processes() <= before  # the shared scripted LLM went with it


async def test_a_plain_pipecat_websocket_bot_is_measured_unchanged(tmp_path: Path):
    from pipecat.serializers.protobuf import ProtobufFrameSerializer
    from pipecat.transports.websocket.server import (
        SingleClientWebsocketServerParams,
        SingleClientWebsocketServerTransport,
    )

    from voicebench.replay.agent import VoiceAgent

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]

    def pipecat_transport(params, _observer):
        return SingleClientWebsocketServerTransport(
            SingleClientWebsocketServerParams(
                audio_in_enabled=True, audio_out_enabled=True, audio_in_sample_rate=16_000,
                audio_out_sample_rate=16_000, serializer=ProtobufFrameSerializer()),
            host="127.0.0.1", port=port)

    bot = AgentSpec(name="pipecat-bot", family="scripted",
                    llm=LLMSpec(provider="scripted", model="scripted-llm", ttft_ms=300))
    async with VoiceAgent(bot, transport=pipecat_transport):
        records = await _call(f"ws://127.0.0.1:{port}", "pipecat", tmp_path / "run")
    _check(records, tmp_path / "run")
