"""A repeated run's passes side by side: each pass over the items (``--repeat``) with its own
figures (``metrics.latency.pass_figures``), and how far apart they are.

Voice agents are not deterministic (sampling, the network, the machine's load), so one pass says
little about the next. A pass's figures are point values only: its interval would resample
dialogues that the other passes replayed too; the run's pooled figures carry the intervals, and
the spread between passes says how much the same items move from one pass to the next.
"""

from __future__ import annotations

from collections.abc import Sequence

from voicebench._model import FrozenModel
from voicebench.runlog import TurnRecord


class PassFigures(FrozenModel):
    """One pass of a repeated run."""

    repeat: int
    """The pass, from 0."""
    turns: int
    failed: int
    ttft_p50_ms: float | None
    ttfa_p50_ms: float | None
    ttfa_p90_ms: float | None
    within_budget: float | None
    """Share of the pass's turns (failed ones count as misses) within both budgets."""


def by_pass(records: Sequence[TurnRecord]) -> dict[int, list[TurnRecord]]:
    """The records of each pass, in pass order."""
    out: dict[int, list[TurnRecord]] = {}
    for r in sorted(records, key=lambda r: r.repeat):
        out.setdefault(r.repeat, []).append(r)
    return out


SPREAD_FIGURES = ("ttft_p50_ms", "ttfa_p50_ms", "ttfa_p90_ms", "within_budget")


def spread(passes: Sequence[PassFigures]) -> dict[str, float | None]:
    """Per figure, the largest value of a pass less the smallest (None where a pass lacks it)."""
    out: dict[str, float | None] = {}
    for name in SPREAD_FIGURES:
        values = [getattr(p, name) for p in passes]
        known = [v for v in values if v is not None]
        out[name] = round(max(known) - min(known), 4) if len(known) == len(values) else None
    return out
