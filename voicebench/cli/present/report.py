"""What the terminal says when a report is written."""

from __future__ import annotations

from voicebench.api.views import BuiltReport
from voicebench.cli.common import show
from voicebench.cli.present.hosts import show_report_hosts
from voicebench.cli.present.judging import show_trust


def show_report(built: BuiltReport, *, card: bool = True) -> None:
    """Where the report is, its judge's card first (``card=False``: for a job that showed
    the card with its ratings), and the warnings of a busy machine."""
    j = built.report.judging
    if j is not None and card:
        show_trust(j.card)
    clips = sum(1 for item in built.report.replies for r in item.replies if r.audio)
    show(
        f"report: {built.out_dir / 'index.html'} (also report.md, report.json, "
        f"{len(built.report.figures)} figures as PNG and SVG"
        + (f", {clips} replies' audio in audio/" if clips else "")
        + (f", {len(built.report.recordings)} call recording(s)" if built.report.recordings else "")
        + ")"
    )
    show_report_hosts(built)
