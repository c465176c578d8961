"""The report's figures, drawn with matplotlib (Agg) and saved as PNG and SVG.

SVG text is drawn as paths (no fonts needed to view it, and no text a browser could read
as markup); files are written atomically and carry no creation date, so the same report
data gives the same files.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import matplotlib.ticker as ticker
import numpy as np

from voicebench._jsonl import write_atomic
from voicebench.judging import DIMENSION_NAMES, DIMENSIONS
from voicebench.metrics import AgentLatency
from voicebench.metrics.latency import cold_flags
from voicebench.rating import RatingTable
from voicebench.runlog import TurnRecord
from voicebench.strategies.diversity import Diversity
from voicebench.timing import STAGE_LABELS, STAGE_NAMES

PALETTE = plt.get_cmap("tab10").colors  # type: ignore[attr-defined]  # a ListedColormap
STAGE_COLORS = {  # a hold is the pale shade of the stage it follows (the LLM's, or TTS's)
    "endpointing": "#8c6bb1",
    "asr": "#2b8cbe",
    "turn_end": "#bdbdbd",
    "model_audio": "#a50f15",  # a speech-to-speech model's first audio
    "llm_ttft": "#e6550d",
    "turn_hold": "#fdd0a2",
    "text_aggregation": "#fdae6b",
    "tts_first_audio": "#31a354",
    "audio_hold": "#c7e9c0",
    "output": "#636363",
}
STYLE: Any = {  # matplotlib types rc keys as one long Literal
    "svg.fonttype": "path",
    "svg.hashsalt": "voicebench",
    "font.size": 10,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "figure.dpi": 100,
}


@dataclass(frozen=True)
class Series:
    """One run's per-turn latencies, for the distribution plots."""

    name: str
    ttft_ms: Sequence[float]
    ttfa_ms: Sequence[float]
    cold_ttfa_ms: Sequence[float]

    @classmethod
    def of(cls, name: str, records: Sequence[TurnRecord]) -> Series:
        """A run's turns that have a timing."""
        timed = [
            (t.timing, c)
            for t, c in zip(records, cold_flags(records), strict=True)
            if t.timing is not None
        ]
        return cls(
            name,
            ttft_ms=[t.ttft_ms for t, _ in timed if t.ttft_ms is not None],
            ttfa_ms=[t.ttfa_ms for t, _ in timed if t.ttfa_ms is not None],
            cold_ttfa_ms=[t.ttfa_ms for t, c in timed if c and t.ttfa_ms is not None],
        )


def save_figure(fig, name: str, folder: Path) -> str:
    folder.mkdir(parents=True, exist_ok=True)
    for fmt, kwargs in (("png", {"dpi": 144}), ("svg", {"metadata": {"Date": None}})):
        buf = io.BytesIO()
        fig.savefig(buf, format=fmt, bbox_inches="tight", **kwargs)
        write_atomic(folder / f"{name}.{fmt}", buf.getvalue())
    plt.close(fig)
    return name


NOTHING_TIMED = "no turn was timed"
"""What a latency panel says when no run has a turn it could time (every turn failed)."""


def series_color(k: int) -> tuple:
    return PALETTE[k % len(PALETTE)]


def _ecdf(ax, values: Sequence[float], **kwargs) -> None:
    x = np.sort(np.asarray(values, dtype=float))
    y = np.arange(1, x.size + 1) / x.size
    ax.step(np.concatenate([[x[0]], x]), np.concatenate([[0.0], y]), where="post", **kwargs)


def latency_ecdf(
    series: Sequence[Series], budget_ttft_ms: float, budget_ttfa_ms: float, folder: Path
) -> str:
    """Two ECDF panels, TTFT and TTFA, one line per run, the budgets as vertical lines; cold
    turns (first after a start) are marked on the TTFA curve's axis."""
    with plt.rc_context(STYLE):
        fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
        for ax, field, budget, title in (
            (axes[0], "ttft_ms", budget_ttft_ms, "LLM time to first token"),
            (axes[1], "ttfa_ms", budget_ttfa_ms, "time to first audio"),
        ):
            for k, s in enumerate(series):
                values = getattr(s, field)
                if len(values):
                    _ecdf(ax, values, color=series_color(k), label=f"{s.name} (n={len(values)})")
                if field == "ttfa_ms" and len(s.cold_ttfa_ms):
                    ax.plot(
                        s.cold_ttfa_ms,
                        np.full(len(s.cold_ttfa_ms), 0.02),
                        "v",
                        color=series_color(k),
                        markersize=7,
                        alpha=0.8,
                        label=f"{s.name}: cold turns",
                    )
            ax.axvline(budget, color="#c0392b", linestyle="--", linewidth=1.2)
            ax.text(
                budget,
                1.02,
                f" budget {budget:,.0f} ms",
                color="#c0392b",
                fontsize=9,
                transform=ax.get_xaxis_transform(),
                va="bottom",
            )
            ax.set_xlabel(f"{title} (ms)")
            ax.set_ylim(0, 1.0)
            longest = max([budget, *[v for s in series for v in getattr(s, field)]])
            ax.set_xlim(0, longest * 1.08)
            if not any(len(getattr(s, field)) for s in series):
                ax.text(0.5, 0.5, NOTHING_TIMED, ha="center", transform=ax.transAxes)
        axes[0].set_ylabel("share of turns at or under")
        if axes[1].get_legend_handles_labels()[0]:
            axes[1].legend(loc="upper left", fontsize=8)
        fig.tight_layout()
        return save_figure(fig, "latency_ecdf", folder)


def waterfall(agents: Sequence[AgentLatency], budget_ttfa_ms: float, folder: Path) -> str:
    """One stacked bar per run: mean time per stage, in pipeline order, summing to mean TTFA."""
    rows = [a for a in agents if a.waterfall_ms]
    stages = [s for s in STAGE_NAMES if any(a.waterfall_ms.get(s) for a in rows)]
    with plt.rc_context(STYLE):
        fig, ax = plt.subplots(figsize=(11, 1.2 + 0.7 * max(1, len(rows))))
        for y, a in enumerate(rows):
            left = 0.0
            for stage in stages:
                width = a.waterfall_ms.get(stage, 0.0)
                ax.barh(
                    y,
                    width,
                    left=left,
                    color=STAGE_COLORS[stage],
                    edgecolor="white",
                    height=0.6,
                    label=STAGE_LABELS[stage] if y == 0 else None,
                )
                if width >= 60:
                    ax.text(
                        left + width / 2,
                        y,
                        f"{width:,.0f}",
                        ha="center",
                        va="center",
                        fontsize=8,
                        color="white",
                    )
                left += width
            ax.text(left + 8, y, f"{a.waterfall_total_ms:,.0f} ms", va="center", fontsize=9)
        ax.axvline(budget_ttfa_ms, color="#c0392b", linestyle="--", linewidth=1.4, zorder=5)
        ax.set_yticks(range(len(rows)), [a.agent_name for a in rows])
        ax.invert_yaxis()
        ax.set_xlabel("mean time per stage (ms); bars add up to the mean TTFA; dashed: TTFA budget")
        ax.set_xlim(0, max([budget_ttfa_ms, *[(a.waterfall_total_ms or 0) for a in rows]]) * 1.15)
        ax.grid(axis="y", visible=False)
        if ax.get_legend_handles_labels()[0]:  # remote agents alone have no stages
            ax.legend(
                ncol=7, fontsize=8, loc="lower center", bbox_to_anchor=(0.5, 1.0), frameon=False
            )
        fig.tight_layout()
        return save_figure(fig, "waterfall", folder)


@dataclass(frozen=True)
class FrontierPoint:
    name: str
    elo: float
    elo_ci: tuple[float, float]
    latency_ms: float
    latency_ci: tuple[float, float] | None
    """None when the run has too few dialogues to tell (no horizontal bar is drawn)."""
    kind: str = "cascade"
    """``cascade``, ``speech-to-speech`` or ``remote`` (``AgentLatency.kind``): drawn apart."""


MARKERS = {"cascade": "o", "speech-to-speech": "s", "remote": "D"}
"""A frontier point's marker by how its agent is built."""


def pareto(points: Sequence[FrontierPoint]) -> list[FrontierPoint]:
    """The points no other point beats on both: lower latency and higher Elo."""
    front: list[FrontierPoint] = []
    for p in sorted(points, key=lambda p: (p.latency_ms, -p.elo)):
        if not front or p.elo > front[-1].elo:
            front.append(p)
    return front


def frontier(
    points: Sequence[FrontierPoint],
    humans: Sequence[tuple[str, float]],
    *,
    axis_label: str,
    budget_ms: float,
    name: str,
    folder: Path,
    warning: str | None,
) -> str:
    """HEART Elo against median latency on a log axis: Elo CIs vertical, latency CIs horizontal,
    the Pareto frontier as a step line, human replies (no latency) as horizontal lines. A
    speech-to-speech agent is a square and a remote one a diamond, each named so in the legend."""
    with plt.rc_context(STYLE):
        fig, ax = plt.subplots(figsize=(7.5, 5))
        for k, p in enumerate(points):
            ax.errorbar(
                p.latency_ms,
                p.elo,
                yerr=[[p.elo - p.elo_ci[0]], [p.elo_ci[1] - p.elo]],
                xerr=None
                if p.latency_ci is None
                else [[p.latency_ms - p.latency_ci[0]], [p.latency_ci[1] - p.latency_ms]],
                fmt=MARKERS.get(p.kind, "o"),
                color=series_color(k),
                capsize=3,
                markersize=7,
                label=p.name if p.kind == "cascade" else f"{p.name} ({p.kind})",
            )
        front = pareto(points)
        if len(front) > 1:
            xs = [p.latency_ms for p in front]
            ys = [p.elo for p in front]
            ax.step(
                xs,
                ys,
                where="post",
                color="#555555",
                linestyle=":",
                linewidth=1.5,
                label="Pareto frontier",
            )
        elif front:
            ax.plot([], [], " ", label=f"Pareto frontier: {front[0].name} alone")
        for k, (human, elo) in enumerate(humans):
            ax.axhline(
                elo,
                color="#2c7fb8",
                linestyle="-." if k else "--",
                linewidth=1.2,
                label=f"{human} (no latency)",
            )
        ax.axvline(
            budget_ms,
            color="#c0392b",
            linestyle="--",
            linewidth=1.2,
            label=f"budget {budget_ms:,.0f} ms",
        )
        ax.set_xscale("log")
        lat = [v for p in points for v in (*(p.latency_ci or ()), p.latency_ms)] + [budget_ms]
        ax.set_xlim(min(lat) / 1.4, max(lat) * 1.4)
        ax.xaxis.set_major_locator(ticker.LogLocator(subs=(1.0, 2.0, 5.0)))
        ax.xaxis.set_major_formatter(ticker.FuncFormatter(lambda x, _: f"{x:,.0f}"))
        ax.xaxis.set_minor_formatter(ticker.NullFormatter())
        elos = [v for p in points for v in p.elo_ci] + [elo for _, elo in humans]
        if elos:
            pad = max(20.0, 0.08 * (max(elos) - min(elos)))
            ax.set_ylim(min(elos) - pad, max(elos) + pad)
        ax.set_xlabel(f"median {axis_label} (ms, log scale)")
        ax.set_ylabel("HEART Elo (95% CI)")
        title = f"quality against {axis_label}"
        if warning:
            title += f"\n{warning}"
        ax.set_title(title, fontsize=10, color="#b03a2e" if warning else "black")
        ax.legend(fontsize=8, loc="best")
        fig.tight_layout()
        return save_figure(fig, name, folder)


def radar(table: RatingTable, folder: Path) -> str:
    """Per-dimension win rate (H, E, A, R, T) per contestant; 50% is the neutral ring."""
    with plt.rc_context(STYLE):
        fig = plt.figure(figsize=(6.5, 5.5))
        ax = fig.add_subplot(polar=True)
        angles = np.linspace(0, 2 * np.pi, len(DIMENSIONS), endpoint=False)
        closed = np.concatenate([angles, angles[:1]])
        drawn = 0
        for k, r in enumerate(table.ratings):
            values = [r.dimension_win_rates.get(d) for d in DIMENSIONS]
            if all(v is None for v in values):
                continue
            v = np.array([0.0 if x is None else 100 * x for x in values])
            ax.plot(
                closed,
                np.concatenate([v, v[:1]]),
                color=series_color(k),
                linewidth=1.8,
                label=r.contestant,
            )
            ax.fill(closed, np.concatenate([v, v[:1]]), color=series_color(k), alpha=0.12)
            drawn += 1
        ax.plot(closed, np.full(closed.size, 50.0), color="#999999", linestyle=":", linewidth=1)
        ax.set_xticks(angles, [f"{d}\n{DIMENSION_NAMES[d]}" for d in DIMENSIONS], fontsize=8)
        ax.set_ylim(0, 100)
        ax.set_yticks([25, 50, 75, 100], ["25%", "50%", "75%", "100%"], fontsize=7)
        unmarked = [
            d
            for d in DIMENSIONS
            if all(r.dimension_win_rates.get(d) is None for r in table.ratings)
        ]
        if drawn:
            ax.legend(fontsize=8, loc="upper right", bbox_to_anchor=(1.35, 1.12))
            if unmarked:
                fig.text(
                    0.5,
                    0.01,
                    f"no decided pair was marked on {', '.join(unmarked)}: drawn at 0",
                    ha="center",
                    fontsize=8,
                    color="#555555",
                )
        else:
            ax.text(
                0.5,
                0.5,
                "no per-dimension marks:\nthe judge gave overall winners only",
                transform=ax.transAxes,
                ha="center",
                va="center",
                fontsize=10,
                bbox={"facecolor": "white", "edgecolor": "#999999"},
            )
        ax.set_title("per-dimension win rate (dotted: 50%)", fontsize=10, pad=18)
        fig.tight_layout()
        return save_figure(fig, "radar", folder)


def strategy_heatmap(rows: Sequence[Diversity], folder: Path, *, smoke: bool = False) -> str:
    """Usage rate of each strategy (rows) by each contestant (columns), over all its items."""
    from voicebench.strategies import LABELS, STRATEGIES

    cols = [r for r in rows if r.subset == "all"]
    grid = np.array([[c.usage_pct[k] for c in cols] for k in LABELS])
    with plt.rc_context({**STYLE, "axes.grid": False}):
        fig, ax = plt.subplots(figsize=(1.6 + 1.1 * max(len(cols), 2), 6.8))
        image = ax.imshow(grid, cmap="Blues", vmin=0, vmax=100, aspect="auto")
        for i in range(grid.shape[0]):
            for j in range(grid.shape[1]):
                ax.text(
                    j,
                    i,
                    f"{grid[i, j]:.0f}",
                    ha="center",
                    va="center",
                    fontsize=8,
                    color="white" if grid[i, j] > 60 else "#222222",
                )
        ax.set_xticks(
            range(len(cols)),
            [f"{c.contestant}\n(n={c.replies})" for c in cols],
            rotation=30,
            ha="right",
            fontsize=8,
        )
        ax.set_yticks(range(len(LABELS)), [STRATEGIES[k][0] for k in LABELS], fontsize=8)
        fig.colorbar(image, ax=ax, fraction=0.04, pad=0.02, label="% of replies using it")
        title = "support strategy usage (% of each contestant's replies)"
        ax.set_title(
            ("SMOKE LABELS, NOT MEANINGFUL\n" + title) if smoke else title,
            fontsize=10,
            color="#b30000" if smoke else "black",
        )
        fig.tight_layout()
        return save_figure(fig, "strategy_heatmap", folder)
