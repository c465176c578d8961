"""Reading the host: /proc/stat's CPU times, a run's readings summarised, and the sampler's
thread taking them (with a fake reader and clock: no machine is loaded)."""

from __future__ import annotations

import threading

from voicebench.host import HostSampler, Machine, Reading, summarize_readings
from voicebench.host.sampler import read_cpu_times, read_now

PROC_STAT = """cpu  4705 356 584 3699 23 23 0 120 0 0
cpu0 1393 280 234 852 12 8 0 60 0 0
intr 114930548 113199788 3 0 5 263 0 4 [... 242 more]
"""
MACHINE = Machine("Test CPU", 4, "Linux-test", "3.11.7", "0.1.0", "1.14.0")


def test_cpu_times_are_read_off_the_cpu_line():
    assert read_cpu_times(PROC_STAT) == (120, 4705 + 356 + 584 + 3699 + 23 + 23 + 0 + 120)
    assert read_cpu_times("intr 1 2 3\n") is None


def test_readings_summarise_as_means_and_maxima():
    readings = [
        Reading(1.0, 0, 1000),
        Reading(3.0, 50, 1500),  # 10% stolen in this interval
        Reading(2.0, 250, 2000),  # 40%
        Reading(None, 250, 3000),  # 0%; no load average this time
    ]
    load = summarize_readings(readings, 15.0)
    assert load.samples == 4 and load.seconds == 15.0
    assert load.load_mean == 2.0 and load.load_max == 3.0
    assert load.steal_pct == 12.5  # 250 of 2,000 ticks over the whole span
    assert load.steal_max_pct == 40.0


def test_a_system_without_the_figures_gives_none():
    load = summarize_readings([Reading(None, None, None)] * 2, 1.0)
    assert (load.load_mean, load.load_max, load.steal_pct, load.steal_max_pct) == (None,) * 4


def test_the_sampler_reads_at_start_and_stop_and_holds_the_machine():
    readings = iter([Reading(4.0, 0, 100), Reading(6.0, 30, 200)])
    times = iter([10.0, 10.0, 40.0])
    sampler = HostSampler(
        interval_s=3600, read=lambda: next(readings), clock=lambda: next(times), machine=MACHINE
    )
    with sampler:
        pass
    h = sampler.host()
    assert (h.cpu_model, h.cpu_count, h.pipecat) == ("Test CPU", 4, "1.14.0")
    assert h.load.samples == 2 and h.load.seconds == 30.0
    assert h.load.load_mean == 5.0 and h.load.steal_pct == 30.0


def test_the_sampler_reads_every_interval_on_its_thread():
    taken = []
    third = threading.Event()

    def read() -> Reading:
        taken.append(threading.current_thread().name)
        if len(taken) == 3:
            third.set()
        return Reading(1.0, 0, len(taken))

    with HostSampler(interval_s=0.01, read=read, machine=MACHINE) as sampler:
        assert third.wait(30)
    assert taken[0] == threading.current_thread().name  # the first reading, at the start
    assert "voicebench-host" in taken[1:3]
    assert sampler.host().load.samples == len(taken)


def test_this_machine_can_be_read():
    """Whatever the machine, a reading and its description come back in their types."""
    r = read_now()
    assert r.load_1m is None or r.load_1m >= 0
    assert (r.steal is None) == (r.total is None)
    here = Machine.here()
    assert here.cpu_model and here.voicebench and here.python.count(".") == 2
