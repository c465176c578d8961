"""What the machine was doing while a benchmark ran: the share of CPU time stolen from it by
the host (``steal`` in ``/proc/stat``), read over the run. Timings on a shared machine are read
beside it."""

from __future__ import annotations

import os
from pathlib import Path

_STAT = Path("/proc/stat")


def _cpu_ticks() -> tuple[int, int] | None:
    """(steal, total) ticks of all CPUs since boot; None where there is no /proc/stat."""
    try:
        fields = _STAT.read_text().splitlines()[0].split()
    except OSError:
        return None
    ticks = [int(v) for v in fields[1:9]]  # user nice system idle iowait irq softirq steal
    return ticks[7], sum(ticks)


class CpuSteal:
    """``with CpuSteal() as steal: ...``, then ``steal.percent`` and ``str(steal)``."""

    def __enter__(self) -> CpuSteal:
        self._start = _cpu_ticks()
        self.percent: float | None = None
        return self

    def __exit__(self, *exc: object) -> None:
        end = _cpu_ticks()
        if self._start is not None and end is not None and end[1] > self._start[1]:
            self.percent = 100.0 * (end[0] - self._start[0]) / (end[1] - self._start[1])

    def __str__(self) -> str:
        where = f"{os.cpu_count()} CPUs"
        if self.percent is None:
            return f"CPU steal over the run: unknown ({where})"
        return f"CPU steal over the run: {self.percent:.1f}% of CPU time ({where})"
