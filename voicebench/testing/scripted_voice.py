"""A scripted WebSocket voice agent with a known response delay: the far end for testing and
self-checking voicebench's remote-agent client and load mode.

It speaks either protocol of ``voicebench.replay.wire`` (``pcm`` or ``pipecat``) on
127.0.0.1, one call per connection, any number of calls at once. Per call it listens to the
caller's 20 ms frames; once it has heard speech followed by ``hangover_ms`` of silence it
answers, placing the first audible sample of its reply ``delay_ms`` after the end of the
caller's speech. It knows when that was from the stream itself: a frame is sent when its
20 ms have been recorded, so the sample ``s`` of a frame that arrived at ``t`` and ends at
sample ``e`` was spoken at ``t - (e - s) / rate``. The reply is streamed in real time,
followed (``pcm``) by ``bot_stopped``. A delay shorter than the hangover cannot be kept; the
reply then leaves at once, and the log shows it.

Faults, one per call in order of connection (later calls are normal): ``refuse`` (the
handshake is answered with HTTP 503), ``close`` (the connection is closed as the reply would
start), ``silent`` (no reply at all), ``error`` (an ``error`` message instead of a reply).

Log (``--log PATH``): one JSON line per answered turn, flushed as written::

    {"call": 0, "speech_end_ns": ..., "first_audio_sent_ns": ..., "delay_ms": 300.0}

CLI::

    python -m voicebench.testing.scripted_voice --port 0 --delay-ms 800 [--protocol pcm]
        [--hangover-ms 600] [--reply TEXT] [--log PATH] [--fault close ...]

prints ``READY ws://127.0.0.1:PORT`` once listening; exits on SIGTERM, SIGINT or its
parent's death.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import itertools
import json
import os
import signal
import tempfile
import time
from http import HTTPStatus
from pathlib import Path
from typing import Literal, get_args

import numpy as np

from voicebench.errors import RunError
from voicebench.fixtures.audio import (
    PEAK_FRACTION,
    SPEECH_THRESHOLD,
    resample,
    speech_bounds,
    to_int16,
)
from voicebench.llm.helper import HOST, HelperServer
from voicebench.replay.wire import codec

Fault = Literal["refuse", "close", "silent", "error"]
FAULTS: tuple[str, ...] = get_args(Fault)
DEFAULT_REPLY = "I hear you. That sounds really hard, and I am glad you told me."
CHUNK_MS = 20
NS_PER_S = 1_000_000_000
_SPIN_NS = 1_500_000


def reply_audio(text: str, rate: int) -> np.ndarray:
    """The reply spoken by the packaged Piper voice, trimmed to start on its first audible
    sample."""
    from voicebench.fixtures.synth import PiperSpeaker

    speaker = PiperSpeaker()
    audio = np.concatenate(speaker.sentences(text))
    pcm = to_int16(resample(audio, speaker.sample_rate, rate))
    bounds = speech_bounds(pcm)
    if bounds is None:
        raise RunError(f"the reply {text!r} was spoken as silence")
    return pcm[bounds[0] : bounds[1]]


async def _sleep_until(deadline_ns: int) -> None:
    while True:
        left = deadline_ns - time.perf_counter_ns()
        if left <= 0:
            return
        if left > _SPIN_NS:
            await asyncio.sleep((left - _SPIN_NS) / NS_PER_S)
        else:
            await asyncio.sleep(0)


class Agent:
    def __init__(
        self,
        *,
        protocol: str,
        rate: int,
        delay_ms: float,
        hangover_ms: float,
        reply: np.ndarray,
        faults: tuple[str, ...],
        log_path: Path | None,
    ) -> None:
        self.protocol = protocol
        self.rate = rate
        self.delay_ns = int(delay_ms * 1_000_000)
        self.hangover = int(hangover_ms * rate / 1000)
        self.reply = reply
        self.faults = faults
        self.calls = itertools.count()
        self.log = open(log_path, "a", encoding="utf-8") if log_path else None  # noqa: SIM115
        self.threshold = SPEECH_THRESHOLD * 32768.0

    def fault_for(self, call: int) -> str | None:
        return self.faults[call] if call < len(self.faults) else None

    async def handle(self, ws) -> None:
        call = getattr(ws, "voicebench_call", None)
        if call is None:
            call = next(self.calls)
        fault = self.fault_for(call)
        wire = codec(self.protocol, self.rate)
        received = 0  # samples heard so far
        utterance: list[np.ndarray] = []  # the caller's current utterance
        frames: list[tuple[int, int]] = []  # its frames: (end sample, arrival ns)
        start: int | None = None
        last_loud = 0
        peak = 0
        replying: asyncio.Task | None = None
        try:
            async for message in ws:
                now = time.perf_counter_ns()
                incoming = wire.decode(message)
                if incoming is None or incoming.audio is None:
                    continue
                pcm = np.frombuffer(incoming.audio, dtype=np.int16)
                mag = np.abs(pcm.astype(np.int32))
                if start is not None:
                    peak = max(peak, int(mag.max(initial=0)))
                # Loud as speech_bounds has it: above the absolute floor and, within an
                # utterance, above a fraction of its peak so far (a quiet breath is not speech).
                loud = np.flatnonzero(mag > max(self.threshold, PEAK_FRACTION * peak))
                if loud.size and start is None:
                    start, peak = received, int(mag.max())
                end = received + pcm.size
                if start is not None:
                    utterance.append(pcm)
                    frames.append((end, now))
                    if loud.size:
                        last_loud = received + int(loud[-1]) + 1
                received = end
                if start is None or received - last_loud < self.hangover:
                    continue
                # The end of speech as the fixture manifest defines it (speech_bounds), and
                # when it was spoken: its frame was sent once its last sample was recorded.
                bounds = speech_bounds(np.concatenate(utterance))
                last = start + (bounds[1] if bounds else last_loud - start)
                frame_end, arrived = next((e, t) for e, t in frames if e >= last)
                spoken_end = arrived - (frame_end - last) * NS_PER_S // self.rate
                utterance, frames, start, peak = [], [], None, 0
                if replying is None or replying.done():
                    replying = asyncio.create_task(self.answer(ws, wire, call, fault, spoken_end))
        finally:
            if replying is not None and not replying.done():
                replying.cancel()

    async def answer(self, ws, wire, call: int, fault: str | None, spoken_end_ns: int) -> None:
        if fault == "silent":
            return
        if fault == "error":
            await ws.send(json.dumps({"type": "error", "message": "scripted agent error"}))
            return
        if fault == "close":
            await ws.close()
            return
        start = max(spoken_end_ns + self.delay_ns, time.perf_counter_ns())
        n = self.rate * CHUNK_MS // 1000
        first_sent = None
        for k, pos in enumerate(range(0, self.reply.size, n)):
            deadline = start + k * CHUNK_MS * 1_000_000
            if k == 0:
                # Only the first audible sample is timed: spin for it, sleep for the rest (a
                # spin per chunk of many calls at once would starve the loop).
                await _sleep_until(deadline)
            else:
                await asyncio.sleep(max(0, deadline - time.perf_counter_ns()) / NS_PER_S)
            await ws.send(wire.audio(self.reply[pos : pos + n].tobytes()))
            if first_sent is None:
                first_sent = time.perf_counter_ns()
        if self.protocol == "pcm":
            await ws.send(json.dumps({"type": "bot_stopped"}))
        if self.log is not None:
            self.log.write(
                json.dumps(
                    {
                        "call": call,
                        "speech_end_ns": spoken_end_ns,
                        "first_audio_sent_ns": first_sent,
                        "delay_ms": self.delay_ns / 1e6,
                    }
                )
                + "\n"
            )
            self.log.flush()


async def serve(agent: Agent, *, port: int = 0) -> None:
    import websockets

    def process_request(connection, request):
        call = next(agent.calls)
        connection.voicebench_call = call
        if agent.fault_for(call) == "refuse":
            return connection.respond(HTTPStatus.SERVICE_UNAVAILABLE, "scripted refusal\n")
        return None

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    async with websockets.serve(
        agent.handle,
        HOST,
        port,
        process_request=process_request,
        max_size=2**24,
        ping_interval=None,
    ) as server:
        bound = next(iter(server.sockets)).getsockname()[1]
        gc.freeze()  # startup objects (the voice, numpy) need no scanning: shorter pauses
        print(f"READY ws://{HOST}:{bound}", flush=True)
        parent = os.getppid()
        while not stop.is_set() and os.getppid() == parent:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), timeout=1.0)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m voicebench.testing.scripted_voice",
        description="Scripted WebSocket voice agent.",
    )
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    parser.add_argument("--protocol", choices=["pcm", "pipecat"], default="pcm")
    parser.add_argument("--sample-rate", type=int, default=16_000)
    parser.add_argument(
        "--delay-ms",
        type=float,
        default=800.0,
        help="end of the caller's speech to the reply's first audible sample",
    )
    parser.add_argument(
        "--hangover-ms",
        type=float,
        default=600.0,
        help="silence after speech that ends the caller's turn",
    )
    parser.add_argument("--reply", default=DEFAULT_REPLY)
    parser.add_argument("--log", type=Path, default=None)
    parser.add_argument("--fault", action="append", default=[], choices=FAULTS)
    args = parser.parse_args(argv)
    agent = Agent(
        protocol=args.protocol,
        rate=args.sample_rate,
        delay_ms=args.delay_ms,
        hangover_ms=args.hangover_ms,
        reply=reply_audio(args.reply, args.sample_rate),
        faults=tuple(args.fault),
        log_path=args.log,
    )
    asyncio.run(serve(agent, port=args.port))


class ScriptedVoiceAgent(HelperServer):
    """Runs the scripted agent in a subprocess; ``with ScriptedVoiceAgent(delay_ms=300) as a:
    a.url``. A sync or async context manager."""

    what = "scripted voice agent"

    def __init__(
        self,
        *,
        delay_ms: float = 800.0,
        hangover_ms: float = 600.0,
        protocol: str = "pcm",
        sample_rate: int = 16_000,
        faults: tuple[Fault, ...] | list[Fault] = (),
        reply: str | None = None,
    ) -> None:
        bad = [f for f in faults if f not in FAULTS]
        if bad:
            raise ValueError(f"unknown faults {bad}; choose from {FAULTS}")
        self._tmp = tempfile.TemporaryDirectory(prefix="scripted-voice-")
        args = [
            "--port",
            "0",
            "--log",
            str(self.log_path),
            "--delay-ms",
            str(delay_ms),
            "--hangover-ms",
            str(hangover_ms),
            "--protocol",
            protocol,
            "--sample-rate",
            str(sample_rate),
            *(a for f in faults for a in ("--fault", f)),
        ]
        if reply is not None:
            args += ["--reply", reply]
        super().__init__(
            self.python_module("voicebench.testing.scripted_voice", *args),
            ready_pattern=rf"READY (ws://{HOST}:\d+)",
        )

    @property
    def url(self) -> str | None:
        """``ws://127.0.0.1:PORT`` while it runs."""
        running = self.process is not None and self.process.poll() is None
        return self.ready_match.group(1) if running and self.ready_match else None

    @property
    def log_path(self) -> Path:
        return Path(self._tmp.name) / "turns.jsonl"

    def turns(self) -> list[dict]:
        """The log of answered turns so far."""
        if not self.log_path.exists():
            return []
        return [json.loads(line) for line in self.log_path.read_text().splitlines() if line]


if __name__ == "__main__":
    try:
        main()
    except RunError as exc:  # pragma: no cover - shown to whoever started it
        raise SystemExit(str(exc)) from None
