"""A load folder's turns and their summary: turns grouped by the calls in progress when they
started.

Failed turns are not dropped: their TTFA is censored at the turn timeout (counted as the
timeout, so percentiles only get worse), and the failures are counted by kind. The budget
breaks at the lowest concurrency from which on the censored TTFA p90 is over the TTFA budget.

Concurrency bands. Levels are grouped into at most ``MAX_BANDS`` bands of equal width, each
with TTFA p50/p90 and the failure share and their 95% intervals, from a bootstrap that
resamples calls (a call's turns stay together: they share its connection and the agent's
state), widened for the number of calls (``bootstrap.expanded_levels``); a band with fewer
calls than an interval needs (6 for p50 and the share, 30 for p90) has none: too few to tell.
A band is *over* when its TTFA p90 is over the budget or its failure share over the
failure budget; the **breaking point** is the lowest band from which on every band is over,
and its interval is where that lowest band falls in the resamples (``None`` as the upper end:
in some resamples it never broke within what was tested).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

import numpy as np
from pydantic import Field

from voicebench import bootstrap
from voicebench._model import FrozenModel
from voicebench.metrics.latency import censored_ttfa, percentiles_ms
from voicebench.metrics.summary import stall_summary
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


class CallSpan(FrozenModel):
    """One call of a load, seconds after the start: the calls-in-progress timeline."""

    caller: int
    call: int
    start_s: float
    end_s: float
    answered: bool
    """The agent answered (its connection opened)."""
    lost: bool = False
    """Its caller's worker was lost with the call in progress (``end_s``: when that was
    noticed); its turns not yet finished were never recorded."""
    worker: int | None = None
    """The Ray worker that placed the call (None: one process)."""


class Band(FrozenModel):
    """The turns that started at ``low``..``high`` calls in progress."""

    low: int
    high: int
    turns: int
    calls: int
    ttfa_p50_ms: float
    ttfa_p50_ci: tuple[float, float] | None
    """None when the band has too few calls to tell (``bootstrap.clusters_needed``: 6)."""
    ttfa_p90_ms: float
    ttfa_p90_ci: tuple[float, float] | None
    """None with fewer than 30 calls."""
    failure_share: float
    failure_ci: tuple[float, float] | None
    """None with fewer than 6 calls."""
    over: bool
    """TTFA p90 over the budget, or the failure share over the failure budget."""
    stalled_replies: int | None = None
    """Replies with at least one stall after their first audio (``timing.stalls``); None
    when no reply of the band played, or in a summary written before stalls were measured."""
    stalled_share: float | None = None
    """The share of a reply's playing time stalled, averaged over the band's replies."""
    longest_stall_ms: float | None = None
    """The longest stall of any reply of the band."""


class BreakingPoint(FrozenModel):
    concurrency: int | None
    """The lowest band's lower edge from which on every band is over (None: it held)."""
    low: int | None
    high: int | None
    """The 95% interval of that edge over the resamples; ``high`` None: beyond what was
    tested (in over 2.5% of the resamples it never broke)."""


class TimeWindow(FrozenModel):
    """The turns that started in one quarter of the load's time (a soak's drift)."""

    start_s: float
    end_s: float
    turns: int
    ttfa_p50_ms: float | None
    ttfa_p90_ms: float | None


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
    failure_budget: float = 0.05
    lost_calls: int = 0
    """Calls in progress on a worker that was lost (their unfinished turns are not counted)."""
    bands: tuple[Band, ...] = ()
    breaking_point: BreakingPoint | None = None
    windows: tuple[TimeWindow, ...] = ()


MAX_BANDS = 8
ROUNDS = 1000
WINDOWS = 4


def summarize_load(
    turns: Sequence[LoadTurn],
    *,
    budget_ttfa_ms: float,
    turn_timeout_s: float,
    failure_budget: float = 0.05,
    seed: int = 0,
    spans: Sequence[CallSpan] = (),
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
        failure_budget=failure_budget,
        lost_calls=sum(s.lost for s in spans),
        **_bands(turns, budget_ttfa_ms, turn_timeout_s * 1000.0, failure_budget, seed),
        windows=_windows(turns, turn_timeout_s * 1000.0),
    )


def band_edges(turns: Sequence[LoadTurn]) -> list[tuple[int, int]]:
    """The bands' (low, high) edges of calls in progress: at most ``MAX_BANDS`` of equal
    width from 1 to the highest concurrency (some may hold no turn)."""
    if not turns:
        return []
    top = max(t.concurrency for t in turns)
    width = max(1, math.ceil(top / MAX_BANDS))
    return [(low, min(top, low + width - 1)) for low in range(1, top + 1, width)]


def _bands(
    turns: Sequence[LoadTurn], budget_ms: float, timeout_ms: float, failure_budget: float, seed: int
) -> dict:
    """The concurrency bands and the breaking point, from one seeded call bootstrap."""
    if not turns:
        return {"bands": (), "breaking_point": None}
    rng = np.random.default_rng(seed)
    bands, over_rounds = [], []
    for low, high in band_edges(turns):
        group = [t for t in turns if low <= t.concurrency <= high]
        if not group:
            continue
        calls: dict[tuple[int, int], list[LoadTurn]] = {}
        for t in group:
            calls.setdefault((t.caller, t.call), []).append(t)
        ttfa = np.concatenate(
            [np.asarray(censored_ttfa([t.turn for t in c], timeout_ms)) for c in calls.values()]
        )
        owner = np.repeat(np.arange(len(calls)), [len(c) for c in calls.values()])
        failed_by_call = np.array(
            [sum(t.turn.error is not None for t in c) for c in calls.values()]
        )
        failed = int(failed_by_call.sum())
        stats = _resampled(ttfa, owner, failed_by_call, rng)
        p50, p90 = (float(v) for v in np.percentile(ttfa, (50, 90)))
        share = failed / ttfa.size

        bands.append(
            Band(
                low=low,
                high=high,
                turns=ttfa.size,
                calls=len(calls),
                ttfa_p50_ms=round(p50, 1),
                ttfa_p50_ci=_ci(stats[:, 0], len(calls), 50, 1),
                ttfa_p90_ms=round(p90, 1),
                ttfa_p90_ci=_ci(stats[:, 1], len(calls), 90, 1),
                failure_share=round(share, 4),
                failure_ci=_ci(stats[:, 2], len(calls), 50, 4),
                over=p90 > budget_ms or share > failure_budget,
                **_band_stalls(group),
            )
        )
        over_rounds.append((stats[:, 1] > budget_ms) | (stats[:, 2] > failure_budget))
    edges = [b.low for b in bands]
    point = _breaks_at([b.over for b in bands], edges)
    drawn = [_breaks_at(list(over), edges) for over in np.array(over_rounds).T]
    ranked = sorted(math.inf if d is None else d for d in drawn)  # never broke: past the top
    lo = ranked[int(0.025 * len(ranked))]
    hi = ranked[min(len(ranked) - 1, math.ceil(0.975 * len(ranked)) - 1)]
    return {
        "bands": tuple(bands),
        "breaking_point": BreakingPoint(
            concurrency=point,
            low=None if lo == math.inf else int(lo),
            high=None if hi == math.inf else int(hi),
        ),
    }


def _band_stalls(group: Sequence[LoadTurn]) -> dict:
    """A band's stall figures (``Band.stalled_replies`` and after), from the replies that
    played."""
    stalls = stall_summary([t.turn for t in group])
    if stalls is None:
        return {}
    return {
        "stalled_replies": stalls.stalled,
        "stalled_share": round(stalls.stalled_share, 4),
        "longest_stall_ms": round(stalls.longest_ms, 1),
    }


def _ci(drawn: np.ndarray, calls: int, q: float, digits: int) -> tuple[float, float] | None:
    """A band's interval from its resampled statistic, widened for its number of calls; None
    when the band has too few calls for it."""
    if calls < bootstrap.clusters_needed(q):
        return None
    widened = bootstrap.tail_clusters(calls, bootstrap.weighted_percentile(q))
    low, high = np.percentile(drawn, bootstrap.expanded_levels(widened))
    return round(float(low), digits), round(float(high), digits)


def _resampled(
    ttfa: np.ndarray, owner: np.ndarray, failed_by_call: np.ndarray, rng: np.random.Generator
) -> np.ndarray:
    """TTFA p50, p90 and the failure share in ``ROUNDS`` resamples of the calls (rows): each
    resample draws the calls with replacement, a drawn call bringing all its turns; computed at
    once as turns weighted by how often their call was drawn."""
    m = failed_by_call.size
    drawn = rng.multinomial(m, np.full(m, 1.0 / m), size=ROUNDS)  # rounds x calls
    order = np.argsort(ttfa, kind="stable")
    weight = np.cumsum(drawn[:, owner[order]], axis=1)  # rounds x turns, in TTFA order
    total = weight[:, -1]
    p50, p90 = (ttfa[order][(weight >= q * total[:, None]).argmax(axis=1)] for q in (0.5, 0.9))
    return np.column_stack([p50, p90, drawn @ failed_by_call / total])


def _breaks_at(over: list[bool], edges: list[int]) -> int | None:
    """The lowest edge from which on every band is over."""
    at = None
    for edge, is_over in zip(reversed(edges), reversed(over), strict=True):
        if not is_over:
            break
        at = edge
    return at


def _windows(turns: Sequence[LoadTurn], timeout_ms: float) -> tuple[TimeWindow, ...]:
    """TTFA in each quarter of the load's time."""
    if not turns:
        return ()
    end = max(t.offset_s for t in turns) + 1e-9
    out = []
    for k in range(WINDOWS):
        a, b = end * k / WINDOWS, end * (k + 1) / WINDOWS
        group = [t.turn for t in turns if a <= t.offset_s < b]
        x = censored_ttfa(group, timeout_ms)
        p50, p90 = percentiles_ms(x, (50, 90)) if x else (None, None)
        out.append(
            TimeWindow(
                start_s=round(a, 1),
                end_s=round(b, 1),
                turns=len(group),
                ttfa_p50_ms=p50,
                ttfa_p90_ms=p90,
            )
        )
    return tuple(out)
