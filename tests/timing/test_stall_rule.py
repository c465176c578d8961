"""The stall rule: breaks in a reply's playout after its first audio, less the jitter allowance."""

from __future__ import annotations

import numpy as np
import pytest

from voicebench.timing.stalls import JITTER_ALLOWANCE_MS, playback_of, sample_at

RATE = 16_000
MS = 1_000_000  # ns
LOUD = 3000


def _audio(*parts: tuple[str, int]) -> np.ndarray:
    """PCM of ``("loud" | "quiet", ms)`` parts, in order."""
    return np.concatenate(
        [np.full(ms * RATE // 1000, LOUD if kind == "loud" else 0, np.int16) for kind, ms in parts]
    )


def test_a_hold_inside_the_reply_is_one_stall_of_its_length():
    audio = _audio(("quiet", 100), ("loud", 1000), ("loud", 1000))
    # stretches: the first 1.1 s from t=0, the rest 300 ms after it ended
    placed = ((0, 0), (1100 * 16, 1400 * MS))
    playback = playback_of(placed, audio, RATE)
    assert playback is not None
    (stall,) = playback.stalls
    assert stall.ms == 300
    assert stall.at_ms == 1000  # the playout ran dry 1 s after the first audible sample
    assert stall.audio_ms == 1100  # where the WAV, which closes the break, has it
    assert playback.audio_ms == 2000
    assert playback.stalled_share == pytest.approx(300 / 2300)
    assert (playback.stall_count, playback.longest_stall_ms) == (1, 300)


def test_jitter_is_bridged_until_the_buffer_runs_dry_and_fills_again():
    audio = _audio(("loud", 1000))
    # breaks of 15 ms (bridged), 10 ms (5 left in the buffer: heard 10 - 5 + 20), 15 (bridged)
    ends = (200, 400, 600)
    placed = [(0, 0)]
    late = 0
    for at, gap in zip(ends, (15, 10, 15), strict=True):
        late += gap
        placed.append((at * 16, (at + late) * MS))
    playback = playback_of(tuple(placed), audio, RATE)
    assert playback is not None
    assert [(s.at_ms, s.ms) for s in playback.stalls] == [(415, 25)]


def test_breaks_before_the_first_audio_or_after_the_last_and_meant_pauses_are_not_stalls():
    # silence sent before speaking, a 700 ms pause sent as silence, silence sent after
    audio = _audio(("quiet", 200), ("loud", 500), ("quiet", 700), ("loud", 500), ("quiet", 200))
    placed = ((0, 0), (100 * 16, 400 * MS), (1900 * 16, 2200 * MS))
    playback = playback_of(placed, audio, RATE)
    assert playback is not None
    assert playback.stalls == ()
    assert playback.audio_ms == 1700
    assert playback.stalled_share == 0


def test_a_reply_sent_at_four_fifths_of_real_time_stalls_a_quarter_of_its_length_less_the_buffer():
    chunk = 20 * 16  # samples in 20 ms
    audio = _audio(("loud", 2000))
    placed = tuple((k * chunk, k * 25 * MS) for k in range(100))  # a chunk every 25 ms
    playback = playback_of(placed, audio, RATE)
    assert playback is not None
    assert playback.stalled_ms == pytest.approx(99 * 5 - JITTER_ALLOWANCE_MS)
    # every fifth 5 ms break runs the buffer dry, and it fills again: 19 stalls of 25 ms
    assert (playback.stall_count, playback.longest_stall_ms) == (19, 25)


def test_nothing_audible_has_no_playback():
    assert playback_of(((0, 0),), _audio(("quiet", 100)), RATE) is None
    assert playback_of((), _audio(("loud", 100)), RATE) is None


def test_a_sample_is_found_on_the_clock_and_a_break_points_at_what_plays_next():
    placed = ((0, 0), (16_000, 1_300 * MS))  # 1 s, a 300 ms break, the rest
    assert sample_at(placed, 500 * MS, RATE) == 8_000
    assert sample_at(placed, 1_100 * MS, RATE) == 16_000  # in the break
    assert sample_at(placed, 1_400 * MS, RATE) == 17_600


def test_the_talk_spoken_over_before_the_reply_is_not_the_replys():
    # the end of the agent's last talk, then (400 ms on) its new reply, as a barge-in turn keeps
    audio = _audio(("loud", 300), ("loud", 1000))
    placed = ((0, 0), (300 * 16, 700 * MS))
    whole = playback_of(placed, audio, RATE)
    assert whole is not None and whole.stall_count == 1  # read from the old talk on
    reply = playback_of(placed, audio, RATE, start_ns=700 * MS)
    assert reply is not None
    assert (reply.stalls, reply.audio_ms) == ((), 1000)
