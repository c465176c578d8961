"""The table after a run that played scenarios: turns grouped by what they played, TTFA medians
and word error rates with intervals, and what each scenario measured."""

from __future__ import annotations

from synthetic_runs import STAMP, timing

from voicebench.runlog import ScenarioOutcome, TurnRecord
from voicebench.runlog.scenario_figures import scenario_figures, scenario_table

TEXT = "I lost my job and I do not know what to tell my family"  # 14 words


def record(k: int, ttfa_ms: int, heard: str, scenario: ScenarioOutcome | None) -> TurnRecord:
    return TurnRecord(
        run_id="r",
        contestant="scripted/scripted-llm",
        agent_name="scripted",
        dialogue_id="item",
        turn_index=k,
        final=False,
        user_text=TEXT,
        user_transcript=heard,
        timing=timing(ttfa_ms),
        scenario=scenario,
        started_at=STAMP,
    )


def noisy(snr: float, measured: float) -> ScenarioOutcome:
    return ScenarioOutcome(name="noise", params={"kind": "pink", "snr_db": snr}, snr_db=measured)


def test_turns_are_grouped_by_what_they_played_with_intervals():
    line = ScenarioOutcome(
        name="phone-line",
        params={"loss_pct": 3.0},
        uplink_loss_pct=2.0,
        downlink_loss_pct=4.0,
        line_delay_ms=120.0,
    )
    two_wrong = TEXT.replace("job", "jog").replace("family", "fam")
    records = [
        record(1, 800, TEXT, None),
        record(2, 900, TEXT, noisy(10.0, 9.8)),
        record(3, 1000, two_wrong, noisy(10.0, 10.2)),
        record(4, 700, TEXT, noisy(5.0, 5.1)),
        record(5, 950, TEXT, line),
    ]
    rows = {r.group: r for r in scenario_figures(records)}
    assert list(rows) == ["clean", "noise pink 10 dB", "noise pink 5 dB", "phone-line"]
    ten = rows["noise pink 10 dB"]
    assert ten.turns == 2 and ten.failed == 0
    assert ten.ttfa_p50_ms is not None and ten.ttfa_p50_ms[0] == 950.0
    assert ten.ttfa_p50_ms[1] <= 950.0 <= ten.ttfa_p50_ms[2]
    assert ten.wer is not None and ten.wer[0] == 2 / 28  # two errors in 28 reference words
    assert ten.measured == "SNR 10.0 dB"
    assert rows["clean"].wer == (0.0, 0.0, 0.0)
    assert rows["phone-line"].measured == "lost 2.0% up, 4.0% down, +120 ms line"
    table = scenario_table(list(rows.values()), "by scenario")
    assert table.row_count == 4
