"""The terminal table of strategy diversity."""

from __future__ import annotations

from rich.table import Table

from voicebench.strategies.diversity import StrategySummary


def diversity_table(s: StrategySummary) -> Table:
    table = Table(title=f"support strategy diversity (labels by {s.classifier})",
                  title_justify="left")
    for name, justify in (("contestant", "left"), ("items", "left"), ("replies", "right"),
                          ("coverage", "right"), ("per reply", "right"), ("entropy", "right"),
                          ("usage SD", "right"), ("range", "right"), ("most used %", "left")):
        table.add_column(name, justify=justify, no_wrap=name != "most used %")
    for r in s.rows:
        top = sorted(((v, k) for k, v in r.usage_pct.items() if v > 0), reverse=True)[:3]
        table.add_row(r.contestant, r.subset, str(r.replies), f"{r.coverage}/15",
                      f"{r.per_reply:.2f}", f"{r.entropy_bits:.2f} bits",
                      f"{r.usage_sd_pts:.1f}", f"{r.usage_range_pts:.1f}",
                      ", ".join(f"{k} {v:.0f}" for v, k in top) or "none")
    table.caption = (f"{s.labelled} replies labelled, {s.failed} failed. Usage SD and range: "
                     "over the 15 usage rates, in percentage points (lower is more balanced).")
    table.caption_justify = "left"
    return table
