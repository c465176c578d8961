"""The scripted voice agent answering WebRTC calls (``python -m voicebench.testing.scripted_voice
--protocol webrtc``; ``ScriptedVoiceAgent(protocol="webrtc")``): the same agent, with the same
known delay, that the WebSocket protocols reach, so what WebRTC adds can be measured apart.

It takes SDP offers at ``http://127.0.0.1:PORT/api/offer`` (as pipecat's request handler does)
and answers each with a peer connection of its own (aiortc, Opus at 48 kHz). The caller's audio
is what aiortc hands over after its jitter buffer and decoder, stamped when handed over; the
answer's audio goes out on a track that sends a 20 ms frame every 20 ms (silence between
answers), as a WebRTC agent's does. ``first_audio_sent_ns`` in the log is when the answer's
first frame was handed to that track's queue.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import numpy as np

from voicebench.agent.realtime import FRAME_NS, NS_PER_S
from voicebench.llm.helper import HOST
from voicebench.testing.scripted_timing import HeardLine, ready_until_stopped
from voicebench.testing.scripted_voice_agent import Agent

RATE = 48_000
FRAME = RATE * FRAME_NS // NS_PER_S
"""Samples in a 20 ms frame."""


class PeerLine(HeardLine):
    """One WebRTC call as the scripted agent's connection: the caller's decoded audio comes
    out of ``async for``, the agent's audio goes into ``send``."""

    def __init__(self, call: int) -> None:
        from voicebench.remote.webrtc import paced_track

        super().__init__()
        self.voicebench_call = call
        self._said: list[np.ndarray] = []
        # The answer goes out a 20 ms frame every 20 ms, silence between answers.
        self.track = paced_track(self._next_said, time.perf_counter_ns)

    def _next_said(self, _window_ns: int) -> np.ndarray:
        return self._said.pop(0) if self._said else np.zeros(FRAME, np.int16)

    async def listen(self, track: Any) -> None:
        from aiortc.mediastreams import MediaStreamError

        from voicebench.remote.webrtc import mono_pcm

        try:
            while True:
                frame = await track.recv()
                self.hear(mono_pcm(frame), time.perf_counter_ns())
        except MediaStreamError:
            self.hear(None)

    async def send(self, message: str | bytes) -> None:
        if isinstance(message, str):
            return  # (no control messages on a call)
        pcm = np.frombuffer(message, dtype=np.int16)
        for at in range(0, pcm.size, FRAME):
            chunk = pcm[at : at + FRAME]
            self._said.append(np.pad(chunk, (0, FRAME - chunk.size)))

    async def close(self) -> None:
        self.hear(None)


async def serve_webrtc(agent: Agent, *, port: int = 0) -> None:
    """Answer offers until SIGTERM, SIGINT or the parent's death."""
    import contextlib

    from aiohttp import web
    from aiortc import RTCPeerConnection, RTCSessionDescription

    peers: set[Any] = set()
    tasks: set[asyncio.Future] = set()  # (kept until done)

    def keep(task: asyncio.Future) -> None:
        tasks.add(task)
        task.add_done_callback(tasks.discard)

    async def offer(request: web.Request) -> web.Response:
        body = await request.json()
        call = next(agent.calls)
        if agent.fault_for(call) == "refuse":
            return web.Response(status=503, text="scripted refusal\n")
        pc = RTCPeerConnection()
        peers.add(pc)
        line = PeerLine(call)

        @pc.on("track")
        def _track(track: Any) -> None:
            if track.kind == "audio":
                keep(asyncio.ensure_future(line.listen(track)))

        await pc.setRemoteDescription(RTCSessionDescription(body["sdp"], body["type"]))
        for transceiver in pc.getTransceivers():
            if transceiver.kind == "audio":
                transceiver.sender.replaceTrack(line.track)
                transceiver.direction = "sendrecv"
        await pc.setLocalDescription(await pc.createAnswer())
        keep(asyncio.ensure_future(agent.handle(line)))
        return web.json_response({"sdp": pc.localDescription.sdp, "type": "answer"})

    app = web.Application()
    app.router.add_post("/api/offer", offer)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, HOST, port)
    await site.start()
    server = site._server
    assert server is not None
    bound = next(iter(server.sockets)).getsockname()[1]  # type: ignore[attr-defined]
    try:
        await ready_until_stopped(f"http://{HOST}:{bound}/api/offer")
    finally:
        for pc in peers:
            with contextlib.suppress(Exception):
                await pc.close()
        await runner.cleanup()
