"""``voicebench serve --protocol webrtc``: any voicebench agent as a WebRTC voice agent, the way
pipecat's own SmallWebRTC bots are served.

A caller posts an SDP offer to ``http://127.0.0.1:PORT/api/offer`` (``{"sdp", "type"}``, as a
browser client of pipecat does); pipecat's ``SmallWebRTCRequestHandler`` answers it with a
``SmallWebRTCConnection``, and the call gets its own pipeline with pipecat's
``SmallWebRTCTransport`` as microphone and loudspeaker (Opus both ways, resampled for the
pipeline by the transport). The call lasts until the peer connection closes. There is no
``context`` message: the agent keeps its own history, as a pipecat bot does.

Who may call is decided as for the WebSocket server (``voicebench.live.serve``): the offer must
present the token (``Authorization: Bearer TOKEN`` or ``?token=TOKEN``) and come from no
browser origin but those allowed; at most ``max_calls`` run at once. A refused offer is
answered 403 (or 503 when busy) with the reason, before any connection is made.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import Any

from voicebench.agentspec import AgentSpec
from voicebench.errors import RunError

MAX_OFFER_BYTES = 2**16
"""The largest offer taken (an SDP is a few kilobytes)."""
OFFER_PATH = "/api/offer"


async def run_call(connection: Any, spec: AgentSpec) -> None:
    """One call on ``connection``: a pipeline until the peer connection closes."""
    from pipecat.transports.smallwebrtc.transport import SmallWebRTCTransport

    from voicebench.pipeline.agent import VoiceAgent

    ended = asyncio.Event()

    @connection.event_handler("closed")
    async def _closed(_connection: Any) -> None:
        ended.set()

    agent = VoiceAgent(
        spec,
        transport=lambda params, _observer: SmallWebRTCTransport(
            webrtc_connection=connection, params=params
        ),
    )
    async with agent:
        await ended.wait()


async def serve_webrtc(
    call_spec: AgentSpec,
    *,
    port: int,
    refuse: Callable[[str, Any], str | None],
    limit: int,
    host: str,
    on_ready: Callable[[str], None] | None = None,
    on_call: Callable[[str, int], None] | None = None,
    on_refused: Callable[[str], None] | None = None,
    stop: asyncio.Event,
) -> None:
    """Answer offers on http://HOST:PORT/api/offer until ``stop`` is set; ``refuse(path,
    headers)`` says why an offer may not make a call (None when it may)."""
    from aiohttp import web
    from pipecat.transports.smallwebrtc.request_handler import (
        SmallWebRTCRequest,
        SmallWebRTCRequestHandler,
    )

    handler = SmallWebRTCRequestHandler()
    calls: set[asyncio.Task] = set()

    async def call(connection: Any) -> None:
        if on_call is not None:
            on_call("started", len(calls))
        try:
            await run_call(connection, call_spec)
        finally:
            calls.discard(asyncio.current_task())
            if on_call is not None:
                on_call("ended", len(calls))

    async def offer(request: web.Request) -> web.StreamResponse:
        why = refuse(request.path_qs, request.headers)
        status = 403
        if why is None and len(calls) >= limit:
            why, status = f"busy: {len(calls)} calls in progress (at most {limit})", 503
        if why is not None:
            if on_refused is not None:
                on_refused(why)
            return web.Response(status=status, text=why + "\n")
        try:
            body = await request.json()
            offered = SmallWebRTCRequest(sdp=str(body["sdp"]), type=str(body["type"]))
        except (ValueError, KeyError, TypeError):
            return web.Response(status=400, text='an offer is {"sdp": ..., "type": "offer"}\n')

        async def started(connection: Any) -> None:
            calls.add(asyncio.create_task(call(connection)))

        answer = await handler.handle_web_request(offered, started)
        return web.json_response(answer)

    app = web.Application(client_max_size=MAX_OFFER_BYTES)
    app.router.add_post(OFFER_PATH, offer)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, host, port)
    try:
        await site.start()
    except OSError as exc:
        await runner.cleanup()
        raise RunError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    try:
        server = site._server
        assert server is not None
        bound = next(iter(server.sockets)).getsockname()[1]  # type: ignore[attr-defined]
        if on_ready is not None:
            on_ready(f"http://{host}:{bound}{OFFER_PATH}")
        await stop.wait()
    finally:
        for task in list(calls):
            task.cancel()
        for task in list(calls):
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        with contextlib.suppress(Exception):
            await handler.close()
        await runner.cleanup()
