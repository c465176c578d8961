"""Kernel stamps onto the ``perf_counter_ns`` clock: a pause between reading the two clocks
must not move the stamps (on a shared machine the process can be paused for tens of ms)."""

from __future__ import annotations

import socket

import pytest

from voicebench import _stamps

MS = 1_000_000
REAL_AT_ZERO = 1_700_000_000 * 1_000 * MS
"""The wall clock when ``perf_counter_ns`` reads 0, in the fake clocks below."""


class PausingClocks:
    """Two clocks that advance together, one tick per read; the process is paused for
    ``pause_ns`` after the wall clock's first ``pauses`` reads."""

    def __init__(self, start_ns: int, pause_ns: int, pauses: int) -> None:
        self.now, self.pause_ns, self.pauses = start_ns, pause_ns, pauses

    def perf_counter_ns(self) -> int:
        self.now += 1_000
        return self.now

    def time_ns(self) -> int:
        self.now += 1_000
        real = REAL_AT_ZERO + self.now
        if self.pauses > 0:
            self.pauses -= 1
            self.now += self.pause_ns
        return real


def ancillary(real_ns: int) -> list[tuple[int, int, bytes]]:
    data = _stamps._TIMESPEC.pack(real_ns // 1_000_000_000, real_ns % 1_000_000_000)
    return [(socket.SOL_SOCKET, _stamps._SO_TIMESTAMPNS, data)]


@pytest.mark.parametrize("pauses", [0, 1, _stamps._CLOCKS_TRIES - 1])
def test_a_pause_between_the_two_clocks_does_not_move_the_stamp(monkeypatch, pauses):
    arrived = 5_000 * MS  # on the perf_counter_ns clock
    clocks = PausingClocks(start_ns=arrived + 30 * MS, pause_ns=25 * MS, pauses=pauses)
    monkeypatch.setattr(_stamps.time, "perf_counter_ns", clocks.perf_counter_ns)
    monkeypatch.setattr(_stamps.time, "time_ns", clocks.time_ns)

    stamp = _stamps._arrival(ancillary(REAL_AT_ZERO + arrived))

    # within the few microseconds the fake clocks tick per read, not 25 ms off
    assert abs(stamp - arrived) <= 10_000


def test_stamps_in_arrival_order_stay_in_order_when_one_conversion_is_paused(monkeypatch):
    arrivals = [5_000 * MS + k * 20 * MS for k in range(3)]
    stamps = []
    for k, arrived in enumerate(arrivals):
        clocks = PausingClocks(start_ns=arrivals[-1] + MS, pause_ns=25 * MS, pauses=int(k == 1))
        monkeypatch.setattr(_stamps.time, "perf_counter_ns", clocks.perf_counter_ns)
        monkeypatch.setattr(_stamps.time, "time_ns", clocks.time_ns)
        stamps.append(_stamps._arrival(ancillary(REAL_AT_ZERO + arrived)))

    assert stamps == sorted(stamps)
    assert [round((s - a) / MS) for s, a in zip(stamps, arrivals, strict=True)] == [0, 0, 0]
