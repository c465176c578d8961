"""The table after a run that played scenarios: turns grouped by what they played, TTFA medians
and word error rates with intervals, and what each scenario measured."""

from __future__ import annotations

from synthetic_runs import STAMP, timing

from voicebench.cli.present.runs import overlap_table, scenario_table
from voicebench.metrics.scenarios import scenario_figures
from voicebench.runlog import ScenarioOutcome, TurnRecord

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


def test_interruption_figures_count_only_turns_where_the_agent_was_talking():
    def barge(stop_ms: float | None, yielded: bool | None) -> ScenarioOutcome:
        return ScenarioOutcome(
            name="barge-in",
            params={"delay_ms": 800.0},
            agent_speaking=stop_ms is not None,
            stop_ms=stop_ms,
            yielded=yielded,
            talk_over_s=None if stop_ms is None else stop_ms / 1000,
            answered=None if stop_ms is None else True,
        )

    def word(false_yield: bool, lost_s: float | None = None) -> ScenarioOutcome:
        return ScenarioOutcome(
            name="backchannel",
            params={"words": "yeah", "delay_ms": 800.0},
            agent_speaking=True,
            false_yield=false_yield,
            lost_s=lost_s,
        )

    pause = [
        ScenarioOutcome(name="pause", params={"pause_ms": 900.0}, premature=p)
        for p in (True, False, False, False)
    ]
    records = [
        record(1, 800, TEXT, barge(100.0, True)),
        record(2, 800, TEXT, barge(200.0, True)),
        record(3, 800, TEXT, barge(3000.0, False)),
        record(4, 800, TEXT, barge(None, None)),  # the reply had ended: not counted
        record(5, 800, TEXT, word(True, 1.5)),
        record(6, 800, TEXT, word(False)),
        *(record(7 + i, 800, TEXT, p) for i, p in enumerate(pause)),
    ]
    rows = {r.group: r for r in scenario_figures(records)}
    b = rows["barge-in"]
    assert b.turns == 4 and b.overlapped == 3
    assert b.stop_p50_ms is not None and b.stop_p50_ms[0] == 200.0
    assert b.yielded is not None and b.yielded[0] == 2 / 3
    assert 0.0 < b.yielded[1] < 2 / 3 < b.yielded[2] < 1.0  # Wilson: never a zero-width 0 or 1
    assert b.talk_over_s == (0.1 + 0.2 + 3.0) / 3
    bc = rows["backchannel"]
    assert bc.false_yield is not None and bc.false_yield[0] == 0.5 and bc.lost_s == 1.5
    assert rows["pause"].premature is not None and rows["pause"].premature[0] == 0.25
    table = overlap_table(list(rows.values()), "overlap")
    assert table is not None
    cells = [str(c) for col in table.columns for c in col._cells]
    assert "200 [100, 3,000] ms" in cells and "3 of 4 turns talking" in cells
    assert overlap_table([rows["barge-in"]][:0], "none") is None
