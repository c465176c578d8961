"""What the calls of one converse folder came to: how they ended, what the callers said of
them (with 95% intervals), and the agent's latency by the turn's place in the call (does it
slow down as the call grows?). The command's summary and the report both read this."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from typing import get_args

from voicebench._model import FrozenModel
from voicebench.bootstrap import mean, wilson
from voicebench.calling.records import CallRecord, EndedBy
from voicebench.metrics.latency import median_ms
from voicebench.runlog import TurnRecord


class Estimate(FrozenModel):
    """A figure and its 95% interval."""

    value: float
    low: float
    high: float

    @classmethod
    def of(cls, triple: tuple[float, float, float] | None) -> Estimate | None:
        return None if triple is None else cls(value=triple[0], low=triple[1], high=triple[2])

    @staticmethod
    def text(e: Estimate | None, fmt: str = "{:.1f}", between: str = " to ") -> str:
        """``e`` with its interval, each number in ``fmt``: ``3.5 (3.0 to 4.0)``; '-' for none."""
        if e is None:
            return "-"
        return f"{fmt.format(e.value)} ({fmt.format(e.low)}{between}{fmt.format(e.high)})"


class PlaceLatency(FrozenModel):
    """The agent's turns at one place in the calls (1 = its answer to the caller's first
    line)."""

    place: int
    turns: int
    ttft_p50_ms: float | None
    ttfa_p50_ms: float | None


class CallOutcomes(FrozenModel):
    """One agent's calls."""

    agent_name: str
    seeker: str
    calls: int
    valid: int
    invalid: int
    """Calls whose caller broke role twice: kept, never judged."""
    ended_by: dict[str, int]
    goodbye: Estimate | None
    """Share of valid calls the caller ended with a goodbye (Wilson interval)."""
    turns_to_goodbye: float | None
    """Median caller lines in the calls that ended with a goodbye."""
    reports: int
    """Valid calls with the caller's own report; the figures below are over these."""
    intensity_before: Estimate | None
    intensity_after: Estimate | None
    intensity_change: Estimate | None
    """Mean of (after - before) per call, 1-5 scale: below 0 the callers felt better."""
    felt_heard: Estimate | None
    """Mean, 1-5."""
    would_call_again: Estimate | None
    """Share (Wilson interval)."""
    by_place: tuple[PlaceLatency, ...]


def call_turns(call: CallRecord, records: Sequence[TurnRecord]) -> list[TurnRecord | None]:
    """The agent's timed turn for each of the call's exchanges (None where none was kept)."""
    mine = {r.turn_index: r for r in records if r.dialogue_id == call.call_id}
    return [mine.get(e.turn_index) for e in call.exchanges]


def call_outcomes(
    calls: Sequence[CallRecord], records: Sequence[TurnRecord], *, seed: int = 0
) -> CallOutcomes:
    """The outcomes of one agent's ``calls`` (``records``: its run's turns)."""
    valid = [c for c in calls if c.valid]
    reports = [c.report for c in valid if c.report is not None]
    goodbyes = [len(c.exchanges) for c in valid if c.ended_by == "goodbye"]
    by_place: dict[int, list[TurnRecord]] = {}
    for c in calls:
        for place, rec in enumerate(call_turns(c, records), start=1):
            if rec is not None:
                by_place.setdefault(place, []).append(rec)
    places = []
    for place in sorted(by_place):
        timed = [r.timing for r in by_place[place] if r.timing is not None]
        places.append(
            PlaceLatency(
                place=place,
                turns=len(by_place[place]),
                ttft_p50_ms=median_ms([t.ttft_ms for t in timed if t.ttft_ms is not None]),
                ttfa_p50_ms=median_ms([t.ttfa_ms for t in timed if t.ttfa_ms is not None]),
            )
        )

    def avg(values: list[float]) -> Estimate | None:
        return Estimate.of(mean(values, seed=seed)) if values else None

    names = {c.agent_name for c in calls}
    return CallOutcomes(
        agent_name=", ".join(sorted(names)),
        seeker=", ".join(sorted({c.seeker for c in calls})),
        calls=len(calls),
        valid=len(valid),
        invalid=len(calls) - len(valid),
        ended_by={k: sum(c.ended_by == k for c in calls) for k in get_args(EndedBy)},
        goodbye=Estimate.of(wilson(len(goodbyes), len(valid))),
        turns_to_goodbye=statistics.median(goodbyes) if goodbyes else None,
        reports=len(reports),
        intensity_before=avg([r.intensity_before for r in reports]),
        intensity_after=avg([r.intensity_after for r in reports]),
        intensity_change=avg([r.intensity_after - r.intensity_before for r in reports]),
        felt_heard=avg([r.felt_heard for r in reports]),
        would_call_again=Estimate.of(
            wilson(sum(r.would_call_again for r in reports), len(reports))
        ),
        by_place=tuple(places),
    )
