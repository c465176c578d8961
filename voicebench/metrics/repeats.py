"""A repeated run's passes side by side: each pass over the items (``--repeat``) with its own
figures, and how far apart they are.

Voice agents are not deterministic (sampling, the network, the machine's load), so one pass says
little about the next. A pass's figures are point values only: its interval would resample
dialogues that the other passes replayed too; the run's pooled figures carry the intervals, and
the spread between passes says how much the same items move from one pass to the next.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

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


def _percentile(values: list[float], q: int) -> float | None:
    return round(float(np.percentile(values, q)), 1) if values else None


def pass_figures(
    records: Sequence[TurnRecord], *, budget_ttft_ms: float, budget_ttfa_ms: float
) -> tuple[PassFigures, ...]:
    """Each pass's figures; none for a run of one pass."""
    passes = by_pass(records)
    if len(passes) < 2:
        return ()
    out = []
    for repeat, rows in passes.items():
        ttft = [t.ttft_ms for r in rows if (t := r.timing) is not None and t.ttft_ms is not None]
        ttfa = [t.ttfa_ms for r in rows if (t := r.timing) is not None and t.ttfa_ms is not None]
        within = [r.within_budgets(budget_ttfa_ms, budget_ttft_ms) for r in rows]
        out.append(
            PassFigures(
                repeat=repeat,
                turns=len(rows),
                failed=sum(r.error is not None for r in rows),
                ttft_p50_ms=_percentile(ttft, 50),
                ttfa_p50_ms=_percentile(ttfa, 50),
                ttfa_p90_ms=_percentile(ttfa, 90),
                within_budget=round(float(np.mean(within)), 4) if within else None,
            )
        )
    return tuple(out)


SPREAD_FIGURES = ("ttft_p50_ms", "ttfa_p50_ms", "ttfa_p90_ms", "within_budget")


def spread(passes: Sequence[PassFigures]) -> dict[str, float | None]:
    """Per figure, the largest value of a pass less the smallest (None where a pass lacks it)."""
    out: dict[str, float | None] = {}
    for name in SPREAD_FIGURES:
        values = [getattr(p, name) for p in passes]
        known = [v for v in values if v is not None]
        out[name] = round(max(known) - min(known), 4) if len(known) == len(values) else None
    return out
