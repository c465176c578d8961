"""Hosts with known readings, for the tests of what is shown of them (no machine is loaded)."""

from __future__ import annotations

from voicebench.host import Host, HostLoad


def host(
    *,
    load_mean: float | None = 0.5,
    steal_pct: float | None = 0.0,
    cpu_count: int | None = 8,
    cpu_model: str = "Test CPU @ 3.0GHz",
    pipecat: str | None = "1.14.0",
) -> Host:
    """A host of ``cpu_count`` CPUs whose load averaged ``load_mean`` and whose CPU steal was
    ``steal_pct`` per cent, each maximum a little above its mean."""
    return Host(
        cpu_model=cpu_model,
        cpu_count=cpu_count,
        platform="Linux-6.1.0-test-x86_64-with-glibc2.36",
        python="3.11.7",
        voicebench="0.1.0",
        pipecat=pipecat,
        started_at="2026-01-01T00:00:00+00:00",
        load=HostLoad(
            samples=12,
            seconds=55.0,
            load_mean=load_mean,
            load_max=None if load_mean is None else load_mean + 1,
            steal_pct=steal_pct,
            steal_max_pct=None if steal_pct is None else steal_pct + 5,
        ),
    )


BUSY = host(load_mean=20.0, steal_pct=25.0)
"""A machine 2.5 times oversubscribed, a quarter of its CPU time stolen."""
QUIET = host()
