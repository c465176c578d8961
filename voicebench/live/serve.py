"""``voicebench serve``: any voicebench agent as a WebSocket voice agent on 127.0.0.1.

Each connection is one call with its own pipeline (VAD, Whisper, the LLM, Piper), in any
protocol of ``voicebench.replay.wire``: on a phone platform's stream (``twilio``, ``telnyx``)
it is the agent's side, the caller's 8 kHz mu-law resampled for the pipeline and back, and a
``clear`` sent when the agent is interrupted. The caller's audio goes straight into the pipeline
(the caller paces it); the agent's voice is sent as it would be played, in real time. A
``context`` message sets the conversation before the next turn, so a teacher-forced replay
against a served agent hears the same history as one against the pipeline in-process.

Helper servers (the local llama.cpp server, the scripted LLM) are started once for the
server's life and shared by every call: one model, many callers, as a deployment would run.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import Any

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

from voicebench.agentspec import AgentSpec
from voicebench.errors import InputError, RunError
from voicebench.llm import connect
from voicebench.replay.realtime import Playout
from voicebench.replay.telephony import TelephonyAgentSide
from voicebench.replay.wire import agent_codec

HOST = "127.0.0.1"
SAMPLE_RATE = 16_000


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
    async with contextlib.AsyncExitStack() as stack:
        llm = spec.llm
        assert llm is not None
        conn = await connect(llm, stack, warm_prompt=spec.system_prompt if llm.warmup else None)
        if conn.provider.start is not None:
            llm = llm.model_copy(
                update={"provider": "openai-compatible", "base_url": conn.base_url}
            )
        yield spec.model_copy(update={"llm": llm})


async def handle_call(ws, spec: AgentSpec, protocol: str) -> None:
    """One call: a pipeline for this caller until it hangs up."""
    from pipecat.audio.utils import create_stream_resampler

    from voicebench.replay.agent import VoiceAgent

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
                incoming = wire.decode(message)
                if incoming is None:
                    continue
                if incoming.audio is not None:
                    audio = incoming.audio[: len(incoming.audio) // 2 * 2]
                    if line != SAMPLE_RATE:
                        audio = await from_line.resample(audio, line, SAMPLE_RATE)
                    heard = agent.transport.input()
                    assert isinstance(heard, _CallerInput)
                    await heard.hear(audio)
                elif incoming.control.get("type") == "context":
                    messages = incoming.control.get("messages")
                    if isinstance(messages, list):
                        history: list[Any] = [
                            m
                            for m in messages
                            if isinstance(m, dict)
                            and m.get("role") in ("user", "assistant")
                            and isinstance(m.get("content"), str)
                        ]
                        agent.context.set_messages(history)
                elif incoming.control.get("type") == "start" and protocol == "pcm":
                    await ws.send('{"type": "ready"}')
                elif incoming.control.get("type") == "stop":
                    break  # the platform hung up


async def serve(
    spec: AgentSpec,
    *,
    port: int,
    protocol: str = "pcm",
    on_ready: Callable[[str], None] | None = None,
    on_call: Callable[[str, int], None] | None = None,
    stop: asyncio.Event | None = None,
) -> None:
    """Serve ``spec`` on ws://127.0.0.1:PORT until ``stop`` is set, or, without one, until
    SIGINT or SIGTERM; either way every call's pipeline and the helper servers are stopped.
    ``on_call("started" | "ended", calls in progress)`` is told of every call; a call has
    ended once its pipeline has stopped."""
    import signal

    import websockets

    if stop is None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
    async with shared_backend(spec) as call_spec:
        calls = 0

        async def handler(ws) -> None:
            nonlocal calls
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
            server = await websockets.serve(handler, HOST, port, max_size=2**24, ping_interval=None)
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
