"""The per-stage summary names only the stages some turn has: a cascade's run has no row for a
speech-to-speech model's first audio, a black box's none but TTFT and TTFA."""

from __future__ import annotations

from rich.console import Console
from synthetic_runs import STAMP, run_header, timing

from voicebench.cli.present.runs import summary_table
from voicebench.dialogues import BUILTIN_DIALOGUES, load_dialogues
from voicebench.metrics import summarize
from voicebench.runlog import TurnRecord
from voicebench.timing import TurnTiming

CASCADE = ["endpointing", "asr", "turn_end", "llm_ttft", "text_aggregation", "tts_first_audio"]


def turn(n: int, t: TurnTiming) -> TurnRecord:
    d = load_dialogues(BUILTIN_DIALOGUES)[n]
    header = run_header("fast", [d])
    return TurnRecord(
        run_id=header.run_id,
        contestant="scripted/fast",
        agent_name="fast",
        dialogue_id=d.id,
        turn_index=d.final_turn_index,
        final=True,
        user_text=d.turns[d.final_turn_index].text,
        timing=t,
        started_at=STAMP,
    )


def test_a_stage_no_turn_has_is_left_out():
    records = [turn(0, timing(900)), turn(1, timing(1100))]
    summary = summarize(records)
    assert [r.name for r in summary.rows] == [*CASCADE, "output", "TTFT", "TTFA"]
    assert all(r.n == 2 for r in summary.rows)
    console = Console(width=100, record=True)
    console.print(summary_table(summary, "fast"))
    shown = console.export_text()
    for name in ("model_audio", "turn_hold", "audio_hold"):
        assert name not in shown
    assert "llm_ttft" in shown and "TTFA" in shown


def test_a_black_box_has_only_ttft_and_ttfa():
    """A remote agent's turn: only its end of speech and first audio are seen."""
    box = TurnTiming(speech_end_ns=0, audio_out_ns=900_000_000)
    summary = summarize([turn(0, box)])
    assert [(r.name, r.n, r.p50) for r in summary.rows] == [
        ("TTFT", 0, None),
        ("TTFA", 1, 900.0),
    ]
