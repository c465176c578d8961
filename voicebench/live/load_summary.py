"""A load folder's turns and their summary: turns grouped by the calls in progress when they
started.

Failed turns are not dropped: their TTFA is censored at the turn timeout (counted as the
timeout, so percentiles only get worse), and the failures are counted by kind. The budget
breaks at the lowest concurrency from which on the censored TTFA p90 is over the TTFA budget.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from pydantic import Field

from voicebench._model import FrozenModel
from voicebench.metrics.latency import censored_ttfa, percentiles_ms
from voicebench.runlog import TurnRecord


class LoadTurn(FrozenModel):
    """One turn of one call under load."""

    caller: int
    call: int
    """The caller's call number, from 0."""
    concurrency: int = Field(ge=1)
    """Calls in progress (this one included) when the turn started."""
    offset_s: float
    """When the turn started, seconds after the first arrival."""
    turn: TurnRecord


class LoadLevel(FrozenModel):
    """The turns that started at one concurrency."""

    concurrency: int
    turns: int
    failed: int
    ttfa_p50_ms: float | None
    ttfa_p90_ms: float | None
    ttfa_p99_ms: float | None
    within_budget: float | None
    """Share of these turns (failed ones as misses) with TTFA within the budget."""


class LoadSummary(FrozenModel):
    turns: int
    failed: int
    failures: dict[str, int]
    """Failed turns by kind (``connection_refused``, ``closed_mid_turn``, ``timeout``...)."""
    calls: int
    levels: tuple[LoadLevel, ...]
    budget_ttfa_ms: float
    budget_breaks_at: int | None
    """The lowest concurrency from which on the censored TTFA p90 exceeds the budget."""


def summarize_load(
    turns: Sequence[LoadTurn], *, budget_ttfa_ms: float, turn_timeout_s: float
) -> LoadSummary:
    levels = []
    for c in sorted({t.concurrency for t in turns}):
        group = [t for t in turns if t.concurrency == c]
        x = censored_ttfa([t.turn for t in group], turn_timeout_s * 1000.0)
        p50, p90, p99 = percentiles_ms(x, (50, 90, 99))
        ok = [t.turn.error is None and v <= budget_ttfa_ms for t, v in zip(group, x, strict=True)]
        levels.append(
            LoadLevel(
                concurrency=c,
                turns=len(group),
                failed=sum(t.turn.error is not None for t in group),
                ttfa_p50_ms=p50,
                ttfa_p90_ms=p90,
                ttfa_p99_ms=p99,
                within_budget=round(sum(ok) / len(ok), 4),
            )
        )
    breaks = None
    for k, level in enumerate(levels):
        if all(lv.ttfa_p90_ms is not None and lv.ttfa_p90_ms > budget_ttfa_ms for lv in levels[k:]):
            breaks = level.concurrency
            break
    return LoadSummary(
        turns=len(turns),
        failed=sum(t.turn.error is not None for t in turns),
        failures=dict(Counter(t.turn.error.kind for t in turns if t.turn.error is not None)),
        calls=len({(t.caller, t.call) for t in turns}),
        levels=tuple(levels),
        budget_ttfa_ms=budget_ttfa_ms,
        budget_breaks_at=breaks,
    )
