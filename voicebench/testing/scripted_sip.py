"""The scripted voice agent answering SIP calls (``python -m voicebench.testing.scripted_voice
--protocol sip``; ``ScriptedVoiceAgent(protocol="sip")``): the same agent, with the same known
delay, that the WebSocket protocols reach, so what a SIP call adds can be measured apart.

It answers INVITEs at ``sip:agent@127.0.0.1:PORT`` (UDP; aiosipua's user agent, the answer's
codec the first of PCMU and PCMA the offer names), each call on an RTP session of its own
(``voicebench.remote.rtp``). The caller's audio is each packet's decoded PCM, stamped with the
kernel's arrival; the agent's answer leaves as it is sent, one RTP packet a 20 ms frame, with
nothing sent between answers (the first packet after a silence marks a talkspurt, RFC 3551).
``first_audio_sent_ns`` in the log is when the answer's first packet was handed to the socket.
A BYE from either side ends the call. Faults (``--fault``, one a call): ``refuse`` answers
503, ``busy`` 486; ``close`` hangs up (BYE) as the reply would start; ``silent`` sends no RTP
at all (one-way audio).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import Any

import numpy as np

from voicebench.remote.rtp import FRAME_SAMPLES, RtpPacket, RtpSession
from voicebench.remote.sip import media_answer, name_bound_port
from voicebench.testing.scripted_timing import HeardLine, ready_until_stopped
from voicebench.testing.scripted_voice_agent import Agent

HOST = "127.0.0.1"
TALK_GAP_NS = 40_000_000
"""A pause in sending this long or longer starts a new talkspurt (marker bit)."""


class SipCallLine(HeardLine):
    """One SIP call as the scripted agent's connection: the caller's decoded audio comes out of
    ``async for``, the agent's audio goes into ``send``."""

    def __init__(self, call: int, hang_up=None) -> None:
        super().__init__()
        self.voicebench_call = call
        self._hang_up = hang_up
        self._last_sent = 0
        self.rtp = RtpSession(host=HOST, on_packet=self._packet)

    def _packet(self, packet: RtpPacket) -> None:
        self.hear(packet.pcm.astype(np.int16).tobytes(), packet.arrival_ns)

    async def send(self, message: str | bytes) -> None:
        if isinstance(message, str):
            return  # (no control messages on a call)
        pcm = np.frombuffer(message, dtype=np.int16)
        for at in range(0, pcm.size, FRAME_SAMPLES):
            frame = pcm[at : at + FRAME_SAMPLES]
            frame = np.pad(frame, (0, FRAME_SAMPLES - frame.size))
            resumes = time.perf_counter_ns() - self._last_sent >= TALK_GAP_NS
            self._last_sent = self.rtp.send_frame(frame, talkspurt_start=resumes)

    async def close(self) -> None:
        """Hang up (BYE), and end what the agent hears."""
        if self._hang_up is not None:
            self._hang_up()
            self._hang_up = None
        self.hear(None)


async def serve_sip(agent: Agent, *, port: int = 0) -> None:
    """Answer calls until SIGTERM, SIGINT or the parent's death."""
    from aiosipua import SipUAC, SipUAS, negotiate_sdp
    from aiosipua.transport import UdpSipTransport

    transport = UdpSipTransport(local_addr=(HOST, port))
    uas = SipUAS(transport, uac=SipUAC(transport), user_agent="voicebench-scripted")
    lines: dict[str, SipCallLine] = {}
    tasks: set[asyncio.Future] = set()

    def keep(task: asyncio.Future) -> None:
        tasks.add(task)
        task.add_done_callback(tasks.discard)

    def on_invite(call: Any) -> None:
        number = next(agent.calls)
        fault = agent.fault_for(number)
        if fault in ("refuse", "busy"):
            call.reject(*((503, "Service Unavailable") if fault == "refuse" else (486, "Busy")))
            return
        line = SipCallLine(number, hang_up=call.hangup)
        offer = call.sdp_offer
        answer, payload = negotiate_sdp(offer, HOST, line.rtp.local_port, supported_codecs=[0, 8])
        far_host, far_port = offer.rtp_address
        media = media_answer(offer, (0, 8))
        events = media.telephone_event if media is not None else None
        line.rtp.connect(far_host, far_port, payload, events)
        lines[call.call_id] = line
        call.accept(answer)
        keep(asyncio.ensure_future(agent.handle(line)))

    def on_bye(call: Any, _request: Any) -> None:
        line = lines.pop(call.call_id, None)
        if line is not None:
            line._hang_up = None  # (the caller hung up: nothing to send)
            keep(asyncio.ensure_future(line.close()))
            asyncio.get_running_loop().call_later(1.0, line.rtp.close)

    uas.on_invite = on_invite
    uas.on_bye = on_bye
    await uas.start()
    bound = name_bound_port(transport)
    try:
        await ready_until_stopped(f"sip:agent@{HOST}:{bound}")
    finally:
        for line in lines.values():
            with contextlib.suppress(Exception):
                line.rtp.close()
        await uas.stop()
