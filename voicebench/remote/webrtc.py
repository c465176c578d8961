"""A voice agent called over WebRTC as a browser calls one (``[remote] protocol = "webrtc"``).

The caller posts an SDP offer to the agent's HTTP endpoint (``{"sdp", "type": "offer"}``, the
body pipecat's ``SmallWebRTCRequestHandler`` takes at ``/api/offer``), applies the answer it
gets back and talks over the peer connection: Opus at 48 kHz both ways, on aiortc. The
microphone is a media track paced like every caller's (a 20 ms frame leaves once its 20 ms have
been recorded), so the true end of speech is placed as it always is; the agent's audio is what
aiortc hands over once the caller's jitter buffer (``jitter_ms``, 20 by default: one packet, as
a browser holds on a clean link) and Opus decoder are done with it, played through the same
loudspeaker as a WebSocket agent's, from the moment it was handed over. TTFA therefore includes
what WebRTC adds: encoding, both jitter buffers (the agent's own, for what it hears), decoding.

Everything else is the WebSocket caller's (``caller.RemoteAgent``): one call per run, the turn
loop, the loudspeaker's caps, the failures (``connection_refused`` when nothing answers the
offer, ``handshake`` when the offer is refused or no connection is made, ``closed_mid_turn``
when the call ends). A token (``[remote.auth]``) goes in the offer's headers or URL.
"""

from __future__ import annotations

import asyncio
import contextlib
import fractions
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import quote

import numpy as np

from voicebench.agent.realtime import FRAME_NS, NS_PER_S, Microphone
from voicebench.agentspec import AgentSpec
from voicebench.errors import MissingExtraError, redact
from voicebench.remote.caller import RemoteAgent
from voicebench.runlog import TurnError

RATE = 48_000
"""Opus's rate, at which both directions are handled."""


def _aiortc() -> Any:
    try:
        import aiortc
    except ImportError:  # pragma: no cover - the extra is installed by `make setup`
        raise MissingExtraError("webrtc", "voicebench-heart[webrtc]") from None
    return aiortc


def paced_track(frame_at: Callable[[int], np.ndarray], clock) -> Any:
    """An aiortc audio track of 20 ms frames at 48 kHz: frame k is ``frame_at(window)`` for its
    window's start on ``clock``, returned once its 20 ms have passed (the first window starts
    when the first frame is asked for)."""
    import av
    from aiortc import MediaStreamTrack

    class PacedTrack(MediaStreamTrack):
        kind = "audio"

        def __init__(self) -> None:
            super().__init__()
            self._origin: int | None = None
            self._k = 0

        async def recv(self) -> Any:
            if self._origin is None:
                self._origin = clock()
            window = self._origin + self._k * FRAME_NS
            pcm = frame_at(window)
            delay = (window + FRAME_NS - clock()) / NS_PER_S
            if delay > 0:
                await asyncio.sleep(delay)
            frame = av.AudioFrame.from_ndarray(pcm.reshape(1, -1), format="s16", layout="mono")
            frame.sample_rate = RATE
            frame.pts = self._k * pcm.size
            frame.time_base = fractions.Fraction(1, RATE)
            self._k += 1
            return frame

    return PacedTrack()


def microphone_track(mic: Microphone, clock) -> Any:
    """The caller's microphone as a track: each frame leaves once its 20 ms have been recorded,
    silence between utterances."""
    return paced_track(mic.frame, clock)


def mono_pcm(frame: Any) -> bytes:
    """A decoded audio frame as 16-bit mono PCM (aiortc's Opus decoder gives packed stereo)."""
    samples = frame.to_ndarray()
    channels = len(frame.layout.channels)
    if frame.format.is_planar:
        mono = samples.mean(axis=0)
    else:
        mono = samples.reshape(-1, channels).mean(axis=1)
    return np.asarray(mono, dtype=np.int16).tobytes()


def hold_jitter(receiver: Any, jitter_ms: int) -> None:
    """Make ``receiver``'s jitter buffer hold ``jitter_ms`` of audio: aiortc releases a packet
    once ``prefetch`` later ones have come (its audio default is 4, 80 ms), so 20 ms is the
    least (the next packet). pipecat sets a video receiver's buffer the same way."""
    from aiortc.jitterbuffer import JitterBuffer

    receiver._RTCRtpReceiver__jitter_buffer = JitterBuffer(capacity=16, prefetch=jitter_ms // 20)


class WebRTCAgent(RemoteAgent):
    """``async with WebRTCAgent(spec) as agent``: one WebRTC call for a run."""

    def __init__(self, spec: AgentSpec, *, clock=time.perf_counter_ns) -> None:
        super().__init__(spec, clock=clock)
        self._pc: Any = None

    async def __aenter__(self) -> WebRTCAgent:
        _aiortc()
        import aiohttp
        from aiortc import RTCPeerConnection, RTCSessionDescription

        url, headers, token = self.remote.dial()
        self._secrets = (token, quote(token, safe="")) if token else ()
        self._pc = pc = RTCPeerConnection()
        call = pc.addTransceiver(microphone_track(self._mic, self.clock), direction="sendrecv")
        hold_jitter(call.receiver, self.remote.jitter_ms)

        @pc.on("track")
        def _on_track(track: Any) -> None:
            if track.kind == "audio":
                self._tasks.append(asyncio.ensure_future(self._listen(track)))

        @pc.on("connectionstatechange")
        async def _on_state() -> None:
            if pc.connectionState in ("failed", "closed"):
                self._closed.set()
                self._speaker.news.set()

        try:
            await pc.setLocalDescription(await pc.createOffer())
            offer = {"sdp": pc.localDescription.sdp, "type": pc.localDescription.type}
            timeout = aiohttp.ClientTimeout(total=self.remote.connect_timeout_secs)
            async with (
                aiohttp.ClientSession(timeout=timeout) as session,
                session.post(url, json=offer, headers=headers) as response,
            ):
                if response.status != 200:
                    why = (await response.text())[:200].strip()
                    self._refused("handshake", f"the offer was answered {response.status} {why}")
                    return self
                answer = await response.json(content_type=None)
            await pc.setRemoteDescription(RTCSessionDescription(answer["sdp"], answer["type"]))
        except aiohttp.ClientConnectorError as exc:
            self._refused("connection_refused", str(exc.os_error.strerror or exc))
            return self
        except (TimeoutError, aiohttp.ClientError, KeyError, TypeError, ValueError) as exc:
            self._refused("handshake", f"no answer to the offer ({type(exc).__name__}: {exc})")
            return self
        if not await self._connected():
            self._refused(
                "handshake",
                f"no connection within {self.remote.connect_timeout_secs:g} s "
                f"({pc.connectionState})",
            )
        return self

    async def _connected(self) -> bool:
        deadline = time.monotonic() + self.remote.connect_timeout_secs
        while self._pc.connectionState != "connected":
            if self._pc.connectionState in ("failed", "closed") or time.monotonic() > deadline:
                return False
            await asyncio.sleep(0.02)
        self._ws = self._pc  # (what the caller checks to know the agent answered)
        return True

    def _refused(self, kind: str, reason: str) -> None:
        self._failure = TurnError(
            kind=kind, reason=redact(f"{self.remote.url}: {reason}", *self._secrets)
        )

    async def _listen(self, track: Any) -> None:
        """The agent's audio, as aiortc hands it over, to the loudspeaker."""
        from aiortc.mediastreams import MediaStreamError

        try:
            while True:
                frame = await track.recv()
                self._speaker.hear(mono_pcm(frame), self.clock())
        except MediaStreamError:
            pass
        finally:
            self._closed.set()
            self._speaker.news.set()

    async def _send_all(self, messages: list[str | bytes]) -> bool:
        return not self._closed.is_set()  # nothing but audio goes over the call

    def _close_note(self) -> str:
        return ""

    async def __aexit__(self, *exc) -> None:
        await self._stop_listening()
        if self._pc is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._pc.close(), 5)
