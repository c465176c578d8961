"""RTP on loopback: two sessions exchange G.711 audio and digits, packets are laid out as RFC
3550 and RFC 4733 say, and a session survives whatever datagrams reach its port."""

from __future__ import annotations

import asyncio
import itertools
import socket
import struct
import time

import numpy as np
import pytest

from voicebench.remote.rtp import PCMA, PCMU, DtmfEvent, RtpPacket, RtpSession
from voicebench.scenarios import alaw_decode, alaw_encode, mulaw_decode, mulaw_encode

HOST = "127.0.0.1"
EVENTS = 101
FRAMES = 50
ROUND_TRIP = {
    PCMU: lambda pcm: mulaw_decode(mulaw_encode(pcm)),
    PCMA: lambda pcm: alaw_decode(alaw_encode(pcm)),
}


def tone(frames: int, hz: float = 440.0) -> np.ndarray:
    t = np.arange(frames * 160) / 8000
    return np.round(0.3 * 32767 * np.sin(2 * np.pi * hz * t)).astype(np.int16)


async def take(queue: asyncio.Queue, n: int) -> list:
    return [await asyncio.wait_for(queue.get(), 10) for _ in range(n)]


async def settle(until, timeout_s: float = 10.0) -> None:
    """Let the loop read what was sent, until ``until()`` holds."""
    for _ in range(int(timeout_s / 0.002)):
        if until():
            return
        await asyncio.sleep(0.002)
    raise AssertionError("the session did not read what was sent")


def raw_socket() -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind((HOST, 0))
    sock.settimeout(10)
    return sock


def header(
    sequence: int = 1, timestamp: int = 1000, *, pt: int = PCMU, marker: bool = False
) -> bytes:
    return struct.pack("!BBHII", 0x80, (0x80 if marker else 0) | pt, sequence, timestamp, 7)


@pytest.mark.parametrize("payload_type", [PCMU, PCMA])
async def test_two_sessions_exchange_a_tone_as_rtp_says(payload_type):
    with RtpSession() as alice, RtpSession() as bob:
        alice.connect(HOST, bob.local_port, payload_type)
        bob.connect(HOST, alice.local_port, payload_type)
        sent = tone(FRAMES)
        frames = sent.reshape(FRAMES, 160)
        sent_ns = []
        for k, frame in enumerate(frames):
            if k == 30:
                await asyncio.sleep(0.1)  # a silence in which nothing is sent
            sent_ns.append(alice.send_frame(frame, talkspurt_start=k == 30))
        bob.send_frame(frames[0])
        heard: list[RtpPacket] = await take(bob.packets, FRAMES)
        back: list[RtpPacket] = await take(alice.packets, 1)

    assert [p.sequence for p in heard] == [(heard[0].sequence + k) % 65536 for k in range(FRAMES)]
    assert [p.marker for p in heard] == [k in (0, 30) for k in range(FRAMES)]
    steps = [(b.timestamp - a.timestamp) % (1 << 32) for a, b in itertools.pairwise(heard)]
    assert steps[:29] == [160] * 29 and steps[30:] == [160] * 19
    # the silence moved the timestamp by the frames between the two sends, rounded
    jump = steps[29]
    assert jump % 160 == 0 and jump >= 5 * 160
    assert jump * 1_000_000_000 // 8000 <= sent_ns[30] - sent_ns[29] + 10_000_000
    assert np.array_equal(np.concatenate([p.pcm for p in heard]), ROUND_TRIP[payload_type](sent))
    arrivals = [p.arrival_ns for p in heard]
    assert arrivals == sorted(arrivals)
    assert all(a >= s for a, s in zip(arrivals, sent_ns, strict=True))
    assert len({p.ssrc for p in heard}) == 1 and back[0].ssrc != heard[0].ssrc
    assert back[0].marker and np.array_equal(back[0].pcm, ROUND_TRIP[payload_type](frames[0]))
    assert alice.dropped == bob.dropped == 0


async def test_a_digit_is_sent_as_rfc_4733_events_and_audio_waits_for_it():
    far = raw_socket()
    with far, RtpSession() as phone:
        phone.connect(HOST, far.getsockname()[1], PCMA, EVENTS)
        phone.send_frame(tone(1))
        pressed_ns = time.perf_counter_ns()
        pressing = asyncio.ensure_future(phone.send_dtmf("#", duration_ms=60))
        await asyncio.sleep(0)  # the digit's first packet is due in 20 ms
        phone.send_frame(tone(1))  # while the key is held: not sent
        released_ns = await pressing
        phone.send_frame(tone(1))
        packets = [far.recv(2048) for _ in range(7)]
        far.settimeout(0.05)
        with pytest.raises(TimeoutError):
            far.recv(2048)
    fields = [struct.unpack("!BBHII", p[:12]) + struct.unpack("!BBH", p[12:16]) for p in packets]
    first, *events, after = fields
    assert [f[2] for f in fields] == [(first[2] + k) % 65536 for k in range(7)]
    assert [f[1] for f in events] == [0x80 | EVENTS] + [EVENTS] * 4  # marked first
    assert {f[3] for f in events} == {(first[3] + 160) % (1 << 32)}  # the digit's start
    assert {(f[5], f[6] & 0x3F) for f in events} == {(11, 10)}  # '#', volume 10
    assert [(f[6] >> 7, f[7]) for f in events] == [(0, 160), (0, 320), (1, 480), (1, 480), (1, 480)]
    assert all(len(p) == 16 for p in packets[1:-1])
    # the next frame follows the frames the digit took, its three end packets included
    assert after[1] == PCMA and after[3] == (first[3] + 160 + 5 * 160) % (1 << 32)
    assert released_ns >= pressed_ns + 60_000_000  # paced: the end is due after 60 ms


async def test_a_session_refuses_what_it_cannot_send():
    with RtpSession() as phone:
        with pytest.raises(RuntimeError, match="not connected"):
            phone.send_frame(tone(1))
        with pytest.raises(ValueError, match="not G\\.711"):
            phone.connect(HOST, 5004, 3)
        phone.connect(HOST, 5004, PCMU)
        with pytest.raises(RuntimeError, match="no telephone events"):
            await phone.send_dtmf("1")
        phone.connect(HOST, 5004, PCMU, EVENTS)
        with pytest.raises(ValueError, match="not a DTMF digit"):
            await phone.send_dtmf("E")
        with pytest.raises(ValueError, match="20 ms to 8 s"):
            await phone.send_dtmf("1", duration_ms=10)
        phone.close()
        with pytest.raises(RuntimeError, match="closed"):
            phone.send_frame(tone(1))


async def test_each_side_hears_the_others_digits_once_each_start_and_end():
    with RtpSession() as caller, RtpSession() as agent:
        caller.connect(HOST, agent.local_port, PCMU, EVENTS)
        agent.connect(HOST, caller.local_port, PCMU, EVENTS)
        await caller.send_dtmf("7", duration_ms=40)
        await agent.send_dtmf("*", duration_ms=20)  # one frame: every packet an end
        for side, other in ((caller, agent), (agent, caller)):
            side.send_frame(tone(1))  # read after every repeat before it
            await take(other.packets, 1)
        assert agent.digits.qsize() == 2 and caller.digits.qsize() == 1
        heard, back = await take(agent.digits, 2), await take(caller.digits, 1)
        assert agent.dropped == caller.dropped == 0
    assert [(e.digit, e.end, e.duration_ms) for e in heard] == [("7", False, 20), ("7", True, 40)]
    assert [(e.digit, e.end, e.duration_ms) for e in back] == [("*", True, 20)]
    assert heard[0].timestamp == heard[1].timestamp
    assert isinstance(heard[0], DtmfEvent) and heard[1].arrival_ns > heard[0].arrival_ns


async def test_csrcs_extensions_and_padding_are_read_past_and_broken_packets_dropped():
    far = raw_socket()
    with far, RtpSession() as phone:
        phone.connect(HOST, far.getsockname()[1], PCMU, EVENTS)
        to = (HOST, phone.local_port)
        audio = mulaw_encode(tone(1))
        first = struct.pack("!BBHII", 0x80 | 0x20 | 0x10 | 2, 0x80 | PCMU, 9, 1600, 7)
        good = first + bytes(8) + b"\xbe\xde\x00\x01" + bytes(4) + audio + b"\x00\x00\x03"
        broken = [
            b"\x80",  # shorter than a header
            bytes([0x40]) + header()[1:] + audio,  # version 1
            header(pt=PCMA) + audio,  # not negotiated
            header(pt=72 | 0x80) + bytes(20),  # RTCP on the same port
            bytes([0x8F]) + header()[1:] + bytes(40),  # 15 CSRCs in 40 bytes
            bytes([0x90]) + header()[1:] + b"\x00\x00\x00\x09" + bytes(8),  # extension too long
            bytes([0xA0]) + header()[1:] + audio[:-1] + b"\x00",  # padding of 0
            bytes([0xA0]) + header()[1:] + b"\x01\xff",  # padding past the header
            header(),  # no audio
            header() + bytes(2000),  # larger than any packet read
            header(pt=EVENTS) + b"\x05\x8a",  # an event cut short
            header(pt=EVENTS) + b"\x10\x8a\x00\xa0",  # flash: not a digit
        ]
        for datagram in [*broken, good]:
            far.sendto(datagram, to)
        heard = await take(phone.packets, 1)
        await settle(lambda: phone.dropped == len(broken))
    assert (heard[0].sequence, heard[0].timestamp, heard[0].marker) == (9, 1600, True)
    assert np.array_equal(heard[0].pcm, mulaw_decode(audio))
    assert phone.digits.empty()


async def test_a_session_survives_a_thousand_datagrams_of_garbage():
    rng = np.random.default_rng(4733)
    valid = header(3, 480) + mulaw_encode(tone(1))
    event = header(4, 480, pt=EVENTS) + b"\x03\x8a\x01\x40"
    errors: list[dict] = []
    loop = asyncio.get_running_loop()
    loop.set_exception_handler(lambda _loop, context: errors.append(context))
    far = raw_socket()
    try:
        with far, RtpSession() as phone:
            phone.connect(HOST, far.getsockname()[1], PCMU, EVENTS)
            to = (HOST, phone.local_port)
            for batch in range(20):
                for _ in range(50):
                    far.sendto(garbage(rng, valid, event), to)
                sent = (batch + 1) * 50
                await settle(lambda n=sent: phone.received == n)
            handed_on = phone.packets.qsize() + phone.digits.qsize()
            assert phone.overflowed == 0 and phone.dropped + handed_on <= 1000
            assert phone.dropped > 500 and handed_on > 50  # most of it is no packet at all
            while not phone.packets.empty():
                phone.packets.get_nowait()
            far.sendto(header(60_000, 96_000, marker=True) + mulaw_encode(tone(1)), to)
            [after] = await take(phone.packets, 1)
            alive = time.perf_counter_ns()
    finally:
        loop.set_exception_handler(None)
    assert errors == []
    assert (after.sequence, after.timestamp, after.marker) == (60_000, 96_000, True)
    assert np.array_equal(after.pcm, mulaw_decode(mulaw_encode(tone(1))))
    assert after.arrival_ns <= alive


def garbage(rng: np.random.Generator, valid: bytes, event: bytes) -> bytes:
    """Random bytes of any length up to past ``MAX_DATAGRAM``, a good packet cut short or grown,
    or one with its first bytes scrambled."""
    kind = int(rng.integers(5))
    if kind == 0:
        return rng.bytes(int(rng.integers(0, 3000)))
    if kind == 1:
        source = valid if rng.random() < 0.5 else event
        return source[: int(rng.integers(0, len(source)))]
    if kind == 2:
        return valid + rng.bytes(int(rng.integers(1, 3000)))
    source = bytearray(valid if kind == 3 else event)
    source[0] = 0x80 | int(rng.integers(0, 64))  # version 2, any padding, extension, CSRCs
    source[1] = int(rng.choice([0, 0x80, EVENTS, 0x80 | EVENTS, int(rng.integers(256))]))
    source[-1] = int(rng.integers(256))
    return bytes(source)
