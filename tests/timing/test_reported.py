"""A framework's own figures (a LiveKit agent's per-message metrics) beside the measured TTFA:
its formula's parts and what they leave out add up to the TTFA, in a run's summary and in the
report's latency model, and an older log without them reads as before."""

from __future__ import annotations

import pytest
from synthetic_runs import STAMP, timing

from voicebench.metrics import agent_latency, reported_summary
from voicebench.runlog import TurnRecord
from voicebench.timing import ReportedLatency


def record(k: int, ttfa_ms: int, reported: ReportedLatency | None) -> TurnRecord:
    return TurnRecord(
        run_id="r",
        contestant="livekit/lk",
        agent_name="lk",
        dialogue_id=f"d{k}",
        turn_index=1,
        final=True,
        user_text="hello",
        timing=timing(ttfa_ms),
        reported=reported,
        started_at=STAMP,
    )


def test_the_formulas_parts_and_what_it_leaves_out_sum_to_the_ttfa():
    rep = ReportedLatency(end_of_turn_ms=700.0, llm_ttft_ms=300.0, tts_ttfb_ms=150.0, e2e_ms=1150)
    assert rep.accounting(1400.0) == {
        "end_of_turn_ms": 700.0,
        "llm_ttft_ms": 300.0,
        "tts_ttfb_ms": 150.0,
        "unreported_ms": 250.0,
    }
    # Overlapping parts (the LLM ran during the turn decision) count twice: negative.
    assert rep.accounting(1000.0)["unreported_ms"] == -150.0
    assert ReportedLatency(end_of_turn_ms=700.0, llm_ttft_ms=300.0).accounting(1000.0) is None


def test_a_runs_summary_and_latency_model_cut_ttfa_as_the_framework_does():
    reps = [
        ReportedLatency(end_of_turn_ms=700.0 + 10 * k, llm_ttft_ms=300.0, tts_ttfb_ms=150.0)
        for k in range(4)
    ]
    records = [record(k, 1400 + 20 * k, rep) for k, rep in enumerate(reps)]
    records.append(record(9, 2000, None))  # a turn LiveKit reported nothing of
    summary = reported_summary(records)
    assert summary is not None and summary.framework == "livekit"
    rows = {row.name: row for row in summary.rows}
    assert list(rows) == ["end_of_turn", "llm_ttft", "tts_ttfb", "unreported", "e2e", "TTFA"]
    assert rows["TTFA"].n == 4 and rows["e2e"].n == 0
    assert rows["unreported"].p50 == pytest.approx(265.0)  # (250, 260, 270, 280)
    assert reported_summary([record(0, 1400, None)]) is None

    from synthetic_runs import run_header

    header = run_header("lk", [])
    latency = agent_latency("dir", header, records, budget_ttft_ms=500.0, budget_ttfa_ms=1000.0)
    assert set(latency.reported_ms) == {
        "end_of_turn_ms",
        "llm_ttft_ms",
        "tts_ttfb_ms",
        "unreported_ms",
    }
    assert sum(latency.reported_ms.values()) == pytest.approx(latency.reported_total_ms)
    assert latency.reported_total_ms == pytest.approx(1430.0)  # the four turns that have them
    plain = agent_latency(
        "dir", header, [record(0, 1400, None)], budget_ttft_ms=500.0, budget_ttfa_ms=1000.0
    )
    assert plain.reported_ms == {} and plain.reported_total_ms is None


def test_a_turn_without_figures_writes_no_field():
    assert "reported" not in record(0, 1400, None).model_dump_json()
    with_them = record(0, 1400, ReportedLatency(e2e_ms=1.0))
    assert TurnRecord.model_validate_json(with_them.model_dump_json()) == with_them
