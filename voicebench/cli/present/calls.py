"""The lines and tables of ``voicebench converse``: each turn as it is timed, each call as it
ends, then latency by turn position and the callers' own reports."""

from __future__ import annotations

from pathlib import Path

from rich.table import Table

from voicebench.api.views import (
    ENDINGS,
    CallProgress,
    CallRecord,
    Estimate,
    TurnRecord,
    call_outcomes,
)
from voicebench.cli.common import out, plain, show


def call_line(p: CallProgress) -> str:
    """A line per timed turn, and one per finished call."""
    head = f"call {p.call}/{p.calls} {p.call_id}"
    if p.record is not None:
        r, t = p.record, p.record.timing
        if r.error is not None:
            return f"{head} turn {r.turn_index}  [red]{r.error.kind}: {plain(r.error.reason)}[/]"
        figures = "  ".join(
            f"{name} {value:,.0f} ms"
            for name, value in (
                ("TTFT", t.ttft_ms if t else None),
                ("TTFA", t.ttfa_ms if t else None),
            )
            if value is not None
        )
        return f"{head} turn {r.turn_index}  {figures}  caller: {plain(r.user_text)}"
    c = p.finished
    assert c is not None
    said = f"{len(c.exchanges)} caller line(s), {ENDINGS[c.ended_by]}"
    if c.report is None:
        return f"{head}: {said}"
    rep = c.report
    again = "yes" if rep.would_call_again else "no"
    return (
        f"{head}: {said}; intensity {rep.intensity_before} -> {rep.intensity_after}, "
        f"felt heard {rep.felt_heard}/5, would call again: {again}"
    )


def show_calls(path: Path, calls: list[CallRecord], records: list[TurnRecord]) -> None:
    """Latency by the turn's place in the call, the calls' endings and reports, the files."""
    estimate = Estimate.text

    o = call_outcomes(calls, records)
    table = Table(title="latency by the turn's place in the call")
    for name in ("turn", "n", "TTFT p50 ms", "TTFA p50 ms"):
        table.add_column(name, justify="right")
    for p in o.by_place:
        table.add_row(
            str(p.place),
            str(p.turns),
            "-" if p.ttft_p50_ms is None else f"{p.ttft_p50_ms:,.0f}",
            "-" if p.ttfa_p50_ms is None else f"{p.ttfa_p50_ms:,.0f}",
        )
    out.print(table)
    goodbye = (
        "" if o.turns_to_goodbye is None else f" after {o.turns_to_goodbye:g} line(s) (median)"
    )
    show(
        f"{o.calls} call(s): {o.valid} valid, {o.invalid} invalid (the caller broke role); "
        f"{o.ended_by['goodbye']} ended with a goodbye{goodbye}"
    )
    if o.reports:
        show(
            f"callers' reports ({o.reports}, means with 95% intervals): intensity "
            f"{estimate(o.intensity_before)} -> {estimate(o.intensity_after)}, change "
            f"{estimate(o.intensity_change, '{:+.1f}')}; felt heard "
            f"{estimate(o.felt_heard)} of 5; would call again "
            f"{estimate(o.would_call_again, '{:.0%}')}"
        )
    show(f"calls: {path}/calls.jsonl (each as it happened, two channels, in {path}/calls/)")
    show(f"run log: {path}/turns.jsonl")
    saved = [c.item_id for c in calls if c.valid and c.item_id]
    if saved:
        show(
            f"saved as items: {path}/items.jsonl; replay one with: voicebench run --agent AGENT "
            f"--dialogues {path}/items.jsonl --fixtures {path}/fixtures --id {saved[0]}"
        )
