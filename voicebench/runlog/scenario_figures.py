"""Each scenario's figures over a run's turns, with 95% intervals: the table printed after a run
played with ``--scenario``.

Turns are grouped by what they played: ``clean`` (no scenario), ``noise pink 10 dB``,
``phone-line``. TTFA's median has a percentile-bootstrap interval over the group's turns; the
ASR word error rate is all errors over all reference words, with turns resampled whole.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from rich.table import Table

from voicebench.bootstrap import clustered_share, percentiles
from voicebench.runlog.models import TurnRecord
from voicebench.text import word_errors

Interval = tuple[float, float, float]
"""(point, low, high)."""


@dataclass(frozen=True)
class ScenarioFigures:
    group: str
    """What the turns played: ``clean``, ``noise pink 10 dB``, ``phone-line``..."""
    turns: int
    failed: int
    ttfa_p50_ms: Interval | None
    wer: Interval | None
    measured: str
    """What the scenario measured on these turns, for a person (mean SNR, packets lost)."""


def group_of(record: TurnRecord) -> str:
    s = record.scenario
    if s is None:
        return "clean"
    if s.name == "noise":
        return f"noise {s.params['kind']} {float(s.params['snr_db']):g} dB"
    return s.name


def _measured(records: Sequence[TurnRecord]) -> str:
    outcomes = [r.scenario for r in records if r.scenario is not None]

    def mean(field: str) -> float | None:
        values = [v for o in outcomes if (v := getattr(o, field)) is not None]
        return float(np.mean(values)) if values else None

    parts = []
    if (snr := mean("snr_db")) is not None:
        parts.append(f"SNR {snr:.1f} dB")
    if (up := mean("uplink_loss_pct")) is not None:
        parts.append(f"lost {up:.1f}% up")
    if (down := mean("downlink_loss_pct")) is not None:
        parts.append(f"{down:.1f}% down")
    if (delay := mean("line_delay_ms")) is not None:
        parts.append(f"+{delay:,.0f} ms line")
    return ", ".join(parts)


def scenario_figures(records: Sequence[TurnRecord]) -> list[ScenarioFigures]:
    """One row per group of turns, clean first, then by name."""
    groups: dict[str, list[TurnRecord]] = defaultdict(list)
    for r in records:
        groups[group_of(r)].append(r)
    rows = []
    for name in sorted(groups, key=lambda g: (g != "clean", g)):
        turns = groups[name]
        ttfa = [t.ttfa_ms for r in turns if (t := r.timing) and t.ttfa_ms is not None]
        p50 = None
        if ttfa:
            point, low, high = percentiles(ttfa, [50])
            p50 = (float(point[0]), float(low[0]), float(high[0]))
        counts = [word_errors(r.user_text, r.user_transcript) for r in turns if r.user_transcript]
        counts = [(e, n) for e, n in counts if n]
        wer = clustered_share([e for e, _ in counts], [n for _, n in counts]) if counts else None
        rows.append(
            ScenarioFigures(
                group=name,
                turns=len(turns),
                failed=sum(r.error is not None for r in turns),
                ttfa_p50_ms=p50,
                wer=wer,
                measured=_measured(turns),
            )
        )
    return rows


def _interval(v: Interval | None, scale: float = 1.0, fmt: str = ",.0f") -> str:
    if v is None:
        return "-"
    point, low, high = (x * scale for x in v)
    return f"{point:{fmt}} [{low:{fmt}}, {high:{fmt}}]"


def scenario_table(rows: Sequence[ScenarioFigures], title: str) -> Table:
    table = Table(title=title, title_justify="left")
    table.add_column("played")
    for name in ("turns", "failed", "TTFA p50 ms [95% CI]", "ASR WER % [95% CI]"):
        table.add_column(name, justify="right")
    table.add_column("measured")
    for r in rows:
        table.add_row(
            r.group,
            str(r.turns),
            str(r.failed),
            _interval(r.ttfa_p50_ms),
            _interval(r.wer, 100.0, ".1f"),
            r.measured,
        )
    return table
