"""Load patterns: when each simulated caller is on the line, declared once and drawn with the
seed, so a load can be run again exactly and read back from ``load.json``.

A caller is on the line from ``arrive_s`` to ``leave_s`` (seconds after the start): it makes
calls back to back in that window, starts none after ``leave_s``, and finishes the one under
way. Patterns (``--pattern``):

- ``ramp`` (the default): ``callers`` arrive over ``ramp_s`` (evenly spaced, or with
  exponential gaps of the same mean for ``poisson`` arrivals) and stay until ``duration_s``.
- ``step``: ``step_callers`` more arrive every ``step_hold_s`` (each step's arrivals spread
  over ``min(ramp_s, step_hold_s)``) until there are ``callers``; all stay until
  ``duration_s``. Each concurrency is held long enough to measure it.
- ``spike``: ``callers - spike_callers`` arrive over ``ramp_s`` and stay; at ``spike_at_s``
  the ``spike_callers`` arrive together and leave ``spike_s`` later.
- ``soak``: a ramp to ``callers`` held for a long ``duration_s``; the summary's time windows
  show whether TTFA drifts as the agent runs (memory, queues, caches).
"""

from __future__ import annotations

import math
import random
from typing import Literal

from pydantic import Field, model_validator

from voicebench._model import FrozenModel

PatternKind = Literal["ramp", "step", "spike", "soak"]
PATTERNS: tuple[str, ...] = ("ramp", "step", "spike", "soak")


class Window(FrozenModel):
    """One caller's time on the line, seconds after the start."""

    arrive_s: float
    leave_s: float


class LoadPattern(FrozenModel):
    kind: PatternKind = "ramp"
    callers: int = Field(ge=1)
    """The most callers on the line at once (base and spike together)."""
    duration_s: float = Field(gt=0.0)
    """Seconds after the start during which calls start."""
    ramp_s: float = Field(default=10.0, ge=0.0)
    arrivals: Literal["fixed", "poisson"] = "fixed"
    step_callers: int | None = Field(default=None, ge=1)
    step_hold_s: float | None = Field(default=None, gt=0.0)
    spike_callers: int | None = Field(default=None, ge=1)
    spike_at_s: float | None = Field(default=None, ge=0.0)
    spike_s: float | None = Field(default=None, gt=0.0)

    @model_validator(mode="after")
    def _parameters(self) -> LoadPattern:
        needs = {
            "step": ("step_callers", "step_hold_s"),
            "spike": ("spike_callers", "spike_at_s", "spike_s"),
        }.get(self.kind, ())
        missing = [name for name in needs if getattr(self, name) is None]
        if missing:
            raise ValueError(f"pattern {self.kind!r} needs {', '.join(missing)}")
        if self.kind == "step":
            assert self.step_callers is not None and self.step_hold_s is not None
            steps = math.ceil(self.callers / self.step_callers)
            if (steps - 1) * self.step_hold_s >= self.duration_s:
                raise ValueError(
                    f"{steps} steps of {self.step_hold_s:g} s do not fit in duration_s "
                    f"{self.duration_s:g}: the last step would never be reached"
                )
        if self.kind == "spike":
            assert self.spike_callers is not None and self.spike_at_s is not None
            assert self.spike_s is not None
            if self.spike_callers >= self.callers:
                raise ValueError("spike_callers must be fewer than callers (the rest are the base)")
            if self.spike_at_s + self.spike_s > self.duration_s:
                raise ValueError("the spike (spike_at_s + spike_s) must end within duration_s")
        return self

    def windows(self, seed: int) -> tuple[Window, ...]:
        """Every caller's window, caller 0 first (drawn with ``seed`` for poisson arrivals)."""
        if self.kind == "step":
            assert self.step_callers is not None and self.step_hold_s is not None
            spread = min(self.ramp_s, self.step_hold_s)
            out = []
            for first in range(0, self.callers, self.step_callers):
                n = min(self.step_callers, self.callers - first)
                at = first // self.step_callers * self.step_hold_s
                out += [at + t for t in arrival_times(n, spread, self.arrivals, seed + first)]
            return tuple(Window(arrive_s=t, leave_s=self.duration_s) for t in out)
        if self.kind == "spike":
            assert self.spike_callers is not None and self.spike_at_s is not None
            assert self.spike_s is not None
            base = self.callers - self.spike_callers
            times = arrival_times(base, self.ramp_s, self.arrivals, seed)
            end = self.spike_at_s + self.spike_s
            return tuple(Window(arrive_s=t, leave_s=self.duration_s) for t in times) + tuple(
                Window(arrive_s=self.spike_at_s, leave_s=end) for _ in range(self.spike_callers)
            )
        times = arrival_times(self.callers, self.ramp_s, self.arrivals, seed)
        return tuple(Window(arrive_s=t, leave_s=self.duration_s) for t in times)

    def describe(self) -> str:
        """One line for the console."""
        spread = f"arriving over {self.ramp_s:g} s ({self.arrivals})"
        if self.kind == "step":
            return (
                f"step: {self.step_callers} more callers every {self.step_hold_s:g} s up to "
                f"{self.callers}, calls start for {self.duration_s:g} s"
            )
        if self.kind == "spike":
            return (
                f"spike: {self.callers - (self.spike_callers or 0)} callers {spread}, "
                f"{self.spike_callers} more at {self.spike_at_s:g} s for {self.spike_s:g} s, "
                f"calls start for {self.duration_s:g} s"
            )
        return (
            f"{self.kind}: {self.callers} callers {spread}, calls start for {self.duration_s:g} s"
        )


def arrival_times(callers: int, ramp_s: float, arrivals: str, seed: int) -> list[float]:
    """Seconds after the start at which each of ``callers`` arrives over ``ramp_s``."""
    if callers == 1 or ramp_s == 0:
        return [0.0] * callers
    gap = ramp_s / callers
    if arrivals == "fixed":
        return [k * gap for k in range(callers)]
    rng = random.Random(seed)
    out, t = [], 0.0
    for _ in range(callers):
        out.append(t)
        t += rng.expovariate(1.0 / gap)
    return out
