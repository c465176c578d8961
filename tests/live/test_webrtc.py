"""Agents called over WebRTC as a browser calls them (Opus both ways, aiortc): ``voicebench serve
--protocol webrtc`` and a plain pipecat SmallWebRTC bot, each a real pipeline (VAD, Whisper,
scripted LLM over HTTP, Piper) on 127.0.0.1."""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
import subprocess
from pathlib import Path

import pytest
from apps import served
from fastapi import BackgroundTasks  # at module level: FastAPI resolves the endpoint's annotations
from processes import ROOT, voicebench
from short_set import ShortSet

from voicebench.agentspec import AgentSpec, LLMSpec
from voicebench.remotespec import RemoteAuth, RemoteSpec
from voicebench.replaying import replay

pytestmark = pytest.mark.slow

TOKEN_ENV = "VB_TEST_WEBRTC_TOKEN"
TOKEN = "webrtc-token-0123456789abcdef"


QUIET_S = 2.0
"""The silence that ends a reply: the far end is a real pipeline, which on a busy machine can
take over a second to speak its reply's next sentence (its reply would be cut there)."""


def _remote(url: str, **over) -> AgentSpec:
    return AgentSpec(
        name="browser-bot",
        family="scripted",
        remote=RemoteSpec(url=url, protocol="webrtc", quiet_secs=QUIET_S, **over),
    )


async def _call(url: str, out: Path, short: ShortSet, **over):
    """One call of two short spoken turns (``tests/helpers/short_set.py``)."""
    return await replay(
        _remote(url, **over), **short.run([short.item("short-dog")], out, Path("webrtc.toml"))
    )


def _check_heard(records, out: Path) -> None:
    """Every turn timed, and each reply, transcribed from what came over the call, says
    something."""
    from voicebench.judging.replies import agent_replies
    from voicebench.pipeline.stt import Transcriber

    assert len(records) == 2
    for r in records:
        assert r.error is None, r.error
        # The scripted LLM waits 300 ms for its first token, after VAD, Whisper and the turn
        # end; Opus and the jitter buffers add their share.
        assert r.timing.ttfa_ms > 300
        assert r.timing.stages_ms["endpointing"] is None  # a black box has no stages
    replies = list(agent_replies(out, Transcriber(), set()))
    assert len(replies) == 1 and replies[0].failed is None
    assert len(replies[0].heard.split()) >= 5, replies[0].heard


async def test_serve_answers_webrtc_calls_and_refuses_a_missing_token(
    tmp_path: Path, short_set, monkeypatch: pytest.MonkeyPatch
):
    proc = subprocess.Popen(
        voicebench(
            "serve",
            *("--agent", "agents/scripted.toml", "--port", "0", "--protocol", "webrtc"),
            *("--token-env", TOKEN_ENV),
        ),
        stdout=subprocess.PIPE,
        stderr=(tmp_path / "serve.err").open("w"),
        text=True,
        cwd=ROOT,
        env={**os.environ, TOKEN_ENV: TOKEN},
    )
    try:
        line = proc.stdout.readline()
        match = re.search(r"on (http://127\.0\.0\.1:\d+/api/offer), protocol webrtc", line)
        assert match, (line, (tmp_path / "serve.err").read_text())
        refused = await _call(match.group(1), tmp_path / "refused", short_set)
        assert refused[0].error.kind == "handshake"
        assert "403 missing or wrong token" in refused[0].error.reason
        monkeypatch.setenv(TOKEN_ENV, TOKEN)
        records = await _call(
            match.group(1), tmp_path / "run", short_set, auth=RemoteAuth(token_env=TOKEN_ENV)
        )
    finally:
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(timeout=30)
    _check_heard(records, tmp_path / "run")
    log = (tmp_path / "serve.err").read_text()
    assert code == 0 and log.count("call started") == log.count("call ended") == 1
    assert TOKEN not in log


@contextlib.asynccontextmanager
async def pipecat_smallwebrtc_bot():
    """A plain pipecat bot as pipecat's SmallWebRTC examples serve one: a FastAPI app whose
    ``/api/offer`` hands the offer to ``SmallWebRTCRequestHandler`` and runs the bot's
    pipeline on ``SmallWebRTCTransport`` over the ``SmallWebRTCConnection`` it made, in a
    background task, until the peer leaves. Yields the offer URL."""
    from fastapi import FastAPI
    from pipecat.transports.smallwebrtc.connection import SmallWebRTCConnection
    from pipecat.transports.smallwebrtc.request_handler import (
        SmallWebRTCRequest,
        SmallWebRTCRequestHandler,
    )
    from pipecat.transports.smallwebrtc.transport import SmallWebRTCTransport

    from voicebench.pipeline.agent import VoiceAgent

    bot = AgentSpec(
        name="pipecat-webrtc-bot",
        family="scripted",
        llm=LLMSpec(provider="scripted", model="scripted-llm", ttft_ms=300),
    )
    app = FastAPI()
    handler = SmallWebRTCRequestHandler()

    async def run_bot(connection: SmallWebRTCConnection) -> None:
        gone = asyncio.Event()

        def transport(params, _observer):
            made = SmallWebRTCTransport(webrtc_connection=connection, params=params)
            made.event_handler("on_client_disconnected")(lambda *_: gone.set())
            return made

        async with VoiceAgent(bot, transport=transport):
            await gone.wait()

    @app.post("/api/offer")
    async def offer(request: dict, background_tasks: BackgroundTasks) -> dict:
        async def started(connection: SmallWebRTCConnection) -> None:
            background_tasks.add_task(run_bot, connection)

        answer = await handler.handle_web_request(
            request=SmallWebRTCRequest.from_dict(request), webrtc_connection_callback=started
        )
        return answer or {}

    async with served(app) as port:
        try:
            yield f"http://127.0.0.1:{port}/api/offer"
        finally:
            await handler.close()  # the calls end before the server does


async def test_a_plain_pipecat_smallwebrtc_bot_is_called_and_timed(tmp_path: Path, short_set):
    async with pipecat_smallwebrtc_bot() as url:
        records = await _call(url, tmp_path / "run", short_set)
    _check_heard(records, tmp_path / "run")
