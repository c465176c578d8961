"""``voicebench serve --protocol sip``: any voicebench agent answering SIP calls, so that a
softphone or a PBX can call it, and voicebench's SIP caller has a twin to be tested against.

Calls come to ``sip:agent@127.0.0.1:PORT`` over UDP. Each INVITE must answer a digest
challenge (RFC 2617, MD5, ``qop=auth``; realm ``voicebench``) with the server's token as the
password, any user name: the first INVITE of a call is answered 401 with the challenge, a
wrong answer 403. At most ``max_calls`` calls run at once (486 Busy Here past that); an offer
with neither PCMU nor PCMA is answered 488. Each call gets its own pipeline, as over WebSocket
(``voicebench.live.serve``): the caller's RTP (``voicebench.remote.rtp``) decoded, resampled to
16 kHz and heard as it arrives; the agent's voice resampled to 8 kHz and sent as it would be
played, one packet a 20 ms frame, nothing between talks (the first packet after a silence
marks a talkspurt). A BYE from either side ends the call and its pipeline; so does a line
silent for ``RTP_IDLE_S`` (no packet of the caller's audio: a caller gone without a BYE), the
server then sending the BYE. What a stranger sends is read before aiosipua handles it
(``voicebench.live.sip_screen``): a datagram that is not SIP is dropped, a request it cannot
read answered 400; datagrams that are not RTP are dropped. A refused or challenged INVITE
leaves nothing behind (neither its dialog nor its transaction), so a flood of them holds no
memory; an offer of media the server cannot send to (not a unicast IPv4 address, a port out of
1-65535) is answered 488. A caller's re-INVITE (a session refresh, a hold, its media moved) is
answered as ``voicebench.remote.sip_sdp.MidCallOffers`` says, the call's RTP sent where the
caller's media moved from then on.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import logging
import re
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from voicebench.agentspec import AgentSpec
from voicebench.errors import RunError

REALM = "voicebench"
NONCE_S = 300.0
"""How long a challenge's nonce may be answered."""
RTP_IDLE_S = 30.0
"""How long a call's line may bring no packet of the caller's audio before the server hangs up
(BYE): a phone sends audio all through a call, silence included, so a silent line is a caller
gone without a BYE (its power, its network, its process lost), whose call slot is freed."""
FRAME_NS = 20_000_000
logger = logging.getLogger(__name__)
_PARAM = re.compile(r'(\w+)=(?:"([^"]*)"|([^\s,]+))')


class DigestGate:
    """The server side of digest authentication: challenges to send, answers to check. A
    nonce is its moment and a keyed hash of it, so none is stored: a flood of INVITEs grows
    nothing and cannot push a caller's nonce out before its answer comes."""

    def __init__(self, password: str) -> None:
        self.password = password
        self._key = secrets.token_bytes(32)

    def _nonce(self, stamp: str) -> str:
        return stamp + hmac.new(self._key, stamp.encode(), hashlib.sha256).hexdigest()[:32]

    def challenge(self) -> str:
        nonce = self._nonce(f"{time.monotonic_ns():x}.")
        return f'Digest realm="{REALM}", nonce="{nonce}", algorithm=MD5, qop="auth"'

    def _live(self, nonce: str) -> bool:
        stamp, dot, _mac = nonce.partition(".")
        # (bytes: compare_digest refuses strings of other than ASCII, which a stranger sends)
        if not dot or not hmac.compare_digest(self._nonce(stamp + ".").encode(), nonce.encode()):
            return False
        try:
            age_s = (time.monotonic_ns() - int(stamp, 16)) / 1e9
        except ValueError:
            return False
        return 0 <= age_s <= NONCE_S

    def check(self, method: str, authorization: str | None) -> bool | None:
        """True for a right answer to a live challenge, False for a wrong one, None when
        there is no answer (or one to a nonce not issued here or too old: challenge again)."""
        if not authorization or not authorization.lower().startswith("digest "):
            return None
        params = {m[0].lower(): m[1] or m[2] for m in _PARAM.findall(authorization[7:])}
        nonce = params.get("nonce", "")
        if not self._live(nonce):
            return None
        user, uri, given = params.get("username", ""), params.get("uri", ""), params.get("response")
        if given is None or params.get("realm") != REALM or params.get("qop") != "auth":
            return False

        def md5(text: str) -> str:
            return hashlib.md5(text.encode(), usedforsecurity=False).hexdigest()

        ha1, ha2 = md5(f"{user}:{REALM}:{self.password}"), md5(f"{method}:{uri}")
        nc, cnonce = params.get("nc", ""), params.get("cnonce", "")
        expected = md5(f"{ha1}:{nonce}:{nc}:{cnonce}:auth:{ha2}")
        return hmac.compare_digest(expected.encode(), given.encode())


async def run_call(
    call: Any,
    rtp: Any,
    spec: AgentSpec,
    ended: asyncio.Event,
    caller_transport: Callable,
    *,
    idle_s: float = RTP_IDLE_S,
    on_idle: Callable[[], None] = lambda: None,
) -> None:
    """One answered call: a pipeline between the call's RTP and the agent until a BYE, the
    pipeline's microphone and loudspeaker ``caller_transport(params, send)`` (the WebSocket
    server's, ``voicebench.live.serve.CallerTransport``); ``on_idle()`` when no packet of the
    caller's audio has come for ``idle_s``, and the call ends."""
    from pipecat.audio.utils import create_stream_resampler

    from voicebench.pipeline.agent import VoiceAgent
    from voicebench.remote.rtp import FRAME_SAMPLES
    from voicebench.scenarios.signal import PHONE_RATE

    to_line, from_line = create_stream_resampler(), create_stream_resampler()
    carried = np.zeros(0, np.int16)  # the last part of a frame, sent with the next audio
    audio_end = 0  # when what was sent so far ends, played at its pace from when it left

    async def send(pcm: bytes) -> None:
        nonlocal carried, audio_end
        line = await to_line.resample(pcm, agent.out_rate, PHONE_RATE)
        carried = np.concatenate([carried, np.frombuffer(line, np.int16)])
        while carried.size >= FRAME_SAMPLES:
            frame, carried = carried[:FRAME_SAMPLES], carried[FRAME_SAMPLES:]
            now = time.perf_counter_ns()
            # a new talk when the audio before it had played out a frame or more ago
            resumes = now - audio_end >= FRAME_NS
            rtp.send_frame(frame, talkspurt_start=resumes)
            audio_end = max(audio_end, now) + FRAME_NS

    agent = VoiceAgent(spec, transport=lambda params, _observer: caller_transport(params, send))
    async with agent:
        heard: Any = agent.transport.input()  # (the caller transport's: it hears PCM)
        listening = asyncio.ensure_future(ended.wait())
        while not ended.is_set():
            packet = asyncio.ensure_future(rtp.packets.get())
            done, _ = await asyncio.wait(
                {packet, listening}, timeout=idle_s, return_when=asyncio.FIRST_COMPLETED
            )
            if packet not in done:
                packet.cancel()  # (a packet it had taken stays in the queue)
                if listening in done:
                    break
                if rtp.packets.empty():
                    on_idle()
                    break
                continue
            pcm = packet.result().pcm.astype(np.int16).tobytes()
            await heard.hear(await from_line.resample(pcm, PHONE_RATE, agent.in_rate))
        listening.cancel()


@dataclass(frozen=True)
class Held:
    """What a SIP server holds at one moment: its calls, and what aiosipua keeps of INVITEs."""

    calls: int
    """Calls in progress, each with its pipeline."""
    dialogs: int
    """Calls aiosipua keeps by Call-ID (answered ones, until a BYE ends them)."""
    transactions: int
    """INVITE server transactions aiosipua keeps (matched by a CANCEL)."""


class SipServer:
    """The server of ``serve_sip``: ``await SipServer(...).run(port, stop)``; ``held()`` says
    what it holds."""

    def __init__(
        self,
        call_spec: AgentSpec,
        *,
        password: str,
        limit: int,
        host: str,
        caller_transport: Callable,
        on_call: Callable[[str, int], None] | None = None,
        on_refused: Callable[[str], None] | None = None,
        idle_s: float | None = None,
    ) -> None:
        from aiosipua import SipUAC, SipUAS
        from aiosipua.transport import UdpSipTransport

        self.call_spec, self.limit, self.host = call_spec, limit, host
        self.caller_transport = caller_transport
        self.on_call, self.on_refused = on_call, on_refused
        self.gate = DigestGate(password)
        self.transport = UdpSipTransport(local_addr=(host, 0))
        self.uas = SipUAS(self.transport, uac=SipUAC(self.transport), user_agent="voicebench")
        self.uas.on_invite = self._on_invite
        self.uas.on_bye = self._on_bye
        self.uas.on_reinvite = self._on_reinvite
        # every datagram is read here first (voicebench.live.sip_screen), not by aiosipua alone
        setattr(self.transport, "_dispatch", self._dispatch)  # noqa: B010
        self.calls: dict[str, tuple[asyncio.Event, Any, asyncio.Task, Any]] = {}
        self.offers: dict[str, Any] = {}  # each call's MidCallOffers (re-INVITEs), by Call-ID
        self.idle_s = RTP_IDLE_S if idle_s is None else idle_s
        """How long a call's line may be silent (``RTP_IDLE_S``); read as each call starts."""

    def _dispatch(self, data: bytes, addr: tuple[str, int]) -> None:
        """Each datagram at the SIP port, in place of aiosipua's reading of it (module
        docstring): whatever is raised handling it is one line in the log, no traceback."""
        from aiosipua.message import SipRequest
        from aiosipua.transport import _stamp_via_received

        from voicebench.live.sip_screen import BadRequest, screen

        try:
            message = screen(data)
            if message is None:
                return
            request = message.request if isinstance(message, BadRequest) else message
            if isinstance(request, SipRequest):
                _stamp_via_received(request, addr)  # (answers go back where it came from)
            offers = self.offers.get(request.call_id or "")
            if isinstance(message, BadRequest):
                self.uas._send_error(request, 400, "Bad Request")
            elif offers is None or offers.screen(message, self.transport):
                self.uas._on_message(message, addr)
        except Exception as exc:
            logger.warning(
                "a SIP message from %s:%s was not handled: %s: %s", *addr, type(exc).__name__, exc
            )

    def held(self) -> Held:
        return Held(
            calls=len(self.calls),
            dialogs=len(self.uas._calls),
            transactions=len(self.uas.transactions.server_transactions),
        )

    def _forget(self, call: Any) -> None:
        """Keep nothing of ``call`` in aiosipua: its dialog, its timers, its transaction."""
        self.uas._calls.pop(call.call_id, None)
        call._stop_retransmissions()
        self.uas._remove_invite_transaction(call.invite)

    def _refused(self, call: Any, status: int, reason: str, why: str | None) -> None:
        call.reject(status, reason)
        self._forget(call)  # (no call was made: nothing to keep of it)
        if self.on_refused is not None and why is not None:
            self.on_refused(why)

    def _on_invite(self, call: Any) -> None:
        from aiosipua import negotiate_sdp

        from voicebench.live.sip_screen import offered_media
        from voicebench.remote.rtp import RtpSession
        from voicebench.remote.sip_sdp import MidCallOffers, SdpOrigin, point
        from voicebench.remote.sip_uas import keep_record_route

        gate, calls, host = self.gate, self.calls, self.host
        answer = gate.check("INVITE", call.invite.get_header("authorization"))
        if answer is None:
            call._send_response(
                401, "Unauthorized", extra_headers={"WWW-Authenticate": gate.challenge()}
            )
            self._forget(call)  # the answered INVITE will start it afresh
            return
        if not answer:
            self._refused(call, 403, "Forbidden", "wrong digest credentials")
            return
        if len(calls) >= self.limit:
            why = f"busy: {len(calls)} calls in progress (at most {self.limit})"
            self._refused(call, 486, "Busy Here", why)
            return
        offer = call.sdp_offer
        media = offered_media(offer)
        if media is None:
            why = "no PCMU or PCMA offered at a unicast IPv4 address and port"
            self._refused(call, 488, "Not Acceptable Here", why)
            return
        rtp = RtpSession(host=host)
        answer_sdp, payload = negotiate_sdp(offer, host, rtp.local_port, supported_codecs=[0, 8])
        rtp.connect(media.host, media.port, payload, media.telephone_event)
        self.offers[call.call_id] = MidCallOffers(
            host, rtp.local_port, (0, 8), media, lambda m: point(rtp, m), SdpOrigin.of(answer_sdp)
        )
        keep_record_route(call)
        call.accept(answer_sdp)
        ended = asyncio.Event()
        idle_s = self.idle_s

        def silent() -> None:
            if self.on_call is not None:
                self.on_call(f"hung up: no RTP for {idle_s:g} s", len(calls))
            with contextlib.suppress(Exception):
                call.hangup()
            ended.set()

        task = asyncio.ensure_future(
            run_call(
                call,
                rtp,
                self.call_spec,
                ended,
                self.caller_transport,
                idle_s=idle_s,
                on_idle=silent,
            )
        )
        calls[call.call_id] = (ended, rtp, task, call)
        if self.on_call is not None:
            self.on_call("started", len(calls))

        def done(_task: asyncio.Task) -> None:
            calls.pop(call.call_id, None)
            self.offers.pop(call.call_id, None)
            rtp.close()
            if not ended.is_set():  # the pipeline stopped on its own: hang up
                with contextlib.suppress(Exception):
                    call.hangup()
            self._forget(call)
            if self.on_call is not None:
                self.on_call("ended", len(calls))

        task.add_done_callback(done)

    def _on_reinvite(self, call: Any) -> None:
        offers = self.offers.get(call.call_id)
        if offers is None:  # (a call ending)
            call._send_response(481, "Call/Transaction Does Not Exist")
            return
        offers.answer(call)

    def _on_bye(self, call: Any, _request: Any) -> None:
        held = self.calls.get(call.call_id)
        if held is not None:
            held[0].set()

    async def run(
        self, port: int, stop: asyncio.Event, on_ready: Callable[[str], None] | None = None
    ) -> None:
        """Answer SIP calls on udp://HOST:PORT until ``stop`` is set (module docstring)."""
        from voicebench.remote.sip_stream import name_bound_port, quiet_aiosipua

        quiet_aiosipua()
        self.transport.local_addr = (self.host, port)
        try:
            await self.uas.start()
        except OSError as exc:
            raise RunError(f"cannot listen on {self.host}:{port}: {exc.strerror or exc}") from None
        bound = name_bound_port(self.transport)
        try:
            if on_ready is not None:
                on_ready(f"sip:agent@{self.host}:{bound}")
            await stop.wait()
        finally:
            await self._hang_up_all()

    async def _hang_up_all(self) -> None:
        for ended, _rtp, _task, call in list(self.calls.values()):
            with contextlib.suppress(Exception):
                call.hangup()  # the server is stopping: each caller is told
            ended.set()
        pending = [task for _ended, _rtp, task, _call in self.calls.values()]
        if pending:
            _done, late = await asyncio.wait(pending, timeout=10)
            for task in late:
                task.cancel()
            if late:
                await asyncio.wait(late, timeout=5)
        await self.uas.stop()


async def serve_sip(
    call_spec: AgentSpec,
    *,
    port: int,
    password: str,
    limit: int,
    host: str,
    caller_transport: Callable,
    on_ready: Callable[[str], None] | None = None,
    on_call: Callable[[str, int], None] | None = None,
    on_refused: Callable[[str], None] | None = None,
    stop: asyncio.Event,
) -> None:
    """Answer SIP calls on udp://HOST:PORT until ``stop`` is set (module docstring);
    ``on_call`` is told of each call's start and end, and of a silent line hung up on
    (``"hung up: no RTP for 30 s"``)."""
    server = SipServer(
        call_spec,
        password=password,
        limit=limit,
        host=host,
        caller_transport=caller_transport,
        on_call=on_call,
        on_refused=on_refused,
    )
    await server.run(port, stop, on_ready)
