"""The media of a phone call: RTP (RFC 3550) over UDP, G.711 audio both ways (PCMU, payload
type 0, and PCMA, 8, both at 8 kHz) and DTMF digits as RFC 4733 telephone events.

An ``RtpSession`` is one UDP socket, read by the running event loop (``add_reader``) one
datagram at a time with ``recvmsg``, each with the kernel's stamp of its arrival on the
``perf_counter_ns`` clock (``voicebench._stamps``), however late the loop gets to it.

A packet (RFC 3550 5.1), its fields big-endian::

    byte 0      version (2 bits, always 2), padding (1), extension (1), CSRC count (4)
    byte 1      marker (1), payload type (7)
    bytes 2-3   sequence number, one more each packet (it wraps)
    bytes 4-7   timestamp of the payload's first sample, in samples (it wraps)
    bytes 8-11  SSRC, the stream's random id
    then        the CSRCs, 4 bytes each; with the extension bit, a 4-byte extension header
                (profile, then its length in 4-byte words) and its words; the payload; with
                the padding bit, padding whose last byte counts it (itself included)

Sending. The caller paces; the session sends at once. ``send_frame`` sends one packet of
one frame (20 ms, 160 samples), the sequence starting at a random number and the timestamp at
a random sample (RFC 3550), moving by the frame's samples. The marker bit is set on the first
packet of a talkspurt (RFC 3551 4.1): the session's first, and the first after a silence the
caller names (``talkspurt_start``), whose timestamp moves past the silence as well (the time
since the last packet was sent, in whole frames), so the far end hears the pause. Nothing is
sent while the far end holds the call (``held``); the first packet after it is a talkspurt's.

A digit (``send_dtmf``) is one telephone event: every packet of it carries the timestamp of
its start, a payload of event code (``DIGITS``: 0-9, * 10, # 11, A-D 12-15), end bit,
reserved bit, volume (6 bits, ``DTMF_VOLUME`` dB below 1 mW) and duration so far (16 bits,
in samples), one a frame once that frame's 20 ms have passed, the first with the marker bit,
the last with the end bit, sent ``END_REPEATS`` times in all, a frame apart. Audio is not sent
while a digit is (a phone mutes its microphone while a key is held).

Receiving. A datagram that is not a whole RTP packet (too short, another version, its CSRCs,
extension or padding running past its end, larger than ``MAX_DATAGRAM``), carries a payload
type not negotiated (RTCP on the same port included) or an event other than a digit is
dropped and counted (``dropped``). Audio is decoded to 16-bit PCM and handed on as an
``RtpPacket``; a digit is handed on as a ``DtmfEvent`` when it starts and once more when it
ends (whichever of its packets arrive, each of the two once).
"""

from __future__ import annotations

import asyncio
import ipaddress
import secrets
import socket
import struct
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple, TypeVar

import numpy as np

from voicebench import _stamps
from voicebench.agent.realtime import FRAME_MS, FRAME_NS, NS_PER_S
from voicebench.scenarios.signal import (
    PHONE_RATE,
    alaw_decode,
    alaw_encode,
    mulaw_decode,
    mulaw_encode,
)

PCMU = 0
PCMA = 8
CODECS: dict[int, tuple[Callable[[np.ndarray], bytes], Callable[[bytes], np.ndarray]]] = {
    PCMU: (mulaw_encode, mulaw_decode),
    PCMA: (alaw_encode, alaw_decode),
}
"""Each G.711 payload type's encoder and decoder."""
FRAME_SAMPLES = PHONE_RATE * FRAME_MS // 1000
"""Samples in a 20 ms frame: 160."""
DIGITS = "0123456789*#ABCD"
"""The DTMF digits, each at its RFC 4733 event code."""
DTMF_VOLUME = 10
"""A digit's power as its packets give it: 10 dB below 1 mW (-10 dBm0)."""
END_REPEATS = 3
"""How often a digit's last packet is sent: so that its end is heard if one is lost."""
MAX_DATAGRAM = 1500
"""The largest datagram read (Ethernet's MTU): far past a 20 ms G.711 packet (172 bytes) or a
60 ms one (492)."""
MAX_QUEUED = 1000
"""Packets (20 s of audio) or digits waiting in a queue for a reader that does not come."""
_MAX_READS = 64
"""Datagrams read at one wake of the loop, so that a flood does not hold it."""
_HEADER = struct.Struct("!BBHII")
_EVENT = struct.Struct("!BBH")
_END = 0x80


@dataclass(frozen=True)
class RtpPacket:
    """A packet of the far end's audio, as it arrived."""

    sequence: int
    """RTP sequence number (16 bits: it wraps)."""
    timestamp: int
    """When its first sample was taken, in samples (32 bits: it wraps)."""
    marker: bool
    """The marker bit: the first packet of a talkspurt."""
    arrival_ns: int
    """When it reached the socket (``perf_counter_ns``, the kernel's stamp where there is one)."""
    pcm: np.ndarray
    """Its audio, decoded: 16-bit mono PCM at 8 kHz."""
    ssrc: int = 0
    """The id of the stream it belongs to (a new one is a new stream)."""


@dataclass(frozen=True)
class DtmfEvent:
    """A digit the far end sent: heard when it starts, and once more when it ends."""

    digit: str
    """One of ``DIGITS``."""
    end: bool
    """Whether the digit has ended (its packet had the end bit)."""
    timestamp: int
    """The digit's start, in samples of the RTP clock: what tells one press from the next."""
    duration_ms: int
    """How long it had lasted by this packet (all of it, when ``end``)."""
    arrival_ns: int
    """When the packet reporting it reached the socket (``perf_counter_ns``)."""


class _Header(NamedTuple):
    marker: bool
    payload_type: int
    sequence: int
    timestamp: int
    ssrc: int
    payload: bytes


def _parse(datagram: bytes) -> _Header | None:
    """The RTP packet in ``datagram``, or None when it is not a whole one."""
    if len(datagram) < _HEADER.size:
        return None
    first, second, sequence, timestamp, ssrc = _HEADER.unpack_from(datagram)
    if first >> 6 != 2:
        return None
    start, end = _HEADER.size + 4 * (first & 0x0F), len(datagram)
    if first & 0x10:
        if start + 4 > end:
            return None
        start += 4 + 4 * int.from_bytes(datagram[start + 2 : start + 4], "big")
    if first & 0x20:
        end -= datagram[-1]
        if datagram[-1] == 0:
            return None
    if start > end:
        return None
    payload = datagram[start:end]
    return _Header(bool(second & 0x80), second & 0x7F, sequence, timestamp, ssrc, payload)


T = TypeVar("T")


class RtpSession:
    """One call's media: ``RtpSession()`` inside a running event loop, ``connect`` once the
    SDP is agreed, then ``send_frame``, ``send_dtmf``; ``close`` at the end.

    What arrives goes to ``on_packet`` and ``on_dtmf`` when given, else to the ``packets``
    and ``digits`` queues (``MAX_QUEUED`` at most each; past that it is counted, ``overflowed``).
    """

    def __init__(
        self,
        port: int = 0,
        *,
        host: str = "127.0.0.1",
        on_packet: Callable[[RtpPacket], None] | None = None,
        on_dtmf: Callable[[DtmfEvent], None] | None = None,
    ) -> None:
        self._loop = asyncio.get_running_loop()
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:
            self._sock.setblocking(False)
            self._sock.bind((host, port))
            _stamps.enable(self._sock)
        except BaseException:
            self._sock.close()
            raise
        self.local_port: int = self._sock.getsockname()[1]
        """The port the session receives on (what the SDP names)."""
        self.packets: asyncio.Queue[RtpPacket] = asyncio.Queue(MAX_QUEUED)
        self.digits: asyncio.Queue[DtmfEvent] = asyncio.Queue(MAX_QUEUED)
        self._on_packet = on_packet or self._enqueue(self.packets)
        self._on_dtmf = on_dtmf or self._enqueue(self.digits)
        self.received = 0
        """Datagrams read, whatever they were."""
        self.dropped = 0
        """Datagrams read and not handed on (see the module docstring)."""
        self.overflowed = 0
        """Packets and digits lost because their queue was full."""
        self.unsent = 0
        """Packets the socket had no room to send (lost, as a congested network loses them)."""
        self.held = False
        """Whether the far end holds the call (its SDP takes no audio): nothing is sent."""
        self._resumes = False
        self._remote: tuple[str, int] | None = None
        self._payload_type = -1
        self._event_type = -1
        self._ssrc = secrets.randbits(32)
        self._sequence = secrets.randbits(16)
        self._last = (secrets.randbits(32), 0, 0)
        """The last packet sent: its timestamp, its samples, when it was sent."""
        self._sending_digit = False
        self._heard: dict[tuple[int, int], bool] = {}
        """The digits heard lately, by stream and start: whether each has ended."""
        self._loop.add_reader(self._sock.fileno(), self._read)

    def connect(
        self, host: str, port: int, payload_type: int, telephone_event_pt: int | None = None
    ) -> None:
        """Send to ``host:port`` (an IPv4 address) in G.711 ``payload_type``, digits in
        ``telephone_event_pt``; receive those two payload types only. Called again when a
        new SDP moves the media."""
        if payload_type not in CODECS:
            raise ValueError(f"payload type {payload_type} is not G.711 (0 PCMU, 8 PCMA)")
        if telephone_event_pt is not None and not 0 <= telephone_event_pt <= 127:
            raise ValueError(f"payload type {telephone_event_pt} is not one (0-127)")
        self._remote = (str(ipaddress.IPv4Address(host)), port)
        self._payload_type = payload_type
        self._event_type = -1 if telephone_event_pt is None else telephone_event_pt

    @property
    def takes_digits(self) -> bool:
        """Whether the far end's SDP named a telephone-event payload type (``send_dtmf``)."""
        return self._event_type >= 0

    def send_frame(self, pcm: np.ndarray, *, talkspurt_start: bool = False) -> int:
        """Send one frame of 16-bit mono PCM at 8 kHz (160 samples for 20 ms) as one packet
        (none while a digit is sent); ``talkspurt_start`` after a silence in which nothing was
        sent. Returns when it was sent (``perf_counter_ns``, read as it went to the kernel)."""
        samples = np.asarray(pcm)
        if samples.ndim != 1 or not 0 < samples.size <= MAX_DATAGRAM - _HEADER.size:
            raise ValueError(f"a frame is one channel of samples, not an array of {samples.shape}")
        remote = self._connected()
        if self._sending_digit or self.held:
            self._resumes = self._resumes or self.held
            return time.perf_counter_ns()
        talkspurt_start, self._resumes = talkspurt_start or self._resumes, False
        timestamp = self._next_timestamp(skip_silence=talkspurt_start)
        marker = talkspurt_start or self._last[2] == 0  # the session's first packet
        packet = self._header(self._payload_type, marker, timestamp)
        packet += CODECS[self._payload_type][0](samples.astype(np.int16))
        now = time.perf_counter_ns()
        self._send(packet, remote)
        self._last = (timestamp, samples.size, now)
        return now

    async def send_dtmf(self, digit: str, duration_ms: int = 100) -> int:
        """Press ``digit`` (one of ``DIGITS``) for ``duration_ms`` (20 ms to 8 s): packets
        paced on the ``perf_counter_ns`` clock, each at its own deadline. Returns when its
        first end packet was sent: when the key was let go."""
        code = DIGITS.find(digit.upper()) if len(digit) == 1 else -1
        if code < 0:
            raise ValueError(f"{digit!r} is not a DTMF digit ({DIGITS})")
        total = duration_ms * PHONE_RATE // 1000
        if duration_ms < FRAME_MS or total > 0xFFFF:
            raise ValueError(f"a digit lasts 20 ms to 8 s, not {duration_ms} ms")
        remote = self._connected()
        if self._event_type < 0:
            raise RuntimeError("the far end takes no telephone events: no digit can be sent")
        if self._sending_digit:
            raise RuntimeError("a digit is being sent already")
        updates = -(-duration_ms // FRAME_MS)
        timestamp, start, released = self._next_timestamp(), time.perf_counter_ns(), 0
        self._sending_digit = True
        try:
            for k in range(updates + END_REPEATS - 1):
                delay = start + (k + 1) * FRAME_NS - time.perf_counter_ns()
                if delay > 0:
                    await asyncio.sleep(delay / NS_PER_S)
                end = _END if k >= updates - 1 else 0
                payload = _EVENT.pack(code, end | DTMF_VOLUME, min((k + 1) * FRAME_SAMPLES, total))
                sent = time.perf_counter_ns()
                self._send(self._header(self._event_type, k == 0, timestamp) + payload, remote)
                released = released or (sent if end else 0)
        finally:
            self._sending_digit = False
            # the next frame's timestamp follows the frames the digit took, repeats included
            last = (timestamp + (updates + END_REPEATS - 2) * FRAME_SAMPLES) & 0xFFFFFFFF
            self._last = (last, FRAME_SAMPLES, time.perf_counter_ns())
        return released

    def close(self) -> None:
        """Stop receiving and close the socket (again: nothing happens)."""
        if self._sock.fileno() >= 0:
            self._loop.remove_reader(self._sock.fileno())
            self._sock.close()

    def __enter__(self) -> RtpSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _connected(self) -> tuple[str, int]:
        if self._sock.fileno() < 0:
            raise RuntimeError("the RTP session is closed")
        if self._remote is None:
            raise RuntimeError("the RTP session is not connected: connect() it to the answer")
        return self._remote

    def _next_timestamp(self, *, skip_silence: bool = False) -> int:
        timestamp, samples, sent_ns = self._last
        if skip_silence and sent_ns:
            frames = (time.perf_counter_ns() - sent_ns + FRAME_NS // 2) // FRAME_NS
            samples = max(samples, frames * FRAME_SAMPLES)
        return (timestamp + samples) & 0xFFFFFFFF

    def _header(self, payload_type: int, marker: bool, timestamp: int) -> bytes:
        second = (0x80 if marker else 0) | payload_type
        header = _HEADER.pack(0x80, second, self._sequence, timestamp, self._ssrc)
        self._sequence = (self._sequence + 1) & 0xFFFF
        return header

    def _send(self, packet: bytes, remote: tuple[str, int]) -> None:
        try:
            self._sock.sendto(packet, remote)
        except (BlockingIOError, InterruptedError):
            self.unsent += 1

    def _enqueue(self, queue: asyncio.Queue[T]) -> Callable[[T], None]:
        def put(item: T) -> None:
            try:
                queue.put_nowait(item)
            except asyncio.QueueFull:
                self.overflowed += 1

        return put

    def _read(self) -> None:
        for _ in range(_MAX_READS):
            try:
                data, ancillary, flags, _address = self._sock.recvmsg(
                    MAX_DATAGRAM, _stamps._ANCILLARY
                )
            except (BlockingIOError, InterruptedError):
                return
            except OSError:
                return  # an error queued for the socket (its reader is called again)
            if flags & socket.MSG_TRUNC:
                self.received += 1
                self.dropped += 1
            else:
                self.take(data, _stamps._arrival(ancillary))

    def take(self, datagram: bytes, arrival_ns: int) -> bool:
        """Take one datagram that reached the socket at ``arrival_ns``, as each is taken: hand
        it on if it is a packet of the call's, else drop and count it; True when handed on."""
        self.received += 1
        packet = _parse(datagram) if len(datagram) <= MAX_DATAGRAM else None
        if packet is None or not self._hand_on(packet, arrival_ns):
            self.dropped += 1
            return False
        return True

    def _hand_on(self, packet: _Header, arrival_ns: int) -> bool:
        """Hand ``packet`` on; False when it is not one to hand on."""
        if packet.payload_type == self._payload_type and packet.payload:
            pcm = CODECS[packet.payload_type][1](packet.payload)
            self._on_packet(
                RtpPacket(
                    packet.sequence, packet.timestamp, packet.marker, arrival_ns, pcm, packet.ssrc
                )
            )
            return True
        if packet.payload_type != self._event_type or len(packet.payload) < _EVENT.size:
            return False
        code, flags, duration = _EVENT.unpack_from(packet.payload)
        if code >= len(DIGITS):
            return False
        key, end = (packet.ssrc, packet.timestamp), bool(flags & _END)
        if key in self._heard and (self._heard[key] or not end):
            return True  # heard already: an update or a repeat
        self._heard[key] = end
        if len(self._heard) > 16:
            del self._heard[next(iter(self._heard))]
        duration_ms = duration * 1000 // PHONE_RATE
        self._on_dtmf(DtmfEvent(DIGITS[code], end, packet.timestamp, duration_ms, arrival_ns))
        return True
