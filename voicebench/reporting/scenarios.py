"""The report's scenario section: each run's turns grouped by what they played, the overlap
scenarios' own figures, and TTFA and word error rate against SNR as curves."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

from voicebench.metrics import AgentLatency
from voicebench.metrics.scenarios import OVERLAP_GROUPS, Interval
from voicebench.reporting.figures import STYLE, save_figure, series_color
from voicebench.reporting.models import Report
from voicebench.reporting.tables import Cell, Table, _numeric

SNR_FIGURE = "scenario_snr"
SNR_CAPTION = (
    "Time to first audio (median) and the agent's ASR word error rate against the SNR of the "
    "seeker's speech, one line per agent and noise kind, with 95% intervals; at the right, "
    "the clean turns."
)
_KIND_MARKERS = {"white": "o", "pink": "s", "babble": "^"}


def _ci(v: Interval | None, scale: float = 1.0, unit: str = "") -> Cell:
    if v is None:
        return Cell("-")
    fmt = ",.0f" if scale == 1.0 else ".1f"
    point, low, high = v
    if low is None or high is None:  # too few dialogues for an interval
        return Cell(f"{point * scale:{fmt}}{unit} (too few to tell)", point * scale)
    return Cell(
        f"{point * scale:{fmt}}{unit} ({low * scale:{fmt}}\u2013{high * scale:{fmt}})",
        point * scale,
    )


def _share(v: Interval | None) -> Cell:
    return _ci(v, 100.0, "%")


def scenario_table(report: Report) -> Table:
    headers = (
        "agent",
        "played",
        "turns",
        "failed",
        "TTFA p50 ms (95% CI)",
        "ASR WER (95% CI)",
        "measured",
    )
    rows = [
        (
            Cell(a.agent_name),
            Cell(g.group),
            Cell(str(g.turns), g.turns),
            Cell(str(g.failed), g.failed),
            _ci(g.ttfa_p50_ms),
            _share(g.wer),
            Cell(g.measured or "-"),
        )
        for a in report.agents
        for g in a.scenarios
    ]
    return Table(
        "scenarios",
        "By scenario",
        headers,
        rows,
        caption="Turns grouped by the scenario they played (docs/scenarios.md). Word error "
        "rate: all errors over all words said. Intervals resample the group's dialogues, each "
        "with its turns; a group of fewer than 6 dialogues has none (too few to tell).",
        numeric=_numeric(headers, 0, 1, 6),
    )


def overlap_table(report: Report) -> Table:
    headers = ("agent", "played", "agent talking", "measure", "value (95% CI)")
    rows: list[tuple[Cell, ...]] = []
    for a in report.agents:
        for g in a.scenarios:
            if g.group not in OVERLAP_GROUPS:
                continue
            talking = Cell(f"{g.overlapped} of {g.turns}", g.overlapped)
            if g.group == "barge-in":
                lost = None if g.talk_over_s is None else f"{g.talk_over_s:.2f} s"
                measures = [
                    ("stop latency p50 (ms)", _ci(g.stop_p50_ms)),
                    ("stop latency p90 (ms)", _ci(g.stop_p90_ms)),
                    ("yielded within 2 s", _share(g.yielded)),
                    ("talk-over, mean", Cell(lost or "-", g.talk_over_s)),
                    ("answered the interruption", _share(g.answered)),
                ]
            elif g.group == "backchannel":
                lost = None if g.lost_s is None else f"{g.lost_s:.2f} s"
                measures = [
                    ("false yields", _share(g.false_yield)),
                    ("lost per false yield, median", Cell(lost or "-", g.lost_s)),
                ]
            else:
                talking = Cell(f"{g.turns} turns", g.turns)
                early = None if g.early_ms is None else f"{g.early_ms:,.0f} ms"
                measures = [
                    ("premature replies", _share(g.premature)),
                    ("how early, median", Cell(early or "-", g.early_ms)),
                ]
            rows += [(Cell(a.agent_name), Cell(g.group), talking, Cell(m), v) for m, v in measures]
    return Table(
        "overlap",
        "When the seeker spoke over the agent, or paused",
        headers,
        rows,
        caption="Over the turns where the agent was talking when the seeker spoke. Stop "
        "latency: the seeker's first sound to the agent's last audible sample. Intervals "
        "resample dialogues, each with its turns (6 needed for a median or a share, 30 for a "
        "p90; fewer: too few to tell); a share of 0% or 100% has the Wilson interval of as "
        "many trials as dialogues.",
        numeric=frozenset({2, 4}),
    )


def has_noise(agents: Sequence[AgentLatency]) -> bool:
    return any(g.snr_db is not None for a in agents for g in a.scenarios)


def snr_curves(agents: Sequence[AgentLatency], folder: Path) -> str:
    """Two panels, TTFA median and WER against SNR; clean turns at the right of the axis."""
    snrs = sorted({g.snr_db for a in agents for g in a.scenarios if g.snr_db is not None})
    clean_x = (snrs[-1] + 5.0) if snrs else 25.0
    with plt.rc_context(STYLE):
        fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
        for ax, field, scale, label in (
            (axes[0], "ttfa_p50_ms", 1.0, "time to first audio, median (ms)"),
            (axes[1], "wer", 100.0, "ASR word error rate (%)"),
        ):
            for k, a in enumerate(agents):
                clean = next((g for g in a.scenarios if g.group == "clean"), None)
                kinds = sorted({g.kind for g in a.scenarios if g.kind is not None})
                for kind in kinds:
                    points = sorted(
                        (g.snr_db, getattr(g, field))
                        for g in a.scenarios
                        if g.kind == kind and g.snr_db is not None and getattr(g, field)
                    )
                    if clean is not None and getattr(clean, field) is not None:
                        points.append((clean_x, getattr(clean, field)))
                    if not points:
                        continue
                    x = np.array([p[0] for p in points])
                    y = np.array([p[1][0] for p in points]) * scale
                    # a point on too few dialogues for an interval has no bar
                    err = np.array(
                        [
                            [0.0, 0.0]
                            if p[1][1] is None or p[1][2] is None
                            else [p[1][0] - p[1][1], p[1][2] - p[1][0]]
                            for p in points
                        ]
                    ).T
                    ax.errorbar(
                        x,
                        y,
                        yerr=err * scale,
                        marker=_KIND_MARKERS.get(kind, "o"),
                        color=series_color(k),
                        capsize=3,
                        label=f"{a.agent_name}, {kind}",
                    )
            ax.set_xticks([*snrs, clean_x], [*(f"{s:g}" for s in snrs), "clean"])
            ax.set_xlabel("SNR of the seeker's speech (dB)")
            ax.set_ylabel(label)
            ax.set_ylim(bottom=0)
        for ax in axes[::-1]:
            if ax.get_legend_handles_labels()[0]:
                ax.legend(loc="upper right", fontsize=8)
                break
        fig.tight_layout()
        return save_figure(fig, SNR_FIGURE, folder)
