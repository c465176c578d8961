"""``voicebench serve``: any voicebench agent as a WebSocket voice agent on 127.0.0.1.

Each connection is one call with its own pipeline (VAD, Whisper, the LLM, Piper), in any
protocol of ``voicebench.remote.wire``: on a phone platform's stream (``twilio``, ``telnyx``)
it is the agent's side, the caller's 8 kHz mu-law resampled for the pipeline and back, and a
``clear`` sent when the agent is interrupted. The caller's audio goes straight into the pipeline
(the caller paces it); the agent's voice is sent as it would be played, in real time. A
``context`` message sets the conversation before the next turn, so a teacher-forced replay
against a served agent hears the same history as one against the pipeline in-process.

Helper servers (the local llama.cpp server, the scripted LLM) are started once for the
server's life and shared by every call: one model, many callers, as a deployment would run.

Who may call: every call runs prompts on the operator's LLM (and key), so a call must present
the server's token, as ``[remote.auth]`` presents one: ``Authorization: Bearer TOKEN`` in the
handshake, or ``?token=TOKEN`` in the URL. A handshake that carries an ``Origin`` (every
browser's does) is refused unless that origin was allowed, so a web page open in the
operator's browser cannot call it. At most ``max_calls`` calls run at once, and a ``context``
holds at most ``MAX_CONTEXT_MESSAGES`` messages of ``MAX_CONTEXT_CHARS`` characters in all.
A call refused for its token, origin or the cap is closed with a WebSocket close code and a
reason (``1008`` policy, ``1013`` busy) before any pipeline is built; a context over its caps
ends the call the same way (``1008``) without reaching the LLM.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, urlsplit

from pipecat.frames.frames import (
    Frame,
    InputAudioRawFrame,
    InterruptionFrame,
    OutputAudioRawFrame,
    StartFrame,
)
from pipecat.processors.frame_processor import FrameDirection
from pipecat.transports.base_input import BaseInputTransport
from pipecat.transports.base_output import BaseOutputTransport
from pipecat.transports.base_transport import BaseTransport, TransportParams

from voicebench.agent.realtime import Playout
from voicebench.agentspec import AgentSpec
from voicebench.errors import InputError, RunError
from voicebench.llm import connect
from voicebench.remote.codecs import agent_codec
from voicebench.remote.telephony import TelephonyAgentSide
from voicebench.remote.wire import PCMCodec, PipecatCodec

HOST = "127.0.0.1"
SAMPLE_RATE = 16_000
MAX_MESSAGE_BYTES = 2**20
"""The largest message a caller may send: 20 ms of audio is 640 bytes, a context a few KB."""
MAX_CONTEXT_MESSAGES = 200
MAX_CONTEXT_CHARS = 100_000
POLICY = 1008
"""WebSocket close code: refused by policy (no or a wrong token, a foreign origin, a context
over its caps)."""
BUSY = 1013
"""WebSocket close code: try again later (as many calls in progress as allowed)."""


def default_max_calls() -> int:
    """Calls at once when the operator does not say: two per core of this machine."""
    return 2 * (os.cpu_count() or 1)


def refusal(path: str, headers: Any, token: str, allowed_origins: Sequence[str] = ()) -> str | None:
    """Why a handshake (its request path and headers) may not make a call, or None when it
    may: a token equal to ``token`` in the ``Authorization`` header (``Bearer TOKEN`` or the
    token alone) or the ``token`` query parameter, and no ``Origin`` unless one allowed."""
    origin = headers.get("Origin")
    if origin is not None and origin not in allowed_origins:
        shown = ascii(origin)[1:-1][:60]  # a close reason holds at most 123 bytes
        return f"origin {shown} is not allowed (serve --allow-origin)"
    given = [headers.get("Authorization", "").removeprefix("Bearer ").strip()]
    given += parse_qs(urlsplit(path).query).get("token", [])
    if not any(g and hmac.compare_digest(g.encode(), token.encode()) for g in given):
        return "missing or wrong token"
    return None


def context_messages(messages: object) -> list[dict[str, str]] | str:
    """A ``context`` message's history (user and assistant turns with text), or why it is
    refused: more than ``MAX_CONTEXT_MESSAGES`` messages or ``MAX_CONTEXT_CHARS`` characters."""
    if not isinstance(messages, list):
        return []
    if len(messages) > MAX_CONTEXT_MESSAGES:
        return f"context of {len(messages)} messages (at most {MAX_CONTEXT_MESSAGES})"
    history = [
        m
        for m in messages
        if isinstance(m, dict)
        and m.get("role") in ("user", "assistant")
        and isinstance(m.get("content"), str)
    ]
    chars = sum(len(m["content"]) for m in history)
    if chars > MAX_CONTEXT_CHARS:
        return f"context of {chars} characters (at most {MAX_CONTEXT_CHARS})"
    return [{"role": m["role"], "content": m["content"]} for m in history]


class _CallerInput(BaseInputTransport):
    async def start(self, frame: StartFrame) -> None:
        await super().start(frame)
        await self.set_transport_ready(frame)

    async def hear(self, pcm: bytes) -> None:
        await self.push_audio_frame(
            InputAudioRawFrame(audio=pcm, sample_rate=SAMPLE_RATE, num_channels=1)
        )


class _CallerOutput(BaseOutputTransport):
    """Sends the agent's voice to the caller no faster than it would play, and tells the
    caller to drop what it has queued (``clear``) when the agent is interrupted."""

    def __init__(
        self, params: TransportParams, send: Callable, clear: Callable | None, **kwargs
    ) -> None:
        super().__init__(params, **kwargs)
        self._send = send
        self._clear = clear
        self._playout = Playout()

    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        await super().process_frame(frame, direction)
        if isinstance(frame, InterruptionFrame) and self._clear is not None:
            with contextlib.suppress(Exception):  # the caller hung up
                await self._clear()

    async def start(self, frame: StartFrame) -> None:
        await super().start(frame)
        await self.set_transport_ready(frame)

    async def write_audio_frame(self, frame: OutputAudioRawFrame) -> bool:
        await self._playout.play(
            self.get_clock().get_time(), len(frame.audio) // 2, frame.sample_rate
        )
        with contextlib.suppress(Exception):  # the caller hung up: nothing to play to
            await self._send(frame.audio)
        return True


class CallerTransport(BaseTransport):
    def __init__(
        self, params: TransportParams, send: Callable, clear: Callable | None = None
    ) -> None:
        super().__init__()
        self._input = _CallerInput(params, name="caller-input")
        self._output = _CallerOutput(params, send, clear, name="caller-output")

    def input(self) -> _CallerInput:
        return self._input

    def output(self) -> _CallerOutput:
        return self._output


@contextlib.asynccontextmanager
async def shared_backend(spec: AgentSpec):
    """The spec each call's pipeline uses: helper servers started once, here, and reached
    as an OpenAI-compatible endpoint."""
    if spec.remote is not None:
        raise InputError("a remote agent cannot be served; give a spec with [llm]", field="remote")
    if spec.s2s is not None:
        raise InputError(
            "a speech-to-speech agent is not served yet; give a spec with [llm]", field="s2s"
        )
    if spec.livekit is not None:
        raise InputError(
            "a LiveKit agent is served by its own worker in a LiveKit room; voicebench runs it "
            "in-process instead (voicebench run, load)",
            field="livekit",
        )
    async with contextlib.AsyncExitStack() as stack:
        llm = spec.llm
        assert llm is not None
        conn = await connect(llm, stack, warm_prompt=spec.system_prompt if llm.warmup else None)
        if conn.provider.start is not None:
            llm = llm.model_copy(
                update={"provider": "openai-compatible", "base_url": conn.base_url}
            )
        yield spec.model_copy(update={"llm": llm})


@dataclass(frozen=True)
class Refused:
    reason: str


def caller_message(
    wire: PCMCodec | PipecatCodec | TelephonyAgentSide, message: str | bytes
) -> bytes | list[dict[str, str]] | Refused | str | None:
    """What one message from a caller asks of the call: audio to hear (whole 16-bit samples),
    a context to set, ``Refused`` (a context over its caps), ``"ready"`` (a ``pcm`` caller's
    start, answered with ready), ``"stop"`` (the platform hung up), or None (nothing: a message
    that is not understood is ignored). Never raises, whatever a stranger sends."""
    incoming = wire.decode(message)
    if incoming is None:
        return None
    if incoming.audio is not None:
        return incoming.audio[: len(incoming.audio) // 2 * 2]
    kind = incoming.control.get("type")
    if kind == "context":
        history = context_messages(incoming.control.get("messages"))
        return Refused(history) if isinstance(history, str) else history
    if kind == "start" and isinstance(wire, PCMCodec):
        return "ready"
    if kind == "stop":
        return "stop"
    return None


async def handle_call(ws, spec: AgentSpec, protocol: str) -> None:
    """One call: a pipeline for this caller until it hangs up."""
    from pipecat.audio.utils import create_stream_resampler

    from voicebench.pipeline.agent import VoiceAgent

    wire = agent_codec(protocol, SAMPLE_RATE)
    line = wire.sample_rate  # 8 kHz on a phone line: resampled to and from the pipeline's
    to_line, from_line = create_stream_resampler(), create_stream_resampler()

    async def send(pcm: bytes) -> None:
        if line != SAMPLE_RATE:
            pcm = await to_line.resample(pcm, SAMPLE_RATE, line)
        await ws.send(wire.audio(pcm))

    clear = None
    if isinstance(wire, TelephonyAgentSide):
        phone = wire

        async def clear() -> None:
            await ws.send(phone.clear())

    agent = VoiceAgent(
        spec, transport=lambda params, _observer: CallerTransport(params, send, clear)
    )
    async with agent:
        with contextlib.suppress(Exception):  # a dropped caller ends the call
            async for message in ws:
                what = caller_message(wire, message)
                if isinstance(what, bytes):
                    audio = what
                    if line != SAMPLE_RATE:
                        audio = await from_line.resample(audio, line, SAMPLE_RATE)
                    heard = agent.transport.input()
                    assert isinstance(heard, _CallerInput)
                    await heard.hear(audio)
                elif isinstance(what, list):
                    messages: list[Any] = what
                    agent.context.set_messages(messages)
                elif isinstance(what, Refused):
                    await ws.close(POLICY, what.reason)
                    break
                elif what == "ready":
                    await ws.send('{"type": "ready"}')
                elif what == "stop":
                    break  # the platform hung up


async def serve(
    spec: AgentSpec,
    *,
    port: int,
    token: str,
    protocol: str = "pcm",
    allowed_origins: Sequence[str] = (),
    max_calls: int | None = None,
    on_ready: Callable[[str], None] | None = None,
    on_call: Callable[[str, int], None] | None = None,
    on_refused: Callable[[str], None] | None = None,
    stop: asyncio.Event | None = None,
) -> None:
    """Serve ``spec`` on ws://127.0.0.1:PORT (``webrtc``: offers taken at
    http://127.0.0.1:PORT/api/offer, ``voicebench.live.serve_webrtc``) until ``stop`` is set,
    or, without one, until SIGINT or SIGTERM; either way every call's pipeline and the helper
    servers are stopped. Calls must present ``token`` and come from no browser origin but
    ``allowed_origins``; at most ``max_calls`` (``default_max_calls()``) run at once (see the
    module docstring).
    ``on_call("started" | "ended", calls in progress)`` is told of every call; a call has
    ended once its pipeline has stopped (over SIP, a silent line is told first as ``"hung up:
    no RTP for 30 s"``). ``on_refused(reason)`` is told of every refused one."""
    if len(token) < 16:
        raise InputError("the token must be at least 16 characters", field="token")
    limit = max_calls or default_max_calls()
    import signal

    import websockets

    if stop is None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
    async with shared_backend(spec) as call_spec:
        if protocol == "sip":
            from voicebench.live.serve_sip import serve_sip

            await serve_sip(
                call_spec,
                port=port,
                password=token,
                limit=limit,
                host=HOST,
                caller_transport=CallerTransport,
                on_ready=on_ready,
                on_call=on_call,
                on_refused=on_refused,
                stop=stop,
            )
            return
        if protocol == "webrtc":
            from voicebench.live.serve_webrtc import serve_webrtc

            await serve_webrtc(
                call_spec,
                port=port,
                refuse=lambda path, headers: refusal(path, headers, token, allowed_origins),
                limit=limit,
                host=HOST,
                on_ready=on_ready,
                on_call=on_call,
                on_refused=on_refused,
                stop=stop,
            )
            return
        calls = 0

        async def handler(ws) -> None:
            nonlocal calls
            why = refusal(ws.request.path, ws.request.headers, token, allowed_origins)
            if why is None and calls >= limit:
                why = f"busy: {calls} calls in progress (at most {limit})"
            if why is not None:
                if on_refused is not None:
                    on_refused(why)
                await ws.close(BUSY if why.startswith("busy") else POLICY, why)
                return
            calls += 1
            if on_call is not None:
                on_call("started", calls)
            try:
                await handle_call(ws, call_spec, protocol)
            finally:
                calls -= 1
                if on_call is not None:
                    on_call("ended", calls)

        try:
            server = await websockets.serve(
                handler,
                HOST,
                port,
                max_size=MAX_MESSAGE_BYTES,
                ping_interval=None,
                compression=None,  # audio does not compress; deflating each frame costs time
            )
        except OSError as exc:
            raise RunError(f"cannot listen on {HOST}:{port}: {exc.strerror or exc}") from None
        try:
            bound = next(iter(server.sockets)).getsockname()[1]
            if on_ready is not None:
                on_ready(f"ws://{HOST}:{bound}")
            await stop.wait()
        finally:
            server.close()
            await server.wait_closed()
