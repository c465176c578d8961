"""The CI commands: ``check`` (gates, exit 1 on a failed one) and ``compare`` (two runs)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from voicebench import api
from voicebench.api import TTFA_BUDGET_MS, TTFT_BUDGET_MS, InputError
from voicebench.api.views import TOO_FEW_EXIT, describe, format_value
from voicebench.cli.common import TTFABudgetOpt, TTFTBudgetOpt, commands, out, show
from voicebench.cli.present.hosts import show_contrast, show_hosts

app = commands()

GateOpt = Annotated[float | None, typer.Option(show_default=False)]


@app.command()
def check(
    path: Annotated[Path, typer.Argument(help="A run folder or a judging folder.")],
    gates: Annotated[
        Path | None,
        typer.Option("--gates", help="A TOML file with a [gates] table of NAME = BOUND."),
    ] = None,
    max_ttft_p50_ms: GateOpt = None,
    max_ttft_p90_ms: GateOpt = None,
    max_ttfa_p50_ms: GateOpt = None,
    max_ttfa_p90_ms: GateOpt = None,
    max_ttfa_p99_ms: GateOpt = None,
    max_failed_pct: GateOpt = None,
    min_within_budget_pct: GateOpt = None,
    max_wer_pct: GateOpt = None,
    max_stall_ms: Annotated[
        float | None,
        typer.Option(
            help="The longest stall of any reply after its first audio, in ms.",
            show_default=False,
        ),
    ] = None,
    max_stalled_pct: Annotated[
        float | None,
        typer.Option(
            help="The share of a reply's playing time stalled, averaged over the replies, in "
            "per cent.",
            show_default=False,
        ),
    ] = None,
    min_speaking_rate_wpm: Annotated[
        float | None,
        typer.Option(
            help="The replies' median speaking rate, in words per minute.", show_default=False
        ),
    ] = None,
    max_speaking_rate_wpm: Annotated[
        float | None,
        typer.Option(help="The same, as an upper bound.", show_default=False),
    ] = None,
    max_clipped_pct: Annotated[
        float | None,
        typer.Option(
            help="The share of the replies' samples clipped, in per cent.", show_default=False
        ),
    ] = None,
    max_stop_latency_p90_ms: GateOpt = None,
    max_false_yield_pct: GateOpt = None,
    min_elo: GateOpt = None,
    min_judge_accuracy: Annotated[
        float | None, typer.Option(help="Judge's gold accuracy, in per cent.", show_default=False)
    ] = None,
    gate: Annotated[
        list[str] | None,
        typer.Option(
            "--gate", help="Any gate as NAME=BOUND (e.g. max_ttfa_p95_ms=1500); repeatable."
        ),
    ] = None,
    contestant: Annotated[
        str | None, typer.Option(help="Whose Elo --min-elo reads (a judging folder).")
    ] = None,
    strict: Annotated[
        bool, typer.Option(help="Decide each gate by its 95% interval's far end.")
    ] = False,
    every_repeat: Annotated[
        bool,
        typer.Option(
            "--every-repeat",
            help="On a run replayed with --repeat K: each gate must hold in every one of the "
            "K passes (pass^k), not only on the pooled figure.",
        ),
    ] = False,
    junit: Annotated[
        Path | None, typer.Option("--junit", help="Write JUnit XML: a testcase per gate.")
    ] = None,
    summary_md: Annotated[
        Path | None, typer.Option("--summary-md", help="Write a Markdown table of the gates.")
    ] = None,
    budget_ttft_ms: TTFTBudgetOpt = TTFT_BUDGET_MS,
    budget_ttfa_ms: TTFABudgetOpt = TTFA_BUDGET_MS,
) -> None:
    """Check a run folder (latency, failures, WER, interruptions) or a judging folder (Elo,
    judge accuracy) against gates: a table of every gate with its value, 95% interval and
    verdict. A figure on too few dialogues for an interval (6 for a p50 or a share, 30 for a
    p90) is decided by its value and says so (a --strict gate abstains). Exit 0 when all
    pass, 1 when one fails, 4 when none fails but one is too few to tell, 2 for bad input.
    Gates are max_FIGURE or min_FIGURE; shares are in per cent."""
    named = {
        "max_ttft_p50_ms": max_ttft_p50_ms,
        "max_ttft_p90_ms": max_ttft_p90_ms,
        "max_ttfa_p50_ms": max_ttfa_p50_ms,
        "max_ttfa_p90_ms": max_ttfa_p90_ms,
        "max_ttfa_p99_ms": max_ttfa_p99_ms,
        "max_failed_pct": max_failed_pct,
        "min_within_budget_pct": min_within_budget_pct,
        "max_wer_pct": max_wer_pct,
        "max_stall_ms": max_stall_ms,
        "max_stalled_pct": max_stalled_pct,
        "min_speaking_rate_wpm": min_speaking_rate_wpm,
        "max_speaking_rate_wpm": max_speaking_rate_wpm,
        "max_clipped_pct": max_clipped_pct,
        "max_stop_latency_p90_ms": max_stop_latency_p90_ms,
        "max_false_yield_pct": max_false_yield_pct,
        "min_elo": min_elo,
        "min_judge_accuracy_pct": min_judge_accuracy,
    }
    chosen = api.gates_file(gates) if gates is not None else []
    chosen += [
        api.gate(name, bound, source="--" + name.replace("_", "-"))
        for name, bound in named.items()
        if bound is not None
    ]
    chosen += [api.parse_gate(text, source="--gate") for text in gate or []]
    if min_elo is not None and contestant is None:
        raise InputError("--min-elo needs --contestant NAME", field="--contestant")
    checked = api.check_gates(
        path,
        chosen,
        strict=strict,
        every_repeat=every_repeat,
        contestant=contestant,
        budget_ttft_ms=budget_ttft_ms,
        budget_ttfa_ms=budget_ttfa_ms,
    )
    results = checked.results
    modes = [m for m, on in (("strict", strict), ("every repeat", every_repeat)) if on]
    table = Table(title=f"voicebench check {path}" + (f" ({', '.join(modes)})" if modes else ""))
    for column in ("gate", "value", "95% CI", "bound", "result"):
        table.add_column(column, justify="right" if column != "gate" else "left")
    for r in results:
        value, interval, bound, status = describe(r)
        colour = "yellow" if r.too_few else "green" if r.passed else "red"
        table.add_row(r.gate.name, value, interval, bound, f"[{colour}]{status}[/]")
    out.print(table)
    for r in results:
        if r.note:
            show(f"{r.gate.name}: {r.note}")
    if junit is not None:
        api.write_junit(checked, junit)
    if summary_md is not None:
        api.write_summary(checked, summary_md)
    failed = [r.gate.name for r in checked.failed]
    unsure = [r.gate.name for r in checked.too_few]
    passed = sum(r.passed for r in results)
    show(
        f"{passed}/{len(results)} gates passed"
        + (f"; failed: {', '.join(failed)}" if failed else "")
        + (f"; too few dialogues to tell: {', '.join(unsure)}" if unsure else "")
    )
    if checked.hosts:
        show_hosts("the run", checked.hosts)
    if failed:
        raise typer.Exit(1)
    if unsure:
        raise typer.Exit(TOO_FEW_EXIT)


@app.command()
def compare(
    base: Annotated[Path, typer.Argument(help="The run folder to compare against.")],
    new: Annotated[Path, typer.Argument(help="The run folder that may have changed.")],
    out_dir: Annotated[
        Path | None,
        typer.Option("--out", "-o", help="Write compare.json and a page (index.html) here."),
    ] = None,
    judging: Annotated[
        Path | None,
        typer.Option(help="A judging folder that judged both runs' agents: adds their Elo."),
    ] = None,
    fail_on_regression: Annotated[
        bool,
        typer.Option(
            help="Exit 1 when any figure got clearly slower or worse; else 4 when the TTFA "
            "median rests on too few turns to tell."
        ),
    ] = False,
    min_change_ms: Annotated[
        float, typer.Option(min=0.0, help="Smallest latency change that counts (ms).")
    ] = 10.0,
    budget_ttft_ms: TTFTBudgetOpt = TTFT_BUDGET_MS,
    budget_ttfa_ms: TTFABudgetOpt = TTFA_BUDGET_MS,
) -> None:
    """Compare two runs: TTFT and TTFA percentiles, every stage's median, WER, failures and
    the interruption figures (and, with --judging, the Elo), each change with a 95% bootstrap
    interval over resampled dialogues and a verdict (faster, slower, no clear change; too few
    to tell when either run has fewer than 10 turns, or fewer dialogues than the interval
    needs: 6 for a median, 30 for a p90). The stage that moved most is named first."""
    fmt = format_value
    c = api.compare(
        base,
        new,
        min_change_ms=min_change_ms,
        judging=judging,
        out=out_dir,
        budget_ttft_ms=budget_ttft_ms,
        budget_ttfa_ms=budget_ttfa_ms,
    )
    show(c.headline)
    show_contrast(c)
    table = Table(
        title=f"{c.new_name} ({c.new_turns} turns, {c.new_cold_turns} cold) against "
        f"{c.base_name} ({c.base_turns}, {c.base_cold_turns} cold): each row over every turn "
        "with the figure, cold ones too"
    )
    for column in ("figure", "base", "new", "change", "95% CI", "verdict"):
        table.add_column(column, justify="left" if column in ("figure", "verdict") else "right")
    colours = {
        "slower": "red",
        "worse": "red",
        "faster": "green",
        "better": "green",
        "too few to tell": "yellow",
    }

    for row in c.changes:
        colour = colours.get(row.verdict)
        table.add_row(
            row.label,
            fmt(row.base, row.unit),
            fmt(row.new, row.unit),
            fmt(row.change, row.unit, True),
            "-"
            if row.low is None
            else f"{fmt(row.low, row.unit, True)} to {fmt(row.high, row.unit, True)}",
            f"[{colour}]{row.verdict}[/]" if colour else row.verdict,
        )
    out.print(table)
    if out_dir is not None:
        show(f"comparison: {out_dir / 'index.html'} (and compare.json)")
    if fail_on_regression and c.regressions:
        show("regressions: " + ", ".join(r.label for r in c.regressions))
        raise typer.Exit(1)
    if fail_on_regression and c.too_few_to_tell:
        raise typer.Exit(TOO_FEW_EXIT)
