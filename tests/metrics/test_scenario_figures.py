"""The table after a run that played scenarios: turns grouped by what they played, TTFA medians
and word error rates with intervals, and what each scenario measured."""

from __future__ import annotations

from synthetic_runs import STAMP, timing

from voicebench.cli.present.runs import overlap_table, scenario_table
from voicebench.metrics.scenarios import scenario_figures
from voicebench.runlog import ScenarioOutcome, TurnRecord

TEXT = "I lost my job and I do not know what to tell my family"  # 14 words


def record(
    k: int, ttfa_ms: int, heard: str, scenario: ScenarioOutcome | None, dialogue: str = "item"
) -> TurnRecord:
    return TurnRecord(
        run_id="r",
        contestant="scripted/scripted-llm",
        agent_name="scripted",
        dialogue_id=dialogue,
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
    # one dialogue: each figure has its value and no interval (too few to tell)
    assert ten.ttfa_p50_ms == (950.0, None, None)
    assert ten.wer == (2 / 28, None, None)  # two errors in 28 reference words
    assert ten.measured == "SNR 10.0 dB"
    assert rows["clean"].wer == (0.0, None, None)
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
    assert b.stop_p50_ms == (200.0, None, None)  # one dialogue: too few to tell
    assert b.yielded == (2 / 3, None, None)
    assert b.talk_over_s == (0.1 + 0.2 + 3.0) / 3
    bc = rows["backchannel"]
    assert bc.false_yield is not None and bc.false_yield[0] == 0.5 and bc.lost_s == 1.5
    assert rows["pause"].premature is not None and rows["pause"].premature[0] == 0.25
    table = overlap_table(list(rows.values()), "overlap")
    assert table is not None
    cells = [str(c) for col in table.columns for c in col._cells]
    assert "200 ms (too few to tell)" in cells and "3 of 4 turns talking" in cells
    assert overlap_table([rows["barge-in"]][:0], "none") is None


def test_intervals_resample_dialogues_and_need_enough_of_them():
    """Twelve dialogues of three noisy turns each, the dialogues 300 ms apart: the TTFA
    median's interval is as wide as the dialogues make it, wider than the turns alone would
    (turn-level resampling treats the 36 turns as independent); a share's interval over
    dialogues holds its value; five dialogues are too few."""
    records = [
        record(k, 700 + 30 * d + 2 * k, TEXT, noisy(10.0, 10.0), f"d{d:02d}")
        for d in range(12)
        for k in (1, 3, 5)
    ]
    (row,) = scenario_figures(records)
    point, low, high = row.ttfa_p50_ms
    assert low is not None and high is not None and low < point < high
    assert high - low >= 90.0  # three dialogues either way of the median, 30 ms apart
    few = scenario_figures([r for r in records if r.dialogue_id < "d05"])
    assert few[0].ttfa_p50_ms[1:] == (None, None) and few[0].wer[1:] == (None, None)
