"""`voicebench serve` and a plain pipecat bot, each called over WebSocket by the remote-agent
client: real pipelines (VAD, Whisper, scripted LLM over HTTP, Piper) on 127.0.0.1."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from apps import served
from fastapi import WebSocket  # at module level: FastAPI resolves the endpoint's annotations here
from processes import ROOT, as_in_a_terminal, descendants, survivors, voicebench
from short_set import ShortSet

from voicebench.agentspec import AgentSpec, LLMSpec, RemoteSpec, load_agent_spec
from voicebench.fixtures import read_wav, speech_bounds
from voicebench.remotespec import RemoteAuth
from voicebench.replaying import replay

pytestmark = pytest.mark.slow


TOKEN_ENV = "VB_TEST_SERVE_TOKEN"
TOKEN = "serve-token-0123456789abcdef"
SERVED_ENV = {**os.environ, TOKEN_ENV: TOKEN}


@pytest.fixture(autouse=True)
def _token(monkeypatch: pytest.MonkeyPatch) -> None:
    """Callers present the served agent's token, from the variable serve reads it from."""
    monkeypatch.setenv(TOKEN_ENV, TOKEN)


QUIET_S = 2.0
"""The silence that ends a reply: the far end is a real pipeline, which on a busy machine can
take over a second to speak its reply's next sentence (its reply would be cut there)."""


def _remote(url: str, protocol: str, **over) -> AgentSpec:
    over.setdefault("auth", RemoteAuth(token_env=TOKEN_ENV))
    return AgentSpec(
        name="served",
        family="scripted",
        remote=RemoteSpec(url=url, protocol=protocol, quiet_secs=QUIET_S, **over),
    )


async def _call(url: str, protocol: str, out: Path, short: ShortSet, **over):
    """One call of two short spoken turns (``tests/helpers/short_set.py``)."""
    return await replay(
        _remote(url, protocol, **over),
        **short.run([short.item("short-dog")], out, Path("served.toml")),
    )


def _check(records, out: Path) -> None:
    assert len(records) == 2
    for r in records:
        assert r.error is None, r.error
        # The scripted LLM waits 300 ms for its first token, after VAD, Whisper and the turn end.
        assert r.timing.ttfa_ms > 300
        bot = read_wav(out / r.audio_path, expect_rate=16_000)
        first, last = speech_bounds(bot)
        assert (last - first) / 16_000 > 1.0


async def _load(url: str, protocol: str, out: Path, short: ShortSet, *, callers: int, **over):
    from voicebench.fixtures import load_manifest
    from voicebench.live import run_load

    items = [d for d in short.dialogues if len(d.seeker_turn_indices) == 2][:2]
    return await run_load(
        _remote(url, protocol, **over),
        items,
        load_manifest(short.fixtures_dir),
        short.fixtures_dir,
        out,
        callers=callers,
        ramp_s=0.5,
        duration_s=1.0,
        turn_timeout_s=30,
    )


async def test_serve_answers_calls_and_stops_cleanly(tmp_path: Path, short_set):
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "voicebench",
            "serve",
            "--agent",
            "agents/scripted.toml",
            "--port",
            "0",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).resolve().parents[2],
    )
    # Without --token-env the token is drawn and printed; callers present it.
    os.environ[TOKEN_ENV] = ""
    try:
        line = proc.stdout.readline()
        match = re.search(r"on (ws://127\.0\.0\.1:\d+), protocol pcm", line)
        assert match, (line, proc.stderr.read() if proc.poll() is not None else "")
        printed = re.search(r"^token (\S+) ", proc.stdout.readline())
        assert printed and len(printed.group(1)) >= 16
        os.environ[TOKEN_ENV] = printed.group(1)
        records = await _call(match.group(1), "pcm", tmp_path / "run", short_set)
        _check(records, tmp_path / "run")
        # Two callers at once: one pipeline each, one shared scripted LLM.
        turns = await _load(match.group(1), "pcm", tmp_path / "load", short_set, callers=2)
        assert len(turns) == 4 and all(t.turn.error is None for t in turns)
        assert max(t.concurrency for t in turns) == 2
        helpers = descendants(proc.pid)
        assert helpers  # the shared scripted LLM server
    finally:
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(timeout=30)
    log = proc.stderr.read()
    assert code == 0 and "stopped" in log
    assert log.count("call started") == log.count("call ended") == 3
    assert not survivors(helpers)  # the helper went with it


def _serve(tmp_path: Path, protocol: str = "pcm") -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen(
        voicebench(
            "serve",
            "--agent",
            "agents/scripted.toml",
            "--port",
            "0",
            "--protocol",
            protocol,
            "--token-env",
            TOKEN_ENV,
        ),
        stdout=subprocess.PIPE,
        stderr=(tmp_path / "serve.err").open("w"),
        text=True,
        cwd=ROOT,
        env=SERVED_ENV,
    )
    line = proc.stdout.readline()
    match = re.search(rf"on (ws://127\.0\.0\.1:\d+), protocol {protocol}", line)
    assert match, (line, (tmp_path / "serve.err").read_text())
    return proc, match.group(1)


async def test_serve_answers_phone_calls_on_a_twilio_stream(tmp_path: Path, short_set):
    serve, url = _serve(tmp_path, "twilio")
    try:
        records = await _call(url, "twilio", tmp_path / "run", short_set)
        _check(records, tmp_path / "run")
    finally:
        serve.send_signal(signal.SIGTERM)
        code = serve.wait(timeout=30)
    assert code == 0
    log = (tmp_path / "serve.err").read_text()
    assert log.count("call started") == log.count("call ended") == 1


def test_callers_hanging_up_mid_call_end_their_pipelines(tmp_path: Path, short_set):
    """`load` interrupted with Ctrl-C mid-call: it exits 130 keeping its finished turns, and
    `serve` stops both callers' pipelines and keeps serving; then SIGTERM stops it and its
    helper."""
    serve, url = _serve(tmp_path)
    try:
        turns = tmp_path / "load" / "turns.jsonl"
        load = subprocess.Popen(
            voicebench(
                "load",
                "--agent",
                url,
                *short_set.options(),
                "--callers",
                "2",
                "--ramp",
                "1",
                "--duration",
                "120",
                "--out",
                str(tmp_path / "load"),
                "--token-env",
                TOKEN_ENV,
            ),
            stdout=subprocess.DEVNULL,
            stderr=(tmp_path / "load.err").open("w"),
            cwd=ROOT,
            env=SERVED_ENV,
            preexec_fn=as_in_a_terminal,
        )
        deadline = time.monotonic() + 90
        while (
            not (turns.exists() and turns.read_text().count("\n"))
            and load.poll() is None
            and time.monotonic() < deadline
        ):
            time.sleep(0.1)
        time.sleep(1.5)  # into the next turn
        load.send_signal(signal.SIGINT)
        code = load.wait(timeout=60)
        rest = (tmp_path / "load.err").read_text()
        assert code == 130, rest[-2000:]
        assert "interrupted; finished turns are in" in " ".join(rest.split())
        assert turns.read_text().count("\n") >= 1
        assert not (tmp_path / "load" / "summary.json").exists()
        deadline = time.monotonic() + 30
        log = ""
        while "call ended (0 in progress)" not in log and time.monotonic() < deadline:
            time.sleep(0.2)
            log = (tmp_path / "serve.err").read_text()
        assert "call ended (0 in progress)" in log, log
        assert log.count("call started") == log.count("call ended") >= 2
        helpers = descendants(serve.pid)
        assert serve.poll() is None and helpers  # still serving, with its scripted LLM
    finally:
        serve.send_signal(signal.SIGTERM)
        code = serve.wait(timeout=30)
    assert code == 0
    assert not survivors(helpers)


@contextlib.asynccontextmanager
async def pipecat_bot():
    """A plain pipecat bot: a pipeline on pipecat's own WebSocket server transport and
    protobuf serializer, untouched; yields its URL."""
    from pipecat.serializers.protobuf import ProtobufFrameSerializer
    from pipecat.transports.websocket.server import (
        SingleClientWebsocketServerParams,
        SingleClientWebsocketServerTransport,
    )

    from voicebench.pipeline.agent import VoiceAgent

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]

    def pipecat_transport(params, _observer):
        return SingleClientWebsocketServerTransport(
            SingleClientWebsocketServerParams(
                audio_in_enabled=True,
                audio_out_enabled=True,
                audio_in_sample_rate=16_000,
                audio_out_sample_rate=16_000,
                serializer=ProtobufFrameSerializer(),
            ),
            host="127.0.0.1",
            port=port,
        )

    bot = AgentSpec(
        name="pipecat-bot",
        family="scripted",
        llm=LLMSpec(provider="scripted", model="scripted-llm", ttft_ms=300),
    )
    async with VoiceAgent(bot, transport=pipecat_transport):
        yield f"ws://127.0.0.1:{port}"


async def test_a_plain_pipecat_websocket_bot_is_measured_unchanged(tmp_path: Path, short_set):
    async with pipecat_bot() as url:
        records = await _call(url, "pipecat", tmp_path / "run", short_set, auth=None)
    _check(records, tmp_path / "run")
    # What the listener heard is transcribed for judging like any contestant's reply.
    from voicebench.judging.replies import agent_replies
    from voicebench.pipeline.stt import Transcriber

    replies = list(agent_replies(tmp_path / "run", Transcriber(), set()))
    assert len(replies) == 1 and replies[0].contestant == "served"
    assert len(replies[0].heard.split()) >= 5 and replies[0].failed is None


async def test_load_against_a_pipecat_bot(tmp_path: Path, short_set):
    async with pipecat_bot() as url:
        turns = await _load(url, "pipecat", tmp_path / "load", short_set, callers=1, auth=None)
    assert turns and all(t.turn.error is None for t in turns)


@contextlib.asynccontextmanager
async def pipecat_twilio_bot(seen: dict):
    """A plain pipecat phone bot, as pipecat's Twilio examples build one: a FastAPI WebSocket
    endpoint reads the stream's start with pipecat's ``parse_telephony_websocket`` and runs the
    pipeline on ``FastAPIWebsocketTransport`` with ``TwilioFrameSerializer``, untouched, until
    the caller hangs up. What pipecat parsed from the start goes in ``seen``; yields the URL."""
    import asyncio

    from fastapi import FastAPI
    from pipecat.runner.utils import parse_telephony_websocket
    from pipecat.serializers.twilio import TwilioFrameSerializer
    from pipecat.transports.websocket.fastapi import (
        FastAPIWebsocketParams,
        FastAPIWebsocketTransport,
    )

    from voicebench.pipeline.agent import VoiceAgent

    bot = AgentSpec(
        name="pipecat-phone-bot",
        family="scripted",
        llm=LLMSpec(provider="scripted", model="scripted-llm", ttft_ms=300),
    )
    app = FastAPI()

    @app.websocket("/media")
    async def media(websocket: WebSocket) -> None:
        await websocket.accept()
        platform, call = await parse_telephony_websocket(websocket)
        seen.update(platform=platform, stream=call.stream_id, body=dict(call.body or {}))
        serializer = TwilioFrameSerializer(
            stream_sid=call.stream_id,
            call_sid=call.call_id,
            params=TwilioFrameSerializer.InputParams(auto_hang_up=False),
        )
        gone = asyncio.Event()

        def transport(params, _observer):
            made = FastAPIWebsocketTransport(
                websocket,
                FastAPIWebsocketParams(
                    **params.model_dump(), add_wav_header=False, serializer=serializer
                ),
            )
            made.event_handler("on_client_disconnected")(lambda *_: gone.set())
            return made

        async with VoiceAgent(bot, transport=transport):
            await gone.wait()

    async with served(app) as port:
        yield f"ws://127.0.0.1:{port}/media"


async def test_a_plain_pipecat_twilio_bot_is_called_as_a_phone_platform_would(
    tmp_path: Path, short_set
):
    seen: dict = {}
    async with pipecat_twilio_bot(seen) as url:
        records = await _call(
            url, "twilio", tmp_path / "run", short_set, parameters={"caller": "vb"}, auth=None
        )
    # pipecat recognised a Twilio stream and read its ids and custom parameters.
    assert seen["platform"] == "twilio" and seen["stream"].startswith("MZ")
    assert seen["body"] == {"caller": "vb"}
    _check(records, tmp_path / "run")
    from voicebench.judging.replies import agent_replies
    from voicebench.pipeline.stt import Transcriber

    replies = list(agent_replies(tmp_path / "run", Transcriber(), set()))
    assert len(replies) == 1 and len(replies[0].heard.split()) >= 5


async def test_serve_refuses_a_missing_token_a_foreign_origin_and_calls_over_the_cap(
    tmp_path: Path,
    short_set,
):
    """Each refusal is a WebSocket close with its code and reason, before any pipeline; the
    one call allowed runs, and a context over its caps ends it the same way."""
    import websockets

    from voicebench.live import serve
    from voicebench.live.serve import MAX_CONTEXT_MESSAGES

    refused: list[str] = []
    ready: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    stop = asyncio.Event()
    server = asyncio.create_task(
        serve(
            load_agent_spec(ROOT / "agents" / "scripted.toml"),
            port=0,
            token=TOKEN,
            max_calls=1,
            on_ready=ready.set_result,
            on_refused=refused.append,
            stop=stop,
        )
    )
    url = await asyncio.wait_for(ready, 60)
    bearer = {"Authorization": f"Bearer {TOKEN}"}

    async def closed_with(**connect) -> tuple[int, str]:
        async with websockets.connect(url, **connect) as ws:
            with pytest.raises(websockets.exceptions.ConnectionClosed) as closed:
                await asyncio.wait_for(ws.recv(), 10)
        return closed.value.rcvd.code, closed.value.rcvd.reason

    try:
        assert await closed_with() == (1008, "missing or wrong token")
        assert await closed_with(additional_headers={"Authorization": "Bearer wrong"}) == (
            1008,
            "missing or wrong token",
        )
        code, reason = await closed_with(
            additional_headers={**bearer, "Origin": "https://evil.example"}
        )
        assert code == 1008 and reason.startswith("origin https://evil.example is not allowed")
        # The remote-agent client records the reason on the turn.
        records = await _call(url, "pcm", tmp_path / "refused", short_set, auth=None)
        assert records[0].error.kind == "closed_mid_turn"
        assert "(1008: missing or wrong token)" in records[0].error.reason
        # One call at a time: the second is told to come back later.
        async with websockets.connect(url + f"?token={TOKEN}") as first:
            await first.send(json.dumps({"type": "start", "protocol": "voicebench-pcm/1"}))
            assert json.loads(await asyncio.wait_for(first.recv(), 60)) == {"type": "ready"}
            code, reason = await closed_with(additional_headers=bearer)
            assert (code, reason) == (1013, "busy: 1 calls in progress (at most 1)")
            huge = [{"role": "user", "content": "hi"}] * (MAX_CONTEXT_MESSAGES + 1)
            await first.send(json.dumps({"type": "context", "messages": huge}))
            with pytest.raises(websockets.exceptions.ConnectionClosed) as ended:
                while True:
                    await asyncio.wait_for(first.recv(), 30)
            assert ended.value.rcvd.code == 1008
            assert (
                ended.value.rcvd.reason
                == f"context of {MAX_CONTEXT_MESSAGES + 1} messages (at most 200)"
            )
    finally:
        stop.set()
        await asyncio.wait_for(server, 60)
    # the replay dialled twice, once per turn (a failed turn hangs up)
    assert len(refused) == 6 and refused.count("missing or wrong token") == 4
