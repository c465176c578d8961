"""The load summary as a table: concurrency bands with their intervals, and the breaking
point with its own."""

from __future__ import annotations

from rich.table import Table

from voicebench.api.views import (
    Band,
    LoadQuality,
    LoadSummary,
    breaking_point_text,
    quality_break_text,
)
from voicebench.cli.common import out, show
from voicebench.cli.present.fit import span


def _span(v: float, ci: tuple[float, float] | None, scale: float = 1.0, unit: str = "") -> str:
    """The value above its interval (a line each: the table fits 80 columns with both whole)."""
    if ci is None:  # too few calls in the band for an interval
        return f"{v * scale:,.0f}{unit}\n[too few to tell]"
    return f"{v * scale:,.0f}{unit}\n[{span(*ci, scale=scale)}]"


def _stalls(band: Band) -> str:
    """The share of the band's replies' playing time stalled, and its longest stall."""
    if band.stalled_share is None or band.longest_stall_ms is None:
        return "-"
    return f"{100 * band.stalled_share:.1f}%\n({band.longest_stall_ms:,.0f} ms)"


def load_table(summary: LoadSummary, title: str) -> Table:
    t = Table(title=title, title_justify="left")
    for c in ("concurrent calls", "calls", "turns"):
        t.add_column(c, justify="right")
    for c in ("TTFA p50 ms\n[95% CI]", "p90 ms\n[95% CI]", "failed\n[95% CI]"):
        t.add_column(c, justify="right", no_wrap=True)
    t.add_column("stalled\n(longest)", justify="right", no_wrap=True)
    t.add_column("over", justify="right")
    for b in summary.bands:
        t.add_row(
            str(b.low) if b.low == b.high else f"{b.low}-{b.high}",
            str(b.calls),
            str(b.turns),
            _span(b.ttfa_p50_ms, b.ttfa_p50_ci),
            _span(b.ttfa_p90_ms, b.ttfa_p90_ci),
            _span(b.failure_share, b.failure_ci, 100.0, "%"),
            _stalls(b),
            "[red]yes[/]" if b.over else "no",
        )
    failures = ", ".join(f"{k} {n}" for k, n in sorted(summary.failures.items())) or "none"
    if summary.lost_calls:
        failures += f"; {summary.lost_calls} calls lost with their worker"
    t.caption = (
        f"{summary.calls} calls, {summary.turns} turns; failures: {failures}. Failed "
        f"turns count as the turn timeout; intervals resample calls. A band is over when its "
        f"TTFA p90 is over {summary.budget_ttfa_ms:,.0f} ms or more than "
        f"{100 * summary.failure_budget:g}% of its turns fail. Stalled: the share of a "
        "reply's playing time stalled after its first audio, and the band's longest stall. "
        "Breaking point: "
        f"{breaking_point_text(summary.breaking_point)}."
    )
    t.caption_justify = "left"
    return t


def show_load_quality(quality: LoadQuality) -> None:
    """A judged load's quality by band against its baseline, and where it breaks."""
    t = Table(
        title=f"HEART quality by concurrency: replies preferred to {quality.baseline}'s",
        title_justify="left",
    )
    for c in ("concurrent calls", "contestant", "items", "preferred", "95% CI", "worse"):
        whole = c in ("contestant", "95% CI")
        t.add_column(c, justify="left" if c == "contestant" else "right", no_wrap=whole)
    for q in quality.bands:
        if q.contestant == quality.baseline:
            ci = "baseline"
        elif q.preferred is None:
            ci = "-"
        elif q.low_ci is None or q.high_ci is None:
            ci = "too few to tell"
        else:
            ci = f"{span(q.low_ci, q.high_ci, scale=100.0)}%"
        t.add_row(
            str(q.low) if q.low == q.high else f"{q.low}-{q.high}",
            q.contestant,
            str(q.items),
            "-" if q.preferred is None else f"{100 * q.preferred:.0f}%",
            ci,
            "[red]yes[/]" if q.worse else "no",
        )
    out.print(t)
    show(f"quality: {quality_break_text(quality)}")
