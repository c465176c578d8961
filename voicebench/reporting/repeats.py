"""The report's table of a repeated run's passes (``--repeat``): each pass's figures and the
spread between them."""

from __future__ import annotations

from voicebench.metrics import spread
from voicebench.reporting.models import Report
from voicebench.reporting.tables import Cell, Table, _numeric, ms, pct

HEADERS = (
    "agent",
    "pass",
    "turns",
    "failed",
    "TTFT p50 ms",
    "TTFA p50 ms",
    "TTFA p90 ms",
    "within budget",
)


def passes_table(report: Report) -> Table:
    """One row per pass of each repeated run, then the spread (largest less smallest)."""
    rows = []
    for a in report.agents:
        if not a.passes:
            continue
        for p in a.passes:
            rows.append(
                (
                    Cell(a.agent_name),
                    Cell(str(p.repeat + 1), p.repeat),
                    Cell(str(p.turns), p.turns),
                    Cell(str(p.failed), p.failed),
                    ms(p.ttft_p50_ms),
                    ms(p.ttfa_p50_ms),
                    ms(p.ttfa_p90_ms),
                    pct(p.within_budget),
                )
            )
        s = spread(a.passes)
        share = s["within_budget"]
        rows.append(
            (
                Cell(a.agent_name),
                Cell("spread"),
                Cell(""),
                Cell(""),
                ms(s["ttft_p50_ms"]),
                ms(s["ttfa_p50_ms"]),
                ms(s["ttfa_p90_ms"]),
                Cell("-" if share is None else f"{100 * share:.0f} pts", share),
            )
        )
    return Table(
        "passes",
        "Repeats: each pass over the items",
        HEADERS,
        rows,
        caption=(
            "Each pass replayed every item once more; its figures are point values (the "
            "pooled figures above carry the intervals, each item's passes resampled together). "
            "Spread: the largest pass less the smallest. voicebench check --every-repeat "
            "asks that a gate holds in every pass (pass^k)."
        ),
        numeric=_numeric(HEADERS, 0, 1),
    )
