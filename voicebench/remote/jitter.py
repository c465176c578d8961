"""A phone's playout buffer: when each packet of the far end's audio plays.

A fixed buffer ``depth_ms`` deep (``DEPTH_MS``). The first packet of a talkspurt plays
``depth_ms`` after it arrived, and every later packet of the talkspurt at that moment plus the
distance of its timestamp from the first packet's: audio plays at the pace it was taken,
whatever the network's jitter, as long as no packet comes later than the depth allows. A
talkspurt starts with the first packet, with a new stream (SSRC), with a marker bit, and with
a packet that follows the last one's sequence number while its timestamp jumps past the end
of the last one's audio (a sender that sends nothing while it is silent, RFC 3550 5.1). (It
starts no earlier than the audio before it ends: a talkspurt marked without a pause does not
play over the one before.) Only a packet newer than all before it starts one, so a talkspurt's
first packet that arrives after its second plays in its place.

A packet that arrives after its time is late: it plays on arrival, so the caller hears a gap
before it (which the loudspeaker's stall rule sees), and is counted (``late``). A packet whose
sequence number was seen already is a duplicate: dropped and counted (``duplicates``). Packets
that arrive out of order, each in its time, play in timestamp order.

Nothing here reads a clock or a socket: time comes in with the packets (``arrival_ns``), and
``pop(now_ns)`` hands over what plays by ``now_ns``, in order, as ``(pcm, play_ns)`` pairs for
the loudspeaker; ``next_ns`` is when the next one plays.
"""

from __future__ import annotations

import heapq

import numpy as np

from voicebench.agent.realtime import NS_PER_S
from voicebench.remote.rtp import RtpPacket
from voicebench.scenarios.signal import PHONE_RATE

DEPTH_MS = 40
"""Two 20 ms packets. Every millisecond held is added to the reply's first audio as the caller
hears it, so a phone holds little, a fixed few tens of milliseconds. Two packets take a
loopback or LAN call's jitter (a fraction of a millisecond to a few) with room for a packet
that comes a whole frame late; what comes later still is counted (``late``) and heard as a gap,
as it is on a phone."""
_SEEN = 1024
"""Sequence numbers kept to tell duplicates (20 s of 20 ms packets)."""
_WRAP_SEQUENCE = 1 << 16
_WRAP_TIMESTAMP = 1 << 32


def _signed(difference: int, wrap: int) -> int:
    """``difference`` of two wrapping counters, as the shorter way round (negative: before)."""
    return (difference + wrap // 2) % wrap - wrap // 2


class JitterBuffer:
    """``push`` each packet as it arrives; ``pop`` what plays (see the module docstring)."""

    def __init__(self, depth_ms: int = DEPTH_MS, rate: int = PHONE_RATE) -> None:
        self.depth_ns = depth_ms * 1_000_000
        self.rate = rate
        self.late = 0
        """Packets that arrived after their time (played on arrival)."""
        self.duplicates = 0
        """Packets received again (dropped)."""
        self._held: list[tuple[int, int, np.ndarray]] = []
        """A heap of ``(play_ns, order of arrival, pcm)``."""
        self._pushed = 0
        self._seen: dict[int, None] = {}
        self._ssrc: int | None = None
        self._newest: RtpPacket | None = None
        """The packet with the highest sequence number of the stream."""
        self._base = (0, 0)
        """The talkspurt's start: when its first packet plays, and that packet's timestamp."""
        self._end_ns = 0
        """When the audio placed so far ends."""

    def push(self, packet: RtpPacket) -> None:
        """Place ``packet``, which has just arrived (its ``arrival_ns``)."""
        if packet.ssrc != self._ssrc:
            self._ssrc, self._newest = packet.ssrc, None
            self._seen.clear()
        if packet.sequence in self._seen:
            self.duplicates += 1
            return
        self._seen[packet.sequence] = None
        if len(self._seen) > _SEEN:
            del self._seen[next(iter(self._seen))]
        newest = self._newest
        if newest is None or _signed(packet.sequence - newest.sequence, _WRAP_SEQUENCE) > 0:
            if newest is None or packet.marker or _resumes(packet, newest):
                start_ns = max(packet.arrival_ns + self.depth_ns, self._end_ns)
                self._base = (start_ns, packet.timestamp)
            self._newest = packet
        offset = _signed(packet.timestamp - self._base[1], _WRAP_TIMESTAMP)
        play_ns = self._base[0] + offset * NS_PER_S // self.rate
        if play_ns < packet.arrival_ns:
            self.late += 1
            play_ns = packet.arrival_ns
        self._end_ns = max(self._end_ns, play_ns + packet.pcm.size * NS_PER_S // self.rate)
        heapq.heappush(self._held, (play_ns, self._pushed, packet.pcm))
        self._pushed += 1

    @property
    def next_ns(self) -> int | None:
        """When the next packet held plays; None when none is held."""
        return self._held[0][0] if self._held else None

    def pop(self, now_ns: int) -> list[tuple[np.ndarray, int]]:
        """What plays by ``now_ns``, in the order it plays: ``(pcm, play_ns)`` each."""
        out = []
        while self._held and self._held[0][0] <= now_ns:
            play_ns, _order, pcm = heapq.heappop(self._held)
            out.append((pcm, play_ns))
        return out

    def drain(self) -> list[tuple[np.ndarray, int]]:
        """Everything held, in the order it plays (at the end of the call)."""
        return self.pop(max((play_ns for play_ns, _order, _pcm in self._held), default=0))


def _resumes(packet: RtpPacket, newest: RtpPacket) -> bool:
    """Whether ``packet`` follows ``newest`` after a silence in which nothing was sent."""
    follows = _signed(packet.sequence - newest.sequence, _WRAP_SEQUENCE) == 1
    return follows and _signed(packet.timestamp - newest.timestamp, _WRAP_TIMESTAMP) > (
        newest.pcm.size
    )
