"""Call recordings: ``recordings analyze``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from voicebench import api
from voicebench.api.recordings import MIN_GAP_MS
from voicebench.cli.common import (
    CallerOpt,
    Steps,
    VerboseOpt,
    VoicebenchGroup,
    out,
    quiet_libraries,
    show,
)
from voicebench.cli.present.recordings import recorded_calls_table
from voicebench.cli.present.runs import show_scenarios, summary_table

app = typer.Typer(
    cls=VoicebenchGroup,
    rich_markup_mode="markdown",
    no_args_is_help=True,
    help="Call recordings: time recorded calls from their audio.",
)


@app.command("analyze")
def analyze(
    recordings: Annotated[
        list[Path],
        typer.Argument(help="Two-channel recordings (WAV, mu-law WAV, FLAC, Opus), or folders."),
    ],
    caller: CallerOpt = "left",
    out_dir: Annotated[
        Path | None,
        typer.Option(
            "--out", "-o", help="Run folder to write (default reports/runs/recorded-TIMESTAMP)."
        ),
    ] = None,
    name: Annotated[str, typer.Option(help="The agent's name in the folder.")] = "recorded",
    gap_ms: Annotated[
        float,
        typer.Option(
            "--gap-ms",
            help="The shortest silence inside the agent's reply that is a gap, in ms (under "
            "500: that long ends its talk). A gap may be a stall or a pause the agent meant: a "
            "recording cannot tell them apart.",
        ),
    ] = MIN_GAP_MS,
    verbose: VerboseOpt = False,
) -> None:
    """Time recorded calls that voicebench did not make: each caller utterance is a turn, its
    TTFA the agent's first audio after the caller's end of speech (Silero VAD in 32 ms frames,
    edges moved to the sample on a clean line, to 10 ms in noise), barge-ins with the agent's
    stop time, talk-over, dead air and the gaps inside each reply (silences of --gap-ms or
    more: stalls or meant pauses, which a recording cannot tell apart), both channels
    transcribed. Writes a run folder that check, compare and report read as a replay, with each
    call in calls/ and every turn as read off it in calls.jsonl; rerun with the same --out to
    finish a batch that was stopped."""
    quiet_libraries(verbose)
    with Steps("recordings") as s:
        run = api.analyze_recordings(
            recordings,
            out=out_dir,
            caller=caller,
            name=name,
            gap_ms=gap_ms,
            progress=s.file_done,
        )
    out.print(summary_table(run.summary, f"{name} - {run.path}"))
    show_scenarios(list(run.records))
    out.print(recorded_calls_table(api.recorded_calls(run.path), gap_ms=gap_ms))
    show(f"turns: {run.path}/turns.jsonl; check, compare and report read the folder")
