"""A run's tables for the terminal: the per-stage latency summary and, after a run with
scenarios, each scenario's figures and the overlap scenarios' outcomes."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from rich.table import Table

from voicebench.api import TTFA_BUDGET_MS, TTFT_BUDGET_MS
from voicebench.api.views import (
    OPENING_ROW,
    OVERLAP_GROUPS,
    PERCENTILES,
    TOO_FEW,
    AgentSpec,
    Host,
    Interval,
    ReportedSummary,
    RunProgress,
    RunSummary,
    ScenarioFigures,
    SoundSummary,
    StallSummary,
    TurnRecord,
    kinds_text,
    pass_figures,
    reported_summary,
    scenario_figures,
    spread,
    summarize,
)
from voicebench.cli.common import out, plain, show
from voicebench.cli.present.fit import span, titled
from voicebench.cli.present.hosts import show_hosts


def _fmt(v: float | None) -> str:
    return "-" if v is None else f"{v:,.0f}"


def summary_table(summary: RunSummary, title: str) -> Table:
    """A rich table: one row per stage, then TTFT and TTFA; the title (which names the run's
    folder) folds after a ``/``."""
    table = Table(title=titled(title), title_justify="left")
    table.add_column("stage")
    table.add_column("n", justify="right")
    for p in PERCENTILES:
        table.add_column(f"p{p} ms", justify="right")
    for row in summary.rows:
        if row.name in ("TTFT", OPENING_ROW):
            table.add_section()
        table.add_row(row.name, str(row.n), _fmt(row.p50), _fmt(row.p90), _fmt(row.p95))
    share = (
        "-" if summary.ttft_within_budget is None else f"{100 * summary.ttft_within_budget:.0f}%"
    )
    wer = "-" if summary.mean_wer is None else f"{100 * summary.mean_wer:.1f}%"
    table.caption = (
        f"{summary.turns} turns, {summary.failed} failed"
        + (f" ({kinds_text(summary.failed_by_kind)})" if summary.failed else "")
        + f"; TTFT <= {TTFT_BUDGET_MS:.0f} ms: {share};"
        f" ASR word error rate: {wer}"
        + _stalls_text(summary.stalls)
        + _sound_text(summary.sound)
        + (
            f"; {summary.openings} opening(s), {summary.openings_failed} failed, timed from "
            "the call's start"
            if summary.openings
            else ""
        )
    )
    table.caption_justify = "left"
    return table


def _stalls_text(stalls: StallSummary | None) -> str:
    """``; stalls after the first audio: 2 of 10 replies (3 stalls, longest 310 ms, 1.2% of
    playing time)``, or nothing when no reply played."""
    if stalls is None:
        return ""
    if not stalls.stalls:
        return f"; no stall after the first audio in {stalls.replies} replies"
    return (
        f"; stalls after the first audio: {stalls.stalled} of {stalls.replies} replies "
        f"({stalls.stalls} stalls, longest {stalls.longest_ms:,.0f} ms, "
        f"{100 * stalls.stalled_share:.1f}% of playing time)"
    )


def _sound_text(sound: SoundSummary | None) -> str:
    """``; replies at 162 wpm and -21.4 LUFS (medians), 0.00% clipped, no click``."""
    if sound is None:
        return ""
    said = []
    if sound.words_per_minute is not None:
        said.append(f"{sound.words_per_minute:,.0f} wpm")
    if sound.loudness_lufs is not None:
        said.append(f"{sound.loudness_lufs:.1f} LUFS")
    rate = f" at {' and '.join(said)} (medians)," if said else ""
    clicks = f"{sound.clicks} click(s) in {sound.clicked} replies" if sound.clicks else "no click"
    return f"; replies{rate} {100 * sound.clipped_share:.2f}% clipped, {clicks}"


def reported_table(summary: ReportedSummary) -> Table:
    """The measured TTFA cut as the agent's framework accounts for it."""
    name = {"livekit": "LiveKit"}.get(summary.framework, summary.framework)
    table = Table(title=f"TTFA as {name} reports it", title_justify="left")
    table.add_column("part")
    table.add_column("n", justify="right")
    for p in PERCENTILES:
        table.add_column(f"p{p} ms", justify="right")
    for row in summary.rows:
        if row.name == "e2e":
            table.add_section()
        label = {"e2e": f"{name} e2e", "TTFA": "TTFA measured"}.get(row.name, row.name)
        table.add_row(label, str(row.n), _fmt(row.p50), _fmt(row.p90), _fmt(row.p95))
    table.caption = (
        f"end_of_turn + llm_ttft + tts_ttfb is {name}'s own latency formula; unreported is the "
        "measured TTFA less that sum (negative where its parts overlap)"
    )
    table.caption_justify = "left"
    return table


def show_reported(records: Sequence[TurnRecord]) -> None:
    """After a run of an agent whose framework reports its own figures (a LiveKit agent)."""
    summary = reported_summary(records)
    if summary is not None:
        out.print(reported_table(summary))


def _interval(v: Interval | None, scale: float = 1.0, fmt: str = ",.0f", between: str = " ") -> str:
    """``1,234 [1,100-1,400]``: the value, ``between``, then its interval."""
    if v is None:
        return "-"
    point, low, high = v
    if low is None or high is None:
        return f"{point * scale:{fmt}}{between}({TOO_FEW})"
    return f"{point * scale:{fmt}}{between}[{span(low, high, fmt, scale)}]"


def scenario_table(rows: Sequence[ScenarioFigures], title: str) -> Table:
    """A row per scenario played; each figure above its interval (a line each, so that the
    table fits 80 columns with both whole)."""
    table = Table(title=title, title_justify="left")
    table.add_column("played")
    for name in ("turns", "failed"):
        table.add_column(name, justify="right")
    for name in ("TTFA p50 ms\n[95% CI]", "ASR WER %\n[95% CI]"):
        table.add_column(name, justify="right", no_wrap=True)
    table.add_column("measured")
    for r in rows:
        table.add_row(
            r.group,
            str(r.turns),
            str(r.failed),
            _interval(r.ttfa_p50_ms, between="\n"),
            _interval(r.wer, 100.0, ".1f", between="\n"),
            r.measured,
        )
    return table


def _unit(text: str, unit: str) -> str:
    if text == "-":
        return text
    few = f" ({TOO_FEW})"
    if text.endswith(few):  # the unit with the value: "200 ms (too few to tell)"
        return f"{text.removesuffix(few)} {unit}{few}"
    return f"{text} {unit}"


def overlap_table(rows: Sequence[ScenarioFigures], title: str) -> Table | None:
    """The overlap scenarios' own figures, a measure a line; None when the run played none."""
    rows = [r for r in rows if r.group in OVERLAP_GROUPS]
    if not rows:
        return None
    table = Table(title=title, title_justify="left")
    table.add_column("played", no_wrap=True)
    table.add_column("measure")
    table.add_column("value [95% CI]", justify="right", no_wrap=True)
    table.add_column("over", justify="right")
    for r in rows:
        talking = f"{r.overlapped} of {r.turns} turns talking"
        lines: list[tuple[str, str]] = []
        if r.group == "barge-in":
            lines = [
                ("stop latency p50", _unit(_interval(r.stop_p50_ms), "ms")),
                ("stop latency p90", _unit(_interval(r.stop_p90_ms), "ms")),
                ("yielded within 2 s", _unit(_interval(r.yielded, 100.0), "%")),
                ("talk-over, mean", "-" if r.talk_over_s is None else f"{r.talk_over_s:.2f} s"),
                ("answered the interruption", _unit(_interval(r.answered, 100.0), "%")),
            ]
        elif r.group == "backchannel":
            lost = "-" if r.lost_s is None else f"{r.lost_s:.2f} s"
            lines = [
                ("false yields", _unit(_interval(r.false_yield, 100.0), "%")),
                ("lost per false yield, median", lost),
            ]
        elif r.group == "pause":
            talking = f"{r.turns} turns"
            early = "-" if r.early_ms is None else f"{r.early_ms:,.0f} ms"
            lines = [
                ("premature replies", _unit(_interval(r.premature, 100.0), "%")),
                ("how early, median", early),
            ]
        for i, (measure, value) in enumerate(lines):
            table.add_row(r.group if i == 0 else "", measure, value, talking if i == 0 else "")
    return table


def turn_line(p: RunProgress) -> str:
    """One line per finished turn: readable on a terminal and in a CI log alike."""
    r = p.record
    if r is None:
        return f"{p.done}/{p.total} turns already done" if p.done else f"replaying {p.total} turns"
    t = r.timing
    figures = "  ".join(
        f"{name} {value:,.0f} ms"
        for name, value in (("TTFT", t.ttft_ms if t else None), ("TTFA", t.ttfa_ms if t else None))
        if value is not None
    )
    status = f"[red]{r.error.kind}: {plain(r.error.reason)}[/]" if r.error else figures
    again = f" (pass {r.repeat + 1})" if r.repeat else ""
    which = "opening" if r.opening else f"turn {r.turn_index}"
    return f"[{p.done}/{p.total}] {r.dialogue_id} {which}{again}  {status}"


def show_replay(
    spec: AgentSpec,
    out_dir: Path,
    records: list[TurnRecord],
    hosts: Sequence[Host],
    openings: Sequence[TurnRecord] = (),
) -> None:
    """A finished run's tables (its turns', and its openings' TTFA), where its log is, and the
    machine it measured on (warning when it was busy)."""
    summary = summarize(records, openings)
    out.print(summary_table(summary, f"{spec.name} ({spec.id}) - {out_dir}"))
    show_reported(records)
    show_scenarios(records)
    show_passes(records)
    log = f"{out_dir}/turns.jsonl" + (f" and {out_dir}/openings.jsonl" if openings else "")
    show(f"run log: {log}; each dialogue as it happened: {out_dir}/calls/")
    show_hosts(spec.name, hosts)


def show_passes(records: list[TurnRecord]) -> None:
    """Each pass's figures and their spread, after a repeated run."""
    passes = pass_figures(records, budget_ttft_ms=TTFT_BUDGET_MS, budget_ttfa_ms=TTFA_BUDGET_MS)
    if not passes:
        return
    table = Table(title=f"{len(passes)} passes over the items", title_justify="left")
    for column in ("pass", "turns", "failed", "TTFT p50", "TTFA p50", "TTFA p90", "in budget"):
        table.add_column(column, justify="left" if column == "pass" else "right")

    def share(v: float | None, unit: str = "%") -> str:
        return "-" if v is None else f"{100 * v:.0f}{unit}"

    for p in passes:
        table.add_row(
            str(p.repeat + 1),
            str(p.turns),
            str(p.failed),
            _fmt(p.ttft_p50_ms),
            _fmt(p.ttfa_p50_ms),
            _fmt(p.ttfa_p90_ms),
            share(p.within_budget),
        )
    s = spread(passes)
    table.add_section()
    table.add_row(
        "spread",
        "",
        "",
        _fmt(s["ttft_p50_ms"]),
        _fmt(s["ttfa_p50_ms"]),
        _fmt(s["ttfa_p90_ms"]),
        share(s["within_budget"], " pts"),
    )
    table.caption = "ms; spread: the largest pass less the smallest"
    table.caption_justify = "left"
    out.print(table)


def show_scenarios(records: list[TurnRecord]) -> None:
    """Each scenario's figures, when the run played any."""

    if any(r.scenario is not None for r in records):
        rows = scenario_figures(records)
        out.print(scenario_table(rows, "by scenario"))
        overlap = overlap_table(rows, "when the seeker spoke over the agent, or paused")
        if overlap is not None:
            out.print(overlap)
