"""The report's table of the support strategies each contestant's replies use."""

from __future__ import annotations

from voicebench.reporting.models import StrategySummary
from voicebench.reporting.tables import Cell, Table, _numeric, text


def strategies_table(s: StrategySummary) -> Table:
    from voicebench.strategies import STRATEGIES

    headers = (
        "contestant",
        "items",
        "replies",
        "coverage (of 15)",
        "strategies per reply",
        "entropy bits",
        "entropy / max",
        "usage SD pts",
        "usage range pts",
        "most used",
    )
    rows = []
    for r in s.rows:
        top = sorted(r.usage_pct.items(), key=lambda kv: -kv[1])[:3]
        rows.append(
            (
                Cell(r.contestant),
                Cell(r.subset),
                Cell(str(r.replies), r.replies),
                Cell(str(r.coverage), r.coverage),
                Cell(f"{r.per_reply:.2f}", r.per_reply),
                Cell(f"{r.entropy_bits:.2f}", r.entropy_bits),
                Cell(f"{r.entropy_norm:.2f}", r.entropy_norm),
                Cell(f"{r.usage_sd_pts:.1f}", r.usage_sd_pts),
                Cell(f"{r.usage_range_pts:.1f}", r.usage_range_pts),
                text(", ".join(f"{STRATEGIES[k][0]} {v:.0f}%" for k, v in top if v > 0) or "none"),
            )
        )
    return Table(
        "strategies",
        "Support strategy diversity",
        headers,
        rows,
        caption=(
            f"Labels by {s.classifier} on {s.labelled} replies ({s.failed} failed). Coverage: "
            "strategies used at least once. Entropy: of all strategy uses over the 15 strategies "
            "(max log2 15 = 3.91 bits). Usage SD and range: over the 15 usage rates, in "
            "percentage points; lower means a more balanced repertoire (HEART: humans SD 16.3, "
            "range 60.3; model families SD 20.8-22.9, range 70.7-80.3)."
        ),
        numeric=_numeric(headers, 0, 1, 9),
    )
