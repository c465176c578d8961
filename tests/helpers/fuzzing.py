"""The settings every fuzz test runs under: 1,000 cases, the same ones each run (derandomized),
no deadline (a case may wait on a server)."""

from __future__ import annotations

from hypothesis import HealthCheck, settings

CASES = 1000


def fuzz_settings(*also_allowed: HealthCheck) -> settings:
    """The fuzz tests' settings; ``also_allowed``: health checks beyond ``too_slow`` that the
    file's tests may fail by design (a fixture shared by the cases, large data)."""
    return settings(
        max_examples=CASES,
        deadline=None,
        derandomize=True,
        suppress_health_check=[HealthCheck.too_slow, *also_allowed],
    )
