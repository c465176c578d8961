"""SIP signalling against real SIP software: voicebench's line INVITEs baresip (answering by
itself, playing a known recording), reads the media its SDP answer names, and hangs up; a call
left unanswered fails with the last status heard."""

from __future__ import annotations

import asyncio
import itertools
import socket
import struct
import time
from pathlib import Path

import pytest
from sip_tools import baresip, free_udp_port, kamailio, tone_wav

from voicebench.remote.sip import SipFailure, SipLine, SipTarget

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
