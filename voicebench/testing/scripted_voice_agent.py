"""The scripted voice agent's side of a call (``voicebench.testing.scripted_voice`` runs it):
it listens to the caller's frames, answers at a known delay, and stops at a known delay when
talked over."""

from __future__ import annotations

import asyncio
import itertools
import json
import time
from collections import deque
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal, get_args

import numpy as np

from voicebench import _arrivals as kernel
from voicebench.fixtures.audio import (
    PEAK_FRACTION,
    SPEECH_THRESHOLD,
    resample,
    speech_bounds,
    to_int16,
)
from voicebench.remote.codecs import agent_codec
from voicebench.testing.scripted_plan import send_time_ns

Fault = Literal["refuse", "close", "silent", "error", "busy"]
FAULTS: tuple[str, ...] = get_args(Fault)
DEFAULT_REPLY = "I hear you. That sounds really hard, and I am glad you told me."
CHUNK_MS = 20
NS_PER_S = 1_000_000_000
_SPIN_NS = 1_500_000


async def _sleep_until(deadline_ns: int) -> None:
    while True:
        left = deadline_ns - time.perf_counter_ns()
        if left <= 0:
            return
        if left > _SPIN_NS:
            await asyncio.sleep((left - _SPIN_NS) / NS_PER_S)
        else:
            await asyncio.sleep(0)


def heard_end_shift_ms(pcm: np.ndarray, protocol: str) -> float:
    """How much earlier than the true end of speech of the 16 kHz fixture ``pcm`` the agent
    hears it end on ``protocol``'s line. On a phone stream (8 kHz mu-law) a final fricative's
    energy above 4 kHz never arrives (nor on a SIP call's G.711), so for some utterances the
    last audible sample comes up to about 0.2 s early; at the realtime protocol's 24 kHz a soft
    last sound resampled can fall under the speech threshold a few milliseconds early;
    elsewhere the shift is 0. TTFA stays timed from the true end."""
    from voicebench.agent.realtime import at_rate
    from voicebench.remote.telephony import LINE_RATE, TELEPHONY
    from voicebench.scenarios.signal import mulaw_decode, mulaw_encode

    if protocol in (*TELEPHONY, "sip"):  # (a SIP call's PCMU, as the tests and benchmarks agree)
        rate = LINE_RATE
        line = mulaw_decode(mulaw_encode(to_int16(resample(pcm / 32768.0, 16_000, LINE_RATE))))
    elif protocol == "openai-realtime":
        rate = 24_000
        line = at_rate(pcm, rate)
    else:
        return 0.0
    true = speech_bounds(pcm)
    heard = speech_bounds(line)
    if true is None or heard is None:
        return 0.0
    return true[1] / 16.0 - heard[1] * 1000.0 / rate


RECENT_FRAMES = 50
"""The frames (one second's) that place a sound heard over a reply on the caller's clock."""


def spoken_at(frames: Iterable[tuple[int, int]], sample: int, rate: int) -> int:
    """When the caller spoke ``sample`` of its stream, from ``frames`` (each its end sample
    and arrival): a frame leaves once its last sample is recorded, so each places the sample,
    and the least delayed one is right (a frame held up on its way, by a busy caller or the
    network, arrives late; those after it catch up)."""
    return min(t - (e - sample) * NS_PER_S // rate for e, t in frames)


class Overheard:
    """The caller's speech heard while a reply plays, on the spoken clock."""

    def __init__(self) -> None:
        self.first_ns: int | None = None
        self.last_ns = 0

    def clear(self) -> None:
        self.first_ns, self.last_ns = None, 0


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
        stop_ms: float | None = None,
        yield_after_ms: float = 0.0,
        token: str | None = None,
        reply_text: str = DEFAULT_REPLY,
        in_rate: int | None = None,
        holds: tuple[tuple[float, float], ...] = (),
        pace: float = 1.0,
        lead_ms: float = 0.0,
    ) -> None:
        self.protocol = protocol
        self.lead_ns = int(lead_ms * 1_000_000)
        """How far ahead of the caller's playout the reply is sent (0: in real time from its
        first chunk on), as a streaming agent sends its first audio in a burst: a send that
        is that much late is not heard."""
        self.holds = tuple((int(a * 1_000_000), int(h * 1_000_000)) for a, h in sorted(holds))
        """The stall plan: after ``a`` ns of reply, the caller is to hear nothing for ``h`` ns
        (what it has been sent ahead runs out, and the rest is held back until then)."""
        if not 0 < pace <= 1 or (holds and pace != 1):
            raise ValueError("pace is a fraction of real time in (0, 1], without holds below 1")
        self.pace = pace
        """The reply is sent at this fraction of real time (0.8: a 20 ms chunk every 25 ms)."""
        self.reply_text = reply_text
        """What ``reply`` says (a protocol that sends a transcript sends this)."""
        self.token = token
        self.rate = rate
        """The reply's sample rate."""
        self.in_rate = in_rate or rate
        """The caller's sample rate (a protocol may take 16 kHz in and send 24 kHz out)."""
        self.delay_ns = int(delay_ms * 1_000_000)
        self.hangover = int(hangover_ms * self.in_rate / 1000)
        self.reply = reply
        self.faults = faults
        self.calls = itertools.count()
        self.log = open(log_path, "a", encoding="utf-8") if log_path else None  # noqa: SIM115
        self.threshold = SPEECH_THRESHOLD * 32768.0
        self.stop_ns = None if stop_ms is None else int(stop_ms * 1_000_000)
        self.yield_after_ns = int(yield_after_ms * 1_000_000)

    def fault_for(self, call: int) -> str | None:
        return self.faults[call] if call < len(self.faults) else None

    async def handle(self, ws) -> None:
        call = getattr(ws, "voicebench_call", None)
        if call is None:
            call = next(self.calls)
        fault = self.fault_for(call)
        wire = self.codec()
        await self.opened(ws, wire)
        received = 0  # samples heard so far
        utterance: list[np.ndarray] = []  # the caller's current utterance
        frames: list[tuple[int, int]] = []  # its frames: (end sample, arrival ns)
        recent: deque[tuple[int, int]] = deque(maxlen=RECENT_FRAMES)  # the same, of any sound
        start: int | None = None
        last_loud = 0
        peak = 0
        replying: asyncio.Task | None = None
        over = Overheard()
        try:
            async for message in ws:
                now = ws.arrival()  # when its bytes came in, however busy this loop is
                incoming = wire.decode(message)
                if incoming is not None and incoming.control:
                    await self.control(ws, wire, call, incoming.control, now)
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
                    await self.speech_began(ws, wire, received)
                end = received + pcm.size
                recent.append((end, now))
                if loud.size and replying is not None and not replying.done():
                    # When each loud sample was spoken: each frame left once recorded, so each
                    # of the last ones places it; the least delayed is right.
                    spoken = [
                        spoken_at(recent, received + int(i), self.in_rate)
                        for i in (loud[0], loud[-1])
                    ]
                    if over.first_ns is None:
                        over.first_ns = spoken[0]
                    over.last_ns = spoken[1]
                if start is not None:
                    utterance.append(pcm)
                    frames.append((end, now))
                    if loud.size:
                        last_loud = received + int(loud[-1]) + 1
                received = end
                if start is None or received - last_loud < self.hangover:
                    continue
                # The end of speech as the fixture manifest defines it (speech_bounds), and
                # when it was spoken, as the utterance's frames place it.
                bounds = speech_bounds(np.concatenate(utterance))
                last = start + (bounds[1] if bounds else last_loud - start)
                spoken_end = spoken_at(frames, last, self.in_rate)
                utterance, frames, start, peak = [], [], None, 0
                found_end = time.perf_counter_ns()  # the turn found to have ended, now
                await self.speech_ended(ws, wire, received)
                if replying is None or replying.done():
                    over.clear()
                    replying = asyncio.create_task(
                        self.answer(ws, wire, call, fault, spoken_end, over, found_end)
                    )
        finally:
            if replying is not None and not replying.done():
                replying.cancel()

    # What a protocol adds (``voicebench.testing.scripted_realtime``): ---------------------

    def codec(self) -> Any:
        """The agent's side of the protocol, one per call."""
        return agent_codec(self.protocol, self.rate)

    async def opened(self, ws, wire) -> None:
        """A call was answered."""

    async def control(self, ws, wire, call: int, message: dict, now_ns: int) -> None:
        """A control message arrived from the caller."""
        if message.get("type") == "mark":
            self._write({"call": call, "mark": message["name"], "acked_ns": now_ns})

    async def speech_began(self, ws, wire, sample: int) -> None:
        """The caller's speech began (its first loud sample was heard)."""

    async def speech_ended(self, ws, wire, sample: int) -> None:
        """The caller's turn was heard to end (``hangover_ms`` of silence after speech)."""

    async def model_answer_begins(self, ws, wire, fault: str | None) -> bool:
        """A speech-to-speech model's server is to answer: with the client's turn detection
        (``wire.local``) it waits to be asked; a ``close`` fault closes the socket there.
        Whether the answer goes on."""
        if wire.local:
            await wire.asked.wait()
            wire.asked.clear()
        if fault == "close":
            await ws.close()
            return False
        return True

    def _stop_at(self, over: Overheard) -> int | None:
        """When the reply's audio ends, once the caller has spoken over it long enough."""
        if self.stop_ns is None or over.first_ns is None:
            return None
        if over.last_ns - over.first_ns < self.yield_after_ns:
            return None
        return over.first_ns + self.stop_ns

    async def answer(
        self,
        ws,
        wire,
        call: int,
        fault: str | None,
        spoken_end_ns: int,
        over: Overheard,
        found_end_ns: int | None = None,
    ) -> None:
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
        transport = getattr(ws, "transport", None)
        line = kernel.stamped(transport.get_extra_info("socket") if transport else None)
        if line is not None and not kernel.stamp_sends(line):
            line = None
        if line is not None:
            kernel.sent_ns(line)  # (what an earlier reply left queued)
        first_sent = None
        play_end = 0  # when what was sent so far has played on the caller's side
        placed: list[tuple[int, int]] = []  # (sample, ns) where each unbroken stretch plays
        last_audible: int | None = None
        stop_at: int | None = None
        stopped = False
        for k, pos in enumerate(range(0, self.reply.size, n)):
            deadline = start + self.sent_by_ns(k * CHUNK_MS * 1_000_000)
            if k == 0:
                # Only the first audible sample is timed: spin for it, sleep for the rest (a
                # spin per chunk of many calls at once would starve the loop).
                await _sleep_until(deadline)
            else:
                await asyncio.sleep(max(0, deadline - time.perf_counter_ns()) / NS_PER_S)
            chunk = self.reply[pos : pos + n]
            stop_at = self._stop_at(over)
            if stop_at is not None and first_sent is not None:
                # Where this chunk plays on the caller's side: when it arrives, or once the one
                # before has played (a stalled send leaves a gap there, and shifts what follows).
                plays = max(time.perf_counter_ns(), play_end)
                keep = max(0, (stop_at - plays) * self.rate // NS_PER_S)
                stopped = keep <= chunk.size
                if stopped and wire.telephony:
                    # A phone agent stops with a clear: the platform plays what it was sent
                    # until the clear arrives.
                    if keep:
                        await ws.send(wire.audio(chunk.tobytes()))
                    await ws.send(wire.mark(f"reply-{call}"))
                    await _sleep_until(stop_at)
                    await ws.send(wire.clear())
                    loud = np.flatnonzero(np.abs(chunk[:keep].astype(np.int32)) > self.threshold)
                    if loud.size:
                        last_audible = plays + (int(loud[-1]) + 1) * NS_PER_S // self.rate
                    break
                chunk = chunk[:keep]
                if chunk.size == 0:
                    break
            # When the chunk left, as the kernel stamped it (on loopback it reaches the
            # caller's socket then): a stamp taken here before or after the send would be off
            # by any wait for a core in between. The stamp before stands in where there is none.
            sent = time.perf_counter_ns()
            await ws.send(wire.audio(chunk.tobytes()))
            if line is not None:
                sent = kernel.sent_ns(line) or sent
            if first_sent is None:
                first_sent = sent
            plays = max(sent, play_end)
            if plays != play_end:
                placed.append((pos, plays))
            play_end = plays + chunk.size * NS_PER_S // self.rate
            loud = np.flatnonzero(np.abs(chunk.astype(np.int32)) > self.threshold)
            if loud.size:
                last_audible = plays + (int(loud[-1]) + 1) * NS_PER_S // self.rate
            if stopped:
                break
        if self.protocol == "pcm":
            await ws.send(json.dumps({"type": "bot_stopped"}))
        ends_ns = None
        if wire.telephony and not stopped and first_sent is not None:
            # Told when the reply has played: the platform returns the mark then.
            await ws.send(wire.mark(f"reply-{call}"))
            ends_ns = play_end
        if stopped:
            self._write(
                {
                    "call": call,
                    "stop": True,
                    "speech_start_ns": over.first_ns,
                    "last_audible_ns": last_audible,
                    "stop_ms": self.stop_ns / 1e6 if self.stop_ns else None,
                }
            )
        self._write(
            {
                "call": call,
                "speech_end_ns": spoken_end_ns,
                # when the agent found the turn over (a model's server VAD said so then)
                "found_end_ns": found_end_ns,
                "first_audio_sent_ns": first_sent,
                "delay_ms": self.delay_ns / 1e6,
                # what the caller was sent, as it must play: its stalls as sent
                "placed": placed,
                "rate": self.rate,
                "reply_samples": int(self.reply.size),
                **({"reply_ends_ns": ends_ns} if ends_ns is not None else {}),
            }
        )

    def sent_by_ns(self, reply_ns: int) -> int:
        return send_time_ns(reply_ns, self.holds, self.pace, self.lead_ns)

    def _write(self, entry: dict) -> None:
        if self.log is not None:
            self.log.write(json.dumps(entry) + "\n")
            self.log.flush()
