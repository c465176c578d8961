"""The playout buffer, on made-up arrival times: when each packet plays, to the nanosecond."""

from __future__ import annotations

import numpy as np

from voicebench.remote.jitter import DEPTH_MS, JitterBuffer
from voicebench.remote.rtp import RtpPacket

MS = 1_000_000
FRAME = 160


def packet(
    sequence: int, frame: int, arrival_ms: float, *, marker: bool = False, ssrc: int = 1
) -> RtpPacket:
    """Packet ``sequence`` carrying frame ``frame`` (its timestamp in 20 ms frames), its
    samples all equal to ``sequence`` so the output tells which played."""
    sequence %= 1 << 16
    pcm = np.full(FRAME, sequence % 30_000, dtype=np.int16)
    timestamp = (frame * FRAME) % (1 << 32)
    return RtpPacket(sequence, timestamp, marker, round(arrival_ms * MS), pcm, ssrc)


def played(buffer: JitterBuffer) -> list[tuple[int, float]]:
    """What the buffer hands over: each packet's sequence (from its samples) and play time."""
    return [(int(pcm[0]), play_ns / MS) for pcm, play_ns in buffer.drain()]


def test_in_order_packets_play_at_the_pace_they_were_taken_across_both_wraps():
    assert DEPTH_MS == 40
    buffer = JitterBuffer()
    first = (1 << 32) // FRAME - 2  # the timestamp wraps after two frames
    arrivals = [3.0, 21.0, 47.0, 60.5, 79.0]  # up to 7 ms of jitter
    for k, arrival in enumerate(arrivals):
        buffer.push(packet(65_534 + k, first + k, arrival, marker=k == 0))
    assert played(buffer) == [(5534, 43.0), (5535, 63.0), (0, 83.0), (1, 103.0), (2, 123.0)]
    assert (buffer.late, buffer.duplicates) == (0, 0)


def test_a_late_packet_plays_on_arrival_and_the_rest_keep_their_time():
    buffer = JitterBuffer()
    for sequence, arrival in [(0, 0.0), (1, 20.0), (3, 70.0), (2, 85.0), (4, 81.0)]:
        buffer.push(packet(sequence, sequence, arrival))
    # packet 2's time was 80 ms; it came at 85
    assert played(buffer) == [(0, 40.0), (1, 60.0), (2, 85.0), (3, 100.0), (4, 120.0)]
    assert buffer.late == 1


def test_a_duplicate_is_dropped_before_or_after_it_played():
    buffer = JitterBuffer()
    buffer.push(packet(0, 0, 0.0))
    buffer.push(packet(1, 1, 20.0))
    buffer.push(packet(1, 1, 21.0))
    assert [(int(pcm[0]), t / MS) for pcm, t in buffer.pop(60 * MS)] == [(0, 40.0), (1, 60.0)]
    assert buffer.next_ns is None
    buffer.push(packet(0, 0, 62.0))
    buffer.push(packet(2, 2, 63.0))
    assert played(buffer) == [(2, 80.0)]
    assert (buffer.duplicates, buffer.late) == (2, 0)


def test_reordered_packets_within_the_depth_play_in_timestamp_order():
    buffer = JitterBuffer()
    for sequence, arrival in [(0, 0.0), (2, 25.0), (1, 30.0), (4, 62.0), (3, 66.0)]:
        buffer.push(packet(sequence, sequence, arrival))
    assert buffer.next_ns == 40 * MS
    assert [(int(pcm[0]), t / MS) for pcm, t in buffer.pop(70 * MS)] == [(0, 40.0), (1, 60.0)]
    assert buffer.next_ns == 80 * MS
    assert played(buffer) == [(2, 80.0), (3, 100.0), (4, 120.0)]
    assert buffer.late == 0


def test_a_talkspurts_first_packet_overtaken_by_its_second_plays_in_its_place():
    buffer = JitterBuffer()
    buffer.push(packet(1, 1, 10.0))
    buffer.push(packet(0, 0, 25.0, marker=True))  # older: it starts nothing
    assert played(buffer) == [(0, 30.0), (1, 50.0)]


def test_a_timestamp_jump_after_a_silence_starts_a_talkspurt_a_lost_packet_does_not():
    buffer = JitterBuffer()
    for sequence, arrival in [(0, 0.0), (1, 20.0), (2, 40.0)]:
        buffer.push(packet(sequence, sequence, arrival))
    # the sender was silent for 1 s (50 frames, none sent): the next packet comes 7 ms later
    # than its talkspurt's pace and plays depth after it arrives, not on the old pace
    buffer.push(packet(3, 53, 1067.0))
    buffer.push(packet(4, 54, 1080.0))
    # packet 5 lost: 6 keeps the talkspurt's pace though it is 7 ms later than it
    buffer.push(packet(6, 56, 1127.0))
    assert played(buffer) == [
        (0, 40.0),
        (1, 60.0),
        (2, 80.0),
        (3, 1107.0),
        (4, 1127.0),
        (6, 1167.0),
    ]
    assert buffer.late == 0


def test_a_marked_talkspurt_starts_depth_after_it_arrives_but_not_over_the_audio_before():
    buffer = JitterBuffer()
    buffer.push(packet(0, 0, 0.0, marker=True))
    buffer.push(packet(1, 1, 20.0))
    # marked, its timestamp running on: starts 40 ms after it came, 500 ms after the last
    buffer.push(packet(2, 2, 500.0, marker=True))
    # marked, arriving early: the audio before it (until 560 ms) plays out first
    buffer.push(packet(3, 3, 505.0, marker=True))
    assert played(buffer) == [(0, 40.0), (1, 60.0), (2, 540.0), (3, 560.0)]


def test_a_new_stream_starts_afresh():
    buffer = JitterBuffer(depth_ms=20)
    buffer.push(packet(7, 7, 0.0))
    buffer.push(packet(7, 900, 100.0, ssrc=2))  # same sequence number, another stream
    buffer.push(packet(8, 901, 125.0, ssrc=2))
    assert played(buffer) == [(7, 20.0), (7, 120.0), (8, 140.0)]
    assert (buffer.duplicates, buffer.late) == (0, 0)
