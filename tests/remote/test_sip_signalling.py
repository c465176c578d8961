"""SIP signalling against real SIP software: voicebench's line INVITEs baresip (answering by
itself, playing a known recording), reads the media its SDP answer names, and hangs up; a call
left unanswered fails with the last status heard. Against an aiosipua user agent: the line
answers its re-INVITEs (refused, without an offer, sent again). Against a far end scripted
message by message: a challenge sent again after it was answered is acknowledged, not taken
for a refusal."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import socket
import struct
import time
from pathlib import Path

import numpy as np
import pytest
from sip_tools import baresip, free_udp_port, kamailio, tone_wav

from voicebench.remote.rtp import RtpSession
from voicebench.remote.sip import SipFailure, SipLine, SipTarget
from voicebench.remote.sip_sdp import point, sdp_body
from voicebench.remote.sip_stream import name_bound_port
from voicebench.testing.scripted_sip import Reinvites

pytestmark = pytest.mark.slow


def rtp_listener() -> tuple[socket.socket, int]:
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind(("127.0.0.1", 0))
    sock.setblocking(False)
    return sock, sock.getsockname()[1]


async def packets_for(sock: socket.socket, seconds: float) -> list[bytes]:
    loop = asyncio.get_running_loop()
    got: list[bytes] = []
    deadline = time.monotonic() + seconds
    while (left := deadline - time.monotonic()) > 0:
        try:
            got.append(await asyncio.wait_for(loop.sock_recv(sock, 2048), left))
        except TimeoutError:
            break
    return got


async def test_a_call_to_baresip_is_answered_streams_its_recording_and_hangs_up(tmp_path: Path):
    wav = tmp_path / "prompt.wav"
    tone_wav(wav)
    with baresip(tmp_path / "bob", wav) as bob:
        sock, port = rtp_listener()
        async with SipLine() as line:
            media = await line.dial(SipTarget.parse(bob.uri), rtp_port=port, timeout_s=10)
            received = await packets_for(sock, 1.0)
            line.hang_up()
            await asyncio.sleep(0.5)
        sock.close()
        said = bob.said()
    assert media.payload_type == 0 and media.host == "127.0.0.1"
    assert media.telephone_event is not None
    assert [s for s, _ in line.statuses][-1] == 200
    # the recording arrives as PCMU, one packet each 20 ms
    headers = [struct.unpack("!BBHII", p[:12]) for p in received]
    assert len(headers) >= 30, len(headers)
    assert {h[1] & 0x7F for h in headers} == {0} and {h[0] >> 6 for h in headers} == {2}
    steps = {b[3] - a[3] for a, b in itertools.pairwise(headers)}
    assert steps == {160}
    assert "terminated" in said, said[-1500:]


async def test_an_unanswered_call_fails_naming_the_last_status(tmp_path: Path):
    wav = tmp_path / "prompt.wav"
    tone_wav(wav, seconds=2)
    with baresip(tmp_path / "bob", wav, answer="manual") as bob:
        async with SipLine() as line:
            with pytest.raises(SipFailure) as failed:
                await line.dial(SipTarget.parse(bob.uri), rtp_port=free_udp_port(), timeout_s=2)
    assert failed.value.kind == "no_answer"
    assert failed.value.reason == f"{bob.uri}: no answer within 2 s (last: 180 Ringing)"


async def test_a_call_through_kamailio_answers_its_challenge_and_follows_its_route(
    tmp_path: Path,
):
    wav = tmp_path / "prompt.wav"
    tone_wav(wav)
    users = {"alice": "alice-secret-1", "bob": "bob-secret-2"}
    with (
        kamailio(tmp_path / "proxy", users) as proxy,
        baresip(tmp_path / "bob", wav, registrar=proxy.address, password=users["bob"]) as bob,
    ):
        host, port = proxy.address
        sock, rtp_port = rtp_listener()
        async with SipLine() as line:
            media = await line.dial(
                SipTarget.parse(f"sip:bob@{host}:{port}"),
                rtp_port=rtp_port,
                username="alice",
                password=users["alice"],
            )
            received = await packets_for(sock, 1.0)
            line.hang_up()
            await asyncio.sleep(0.5)
            # a user the registrar does not know: refused, after the challenge
            carol = SipTarget.parse(f"sip:carol@{host}:{port}")
            async with SipLine() as other:
                with pytest.raises(SipFailure) as unknown:
                    await other.dial(
                        carol, rtp_port=rtp_port, username="alice", password=users["alice"]
                    )
            # a wrong password is challenged again, and the call refused with that status
            async with SipLine() as other:
                with pytest.raises(SipFailure) as refused:
                    await other.dial(
                        carol, rtp_port=rtp_port, username="alice", password="wrong-pass-77"
                    )
        sock.close()
        routed, said = proxy.said(), bob.said()
    assert next(s for s, _ in line.statuses) == 407 and line.statuses[-1][0] == 200
    assert media.payload_type == 0 and len(received) >= 30
    # ACK and BYE went through the proxy (its Record-Route), and reached baresip
    assert "REQ BYE" in routed and "terminated" in said, routed[-2000:]
    assert (unknown.value.kind, unknown.value.status) == ("sip_rejected", 404)
    assert unknown.value.reason == f"sip:carol@{host}:{port}: 404 Not Found"
    assert (refused.value.kind, refused.value.status) == ("sip_rejected", 407)
    assert "wrong-pass-77" not in refused.value.reason


@contextlib.asynccontextmanager
async def answering_agent():
    """An aiosipua user agent on 127.0.0.1 that answers each INVITE 200 (PCMU): its URI, the
    calls it answered, and its re-INVITEs to send."""
    from aiosipua import SipUAC, SipUAS, negotiate_sdp
    from aiosipua.transport import UdpSipTransport

    transport = UdpSipTransport(local_addr=("127.0.0.1", 0))
    uas = SipUAS(transport, uac=SipUAC(transport))
    calls: list = []

    def on_invite(call) -> None:
        answer, _ = negotiate_sdp(call.sdp_offer, "127.0.0.1", 40_000, supported_codecs=[0])
        call.accept(answer)
        calls.append(call)

    uas.on_invite = on_invite
    await uas.start()
    port = name_bound_port(transport)
    try:
        yield f"sip:bot@127.0.0.1:{port}", calls, Reinvites(uas.uac)
    finally:
        await uas.stop()


async def test_the_agent_s_re_invites_are_refused_answered_with_an_offer_or_answered_again():
    g729 = (
        "v=0\r\no=- 1 2 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\n"
        "m=audio 40000 RTP/AVP 18\r\na=rtpmap:18 G729/8000\r\n"
    )
    async with answering_agent() as (uri, calls, reinvites):
        with RtpSession() as rtp, RtpSession() as moved:
            moved.connect("127.0.0.1", 9, 0)  # (what it takes: PCMU)
            async with SipLine() as line:
                line.on_media = lambda media: point(rtp, media)
                point(rtp, await line.dial(SipTarget.parse(uri), rtp_port=rtp.local_port))
                (call,) = calls
                # no codec the line offered: 488, and the call goes on
                _, refused = await reinvites.send(call, g729)
                # no offer: answered with one; the answer in the ACK moves the media
                answer = sdp_body("127.0.0.1", moved.local_port, ("pcmu",))
                _, offered = await reinvites.send(call, None, ack_sdp=answer)
                for _ in range(100):  # (until the ACK is read)
                    rtp.send_frame(np.zeros(160, np.int16))
                    await asyncio.sleep(0.01)
                    if not moved.packets.empty():
                        break
                # PCMA offered first: the codec in use is kept; sent again, answered again
                offer = sdp_body("127.0.0.1", moved.local_port, ("pcma", "pcmu"))
                request, kept = await reinvites.send(call, offer)
                reinvites.uac.transport.send(request, call.source_addr)
                for _ in range(100):
                    if len(reinvites.responses) == 4:
                        break
                    await asyncio.sleep(0.01)
                ended = line.ended.is_set()
                answered = list(line.offers.answered) if line.offers else []
    assert refused is not None and refused.status_code == 488
    assert offered is not None and offered.status_code == 200
    assert f"m=audio {rtp.local_port} RTP/AVP 0 8 101" in offered.text  # in use first
    assert moved.packets.qsize() >= 1 and not ended
    assert kept is not None and f"m=audio {rtp.local_port} RTP/AVP 0 101" in kept.text
    assert [r.status_code for r in reinvites.responses] == [488, 200, 200, 200]
    assert reinvites.responses[3].text == kept.text  # the same answer, not a 500
    assert [status for status, _ in answered] == [488, 200, 200]
    # the versions of the line's SDP count up from its offer's: 1, then 2 and 3
    assert [t.split("\r\n")[1].split()[2] for t in (offered.text, kept.text)] == ["2", "3"]


class CrossingChallenge(asyncio.DatagramProtocol):
    """A far end scripted by the message: it challenges the first INVITE (401), and when the
    INVITE with credentials comes, sends its 401 to the first one again (as if that had
    crossed the ACK) before answering the second 200. What it received is kept, in order."""

    def __init__(self) -> None:
        self.received: list[str] = []
        self.transport: asyncio.DatagramTransport | None = None

    def connection_made(self, transport) -> None:
        self.transport = transport

    def datagram_received(self, data: bytes, addr) -> None:
        text = data.decode()
        self.received.append(text)
        head = dict(
            line.split(": ", 1)
            for line in text.split("\r\n\r\n")[0].split("\r\n")[1:]
            if ": " in line
        )
        if not text.startswith("INVITE"):
            return
        copied = "".join(f"{k}: {head[k]}\r\n" for k in ("Via", "From", "Call-ID"))
        challenge = (
            f"SIP/2.0 401 Unauthorized\r\n{copied}To: {head['To']};tag=far\r\n"
            'CSeq: 1 INVITE\r\nWWW-Authenticate: Digest realm="far", nonce="n1"\r\n'
            "Content-Length: 0\r\n\r\n"
        )
        if head["CSeq"].startswith("1 "):
            self.first_via = head["Via"]
            self.transport.sendto(challenge.encode(), addr)
            return
        stale = challenge.replace(f"Via: {head['Via']}", f"Via: {self.first_via}")
        self.transport.sendto(stale.encode(), addr)
        body = "v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\n"
        body += "m=audio 40000 RTP/AVP 0\r\n"
        answer = (
            f"SIP/2.0 200 OK\r\n{copied}To: {head['To']};tag=far\r\nCSeq: {head['CSeq']}\r\n"
            f"Contact: <sip:bot@127.0.0.1:{addr[1]}>\r\nContent-Type: application/sdp\r\n"
            f"Content-Length: {len(body)}\r\n\r\n{body}"
        )
        self.transport.sendto(answer.encode(), addr)


async def test_a_challenge_sent_again_after_it_was_answered_is_acknowledged_not_taken():
    """The far end's 401 to the first INVITE comes again after the INVITE with credentials
    has gone (crossing the ACK): the line acknowledges it on the first INVITE's branch and
    CSeq, does not take it for a refusal of the call, and the call is answered."""
    loop = asyncio.get_running_loop()
    transport, far = await loop.create_datagram_endpoint(
        CrossingChallenge, local_addr=("127.0.0.1", 0)
    )
    port = transport.get_extra_info("sockname")[1]
    try:
        with RtpSession() as rtp:
            async with SipLine() as line:
                media = await line.dial(
                    SipTarget.parse(f"sip:bot@127.0.0.1:{port}"),
                    rtp_port=rtp.local_port,
                    password="secret-of-the-line",
                    timeout_s=5.0,
                )
            statuses = [s for s, _ in line.statuses]
    finally:
        transport.close()
    assert media.port == 40000 and statuses == [401, 200]
    acks = [m for m in far.received if m.startswith("ACK")]
    first_branch = far.first_via.split("branch=")[1].split(";")[0]
    # the first 401 and its copy each acknowledged on the first INVITE's branch, then the 200
    assert [("CSeq: 1 ACK" in a, first_branch in a) for a in acks[:2]] == [(True, True)] * 2
    assert any("CSeq: 2 ACK" in a for a in acks[2:]), acks
