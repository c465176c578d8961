"""The ``report`` command."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from voicebench import api
from voicebench.api import TTFA_BUDGET_MS, TTFT_BUDGET_MS, InputError
from voicebench.cli.common import AudioChoice, audio_format, commands, say
from voicebench.cli.present.report import show_report

app = commands()


@app.command()
def report(
    paths: Annotated[
        list[Path],
        typer.Argument(
            help="Run directories and/or one judging folder (its runs are included). A run's "
            "judging/ folder is used when no judging folder is given. Or one campaign or demo "
            "folder: the report the campaign made, at its budgets. Or one load folder "
            "(voicebench load): its report by concurrency and over time."
        ),
    ],
    out_dir: Annotated[
        Path | None,
        typer.Option("--out", "-o", help="Report folder (default reports/report-TIMESTAMP)."),
    ] = None,
    title: Annotated[str | None, typer.Option(help="Page title.")] = None,
    budget_ttft_ms: Annotated[
        float | None,
        typer.Option(
            min=0,
            help=f"TTFT budget (ms); default {TTFT_BUDGET_MS:.0f}, or a campaign folder's own.",
        ),
    ] = None,
    budget_ttfa_ms: Annotated[
        float | None,
        typer.Option(
            min=0,
            help=f"TTFA budget (ms); default {TTFA_BUDGET_MS:.0f}, or a campaign folder's own.",
        ),
    ] = None,
    human_judgments: Annotated[
        Path | None, typer.Option(help="Human judgments (CSV or JSONL) for the agreement figures.")
    ] = None,
    audio: Annotated[
        AudioChoice | None,
        typer.Option(
            help="The judged replies' audio and the calls' recordings in audio/: wav as "
            "recorded, or opus (Opus in Ogg, about a tenth of the size) for a report to share. "
            "The run folders keep theirs as recorded.",
            show_default="wav, or a campaign or demo folder's own",
        ),
    ] = None,
) -> None:
    """Write the latency-budget report and the quality-latency frontier: index.html (one
    self-contained page), report.md, report.json and figures/ (PNG and SVG). For a load
    folder: TTFA and failures by concurrency with the breaking point, and calls in progress
    over time (index.html, summary.json, figures/); once judged (voicebench judge LOAD_DIR),
    quality by concurrency beside TTFA, and where quality breaks."""
    loads = [p for p in paths if api.is_load(p)]
    if loads:
        if len(paths) > 1:
            raise InputError("a load folder is reported on its own", file=loads[0])
        page = api.load_report(
            loads[0],
            out=out_dir,
            budget_ttfa_ms=TTFA_BUDGET_MS if budget_ttfa_ms is None else budget_ttfa_ms,
        )
        say(f"load report: {page}")
        return

    show_report(
        api.report(
            paths,
            out=out_dir,
            title=title,
            budget_ttft_ms=budget_ttft_ms,
            budget_ttfa_ms=budget_ttfa_ms,
            human_judgments=human_judgments,
            audio_format=None if audio is None else audio_format(audio),
            on_status=say,
        )
    )
