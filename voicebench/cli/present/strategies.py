"""The terminal view of strategy diversity: a table, then each contestant's most used."""

from __future__ import annotations

from rich.table import Table

from voicebench.api.views import StrategySummary


def diversity_table(s: StrategySummary) -> Table:
    table = Table(
        title=f"support strategy diversity (labels by {s.classifier})", title_justify="left"
    )
    for name in (
        "contestant",
        "items",
        "replies",
        "coverage",
        "per reply",
        "entropy bits",
        "usage SD",
        "usage range",
    ):
        table.add_column(
            name,
            justify="left" if name in ("contestant", "items") else "right",
            no_wrap=name == "contestant",
        )
    for r in s.rows:
        table.add_row(
            r.contestant,
            r.subset,
            str(r.replies),
            f"{r.coverage}/15",
            f"{r.per_reply:.2f}",
            f"{r.entropy_bits:.2f}",
            f"{r.usage_sd_pts:.1f}",
            f"{r.usage_range_pts:.1f}",
        )
    table.caption = (
        f"{s.labelled} replies labelled, {s.failed} failed. Usage SD and range: "
        "over the 15 usage rates, in percentage points (lower is more balanced)."
    )
    table.caption_justify = "left"
    return table


def most_used(s: StrategySummary, n: int = 3) -> list[str]:
    """One line per contestant: its ``n`` most used strategies over all items, in percent."""
    lines = []
    for r in s.rows:
        if r.subset == "all":
            top = sorted(((v, k) for k, v in r.usage_pct.items() if v > 0), reverse=True)[:n]
            lines.append(
                f"{r.contestant} uses most: "
                + (", ".join(f"{k} {v:.0f}%" for v, k in top) or "no strategy")
            )
    return lines
