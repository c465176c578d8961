"""``voicebench recordings analyze``: recorded calls written as a run folder that ``check`` and
``report`` read as a replay: a Twilio-style 8 kHz mu-law recording with a barge-in."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from known_calls import gapped_call, known_call, write
from rich.console import Console
from typer.testing import CliRunner

from voicebench import api
from voicebench.cli import app
from voicebench.cli.present.recordings import recorded_calls_table
from voicebench.errors import InputError, RunError
from voicebench.pytest_plugin import expect
from voicebench.recordings.folder import analyze_recordings
from voicebench.runlog import read_header

CALL = known_call(latencies_s=(0.6, 1.2), barge_after_s=1.0, stop_s=0.4)


@pytest.mark.slow
def test_recorded_calls_become_a_run_folder_that_check_and_report_read(tmp_path: Path):
    calls = tmp_path / "calls"
    calls.mkdir()
    write(calls / "twilio-call.wav", CALL.stereo(), 8_000, "ULAW")
    write(calls / "second.flac", CALL.stereo()[:, ::-1].copy())  # the caller on the right
    out = tmp_path / "run"
    shown = CliRunner().invoke(
        app, ["recordings", "analyze", str(calls / "twilio-call.wav"), "--out", str(out)]
    )
    assert shown.exit_code == 0, shown.output
    run = api.Run.load(out)
    assert read_header(out).mode == "recorded"
    turns = list(run.records)
    assert [r.turn_index for r in turns] == [0, 2, 4] and turns[-1].final
    # TTFA is the response latency read off the recording, to within a VAD frame
    assert [round(r.timing.ttfa_ms / 100) for r in turns[:2]] == [6, 12]
    barge = turns[2]
    assert barge.error is not None and barge.error.kind == "no_answer"
    assert barge.scenario.name == "barge-in" and 300 <= barge.scenario.stop_ms <= 360
    # both channels heard: the caller's words and the agent's reply
    assert "alone" in turns[0].user_text.lower() and "lonely" in turns[0].reply_text.lower()
    item = json.loads((out / "dialogues.jsonl").read_text().splitlines()[0])
    # up to the last turn answered: the barge-in was never answered, so nothing to judge
    assert item["id"] == "twilio-call" and len(item["turns"]) == 3

    gates = api.check(out, max_ttfa_p50_ms=1500)
    assert gates.results[0].figure.value == pytest.approx(900, abs=40)
    assert expect(out, max_ttfa_p50_ms=1500).passed  # the pytest plugin's, unchanged
    page = api.report([out], out=tmp_path / "report")
    assert (page.out_dir / "index.html").is_file()

    # each call's recording beside it, every turn's milestones moments of it, and the call as
    # read off it: talk-over, and the dead air after its last turn (the recording's second)
    (call,) = api.recorded_calls(out)
    assert call.caller == "left" and call.caller_guess is None
    assert [t.barge_in for t in call.turns] == [False, False, True]
    assert call.turns[-1].dead_air_s == 0.0 and call.turns[2].talk_over_s > 0
    assert "Each call, read off its recording" in shown.output
    for r in turns:
        assert r.call.path == "calls/twilio-call.wav" and (out / r.call.path).is_file()
    assert turns[0].call.seconds(turns[0].timing.speech_end_ns) == pytest.approx(
        CALL.truth[0]["end_s"], abs=0.002
    )

    # the caller on the right, found by guessing: the agent stopped when talked over
    other = api.analyze_recordings([calls / "second.flac"], out=tmp_path / "r2", caller="auto")
    assert [round(r.timing.ttfa_ms / 100) for r in list(other.records)[:2]] == [6, 12]
    (guessed,) = api.recorded_calls(other.path)
    assert guessed.caller == "right" and "stopped when talked over" in guessed.caller_guess

    # a batch stopped after its first recording is finished by the same command; another
    # batch into the same folder is refused
    both = tmp_path / "both"
    api.analyze_recordings(calls, out=both, caller="auto")
    lines = (both / "calls.jsonl").read_text().splitlines(keepends=True)
    (both / "calls.jsonl").write_text(lines[0])  # killed as the second call was written
    finished = api.analyze_recordings(calls, out=both, caller="auto")
    assert [c.call_id for c in api.recorded_calls(both)] == ["second", "twilio-call"]
    assert len(finished.records) == 6
    again = CliRunner().invoke(app, ["recordings", "analyze", str(calls), "--out", str(out)])
    assert again.exit_code != 0 and "differs from the run being resumed" in again.output


def test_each_replys_gaps_are_kept_and_shown_as_gaps_not_stalls(tmp_path: Path):
    call, gap_at_s, _ = gapped_call()
    path = write(tmp_path / "call.wav", call.stereo())
    analyze_recordings([path], tmp_path / "run", transcribe=lambda _pcm: "")
    (got,) = api.recorded_calls(tmp_path / "run")
    assert [t.gap_count for t in got.turns] == [1, 0]
    (gap,) = got.turns[0].gaps
    assert gap.at_s == pytest.approx(gap_at_s, abs=1e-4) and gap.length_s == pytest.approx(0.4)
    # a lower bar finds the 0.1 s silence too; it is another analysis, not the same one resumed
    analyze_recordings([path], tmp_path / "finer", transcribe=lambda _pcm: "", gap_s=0.08)
    (finer,) = api.recorded_calls(tmp_path / "finer")
    assert gap in finer.turns[0].gaps and finer.turns[0].gap_count > 1
    with pytest.raises(RunError, match="differs from the run being resumed"):
        analyze_recordings([path], tmp_path / "run", transcribe=lambda _pcm: "", gap_s=0.08)

    console = Console(width=160, record=True, color_system=None)
    console.print(recorded_calls_table([got]))
    shown = console.export_text()
    (row,) = [line for line in shown.splitlines() if line.startswith("│ call ")]
    assert "longest gap (ms)" in shown and [c.strip() for c in row.split("│")[-3:-1]] == [
        "1",
        "400",
    ]
    said = " ".join(shown.split())
    assert "a recording cannot tell a stall (audio that arrived late) from a pause" in said
    # the shortest gap is under the silence that ends the agent's talk
    with pytest.raises(InputError, match="under 500 ms") as refused:
        api.analyze_recordings([path], out=tmp_path / "no", gap_ms=500)
    assert refused.value.field == "gap_ms"
    wrong = CliRunner().invoke(app, ["recordings", "analyze", str(path), "--gap-ms", "0"])
    assert wrong.exit_code != 0 and "--gap-ms: must be over 0" in wrong.output
