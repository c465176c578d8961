"""What ``voicebench compare`` finds: each figure's change between two runs, with its
interval and verdict (``voicebench.gates.compare`` computes them)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from voicebench._model import FrozenModel
from voicebench.host import HostContrast

ChangeVerdict = Literal[
    "slower", "faster", "worse", "better", "no clear change", "not measured", "too few to tell"
]
Measured = Sequence[tuple[float, str]]
"""A figure's values, each with its dialogue (what the intervals resample)."""


class Change(FrozenModel):
    key: str
    """``ttfa_p90_ms``, ``stage_llm_ttft_p50_ms``, ``failed_pct``..."""
    label: str
    unit: str
    kind: Literal["latency", "stage", "share"]
    base: float | None
    new: float | None
    change: float | None
    low: float | None
    high: float | None
    verdict: ChangeVerdict
    higher_is: Literal["worse", "better"] = "worse"
    base_n: int = 0
    new_n: int = 0
    """The turns (or outcomes) each run measured it on."""


class Comparison(FrozenModel):
    base_dir: str
    new_dir: str
    base_name: str
    new_name: str
    base_turns: int
    new_turns: int
    base_cold_turns: int = 0
    new_cold_turns: int = 0
    """Of each run's turns, the cold ones (the first after each start of the agent): every
    latency row counts them, so a change in how many there are moves the rows."""
    min_change_ms: float
    headline: str
    """The stage that moved most, or that no stage moved clearly."""
    changes: tuple[Change, ...]
    hosts: HostContrast | None = None
    """The two runs' hosts side by side: another machine or other software, and which run
    was measured on a busy machine."""

    @property
    def regressions(self) -> list[Change]:
        return [c for c in self.changes if c.verdict in ("slower", "worse")]

    @property
    def too_few(self) -> list[Change]:
        """The figures one of the runs measured too few times to tell."""
        return [c for c in self.changes if c.verdict == "too few to tell"]

    @property
    def too_few_to_tell(self) -> bool:
        """The TTFA median itself rests on too few turns or dialogues: the comparison says
        nothing (``compare --fail-on-regression`` exits 4 unless something regressed)."""
        return any(c.key == "ttfa_p50_ms" for c in self.too_few)


def format_value(value: float | None, unit: str, signed: bool = False) -> str:
    """A figure of a comparison as people read it (``+100.1 ms``, ``4.2%``)."""
    if value is None:
        return "-"
    text = f"{value:+,.1f}" if signed else f"{value:,.1f}"
    return f"{text}%" if unit == "%" else f"{text} {unit}"
