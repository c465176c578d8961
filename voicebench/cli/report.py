"""The ``report`` command."""

from __future__ import annotations

import enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from voicebench.budgets import TTFA_BUDGET_MS, TTFT_BUDGET_MS
from voicebench.cli.common import say, show, show_trust

if TYPE_CHECKING:
    from voicebench.reporting import BuiltReport


class AudioChoice(enum.StrEnum):
    wav = "wav"
    opus = "opus"


def show_report(built: BuiltReport) -> None:
    j = built.report.judging
    if j is not None:
        show_trust(j.card)
    clips = sum(1 for item in built.report.replies for r in item.replies if r.audio)
    show(
        f"report: {built.out_dir / 'index.html'} (also report.md, report.json, "
        f"{len(built.report.figures)} figures as PNG and SVG"
        + (f", {clips} replies' audio in audio/" if clips else "")
        + ")"
    )


def report(
    paths: Annotated[
        list[Path],
        typer.Argument(
            help="Run directories and/or one judging folder (its runs are included). A run's "
            "judging/ folder is used when no judging folder is given."
        ),
    ],
    out_dir: Annotated[
        Path | None,
        typer.Option("--out", "-o", help="Report folder (default reports/report-TIMESTAMP)."),
    ] = None,
    title: Annotated[str | None, typer.Option(help="Page title.")] = None,
    budget_ttft_ms: Annotated[float, typer.Option(help="TTFT budget (ms).")] = TTFT_BUDGET_MS,
    budget_ttfa_ms: Annotated[float, typer.Option(help="TTFA budget (ms).")] = TTFA_BUDGET_MS,
    human_judgments: Annotated[
        Path | None, typer.Option(help="Human judgments (CSV or JSONL) for the agreement figures.")
    ] = None,
    audio: Annotated[
        AudioChoice,
        typer.Option(
            help="The judged replies' audio in audio/: wav as recorded, or opus (Opus in Ogg, "
            "about a tenth of the size) for a report to share.",
        ),
    ] = AudioChoice.wav,
) -> None:
    """Write the latency-budget report and the quality-latency frontier: index.html (one
    self-contained page), report.md, report.json and figures/ (PNG and SVG)."""
    from voicebench.api import report as build_report

    show_report(
        build_report(
            paths,
            out=out_dir,
            title=title,
            budget_ttft_ms=budget_ttft_ms,
            budget_ttfa_ms=budget_ttfa_ms,
            human_judgments=human_judgments,
            audio_format="opus" if audio is AudioChoice.opus else "wav",
            on_status=say,
        )
    )


def register(app: typer.Typer) -> None:
    app.command()(report)
