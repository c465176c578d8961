"""The lines and tables of ``voicebench converse``: each turn as it is timed, each call as it
ends, then latency by turn position and the callers' own reports."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from rich.table import Table

from voicebench.cli.common import out, plain, show

if TYPE_CHECKING:
    from voicebench.converse import CallRecord
    from voicebench.converse.records import CallProgress
    from voicebench.runlog import TurnRecord

ENDINGS = {
    "turns": "reached the turn limit",
    "goodbye": "the caller said goodbye",
    "agent": "the agent failed a turn",
    "role": "invalid: the caller broke role twice",
}


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
    from voicebench.metrics.latency import median_ms

    by_place: dict[int, list[TurnRecord]] = {}
    for c in calls:
        for place, e in enumerate(c.exchanges, start=1):
            rec = next(
                (r for r in records if r.dialogue_id == c.call_id and r.turn_index == e.turn_index),
                None,
            )
            if rec is not None:
                by_place.setdefault(place, []).append(rec)
    table = Table(title="latency by the turn's place in the call")
    for name in ("turn", "n", "TTFT p50 ms", "TTFA p50 ms"):
        table.add_column(name, justify="right")
    for place in sorted(by_place):
        recs = by_place[place]
        timed = [r.timing for r in recs if r.timing is not None]
        ttft = median_ms([t.ttft_ms for t in timed if t.ttft_ms is not None])
        ttfa = median_ms([t.ttfa_ms for t in timed if t.ttfa_ms is not None])
        table.add_row(
            str(place),
            str(len(recs)),
            "-" if ttft is None else f"{ttft:,.0f}",
            "-" if ttfa is None else f"{ttfa:,.0f}",
        )
    out.print(table)
    valid = [c for c in calls if c.valid]
    reports = [c.report for c in valid if c.report is not None]
    show(
        f"{len(calls)} call(s): {len(valid)} valid, {len(calls) - len(valid)} invalid "
        f"(the caller broke role); {sum(c.ended_by == 'goodbye' for c in calls)} ended "
        "with a goodbye"
    )
    if reports:
        before = sum(r.intensity_before for r in reports) / len(reports)
        after = sum(r.intensity_after for r in reports) / len(reports)
        heard = sum(r.felt_heard for r in reports) / len(reports)
        show(
            f"callers' reports ({len(reports)}): intensity {before:.1f} -> {after:.1f} on "
            f"average, felt heard {heard:.1f}/5"
        )
    show(f"calls: {path}/calls.jsonl")
    show(f"run log: {path}/turns.jsonl")
    saved = [c.item_id for c in valid if c.item_id]
    if saved:
        show(
            f"saved as items: {path}/items.jsonl; replay one with: voicebench run --agent AGENT "
            f"--dialogues {path}/items.jsonl --fixtures {path}/fixtures --id {saved[0]}"
        )
