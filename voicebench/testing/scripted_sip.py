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

What a phone system does besides (each call):

- ``early_media_ms`` (``--early-media-ms``): before answering it sends 183 Session Progress
  with its SDP and plays that long a tone of ``EARLY_TONE_HZ`` (early media, as an IVR plays
  a greeting before it answers), then 200 OK;
- ``move_media_ms`` (``--move-media-ms``): that long after answering it opens a second RTP
  port and moves its media there with a re-INVITE offering the codec in use (as a PBX does
  after a transfer); once the 200 comes it sends from the new port and, ``MOVE_GRACE_S``
  later, closes the old one, so it hears a caller that did not follow no more. The log gets
  ``{"call": 0, "moved": 200, "from_port": ..., "to_port": ..., "moved_ns": ...}`` (``moved``:
  the status, None when none came within ``REINVITE_TIMEOUT_S``).

- ``ivr`` (``--ivr 1,2#``): menus in front of the agent, as a phone line's IVR puts them. Once
  answered, each menu plays a prompt (``PROMPT_MS`` of ``PROMPT_TONE_HZ``) and waits
  ``MENU_WAIT_S`` for its digits (RFC 4733 events), prompting again after a wrong or missing
  answer, ``MENU_TRIES`` times at most before it hangs up; the agent hears nothing of the call
  until the last menu is through. The log gets ``{"call": 0, "ivr": 1, "digits": "1", "ok":
  true, "at_ns": ...}`` for each answer.

- ``reliable_ringing`` (``--reliable-ringing``): before answering it sends a reliable 180
  Ringing (RFC 3262: ``Require: 100rel``, ``RSeq``), sent again until the caller's PRACK comes,
  and waits ``PRACK_WAIT_S`` for it. The log gets ``{"call": 0, "pracked": true}``.

``Reinvites`` sends re-INVITEs on the calls an aiosipua user agent answered, and ACKs their
answers (aiosipua leaves both to whoever answered the call).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import Any

import numpy as np

from voicebench.agent.realtime import FRAME_NS
from voicebench.remote.rtp import FRAME_SAMPLES, RtpPacket, RtpSession
from voicebench.remote.sip_sdp import NAMES, media_answer, sdp_body
from voicebench.remote.sip_stream import name_bound_port
from voicebench.remote.sip_uas import keep_record_route
from voicebench.scenarios.signal import PHONE_RATE
from voicebench.testing.scripted_timing import HeardLine, ready_until_stopped
from voicebench.testing.scripted_voice_agent import Agent

HOST = "127.0.0.1"
TALK_GAP_NS = 40_000_000
"""A pause in sending this long or longer starts a new talkspurt (marker bit)."""
EARLY_TONE_HZ = 440.0
"""The tone played as early media."""
MOVE_GRACE_S = 0.2
"""How long the old RTP port still hears the caller after a move (packets on their way)."""
REINVITE_TIMEOUT_S = 2.0
"""How long a re-INVITE waits for its final answer."""
PROMPT_TONE_HZ = 620.0
"""The tone an IVR menu plays as its prompt."""
PROMPT_MS = 600.0
MENU_WAIT_S = 4.0
"""How long a menu waits for its digits after its prompt."""
MENU_TRIES = 3
PRACK_WAIT_S = 3.0
"""How long a reliable 180 waits for its PRACK before the call is answered all the same."""


class SipCallLine(HeardLine):
    """One SIP call as the scripted agent's connection: the caller's decoded audio comes out of
    ``async for``, the agent's audio goes into ``send``."""

    def __init__(self, call: int, hang_up=None) -> None:
        super().__init__()
        self.voicebench_call = call
        self._hang_up = hang_up
        self._last_sent = 0
        self.listening = True
        """Whether the agent hears the call (not while an IVR's menus are being answered)."""
        self.rtp = RtpSession(host=HOST, on_packet=self._packet)

    def _packet(self, packet: RtpPacket) -> None:
        if self.listening:
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


async def play_early_media(call: Any, answer: Any, line: SipCallLine, ms: float) -> None:
    """183 Session Progress with ``answer`` (the SDP), then ``ms`` of ``EARLY_TONE_HZ``, a
    packet each 20 ms."""
    from aiosipua import serialize_sdp

    body = serialize_sdp(answer)
    call._send_response(183, "Session Progress", body=body, content_type="application/sdp")
    await play_tone(line, ms, EARLY_TONE_HZ)


async def play_tone(line: SipCallLine, ms: float, hz: float) -> None:
    """``ms`` of a tone of ``hz``, a packet each 20 ms."""
    t = np.arange(int(ms * PHONE_RATE / 1000)) / PHONE_RATE
    tone = (0.3 * 32767 * np.sin(2 * np.pi * hz * t)).astype(np.int16)
    start = time.perf_counter_ns()
    for k, at in enumerate(range(0, tone.size, FRAME_SAMPLES)):
        await line.send(tone[at : at + FRAME_SAMPLES].tobytes())
        await asyncio.sleep(max(0, start + (k + 1) * FRAME_NS - time.perf_counter_ns()) / 1e9)


async def answer_menus(agent: Agent, line: SipCallLine, menus: tuple[str, ...]) -> bool:
    """The IVR's menus (module docstring), each prompting until its digits come: whether the
    caller got through them all."""
    for n, menu in enumerate(menus, 1):
        for _try in range(MENU_TRIES):
            await play_tone(line, PROMPT_MS, PROMPT_TONE_HZ)
            digits = await digits_within(line, len(menu), MENU_WAIT_S)
            ok = digits == menu.upper()
            entry = {"ivr": n, "digits": digits, "ok": ok, "at_ns": time.perf_counter_ns()}
            agent._write({"call": line.voicebench_call, **entry})
            if ok:
                break
        else:
            return False
    return True


async def digits_within(line: SipCallLine, count: int, wait_s: float) -> str:
    """Up to ``count`` digits the caller presses (each once, as its end is heard), waiting
    ``wait_s`` for the first and as long again for each next one."""
    digits = ""
    while len(digits) < count:
        try:
            event = await asyncio.wait_for(line.rtp.digits.get(), wait_s)
        except TimeoutError:
            break
        if event.end:
            digits += event.digit
    return digits


async def move_media(
    reinvites: Reinvites, call: Any, answer: Any, line: SipCallLine, media: Any
) -> dict[str, Any]:
    """Move the call's media to a new RTP port with a re-INVITE (module docstring): what the
    log says of it."""
    from aiosipua import parse_sdp

    from voicebench.remote.sip_sdp import SdpOrigin

    old, new = line.rtp, RtpSession(host=HOST, on_packet=line._packet)
    # (it hears the caller there as soon as the caller follows: before the 200 comes)
    new.connect(media.host, media.port, media.payload_type, media.telephone_event)
    offer = sdp_body(
        HOST, new.local_port, (NAMES[media.payload_type],), origin=SdpOrigin.of(answer)
    )
    _request, response = await reinvites.send(call, offer)
    status = None if response is None else response.status_code
    agreed = None
    if status == 200 and response.body:
        agreed = media_answer(parse_sdp(response.text), (media.payload_type,))
    if agreed is None:
        new.close()
    else:
        new.connect(agreed.host, agreed.port, agreed.payload_type, agreed.telephone_event)
        line.rtp = new
        asyncio.get_running_loop().call_later(MOVE_GRACE_S, old.close)
    moved = {"moved": status, "from_port": old.local_port, "to_port": new.local_port}
    return {**moved, "moved_ns": time.perf_counter_ns()}


class Reinvites:
    """Re-INVITEs sent on calls that ``uac``'s user agent answered: ``await send(...)``; every
    final answer to one is kept in ``responses``, and ACKed."""

    def __init__(self, uac: Any) -> None:
        self.uac = uac
        self.responses: list[Any] = []
        self._sent: dict[tuple[str, int], tuple[Any, str | None]] = {}
        """Each re-INVITE's call and the SDP its ACK carries, by Call-ID and CSeq."""
        self._waiting: dict[tuple[str, int], asyncio.Future] = {}
        handle = uac.handle_response

        def handle_response(response: Any, addr: tuple[str, int]) -> None:
            cseq = response.cseq
            key = (response.call_id or "", cseq.seq if cseq else -1)
            if key not in self._sent or response.status_code < 200:
                handle(response, addr)
                return
            self.responses.append(response)
            self._ack(key, response)
            waiting = self._waiting.pop(key, None)
            if waiting is not None and not waiting.done():
                waiting.set_result(response)

        uac.handle_response = handle_response

    async def send(
        self,
        call: Any,
        offer: str | None,
        *,
        ack_sdp: str | None = None,
        timeout_s: float = REINVITE_TIMEOUT_S,
    ) -> tuple[Any, Any]:
        """Send a re-INVITE on ``call`` (an aiosipua ``IncomingCall``) with ``offer`` (None:
        none; the answer then goes in the ACK, ``ack_sdp``): the request and its final answer
        (None: none within ``timeout_s``)."""
        kind = "application/sdp" if offer else ""
        request = self.uac._send_in_dialog(
            call.dialog, "INVITE", call.source_addr, body=offer or "", content_type=kind
        )
        key = (call.call_id, request.cseq.seq)
        self._sent[key] = (call, ack_sdp)
        self._waiting[key] = waiting = asyncio.get_running_loop().create_future()
        try:
            return request, await asyncio.wait_for(waiting, timeout_s)
        except TimeoutError:
            return request, None
        finally:
            self._waiting.pop(key, None)

    def _ack(self, key: tuple[str, int], response: Any) -> None:
        call, sdp = self._sent[key]
        host, port = self.uac.transport.local_addr
        ack = call.dialog.create_request("ACK", via_host=host, via_port=port)
        call.dialog.local_cseq -= 1  # (an ACK takes its INVITE's number, not a new one)
        ack.headers.set_single("CSeq", f"{key[1]} ACK")
        if sdp and 200 <= response.status_code < 300:
            ack.text = sdp
            ack.headers.set_single("Content-Type", "application/sdp")
        self.uac.transport.send(ack, call.source_addr)


async def serve_sip(
    agent: Agent,
    *,
    port: int = 0,
    early_media_ms: float = 0.0,
    move_media_ms: float | None = None,
    ivr: tuple[str, ...] = (),
    reliable_ringing: bool = False,
) -> None:
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

    reinvites = Reinvites(uas.uac)

    def on_invite(call: Any) -> None:
        number = next(agent.calls)
        fault = agent.fault_for(number)
        if fault in ("refuse", "busy"):
            call.reject(*((503, "Service Unavailable") if fault == "refuse" else (486, "Busy")))
            return
        keep_record_route(call)
        line = SipCallLine(number, hang_up=call.hangup)
        offer = call.sdp_offer
        answer, payload = negotiate_sdp(offer, HOST, line.rtp.local_port, supported_codecs=[0, 8])
        media = media_answer(offer, (payload,))
        assert media is not None  # (negotiate_sdp raises where there is none)
        line.rtp.connect(media.host, media.port, payload, media.telephone_event)
        lines[call.call_id] = line
        keep(asyncio.ensure_future(answer_call(call, answer, line, media)))

    async def answer_call(call: Any, answer: Any, line: SipCallLine, media: Any) -> None:
        if reliable_ringing:
            call.ringing(reliable=True)
            waited = time.monotonic() + PRACK_WAIT_S
            while call._pending_rseq is not None and time.monotonic() < waited:
                await asyncio.sleep(0.02)
            agent._write({"call": line.voicebench_call, "pracked": call._pending_rseq is None})
        if early_media_ms > 0:
            await play_early_media(call, answer, line, early_media_ms)
        call.accept(answer)
        if ivr:
            line.listening = False
            if not await answer_menus(agent, line, ivr):
                await line.close()
                return
            line.listening = True
        keep(asyncio.ensure_future(agent.handle(line)))
        if move_media_ms is not None:
            await asyncio.sleep(move_media_ms / 1000)
            if call.call_id in lines:
                moved = await move_media(reinvites, call, answer, line, media)
                agent._write({"call": line.voicebench_call, **moved})

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
