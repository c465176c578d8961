"""The SDP of a SIP call: the answer to an offer the far end makes mid-call (a re-INVITE) keeps
the codec in use, follows the media where it moves, refuses what it cannot send to, and holds;
a held RTP session sends nothing and comes back with a talkspurt."""

from __future__ import annotations

import asyncio

import numpy as np
from aiosipua import parse_sdp

from voicebench.remote.rtp import RtpSession
from voicebench.remote.sip_sdp import MediaAnswer, SdpOrigin, answer_offer, usable_media


def offer(types: str = "0 8 101", address: str = "127.0.0.1", port: int = 40002, more: str = ""):
    return parse_sdp(
        f"v=0\r\no=pbx 9 4 IN IP4 {address}\r\ns=-\r\nc=IN IP4 {address}\r\nt=0 0\r\n"
        f"m=audio {port} RTP/AVP {types}\r\na=rtpmap:0 PCMU/8000\r\na=rtpmap:8 PCMA/8000\r\n"
        f"a=rtpmap:18 G729/8000\r\na=rtpmap:101 telephone-event/8000\r\n{more}"
    )


def answered(sdp, in_use: int = 0, origin: SdpOrigin | None = None):
    return answer_offer(
        sdp,
        host="127.0.0.1",
        port=30000,
        in_use=in_use,
        accepted=(0, 8),
        origin=origin or SdpOrigin(session="77", version=1),
    )


def test_a_re_offer_is_answered_on_the_codec_in_use_at_its_new_address():
    origin = SdpOrigin(session="77", version=1)
    text, media = answered(offer("8 0 101", port=40100), in_use=0, origin=origin) or ("", None)
    assert media == MediaAnswer("127.0.0.1", 40100, 0, 101)
    lines = text.split("\r\n")
    assert "o=voicebench 77 2 IN IP4 127.0.0.1" in lines  # the same session, one version on
    assert "m=audio 30000 RTP/AVP 0 101" in lines and "a=sendrecv" in lines
    assert origin.version == 2


def test_a_re_offer_without_the_codec_in_use_takes_another_or_is_refused():
    moved = answered(offer("8 101"), in_use=0)
    assert moved is not None and moved[1].payload_type == 8
    assert "m=audio 30000 RTP/AVP 8 101" in moved[0]
    assert answered(offer("18 101")) is None  # G.729 alone: 488
    assert answered(offer(address="224.0.0.9")) is None  # multicast
    assert answered(offer(port=0)) is None
    assert answered(parse_sdp("v=0\r\ns=-\r\nt=0 0\r\n")) is None  # no audio


def test_a_hold_is_answered_in_kind_and_takes_no_audio():
    text, media = answered(offer(more="a=sendonly\r\n")) or ("", None)
    assert media is not None and not media.takes_audio and "a=recvonly" in text
    text, media = answered(offer(more="a=inactive\r\n")) or ("", None)
    assert media is not None and not media.takes_audio and "a=inactive" in text
    _text, media = answered(offer(address="0.0.0.0")) or ("", None)  # the older manner
    assert media is not None and media.host == "0.0.0.0" and not media.takes_audio
    # (a call's first offer at 0.0.0.0 is no media at all)
    assert usable_media(offer(address="0.0.0.0"), (0, 8)) is None
    _text, media = answered(offer(more="a=sendrecv\r\n")) or ("", None)
    assert media is not None and media.takes_audio


async def test_a_held_rtp_session_sends_nothing_and_resumes_with_a_talkspurt():
    with RtpSession() as sender, RtpSession() as far:
        sender.connect("127.0.0.1", far.local_port, 0)
        far.connect("127.0.0.1", sender.local_port, 0)
        got = []
        for held in (False, True, True, False):
            sender.held = held
            sender.send_frame(np.zeros(160, np.int16))
            await asyncio.sleep(0.03)
        while not far.packets.empty():
            got.append(far.packets.get_nowait())
    assert len(got) == 2
    assert [p.marker for p in got] == [True, True]  # the first, and the first after the hold
    assert (got[1].timestamp - got[0].timestamp) % 2**32 >= 3 * 160  # the pause is heard
