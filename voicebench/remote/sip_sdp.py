"""The SDP of a SIP call (RFC 4566; offer and answer, RFC 3264): what voicebench offers, the far
end's media read from its SDP, and the answer to an offer the far end makes mid-call.

Offers and answers are G.711 (PCMU, PCMA) at 20 ms with RFC 4733 telephone events. Each SDP one
side of a call sends keeps its ``o=`` line's user and session id and counts its version up by
one (RFC 3264 8: the far end reads a new version as a change).

A re-INVITE from the far end (``MidCallOffers``: voicebench's caller and ``voicebench serve
--protocol sip`` answer it alike) is answered as a phone answers it:

- an offer with the codec in use is answered 200 with that codec (with another this side
  offered when the codec in use is gone; 488 Not Acceptable Here when none is left, or when its
  media is at no unicast IPv4 address and port of 1-65535), and this side's RTP goes where the
  offer says from then on: a session refresh changes nothing, a move re-points the RTP;
- an offer that holds the call (``a=sendonly`` or ``a=inactive``, or the older ``c=IN IP4
  0.0.0.0``) is answered ``a=recvonly`` (or ``a=inactive``) and nothing is sent to it until an
  offer takes the call off hold (the first packet after it marks a talkspurt);
- a re-INVITE without an offer is answered 200 with one (this side's codecs, the one in use
  first); the answer in its ACK is applied as an offer's would be;
- a re-INVITE sent again (its 200 was lost) is answered again with the same response.
"""

from __future__ import annotations

import dataclasses
import ipaddress
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from voicebench.remote.rtp import RtpSession

TELEPHONE_EVENT_PT = 101
"""The payload type offered for RFC 4733 telephone events."""
CODECS = {"pcmu": 0, "pcma": 8}
"""The G.711 codecs a call can offer, by name, with their static payload types."""
NAMES = {pt: name for name, pt in CODECS.items()}
_ANSWERED = {"sendrecv": "sendrecv", "sendonly": "recvonly", "recvonly": "sendonly"}
"""The direction that answers an offer's (RFC 3264 6.1); any other answers ``inactive``."""
HOLD_ADDRESS = "0.0.0.0"
"""The address of a hold in the older manner (RFC 2543): send nothing."""


@dataclass(frozen=True)
class MediaAnswer:
    """What the far end's SDP says of its media: where to send RTP and in which payload type,
    the payload type of telephone events (None: it takes none), and its direction."""

    host: str
    port: int
    payload_type: int
    telephone_event: int | None
    direction: str = "sendrecv"
    """As the far end says it (``a=sendonly``: it only sends, so it hears nothing sent)."""

    @property
    def takes_audio(self) -> bool:
        """Whether audio is to be sent to it (False: it holds the call)."""
        return self.direction in ("sendrecv", "recvonly") and self.host != HOLD_ADDRESS


@dataclass
class SdpOrigin:
    """The ``o=`` line of the SDPs one side of a call sends, its version counted up by each."""

    user: str = "voicebench"
    session: str = field(default_factory=lambda: str(secrets.randbelow(2**31)))
    version: int = 0

    @classmethod
    def of(cls, sdp: Any) -> SdpOrigin:
        """Carry on the ``o=`` line of an aiosipua ``SdpMessage`` this side sent."""
        origin = sdp.origin
        version = origin.session_version
        return cls(origin.username, origin.session_id, int(version) if version.isdigit() else 0)

    def next_line(self, host: str) -> str:
        self.version += 1
        return f"o={self.user} {self.session} {self.version} IN IP4 {host}"


def sdp_body(
    host: str,
    port: int,
    codecs: tuple[str, ...],
    *,
    origin: SdpOrigin | None = None,
    telephone_event: int | None = TELEPHONE_EVENT_PT,
    direction: str = "sendrecv",
) -> str:
    """An SDP of ``codecs`` (in order of preference) and telephone events, at 20 ms: an offer,
    or (one codec, the offer's telephone-event type and the direction answering its) an
    answer."""
    types = [CODECS[c] for c in codecs]
    events = [] if telephone_event is None else [telephone_event]
    lines = [
        "v=0",
        (origin or SdpOrigin()).next_line(host),
        "s=voicebench",
        f"c=IN IP4 {host}",
        "t=0 0",
        f"m=audio {port} RTP/AVP {' '.join(map(str, [*types, *events]))}",
        *(f"a=rtpmap:{CODECS[c]} {c.upper()}/8000" for c in codecs),
        *(f"a=rtpmap:{t} telephone-event/8000" for t in events),
        *(f"a=fmtp:{t} 0-16" for t in events),
        "a=ptime:20",
        f"a={direction}",
    ]
    return "\r\n".join(lines) + "\r\n"


def media_answer(sdp: Any, offered: tuple[int, ...]) -> MediaAnswer | None:
    """The media of an aiosipua ``SdpMessage`` answering an offer of ``offered`` payload types
    (the first of them it names, in its order); None when it has no audio or picked no codec
    offered."""
    audio = sdp.audio if sdp is not None else None
    address = sdp.rtp_address if sdp is not None else None
    if audio is None or address is None:
        return None
    types = [c.payload_type for c in audio.codecs]
    chosen = next((t for t in types if t in offered), None)
    if chosen is None:
        return None
    events = next(
        (
            c.payload_type
            for c in audio.codecs
            if (c.encoding_name or "").lower() == "telephone-event"
        ),
        None,
    )
    return MediaAnswer(address[0], address[1], chosen, events, audio.direction)


def usable_media(sdp: Any, offered: tuple[int, ...], *, hold: bool = False) -> MediaAnswer | None:
    """``media_answer``, when RTP can be sent to it: a unicast IPv4 address (``HOLD_ADDRESS``
    too where ``hold``: a hold mid-call), a port of 1-65535 (telephone events only in a payload
    type of 0-127); None otherwise."""
    media = media_answer(sdp, offered)
    if media is None or not 0 < media.port < 65_536:
        return None
    try:
        address = ipaddress.IPv4Address(media.host)
    except ValueError:
        return None
    if address.is_multicast or address.is_reserved:
        return None
    if address.is_unspecified and not (hold and media.host == HOLD_ADDRESS):
        return None
    events = media.telephone_event
    if events is not None and not 0 <= events <= 127:
        return dataclasses.replace(media, telephone_event=None)
    return media


def answer_offer(
    offer: Any,
    *,
    host: str,
    port: int,
    in_use: int,
    accepted: tuple[int, ...],
    origin: SdpOrigin,
) -> tuple[str, MediaAnswer] | None:
    """The SDP answering a mid-call ``offer`` (an aiosipua ``SdpMessage``) for media at
    ``host:port``, and the far end's media it agrees to: the codec ``in_use`` when offered,
    else the first of ``accepted`` offered; None to refuse it (488: module docstring)."""
    media = usable_media(offer, (in_use,), hold=True) or usable_media(offer, accepted, hold=True)
    if media is None:
        return None
    direction = _ANSWERED.get(media.direction, "inactive")
    text = sdp_body(
        host,
        port,
        (NAMES[media.payload_type],),
        origin=origin,
        telephone_event=media.telephone_event,
        direction=direction,
    )
    return text, media


def point(rtp: RtpSession, media: MediaAnswer) -> None:
    """Send ``rtp`` where ``media`` is, in its codec, from now on: nothing while the far end
    holds the call. Raises ValueError for an address it cannot send to."""
    if media.host != HOLD_ADDRESS:
        rtp.connect(media.host, media.port, media.payload_type, media.telephone_event)
    rtp.held = not media.takes_audio


@dataclass
class MidCallOffers:
    """One side of a call answering the far end's re-INVITEs (module docstring), its RTP at
    ``host:port`` taking the payload types ``accepted``, the far end's ``media`` agreed so far;
    ``on_media`` re-points the RTP (raising ValueError where it cannot: 488)."""

    host: str
    port: int
    accepted: tuple[int, ...]
    media: MediaAnswer
    on_media: Callable[[MediaAnswer], None]
    origin: SdpOrigin = field(default_factory=SdpOrigin)
    answered: list[tuple[int, MediaAnswer | None]] = field(default_factory=list)
    """Each re-INVITE's status, with the far end's media agreed (None: refused, or no offer
    in it)."""
    _last: tuple[tuple[str, int, str], Any] | None = None
    """The last re-INVITE answered (Call-ID, CSeq, Via branch) and its response."""
    _awaiting: tuple[str, int] | None = None
    """The re-INVITE answered with an offer (Call-ID, CSeq): its ACK brings the answer."""

    def answer(self, call: Any) -> None:
        """Answer the re-INVITE in ``call.invite`` (an aiosipua ``IncomingCall``)."""
        from aiosipua import parse_sdp

        request, self._awaiting = call.invite, None
        media: MediaAnswer | None = None
        if request.body and request.content_type == "application/sdp":
            text, media = self._answer(parse_sdp(request.text))
        else:
            codecs = (NAMES[self.media.payload_type], *(NAMES[t] for t in self.accepted))
            text = sdp_body(self.host, self.port, tuple(dict.fromkeys(codecs)), origin=self.origin)
            self._awaiting = (request.call_id or "", request.cseq.seq)
        if text is None:
            response = call._send_response(488, "Not Acceptable Here")
            self.answered.append((488, None))
        else:
            response = call._send_response(200, "OK", body=text, content_type="application/sdp")
            self.answered.append((200, media))
        self._last = (_key(request), response)

    def _answer(self, offer: Any) -> tuple[str | None, MediaAnswer | None]:
        """The answer to ``offer`` and the media it agrees to, applied; (None, None): 488."""
        answered = answer_offer(
            offer,
            host=self.host,
            port=self.port,
            in_use=self.media.payload_type,
            accepted=self.accepted,
            origin=self.origin,
        )
        if answered is None or not self._apply(answered[1]):
            return None, None
        return answered

    def _apply(self, media: MediaAnswer) -> bool:
        try:
            self.on_media(media)
        except ValueError:
            return False
        self.media = media
        return True

    def screen(self, message: Any, transport: Any) -> bool:
        """Whether aiosipua is to handle ``message`` (a request or a response of the call) as
        well: not a re-INVITE sent again (answered again here); an ACK bringing the answer to
        an offer made in a 200 has it applied here first."""
        from aiosipua import parse_sdp

        method = getattr(message, "method", "").upper()
        if method == "INVITE" and self._last is not None and _key(message) == self._last[0]:
            if self._last[1] is not None:
                transport.send_reply(self._last[1])
            return False
        cseq = message.cseq
        if method != "ACK" or (message.call_id, cseq.seq if cseq else -1) != self._awaiting:
            return True
        self._awaiting = None
        if message.body and message.content_type == "application/sdp":
            media = usable_media(parse_sdp(message.text), self.accepted, hold=True)
            if media is not None:
                self._apply(media)
        return True


def _key(request: Any) -> tuple[str, int, str]:
    """What tells a request sent again from a new one: Call-ID, CSeq, top Via's branch."""
    vias, cseq = request.via, request.cseq
    branch = (vias[0].branch or "") if vias else ""
    return (request.call_id or "", cseq.seq if cseq else -1, branch)
