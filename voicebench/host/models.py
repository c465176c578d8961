"""The machine a run was measured on, and when it was too busy for its numbers to stand.

Latencies measured here are this machine's: a busy machine (other guests on the hypervisor
taking CPU time, or more runnable tasks than CPUs) makes every stage slower, and nothing in
the turns says so. Each run records its host (``Host``) in ``run.json``; ``busy`` decides,
by the two bounds below and nowhere else, whether a run was measured on a busy machine.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from voicebench._model import FrozenModel

BUSY_STEAL_PCT = 10.0
"""A run whose CPU steal averaged above this share of the CPU time (``HostLoad.steal_pct``)
was measured on a busy machine: the hypervisor gave that much of its CPUs to other guests."""
BUSY_LOAD_PER_CPU = 1.0
"""A run whose 1-minute load average averaged above this many runnable tasks per CPU
(``HostLoad.load_mean`` over ``Host.cpu_count``) was measured on a busy machine: tasks, its
own among them, waited for a CPU."""

HOST_FIELDS = ("cpu_model", "cpu_count", "platform")
"""What tells one machine from another."""
SOFTWARE_FIELDS = ("python", "voicebench", "pipecat")
"""The software that measured, beside the machine."""


class HostLoad(FrozenModel):
    """How busy the machine was while a run measured, sampled every few seconds."""

    samples: int
    """Readings taken (one when the run started measuring, one when it stopped, and one every
    ``host.sampler.SAMPLE_INTERVAL_S`` between)."""
    seconds: float
    """From the first reading to the last."""
    load_mean: float | None
    """The 1-minute load average (``os.getloadavg``), mean of the readings; None where the
    system has none."""
    load_max: float | None
    """The highest reading of it."""
    steal_pct: float | None
    """CPU time stolen by the hypervisor for other guests, as a share of all CPU time from
    the first reading to the last (``/proc/stat``); None where the system does not count it."""
    steal_max_pct: float | None
    """The highest share of it between two readings."""


class Host(FrozenModel):
    """The machine and software a run was measured with, and how busy the machine was."""

    cpu_model: str
    """The CPU's model name (``/proc/cpuinfo``), else what the platform says of it."""
    cpu_count: int | None
    """Logical CPUs of the machine (``os.cpu_count``)."""
    platform: str
    """Operating system and kernel (``platform.platform()``)."""
    python: str
    """Python's version."""
    voicebench: str
    """voicebench's version."""
    pipecat: str | None
    """pipecat's version; None where it is not installed."""
    started_at: str
    """When this host started measuring the run (ISO 8601, UTC)."""
    load: HostLoad
    """The machine's load while it measured."""


class Busy(FrozenModel):
    """A bound a run's host passed: its numbers were measured on a busy machine."""

    figure: Literal["steal_pct", "load_per_cpu"]
    """Which: the CPU steal (per cent) or the load average per CPU."""
    value: float
    """The run's figure (its mean; the highest of a resumed run's hosts)."""
    bound: float
    """``BUSY_STEAL_PCT`` or ``BUSY_LOAD_PER_CPU``."""


def busy(hosts: Sequence[Host]) -> tuple[Busy, ...]:
    """The bounds the hosts of a run passed (empty: not busy, or not recorded). A run resumed
    several times has a host for each sitting; the highest of their figures counts."""
    steal = [h.load.steal_pct for h in hosts if h.load.steal_pct is not None]
    load = [
        h.load.load_mean / h.cpu_count
        for h in hosts
        if h.load.load_mean is not None and h.cpu_count
    ]
    found = []
    if steal and max(steal) > BUSY_STEAL_PCT:
        found.append(Busy(figure="steal_pct", value=round(max(steal), 2), bound=BUSY_STEAL_PCT))
    if load and max(load) > BUSY_LOAD_PER_CPU:
        found.append(
            Busy(figure="load_per_cpu", value=round(max(load), 2), bound=BUSY_LOAD_PER_CPU)
        )
    return tuple(found)


class HostContrast(FrozenModel):
    """Two runs' hosts side by side (``voicebench compare``)."""

    base: tuple[Host, ...]
    """The base run's hosts (one a sitting); empty for a run made before hosts were
    recorded."""
    new: tuple[Host, ...]
    differs: tuple[str, ...]
    """The fields of ``HOST_FIELDS`` and ``SOFTWARE_FIELDS`` whose values differ between the
    runs, in that order; empty when they match or either run has no host."""
    base_busy: tuple[Busy, ...]
    new_busy: tuple[Busy, ...]

    @property
    def other_machine(self) -> bool:
        """The runs were measured on different machines."""
        return any(f in HOST_FIELDS for f in self.differs)

    @property
    def unknown(self) -> bool:
        """One of the runs has no host recorded: whether they match cannot be told."""
        return not self.base or not self.new


def _values(hosts: Sequence[Host], field: str) -> set[object]:
    return {getattr(h, field) for h in hosts}


def contrast(base: Sequence[Host], new: Sequence[Host]) -> HostContrast:
    """How two runs' hosts differ, and which was busy."""
    fields = (*HOST_FIELDS, *SOFTWARE_FIELDS)
    differs = (
        tuple(f for f in fields if _values(base, f) != _values(new, f)) if base and new else ()
    )
    return HostContrast(
        base=tuple(base),
        new=tuple(new),
        differs=differs,
        base_busy=busy(base),
        new_busy=busy(new),
    )
