"""The latency figures of one run, from its turn records alone (the report's latency
section, the gates and compare all read them here).

- Distributions (TTFT, TTFA): p50, p90, p95, p99 by linear interpolation between order
  statistics (numpy's default), each with a 95% bootstrap interval over resampled dialogues,
  each dialogue's turns kept together (they share a seeker, a history and a connection, so
  they vary together); a percentile whose interval needs more dialogues than the run has
  (``bootstrap.clusters_needed``: 6 for p50, 30 for p90) has none: too few to tell.
- Within budget: the share of turns with a figure at or under the budget; for the run as a
  whole, the share of all turns (failed ones count as misses) within both budgets.
- Failed turns have no TTFA; so that they are not silently dropped, a second TTFA
  distribution counts each of them as the turn timeout (censored).
- Cold turns are the agent's first turn after each (re)start (``TurnRecord.cold``; in logs
  that lack it, the first record); the rest are warm.
- The waterfall is the mean of each stage over the turns that have a TTFA (none for a remote
  agent, which is timed as a black box). A missing stage
  counts as 0 ms (the next stage then starts at the last known boundary), so the mean stages
  add up to the mean TTFA exactly; medians would not add up.
- The agent's openings (what it said when a call started, ``runlog.openings``) are not turns:
  their TTFA, from the call's start, is a distribution of its own, each opening its own cluster.
- A repeated run (``--repeat``) pools its passes: an item's turns of every pass are one
  cluster, so the intervals do not count a repeat as new evidence about another item; each
  pass's own figures are in ``passes`` (``metrics.repeats``).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from voicebench import bootstrap
from voicebench.host import busy
from voicebench.metrics.models import (
    QUANTILES,
    AgentLatency,
    Distribution,
    FailedTurn,
    Quantile,
    SlowTurn,
)
from voicebench.metrics.repeats import PassFigures, by_pass
from voicebench.metrics.scenarios import scenario_figures
from voicebench.metrics.summary import count_kinds, opening_ttfa, sound_summary, stall_summary
from voicebench.runlog import RunHeader, TurnRecord
from voicebench.timing import STAGE_NAMES, TurnTiming

SLOWEST = 10


def median_ms(values: Sequence[float]) -> float | None:
    """The median, to 0.1 ms; none of no values."""
    return round(float(np.median(values)), 1) if len(values) else None


def percentiles_ms(values: Sequence[float], qs: Sequence[float]) -> tuple[float, ...]:
    """Point percentiles (0-100), to 0.1 ms, without intervals (load's levels)."""
    return tuple(round(float(v), 1) for v in np.percentile(np.asarray(values, float), qs))


def measured(records: Sequence[TurnRecord], figure: str) -> list[float]:
    """A timing figure (``ttft_ms``, ``ttfa_ms``) of every turn that has it."""
    values = (getattr(r.timing, figure) for r in records if r.timing is not None)
    return [v for v in values if v is not None]


def censored_ttfa(records: Sequence[TurnRecord], turn_timeout_ms: float) -> list[float]:
    """Every turn's TTFA, a failed or unheard turn's counted as the turn timeout."""
    return [
        r.timing.ttfa_ms
        if r.error is None and r.timing is not None and r.timing.ttfa_ms is not None
        else turn_timeout_ms
        for r in records
    ]


def within_budgets(
    records: Sequence[TurnRecord], *, budget_ttfa_ms: float, budget_ttft_ms: float
) -> float | None:
    """The share of all turns (failed ones as misses) within both budgets, to 4 places."""
    if not records:
        return None
    ok = sum(r.within_budgets(budget_ttfa_ms, budget_ttft_ms) for r in records)
    return round(ok / len(records), 4)


def pass_figures(
    records: Sequence[TurnRecord], *, budget_ttft_ms: float, budget_ttfa_ms: float
) -> tuple[PassFigures, ...]:
    """Each pass's figures of a repeated run (``metrics.repeats``); none for a run of one pass."""
    passes = by_pass(records)
    if len(passes) < 2:
        return ()
    out = []
    for repeat, rows in passes.items():
        ttft, ttfa = measured(rows, "ttft_ms"), measured(rows, "ttfa_ms")
        p50, p90 = percentiles_ms(ttfa, (50, 90)) if ttfa else (None, None)
        out.append(
            PassFigures(
                repeat=repeat,
                turns=len(rows),
                failed=sum(r.error is not None for r in rows),
                ttft_p50_ms=median_ms(ttft),
                ttfa_p50_ms=p50,
                ttfa_p90_ms=p90,
                within_budget=within_budgets(
                    rows, budget_ttfa_ms=budget_ttfa_ms, budget_ttft_ms=budget_ttft_ms
                ),
            )
        )
    return tuple(out)


def distribution(
    values: Sequence[float],
    budget_ms: float,
    clusters: Sequence[str] | None = None,
    *,
    rounds: int = bootstrap.ROUNDS,
    seed: int = 0,
) -> Distribution:
    """Percentiles of ``values`` with intervals over resampled ``clusters`` (each value's
    dialogue; by default each value its own), and the share within ``budget_ms``. A
    percentile whose interval needs more clusters than there are has none."""
    x = np.asarray(values, dtype=float)
    if x.size == 0:
        return Distribution(n=0, budget_ms=budget_ms)
    ids = list(clusters) if clusters is not None else [str(k) for k in range(x.size)]
    k = bootstrap.count_clusters(ids)
    shown = [q for q in QUANTILES if k >= bootstrap.clusters_needed(q)]  # only these resampled
    intervals: dict[int, tuple[float, float]] = {}
    if shown:
        stats = [bootstrap.weighted_percentile(q) for q in shown]
        _, lo, hi = bootstrap.clustered(x, ids, stats, rounds=rounds, seed=seed)
        intervals = {
            q: (round(float(a), 1), round(float(b), 1))
            for q, a, b in zip(shown, lo, hi, strict=True)
        }
    return Distribution(
        n=int(x.size),
        clusters=k,
        mean_ms=round(float(x.mean()), 1),
        budget_ms=budget_ms,
        quantiles=tuple(
            Quantile(q=q, value_ms=round(float(v), 1), ci_ms=intervals.get(q))
            for q, v in zip(QUANTILES, np.percentile(x, QUANTILES), strict=True)
        ),
        within_budget=round(float(np.mean(x <= budget_ms)), 4),
    )


def cold_flags(records: Sequence[TurnRecord]) -> list[bool]:
    """Per record, whether it was a cold turn."""
    if any(r.cold is not None for r in records):
        return [bool(r.cold) for r in records]
    return [k == 0 for k in range(len(records))]


def _slow_turn(r: TurnRecord, t: TurnTiming, ttfa_ms: float, cold: bool) -> SlowTurn:
    stages = t.stages_ms
    known = {k: v for k, v in stages.items() if v is not None}
    return SlowTurn(
        dialogue_id=r.dialogue_id,
        turn_index=r.turn_index,
        cold=cold,
        user_text=r.user_text,
        ttfa_ms=round(ttfa_ms, 1),
        ttft_ms=None if t.ttft_ms is None else round(t.ttft_ms, 1),
        slowest_stage=max(known, key=lambda k: known[k]) if known else "-",
        stages_ms={k: None if v is None else round(v, 1) for k, v in stages.items()},
    )


def agent_latency(
    run_dir: Path,
    header: RunHeader,
    records: Sequence[TurnRecord],
    *,
    budget_ttft_ms: float,
    budget_ttfa_ms: float,
    seed: int = 0,
    turn_timeout_ms: float = 60_000.0,
    openings: Sequence[TurnRecord] = (),
) -> AgentLatency:
    """The run's latency figures, from its turns, and from the agent's ``openings`` (its
    greetings) their TTFA apart, each opening its own call."""
    cold = cold_flags(records)

    def figures(name: str, keep) -> tuple[list[float], list[str]]:
        values, dialogues = [], []
        for r, c in zip(records, cold, strict=True):
            v = getattr(r.timing, name) if r.timing is not None else None
            if v is not None and keep(c):
                values.append(v)
                dialogues.append(r.dialogue_id)
        return values, dialogues

    def dist(name: str, budget: float, keep=lambda c: True) -> Distribution:
        values, dialogues = figures(name, keep)
        return distribution(values, budget, dialogues, seed=seed)

    # (record, its timing, its TTFA, cold) for every turn with a TTFA
    timed = [
        (r, t, t.ttfa_ms, c)
        for r, c in zip(records, cold, strict=True)
        if (t := r.timing) is not None and t.ttfa_ms is not None
    ]
    # A remote agent is a black box: only its audio is seen, so it has no stages.
    stage_rows = [] if header.agent.remote is not None else [t.stages_ms for _, t, _, _ in timed]
    waterfall = (
        {s: round(float(np.mean([row[s] or 0.0 for row in stage_rows])), 3) for s in STAGE_NAMES}
        if stage_rows
        else {}
    )
    p50 = {
        s: median_ms([x for row in stage_rows if (x := row[s]) is not None]) for s in STAGE_NAMES
    }

    accounted = [
        (parts, r.reported.e2e_ms, ttfa)
        for r, _, ttfa, _ in timed
        if r.reported is not None and (parts := r.reported.accounting(ttfa)) is not None
    ]
    reported = (
        {k: round(float(np.mean([p[k] for p, _, _ in accounted])), 3) for k in accounted[0][0]}
        if accounted
        else {}
    )
    e2e = [v for _, v, _ in accounted if v is not None]
    failed = sum(r.error is not None for r in records)
    censored = None
    if failed:
        censored = distribution(
            censored_ttfa(records, turn_timeout_ms),
            budget_ttfa_ms,
            [r.dialogue_id for r in records],
            seed=seed,
        )
    wers = [r.asr_wer for r in records if r.asr_wer is not None]
    calls = [r.llm_calls for r in records if r.llm_calls is not None]
    slowest = sorted(timed, key=lambda x: -x[2])[:SLOWEST]
    return AgentLatency(
        run_dir=str(run_dir),
        run_id=header.run_id,
        agent_name=header.agent.name,
        contestant=header.agent.id,
        family=header.agent.family,
        kind=(
            "remote"
            if header.agent.remote is not None
            else "speech-to-speech"
            if header.agent.s2s is not None
            else "livekit"
            if header.agent.livekit is not None
            else "cascade"
        ),
        mode=header.mode.value,
        created_at=header.created_at,
        turns=len(records),
        failed=failed,
        failed_by_kind=count_kinds(r.error.kind for r in records if r.error is not None),
        ttft=dist("ttft_ms", budget_ttft_ms),
        ttfa=dist("ttfa_ms", budget_ttfa_ms),
        ttft_warm=dist("ttft_ms", budget_ttft_ms, lambda c: not c),
        ttfa_warm=dist("ttfa_ms", budget_ttfa_ms, lambda c: not c),
        ttfa_cold=dist("ttfa_ms", budget_ttfa_ms, lambda c: c),
        ttfa_censored=censored,
        censored_at_ms=turn_timeout_ms if failed else None,
        opening_ttfa=distribution(opening_ttfa(openings), budget_ttfa_ms) if openings else None,
        openings=len(openings),
        openings_failed=sum(r.error is not None for r in openings),
        cold_turns=sum(cold),
        within_budget=within_budgets(
            records, budget_ttfa_ms=budget_ttfa_ms, budget_ttft_ms=budget_ttft_ms
        ),
        waterfall_ms=waterfall,
        waterfall_total_ms=(
            round(float(np.mean([ttfa for _, _, ttfa, _ in timed])), 3) if timed else None
        ),
        stage_p50_ms=p50,
        reported_ms=reported,
        reported_total_ms=(
            round(float(np.mean([t for _, _, t in accounted])), 3) if accounted else None
        ),
        reported_e2e_ms=round(float(np.mean(e2e)), 3) if e2e else None,
        asr_wer_mean=round(float(np.mean(wers)), 4) if wers else None,
        asr_wer_turns=len(wers),
        asr_turns_with_errors=sum(w > 0 for w in wers),
        llm_calls_per_turn=round(float(np.mean(calls)), 2) if calls else None,
        stalls=stall_summary(records),
        sound=sound_summary(records),
        slowest=tuple(_slow_turn(*x) for x in slowest),
        failures=tuple(
            FailedTurn(
                dialogue_id=r.dialogue_id,
                turn_index=r.turn_index,
                kind=r.error.kind,
                reason=r.error.reason,
            )
            for r in records
            if r.error is not None
        ),
        scenarios=tuple(scenario_figures(records))
        if any(r.scenario is not None for r in records)
        else (),
        passes=pass_figures(records, budget_ttft_ms=budget_ttft_ms, budget_ttfa_ms=budget_ttfa_ms),
        hosts=header.hosts,
        busy=busy(header.hosts),
    )
