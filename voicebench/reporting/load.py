"""The load report (``voicebench report LOAD_DIR``): ``index.html``, a self-contained page like
the run report, ``summary.json`` and ``figures/``:

- ``load_concurrency``: TTFA p50 and p90 by band of calls in progress, each with its 95%
  interval, the TTFA budget, the breaking point and its interval shaded; below it the share
  of failed turns by band, with its interval and the failure budget;
- ``load_timeline``: calls in progress over the load's time (from ``calls.jsonl``), and each
  turn's TTFA when it started (failed turns marked at the top);
- ``load_quality``, once the load is judged (``voicebench judge LOAD_DIR``): how often each
  band's reply was preferred to the baseline's, with its interval, where quality breaks, and
  the band's TTFA p50 and p90 beneath it on the same axis of calls in progress
  (``voicebench.judging.load``).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
from markupsafe import Markup

from voicebench._jsonl import write_atomic
from voicebench.judging.load import JUDGING_DIR, LoadQuality, load_quality, read_load_judging
from voicebench.live.load import LoadHeader, load_pattern, read_calls, read_load
from voicebench.live.load_summary import (
    BreakingPoint,
    CallSpan,
    LoadSummary,
    LoadTurn,
    summarize_load,
)
from voicebench.reporting.figures import STYLE, plt, save_figure
from voicebench.reporting.render import asset, environment, figure_uri

BUDGET_COLOR = "#c0392b"


def write_load_report(
    load_dir: Path,
    out_dir: Path,
    *,
    budget_ttfa_ms: float,
    failure_budget: float = 0.05,
    judging_dir: Path | None = None,
) -> Path:
    """Write the load report of ``load_dir`` to ``out_dir``; returns the page's path. Quality
    by band comes from ``judging_dir`` (default: ``LOAD_DIR/judging`` when the load has been
    judged there)."""
    if judging_dir is None and read_load_judging(load_dir / JUDGING_DIR) is not None:
        judging_dir = load_dir / JUDGING_DIR
    quality = None if judging_dir is None else load_quality(judging_dir, seed=0)
    header, turns = read_load(load_dir)
    spans = read_calls(load_dir)
    summary = summarize_load(
        turns,
        budget_ttfa_ms=budget_ttfa_ms,
        turn_timeout_s=header.turn_timeout_s,
        failure_budget=failure_budget,
        seed=header.seed,
        spans=spans,
    )
    folder = out_dir / "figures"
    names = []
    if summary.bands:
        names.append(concurrency_figure(summary, folder))
    names.append(timeline_figure(spans, turns, header.turn_timeout_s * 1000.0, folder))
    if quality is not None and summary.bands:
        names.append(quality_figure(quality, summary, folder))
    html = (
        environment()
        .get_template("load.html.j2")
        .render(
            header=header,
            summary=summary,
            pattern=describe(header),
            breaking=breaking_point_text(summary.breaking_point),
            quality=quality,
            quality_breaks=None if quality is None else quality_break_text(quality),
            judging_dir=None if judging_dir is None else str(judging_dir),
            load_dir=str(load_dir),
            csp=Markup("default-src 'none'; img-src data:; style-src 'unsafe-inline'"),
            style=Markup(asset("report.css")),
            figure_uris={n: figure_uri(folder, n) for n in names},
        )
    )
    write_atomic(out_dir / "summary.json", summary.model_dump_json(indent=2) + "\n")
    if quality is not None:
        write_atomic(out_dir / "quality.json", quality.model_dump_json(indent=2) + "\n")
    page = out_dir / "index.html"
    write_atomic(page, html)
    return page


def breaking_point_text(bp: BreakingPoint | None) -> str:
    """The breaking point and its interval, in words."""
    if bp is None:
        return "nothing measured"
    high = "beyond what was tested" if bp.high is None else str(bp.high)
    if bp.concurrency is None:
        if bp.low is None:
            return "not reached"
        return f"not reached (95% interval: {bp.low} to {high})"
    return f"from {bp.concurrency} concurrent calls on (95% interval: {bp.low} to {high})"


def quality_break_text(quality: LoadQuality) -> str:
    """Where quality breaks, in words."""
    if quality.breaks_at is None:
        return f"no band's replies are clearly worse than the baseline's ({quality.baseline})"
    return (
        f"from {quality.breaks_at} concurrent calls on, every band's replies are clearly worse "
        f"than the baseline's ({quality.baseline})"
    )


def quality_figure(quality: LoadQuality, summary: LoadSummary, folder: Path) -> str:
    """Each band's share preferred to the baseline with its interval, above its TTFA."""
    with plt.rc_context(STYLE):
        fig, (top, bottom) = plt.subplots(
            2, 1, figsize=(9, 6), sharex=True, gridspec_kw={"height_ratios": [1, 1]}
        )
        top.axhline(50, color="#636363", linewidth=1, label=f"as good as {quality.baseline}")
        for q in quality.bands:
            if q.preferred is None:
                continue
            at, pct = (q.low + q.high) / 2, 100 * q.preferred
            color = BUDGET_COLOR if q.worse else "#2b8cbe"
            if q.low_ci is None or q.high_ci is None:  # too few items for an interval
                top.scatter([at], [pct], marker="o", facecolors="none", edgecolors=color, s=50)
            else:
                err = [[pct - 100 * q.low_ci], [100 * q.high_ci - pct]]
                top.errorbar([at], [pct], yerr=err, marker="o", capsize=3, color=color)
        if quality.breaks_at is not None:
            for ax in (top, bottom):
                ax.axvline(quality.breaks_at - 0.5, color=BUDGET_COLOR, linewidth=1.4)
        top.set_ylim(-3, 103)
        top.set_ylabel("preferred to the baseline (%)")
        top.legend(fontsize=8, loc="lower left", frameon=False)
        bands = summary.bands
        x = np.array([(b.low + b.high) / 2 for b in bands])
        ceiling = _ceiling(summary)
        for name, value, color in (
            ("TTFA p50", "ttfa_p50_ms", "#2b8cbe"),
            ("TTFA p90", "ttfa_p90_ms", "#e6550d"),
        ):
            y = np.array([getattr(b, value) for b in bands])
            shown = np.minimum(y, ceiling)
            bottom.plot(x, shown, marker="o", color=color, label=name)
            off = y >= ceiling
            if off.any():
                bottom.scatter(x[off], shown[off], marker="^", s=80, color=color, zorder=6)
        bottom.axhline(
            summary.budget_ttfa_ms, color=BUDGET_COLOR, linestyle="--", label="TTFA budget"
        )
        bottom.set_ylim(0, ceiling * 1.04)
        bottom.set_ylabel("TTFA (ms); triangles: off the scale")
        bottom.legend(fontsize=8, loc="upper left", frameon=False)
        bottom.set_xlabel(
            "calls in progress when the turn started (band; bars: 95% intervals over items; "
            "open circles: too few items for one)"
        )
        bottom.set_xticks(x, [_band(b.low, b.high) for b in bands])
        fig.tight_layout()
        return save_figure(fig, "load_quality", folder)


def _band(low: int, high: int) -> str:
    return str(low) if low == high else f"{low}-{high}"


def describe(header: LoadHeader) -> str:
    """The load's pattern in words (a folder from before patterns: its ramp)."""
    pattern = header.pattern or load_pattern(
        callers=header.callers,
        ramp_s=header.ramp_s,
        duration_s=header.duration_s,
        arrivals=header.arrivals,
    )
    return pattern.describe()


def _ceiling(summary: LoadSummary) -> float:
    """The TTFA axis's top: above the medians and the p90s of bands without failures (a p90
    lifted by failed turns, counted as the turn timeout, would flatten the rest)."""
    bands = summary.bands
    measured = [b.ttfa_p50_ms for b in bands] + [
        b.ttfa_p90_ms for b in bands if not b.failure_share
    ]
    return 1.25 * max([summary.budget_ttfa_ms, *measured])


def concurrency_figure(summary: LoadSummary, folder: Path) -> str:
    """TTFA p50/p90 and the failure share by band, with intervals and the breaking point."""
    bands = summary.bands
    x = np.array([(b.low + b.high) / 2 for b in bands])
    # A p90 lifted by failed turns (counted as the turn timeout) would flatten the rest: the
    # axis stops above the medians and the p90s of bands without failures, and a point above
    # that sits at its top as a triangle.
    ceiling = _ceiling(summary)
    with plt.rc_context(STYLE):
        fig, (top, bottom) = plt.subplots(
            2, 1, figsize=(9, 6), sharex=True, gridspec_kw={"height_ratios": [3, 1]}
        )
        for name, value, ci, color in (
            ("TTFA p50", "ttfa_p50_ms", "ttfa_p50_ci", "#2b8cbe"),
            ("TTFA p90", "ttfa_p90_ms", "ttfa_p90_ci", "#e6550d"),
        ):
            y = np.array([getattr(b, value) for b in bands])
            # a band with too few calls for an interval: no bar
            low = np.array([(getattr(b, ci) or (v, v))[0] for b, v in zip(bands, y, strict=True)])
            high = np.minimum(
                [(getattr(b, ci) or (v, v))[1] for b, v in zip(bands, y, strict=True)], ceiling
            )
            shown = np.minimum(y, ceiling)
            err = np.array([shown - np.minimum(low, shown), np.maximum(high - shown, 0)])
            top.errorbar(x, shown, yerr=err, marker="o", capsize=3, color=color, label=name)
            off = y >= ceiling
            if off.any():
                top.scatter(x[off], shown[off], marker="^", s=80, color=color, zorder=6)
        top.axhline(summary.budget_ttfa_ms, color=BUDGET_COLOR, linestyle="--", label="TTFA budget")
        top.set_ylim(0, ceiling * 1.04)
        share = np.array([100 * b.failure_share for b in bands])
        share_err = np.array(
            [
                [0.0, 0.0]
                if b.failure_ci is None
                else [share[k] - 100 * b.failure_ci[0], 100 * b.failure_ci[1] - share[k]]
                for k, b in enumerate(bands)
            ]
        ).T
        bottom.errorbar(x, share, yerr=share_err, marker="s", capsize=3, color="#636363")
        bottom.axhline(100 * summary.failure_budget, color=BUDGET_COLOR, linestyle="--")
        bp = summary.breaking_point
        if bp is not None and bp.low is not None:
            edge = bp.high if bp.high is not None else bands[-1].low
            right = next(b.high for b in bands if b.low == edge)
            for ax in (top, bottom):
                ax.axvspan(bp.low - 0.5, right + 0.5, color=BUDGET_COLOR, alpha=0.12, lw=0)
            if bp.concurrency is not None:
                for ax in (top, bottom):
                    ax.axvline(bp.concurrency - 0.5, color=BUDGET_COLOR, linewidth=1.4)
            top.plot(
                [],
                [],
                color=BUDGET_COLOR,
                alpha=0.3,
                linewidth=8,
                label="breaking point, 95% interval",
            )
        top.set_ylabel("TTFA (ms); triangles: off the scale")
        top.legend(fontsize=8, loc="upper left", frameon=False)
        bottom.set_ylabel("failed turns (%)")
        bottom.set_xlabel("calls in progress when the turn started (band; bars: 95% intervals)")
        bottom.set_xticks(
            x, [str(b.low) if b.low == b.high else f"{b.low}-{b.high}" for b in bands]
        )
        fig.tight_layout()
        return save_figure(fig, "load_concurrency", folder)


def timeline_figure(
    spans: Sequence[CallSpan], turns: Sequence[LoadTurn], timeout_ms: float, folder: Path
) -> str:
    """Calls in progress over time, and each turn's TTFA when it started."""
    with plt.rc_context(STYLE):
        fig, (top, bottom) = plt.subplots(2, 1, figsize=(9, 5), sharex=True)
        if spans:
            change: dict[float, int] = {}  # (a call that starts as another ends: no change)
            for s in spans:
                change[s.start_s] = change.get(s.start_s, 0) + 1
                change[s.end_s] = change.get(s.end_s, 0) - 1
            t = [0.0, *sorted(change)]
            n = np.cumsum([0] + [change[at] for at in t[1:]])
            top.step(t, n, where="post", color="#2b8cbe")
        top.set_ylabel("calls in progress")
        ok: list[tuple[float, float]] = [
            (x.offset_s, v) for x in turns if (v := _ttfa(x)) is not None
        ]
        failed = [x.offset_s for x in turns if _ttfa(x) is None]
        if ok:
            bottom.scatter(*zip(*ok, strict=True), s=10, color="#31a354", label="TTFA")
        top_ms = 1.15 * max([v for _, v in ok], default=timeout_ms)
        if failed:  # at the top of the axis, not at the timeout: the TTFA stay readable
            bottom.scatter(
                failed,
                [top_ms] * len(failed),
                s=14,
                marker="x",
                color=BUDGET_COLOR,
                label="failed (drawn at the top)",
            )
        bottom.set_ylim(0, top_ms * 1.05)
        bottom.set_ylabel("TTFA (ms)")
        bottom.set_xlabel("seconds after the start")
        if ok or failed:
            bottom.legend(fontsize=8, loc="upper left", frameon=False)
        fig.tight_layout()
        return save_figure(fig, "load_timeline", folder)


def _ttfa(t: LoadTurn) -> float | None:
    """A turn's TTFA, None for a failed or untimed one."""
    if t.turn.error is not None or t.turn.timing is None:
        return None
    return t.turn.timing.ttfa_ms
