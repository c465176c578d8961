"""What a datagram at the SIP port of ``voicebench serve --protocol sip`` is, read before
aiosipua handles it.

aiosipua 0.7.1 logs a traceback for every datagram that is not a SIP message, and raises
inside its own handlers on a request it parses but cannot read: a CSeq that is not a number,
an SDP with a word where a port or a payload type goes. Such an INVITE got no answer at all,
and its transaction was kept for five minutes. ``screen`` reads each datagram first, with
aiosipua's own readers, so that aiosipua is handed only what it can read:

- not a SIP message (random bytes, a start line cut short, more than 256 headers): dropped;
- a request without a Via aiosipua reads: dropped (there is nowhere to answer it);
- a request whose CSeq, From, To, Contact or SDP (``Content-Type: application/sdp``) cannot be
  read, or whose ``Content-Length`` is not a count or promises more bytes than the datagram
  holds (RFC 3261 18.3): answered 400 Bad Request (an ACK: dropped, an ACK is never answered);
- a response that cannot be read so: dropped.

``offered_media`` reads an INVITE's offer: the media the server answers is PCMU or PCMA at a
unicast IPv4 address and a port of 1-65535; any other offer is answered 488 (sending RTP to a
multicast, broadcast or unspecified address, or to port 0, is no call).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from voicebench.remote.sip_sdp import MediaAnswer, usable_media

_COUNT = re.compile(r"[0-9]{1,10}")


@dataclass(frozen=True)
class BadRequest:
    """A request to answer 400 Bad Request, and why."""

    request: Any
    """The request (an aiosipua ``SipRequest``)."""
    why: str
    """The part that cannot be read: ``CSeq``, ``SDP``, ``Content-Length``..."""


def screen(data: bytes) -> Any:
    """The aiosipua ``SipRequest`` or ``SipResponse`` in ``data`` when aiosipua can read all of
    it, a ``BadRequest`` to answer 400, or None to drop (module docstring)."""
    from aiosipua.message import SipMessage, SipRequest

    try:
        message = SipMessage.parse(data)
    except Exception:  # (aiosipua raises ValueError, and whatever its readers raise)
        return None
    unread = _unreadable(message)
    if not isinstance(message, SipRequest):
        return None if unread else message
    try:
        if not message.via:
            return None
    except Exception:
        return None
    if unread is None:
        return message
    return None if message.method.upper() == "ACK" else BadRequest(message, unread)


def _unreadable(message: Any) -> str | None:
    """The first part of ``message`` that aiosipua's readers raise on, if any."""
    from aiosipua import parse_sdp

    length = message.headers.get_first("content-length")
    if length is not None and (
        not _COUNT.fullmatch(length.strip()) or int(length) > len(message.body)
    ):
        return "Content-Length"
    readers = {
        "CSeq": lambda: message.cseq,
        "From": lambda: message.from_addr,
        "To": lambda: message.to_addr,
        "Contact": lambda: message.contact,
        "SDP": lambda: (
            parse_sdp(message.text)
            if message.body and message.content_type == "application/sdp"
            else None
        ),
    }
    for part, read in readers.items():
        try:
            read()
        except Exception:
            return part
    return None


def offered_media(offer: Any) -> MediaAnswer | None:
    """The media of an INVITE's offer (an aiosipua ``SdpMessage``) that the server answers:
    PCMU or PCMA at a unicast IPv4 address and a port of 1-65535 (telephone events only in a
    payload type of 0-127; ``voicebench.remote.sip_sdp.usable_media``); None when there is none
    to answer (488)."""
    return usable_media(offer, (0, 8))
