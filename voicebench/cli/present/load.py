"""The load summary as a table."""

from __future__ import annotations

from rich.table import Table

from voicebench.live.load import LoadSummary


def _ms(v: float | None) -> str:
    return "-" if v is None else f"{v:,.0f}"


def load_table(summary: LoadSummary, title: str) -> Table:
    t = Table(title=title, title_justify="left")
    for c in (
        "concurrent calls",
        "turns",
        "failed",
        "TTFA p50 ms",
        "p90 ms",
        "p99 ms",
        "within budget",
    ):
        t.add_column(c, justify="right")
    for lv in summary.levels:
        share = "-" if lv.within_budget is None else f"{100 * lv.within_budget:.0f}%"
        t.add_row(
            str(lv.concurrency),
            str(lv.turns),
            str(lv.failed),
            _ms(lv.ttfa_p50_ms),
            _ms(lv.ttfa_p90_ms),
            _ms(lv.ttfa_p99_ms),
            share,
        )
    failures = ", ".join(f"{k} {n}" for k, n in sorted(summary.failures.items())) or "none"
    breaks = (
        "not reached"
        if summary.budget_breaks_at is None
        else f"from {summary.budget_breaks_at} concurrent calls on"
    )
    t.caption = (
        f"{summary.calls} calls, {summary.turns} turns; failures: {failures}. Failed "
        f"turns count as the turn timeout. TTFA budget {summary.budget_ttfa_ms:,.0f} ms "
        f"(p90): broken {breaks}."
    )
    t.caption_justify = "left"
    return t
