"""SIP signalling for a call voicebench places: an INVITE with an SDP offer of G.711 (PCMU and
PCMA) and RFC 4733 telephone events, digest authentication, the answer's media address and
codec, ACK, and BYE either way. The media is voicebench's own (``voicebench.remote.rtp``): only
the signalling is aiosipua's.

aiosipua 0.7.1 leaves out parts of a dialog that a call through a proxy needs; ``SipLine``
adds them around it:

- the route set (the 2xx's ``Record-Route``, reversed) and the remote target (its
  ``Contact``) are taken from the answer before the ACK is sent, so that ACK, re-INVITE and
  BYE follow the proxy's route instead of being refused by it; from a provisional answer with
  a To tag before that, so that the PRACK of a reliable one (RFC 3262) follows it too;
- an SDP in a 180 or 183 (early media) is kept (``SipLine.early``) and handed to
  ``on_media`` at once, so that the caller hears what the agent plays before it answers; the
  2xx's SDP then confirms or moves the media (``dial`` returns it);
- a re-INVITE from the agent (a session refresh, a hold, media moved to another address) is
  answered as ``voicebench.remote.sip_sdp.MidCallOffers`` says, the media it moves handed to
  ``on_media`` (aiosipua hands it to a callback nobody set, and no answer went back); one sent
  again is answered again, as a server transaction would (aiosipua answers it 500);
- a re-INVITE voicebench sends (``reoffer``) that is refused leaves the call as it was
  (aiosipua would end the dialog);
- a challenge after the first (a proxy's, then the agent's) is answered too
  (``voicebench.remote.sip_auth``);
- a final answer of 300-699 is acknowledged, as RFC 3261 asks (otherwise the agent resends it
  for half a minute); one to an INVITE since replaced (a challenge answered, a re-INVITE) is
  acknowledged too, and not taken for the call's answer;
- each INVITE and BYE is sent again until answered (``voicebench.remote.sip_resend``): one
  lost on the way does not lose the call, nor leave the agent in it;
- the 3.11 event loop's datagram transport is not a ``DatagramTransport`` subclass, which
  aiosipua asserts; the harmless error it logs is kept out of the output.
"""

from __future__ import annotations

import asyncio
import re
import ssl
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from voicebench.agentspec import AgentSpec
from voicebench.errors import redact
from voicebench.remote.sip_auth import answer_another
from voicebench.remote.sip_resend import T1_S, Resends, acknowledge
from voicebench.remote.sip_sdp import (
    CODECS,
    NAMES,
    MediaAnswer,
    MidCallOffers,
    SdpOrigin,
    media_answer,
    sdp_body,
    usable_media,
)
from voicebench.remote.sip_stream import name_bound_port, quiet_aiosipua, sip_transport
from voicebench.remote.sip_uas import record_routes

SIP_URI = re.compile(
    r"^(?P<scheme>sips?):(?:(?P<user>[^@\s;:]+)@)?(?P<host>[^\s;:@]+)(?::(?P<port>\d+))?$"
)
DEFAULT_PORT = 5060
"""Where a ``sip:`` URI's host takes calls when it names no port (a ``sips:`` one: 5061)."""
BYE_WAIT_S = 8 * T1_S
"""How long hanging up waits for the BYE's answer, sending it again meanwhile (not the 32 s
RFC 3261 allows: the run goes on)."""


def sip_agent_spec(uri: str) -> AgentSpec:
    """An agent called at a ``sip:USER@HOST[:PORT]`` URI (``--agent``) with the defaults of
    ``[remote.sip]`` (no proxy, no credentials: a spec file gives those), named after its
    user."""
    from voicebench._model import validate_record

    user = uri.partition(":")[2].partition("@")[0]
    remote = {"url": uri, "protocol": "sip"}
    data = {"name": user or "sip", "family": "sip", "remote": remote}
    return validate_record(AgentSpec, data, file="--agent")


class SipFailure(Exception):
    """A call that did not start: ``kind`` (``busy``, ``sip_rejected``, ``no_answer``,
    ``connection_refused``), the SIP status when there was one, and a reason for a person."""

    def __init__(self, kind: str, reason: str, status: int | None = None) -> None:
        super().__init__(reason)
        self.kind, self.reason, self.status = kind, reason, status


@dataclass(frozen=True)
class SipTarget:
    """Whom to call (``sip:USER@HOST[:PORT]``) and where the INVITE goes (the host itself, or
    an outbound proxy)."""

    uri: str
    host: str
    port: int
    user: str | None = None

    @classmethod
    def parse(cls, uri: str, *, tls: bool = False) -> SipTarget:
        """``uri``'s parts; with no port, 5060 (5061 for a ``sips:`` URI, or over ``tls``)."""
        found = SIP_URI.match(uri)
        if found is None:
            raise ValueError(f"{uri!r} is not a SIP URI (sip:USER@HOST[:PORT])")
        tls = tls or found["scheme"] == "sips"
        port = int(found["port"]) if found["port"] else DEFAULT_PORT + tls
        return cls(uri=uri, host=found["host"], port=port, user=found["user"])


@dataclass
class SipLine:
    """One SIP user agent placing one call, on ``host`` (this machine's address on the way to
    the agent: ``local_address_for``): ``async with SipLine(host) as line``, ``answer = await
    line.dial(...)``, ``line.ended`` set when the far end hangs up."""

    host: str = "127.0.0.1"
    transport: str = "udp"
    """``udp``, ``tcp`` or ``tls`` (``voicebench.remote.sip_stream``)."""
    tls: ssl.SSLContext | None = None
    sips: bool = False
    """The call is to a ``sips:`` URI (its Contact is one too)."""
    user_agent: str = "voicebench"
    ended: asyncio.Event = field(default_factory=asyncio.Event)
    early: MediaAnswer | None = None
    """The media of an SDP in a provisional answer (early media), if one came."""
    statuses: list[tuple[int, str]] = field(default_factory=list)
    """Every answer to the INVITE, in order: (status, reason)."""
    on_media: Callable[[MediaAnswer], None] = lambda _media: None
    """Sends the call's RTP to the far end's media once an SDP other than the 2xx's names it:
    early media, a re-INVITE (raising ValueError where it cannot: the re-INVITE is refused)."""
    offers: MidCallOffers | None = None
    """The agent's re-INVITEs and their answers, once the call is answered."""
    _uac: Any = None
    _uas: Any = None
    _transport: Any = None
    _call: Any = None
    _offered: tuple[int, ...] = ()
    _origin: SdpOrigin = field(default_factory=SdpOrigin)
    _reoffer: tuple[int, asyncio.Future] | None = None
    """voicebench's re-INVITE under way: its CSeq, and its final answer to come."""
    resends: Resends | None = None
    """The requests sent again until answered (``sent_again`` counts them)."""
    _bye: asyncio.Task | None = None

    async def __aenter__(self) -> SipLine:
        from aiosipua import SipUAC, SipUAS

        quiet_aiosipua()
        self._transport = sip_transport(self.transport, self.host, tls=self.tls, sips=self.sips)
        self._uac = SipUAC(self._transport)
        self._uas = SipUAS(self._transport, uac=self._uac, user_agent=self.user_agent)
        self._uas.on_bye = lambda _call, _request: self.ended.set()
        await self._uas.start()
        if self.transport == "udp":
            name_bound_port(self._transport)
        self.resends = resends = Resends(self._transport)
        handle = self._uac.handle_response

        def handle_response(response: Any, addr: tuple[str, int]) -> None:
            resends.heard(response)
            if self._before_aiosipua(response):
                handle(response, addr)

        self._uac.handle_response = handle_response
        self._uas.on_reinvite = self._on_reinvite
        handlers = self._uas._handlers
        invite, ack = handlers["INVITE"], handlers["ACK"]

        def screened(handle: Callable) -> Callable:
            def handler(request: Any, addr: tuple[str, int]) -> None:
                if self.offers is None or self.offers.screen(request, self._transport):
                    handle(request, addr)

            return handler

        handlers["INVITE"], handlers["ACK"] = screened(invite), screened(ack)
        return self

    async def __aexit__(self, *exc: object) -> None:
        try:
            self.hang_up()
            await asyncio.sleep(0)  # (the BYE leaves before the socket closes)
            if self._bye is not None:
                await self._bye  # (answered, or given up on after BYE_WAIT_S)
        finally:
            if self._uas is not None:
                await self._uas.stop()

    @property
    def local_address(self) -> tuple[str, int]:
        return self._transport.local_addr

    async def dial(
        self,
        target: SipTarget,
        *,
        rtp_port: int,
        codecs: tuple[str, ...] = ("pcmu", "pcma"),
        via: tuple[str, int] | None = None,
        username: str | None = None,
        password: str | None = None,
        timeout_s: float = 10.0,
    ) -> MediaAnswer:
        """INVITE ``target`` (through ``via``, an outbound proxy, when given) offering
        ``codecs`` on ``rtp_port``; the answer's media once it is answered (2xx, ACK sent).
        Raises ``SipFailure``; the password never appears in one."""
        from aiosipua import SipDigestAuth, parse_sdp

        self._offered = tuple(CODECS[c] for c in codecs)
        offer = parse_sdp(sdp_body(self.host, rtp_port, codecs, origin=self._origin))
        # (no user name given: the caller is voicebench, as the From says)
        auth = SipDigestAuth(username or "voicebench", password) if password else None
        local = f"sip:{username or 'voicebench'}@{self.host}:{self.local_address[1]}"
        destination = via or (target.host, target.port)
        if self._transport.reliable:  # (a connection first: TCP, TLS; TLS checks the name
            # of the host it connects to: the proxy's, through one)
            await self._connect(destination, via[0] if via else target.host, target, timeout_s)
        self._call = self._uac.send_invite(
            local, target.uri, destination, offer, auth=auth, user_agent=self.user_agent
        )
        secret = (password,) if password else ()
        started = time.monotonic()
        assert self.resends is not None
        resending = asyncio.create_task(
            self.resends.until_answered(
                lambda: self._call.invite, destination, send=not self._transport.reliable
            )
        )
        try:
            await self._call.wait_answered(timeout=timeout_s)
        except TimeoutError:
            last = (
                f" (last: {self.statuses[-1][0]} {self.statuses[-1][1]})" if self.statuses else ""
            )
            self._cancel()
            raise SipFailure(
                "no_answer", f"{target.uri}: no answer within {timeout_s:g} s{last}"
            ) from None
        except RuntimeError:
            status, reason = self._call._reject_code, self._call._reject_reason
            kind = "busy" if status in (486, 600) else "sip_rejected"
            raise SipFailure(
                kind, redact(f"{target.uri}: {status} {reason}", *secret), status
            ) from None
        finally:
            resending.cancel()
        media = media_answer(self._call.sdp_answer, self._offered)
        if media is None:
            self.hang_up()
            raise SipFailure(
                "sip_rejected",
                f"{target.uri}: answered after {time.monotonic() - started:.1f} s with no "
                "audio codec offered (PCMU or PCMA)",
                200,
            )
        self.offers = MidCallOffers(
            self.host, rtp_port, self._offered, media, self.on_media, self._origin
        )
        return media

    async def reoffer(
        self, rtp_port: int, *, timeout_s: float = 10.0
    ) -> tuple[int | None, MediaAnswer | None]:
        """Move this side's media to ``rtp_port`` mid-call: a re-INVITE offering the codec in
        use first. The agent's final status (None: none within ``timeout_s``) and, on a 2xx,
        the media its answer names (None where it names none offered); the caller points its
        RTP there. A refusal leaves the call as it was."""
        from aiosipua import parse_sdp

        assert self.offers is not None, "no call is up"
        in_use = self.offers.media.payload_type
        codecs = tuple(dict.fromkeys(NAMES[t] for t in (in_use, *self._offered)))
        offer = parse_sdp(sdp_body(self.host, rtp_port, codecs, origin=self._origin))
        request = self._uac.send_reinvite(self._call.dialog, offer, self._call.remote_addr)
        self._reoffer = (request.cseq.seq, asyncio.get_running_loop().create_future())
        assert self.resends is not None
        resending = asyncio.create_task(
            self.resends.until_answered(
                lambda: request, self._call.remote_addr, send=not self._transport.reliable
            )
        )
        try:
            response = await asyncio.wait_for(self._reoffer[1], timeout_s)
        except TimeoutError:
            return None, None
        finally:
            self._reoffer = None
            resending.cancel()
        status = response.status_code
        if status >= 300:
            return status, None
        media = None
        if response.body and response.content_type == "application/sdp":
            media = media_answer(parse_sdp(response.text), self._offered)
        if media is not None:
            self.offers.port, self.offers.media = rtp_port, media
        return status, media

    def hang_up(self) -> None:
        """BYE, if the call is up and the far end has not hung up already."""
        if self._call is not None and not self.ended.is_set():
            self.ended.set()
            try:
                bye = self._call.hangup(self._uac)
            except RuntimeError:  # (the connection it went over is gone: TCP, TLS)
                return
            if bye is not None and self.resends is not None:
                self._bye = asyncio.ensure_future(
                    self.resends.until_answered(
                        lambda: bye,
                        self._call.remote_addr,
                        limit_s=BYE_WAIT_S,
                        send=not self._transport.reliable,
                    )
                )

    async def _connect(
        self, to: tuple[str, int], name: str, target: SipTarget, timeout_s: float
    ) -> None:
        """The connection the call's signalling goes over (TLS: to a host called ``name``);
        SipFailure where none opens within ``timeout_s``."""
        try:
            async with asyncio.timeout(timeout_s):
                await self._transport.connect(to, server_hostname=name)
        except TimeoutError:
            raise SipFailure(
                "no_answer",
                f"{target.uri}: {self.transport.upper()}: no connection within {timeout_s:g} s",
            ) from None
        except (OSError, ssl.SSLError) as exc:
            reason = getattr(exc, "reason", None) or exc.strerror or exc
            raise SipFailure(
                "connection_refused", f"{target.uri}: {self.transport.upper()}: {reason}"
            ) from None

    def _cancel(self) -> None:
        if self._call is not None:
            self._call.cancel(self._uac)

    def _on_reinvite(self, call: Any) -> None:
        """The agent's re-INVITE (aiosipua's ``IncomingCall`` wrapping it): answered."""
        if self.offers is None:
            call._send_response(491, "Request Pending")  # (the call is not answered yet)
            return
        self.offers.answer(call)

    def _before_aiosipua(self, response: Any) -> bool:
        """What aiosipua's own handling of an answer to the INVITE leaves out (module doc);
        whether aiosipua is to handle it too."""
        cseq = response.cseq
        if cseq is None or cseq.method.upper() != "INVITE" or self._call is None:
            return True
        if response.call_id != self._call.call_id:
            return True
        if cseq.seq < self._call.invite.cseq.seq:  # (to an INVITE a challenge or a re-INVITE
            if response.status_code >= 200:  # replaced: sent again, our ACK lost on the way)
                acknowledge(self._transport, self._call, response)
            return False
        status = response.status_code
        if self._reoffer is not None and cseq.seq == self._reoffer[0]:
            if status >= 200 and not self._reoffer[1].done():
                self._reoffer[1].set_result(response)
            if status >= 300:
                acknowledge(self._transport, self._call, response)
                return False  # (aiosipua would end the call)
            return True
        self.statuses.append((status, response.reason_phrase))
        if status in (180, 183) and response.body and response.content_type == "application/sdp":
            self._early_media(response)
        dialog = self._call.dialog
        # the route set and target from the answer that makes the dialog: a 2xx, or before it
        # an 18x with a To tag (an early dialog: its PRACK takes them)
        to = response.to_addr
        early = 100 < status < 200 and not dialog.route_set and to is not None and to.tag
        if early or (200 <= status < 300 and not self._call._answered.is_set()):
            dialog.route_set = list(reversed(record_routes(response)))
            contact = response.get_header("contact") or ""
            if "<" in contact:
                dialog.remote_target = contact.split("<", 1)[1].split(">", 1)[0]
        if status >= 300:
            acknowledge(self._transport, self._call, response)
            if status in (401, 407) and answer_another(self._uac, self._call, response, status):
                return False  # (a second challenge, answered: sip_auth)
        return True

    def _early_media(self, response: Any) -> None:
        """An SDP in a provisional answer: the caller hears the agent from there on."""
        from aiosipua import parse_sdp

        early = usable_media(parse_sdp(response.text), self._offered)
        if early is not None and early != self.early:
            try:
                self.on_media(early)
            except ValueError:
                return
            self.early = early
