"""Reading the host while a run measures: what the machine is, once, and how busy it is,
every few seconds on a background thread (a reading is a system call and a small file read,
so it costs the run nothing it would notice)."""

from __future__ import annotations

import importlib.metadata
import itertools
import os
import platform
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from voicebench._version import __version__
from voicebench.host.models import Host, HostLoad

SAMPLE_INTERVAL_S = 5.0
"""Seconds between two readings of the machine's load."""
PROC_STAT = Path("/proc/stat")
CPUINFO = Path("/proc/cpuinfo")


@dataclass(frozen=True)
class Reading:
    """One look at the machine."""

    load_1m: float | None
    """The 1-minute load average; None where the system has none."""
    steal: int | None
    """CPU time stolen so far, in clock ticks, over all CPUs (``/proc/stat``); None where the
    system does not count it."""
    total: int | None
    """All CPU time so far, in the same ticks."""


def read_cpu_times(text: str) -> tuple[int, int] | None:
    """(steal, total) ticks from ``/proc/stat``'s text: its ``cpu`` line sums user, nice,
    system, idle, iowait, irq, softirq and steal (guest time is already in user)."""
    for line in text.splitlines():
        parts = line.split()
        if parts and parts[0] == "cpu":
            ticks = [int(x) for x in parts[1:9]]
            return (ticks[7], sum(ticks)) if len(ticks) == 8 else None
    return None


def read_now() -> Reading:
    """The machine's load average and CPU times now."""
    try:
        load: float | None = os.getloadavg()[0]
    except (AttributeError, OSError):  # no load average on this system
        load = None
    try:
        times = read_cpu_times(PROC_STAT.read_text())
    except OSError:
        times = None
    return Reading(load, *(times or (None, None)))


def summarize_readings(readings: Sequence[Reading], seconds: float) -> HostLoad:
    """The readings of a run as its host's load: the load average's mean and highest, and
    the share of CPU time stolen over the whole span and its highest between two readings."""
    loads = [r.load_1m for r in readings if r.load_1m is not None]
    ticks = [(r.steal, r.total) for r in readings if r.steal is not None and r.total is not None]
    shares = [
        100.0 * (s1 - s0) / (t1 - t0) for (s0, t0), (s1, t1) in itertools.pairwise(ticks) if t1 > t0
    ]
    whole = None
    if len(ticks) > 1 and ticks[-1][1] > ticks[0][1]:
        whole = 100.0 * (ticks[-1][0] - ticks[0][0]) / (ticks[-1][1] - ticks[0][1])
    return HostLoad(
        samples=len(readings),
        seconds=round(seconds, 3),
        load_mean=round(sum(loads) / len(loads), 3) if loads else None,
        load_max=round(max(loads), 3) if loads else None,
        steal_pct=round(whole, 3) if whole is not None else None,
        steal_max_pct=round(max(shares), 3) if shares else None,
    )


def cpu_model() -> str:
    """The CPU's model name: ``/proc/cpuinfo``'s first ``model name`` (or ``Hardware``, on
    some ARM boards), else what the platform says."""
    try:
        for line in CPUINFO.read_text(errors="replace").splitlines():
            key, _, value = line.partition(":")
            if key.strip() in ("model name", "Hardware") and value.strip():
                return value.strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"


def _version(package: str) -> str | None:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return None


@dataclass(frozen=True)
class Machine:
    """What a host is, read once."""

    cpu_model: str
    cpu_count: int | None
    platform: str
    python: str
    voicebench: str
    pipecat: str | None

    @classmethod
    def here(cls) -> Machine:
        return cls(
            cpu_model=cpu_model(),
            cpu_count=os.cpu_count(),
            platform=platform.platform(),
            python=platform.python_version(),
            voicebench=__version__,
            pipecat=_version("pipecat-ai"),
        )


class HostSampler:
    """Reads the machine's load when started, every ``interval_s`` on a daemon thread, and
    when stopped; ``host()`` is the machine with its load so far. ``read``, ``clock`` and
    ``machine`` are this machine's unless given (a test gives its own)."""

    def __init__(
        self,
        *,
        interval_s: float = SAMPLE_INTERVAL_S,
        read: Callable[[], Reading] = read_now,
        clock: Callable[[], float] = time.monotonic,
        machine: Machine | None = None,
    ) -> None:
        self._interval_s, self._read, self._clock = interval_s, read, clock
        self._machine = machine or Machine.here()
        self._readings: list[Reading] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._started_at = datetime.now(UTC).isoformat(timespec="seconds")
        self._first = self._last = 0.0

    def _take(self) -> None:
        reading = self._read()
        with self._lock:
            self._readings.append(reading)
            self._last = self._clock()

    def _loop(self) -> None:
        while not self._stop.wait(self._interval_s):
            self._take()

    def start(self) -> HostSampler:
        """Take the first reading and start the thread that takes the others."""
        self._started_at = datetime.now(UTC).isoformat(timespec="seconds")
        self._first = self._clock()
        self._take()
        self._thread = threading.Thread(target=self._loop, name="voicebench-host", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop the thread and take the last reading."""
        if self._thread is None:
            return
        self._stop.set()
        self._thread.join()
        self._thread = None
        self._take()

    def host(self) -> Host:
        """The machine, with its load from the first reading to the latest."""
        with self._lock:
            load = summarize_readings(list(self._readings), self._last - self._first)
        m = self._machine
        return Host(
            cpu_model=m.cpu_model,
            cpu_count=m.cpu_count,
            platform=m.platform,
            python=m.python,
            voicebench=m.voicebench,
            pipecat=m.pipecat,
            started_at=self._started_at,
            load=load,
        )

    def __enter__(self) -> HostSampler:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()
