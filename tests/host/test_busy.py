"""The one rule for a busy machine, and two runs' hosts side by side."""

from __future__ import annotations

import pytest
from hosts import host

from voicebench.host import BUSY_LOAD_PER_CPU, BUSY_STEAL_PCT, Busy, busy, contrast


@pytest.mark.parametrize(
    ("steal", "load", "found"),
    [
        (10.0, 8.0, ()),  # at the bounds: not busy
        (10.5, 8.0, (("steal_pct", 10.5),)),
        (0.0, 8.8, (("load_per_cpu", 1.1),)),
        (30.0, 16.0, (("steal_pct", 30.0), ("load_per_cpu", 2.0))),
        (None, None, ()),  # a system that counts neither
    ],
)
def test_a_host_is_busy_above_either_bound(steal, load, found):
    got = busy([host(steal_pct=steal, load_mean=load, cpu_count=8)])
    assert [(b.figure, b.value) for b in got] == list(found)
    bounds = {"steal_pct": BUSY_STEAL_PCT, "load_per_cpu": BUSY_LOAD_PER_CPU}
    assert all(b.bound == bounds[b.figure] for b in got)


def test_a_resumed_run_is_busy_when_any_sitting_was():
    sittings = [host(steal_pct=2.0), host(steal_pct=40.0), host(steal_pct=12.0)]
    assert busy(sittings) == (Busy(figure="steal_pct", value=40.0, bound=BUSY_STEAL_PCT),)


def test_a_run_without_a_host_is_not_called_busy():
    assert busy([]) == ()


def test_contrast_names_what_differs_and_who_was_busy():
    same = contrast([host()], [host()])
    assert same.differs == () and not same.other_machine and not same.unknown
    other = contrast([host()], [host(cpu_model="Other CPU", cpu_count=2, steal_pct=50.0)])
    assert other.differs == ("cpu_model", "cpu_count") and other.other_machine
    assert other.base_busy == () and [b.figure for b in other.new_busy] == ["steal_pct"]
    software = contrast([host()], [host(pipecat="1.15.0")])
    assert software.differs == ("pipecat",) and not software.other_machine
    old = contrast([], [host()])
    assert old.unknown and old.differs == () and not old.other_machine
