"""Recorded calls for the terminal: each call as read off its recording."""

from __future__ import annotations

from collections.abc import Sequence

from rich.table import Table

from voicebench.api.recordings import MIN_GAP_MS
from voicebench.api.views import RecordedCall


def _ms(values: Sequence[float]) -> str:
    if not values:
        return "-"
    ordered = sorted(values)
    return f"{1000 * ordered[len(ordered) // 2]:,.0f}"


def recorded_calls_table(calls: Sequence[RecordedCall], *, gap_ms: float = MIN_GAP_MS) -> Table:
    """A row per call: its caller's channel (given, as the recording says, or guessed), turns,
    the median response latency, barge-ins with the agent's median stop, talk-over, dead air,
    and the gaps inside the agent's replies (of ``gap_ms`` or more), with the longest; under
    it, what a gap is and is not, and why each guessed channel was guessed."""
    table = Table(title="Each call, read off its recording", title_justify="left")
    for col in (
        "call",
        "caller",
        "turns",
        "answered",
        "latency p50 (ms)",
        "barge-ins",
        "stop p50 (ms)",
        "talk-over (s)",
        "dead air (s)",
        "gaps",
        "longest gap (ms)",
    ):
        table.add_column(
            col, justify="left" if col in ("call", "caller") else "right", no_wrap=col == "call"
        )
    guessed = []
    for c in calls:
        latencies = [t.latency_s for t in c.turns if t.latency_s is not None]
        stops = [t.stop_s for t in c.turns if t.barge_in and t.stop_s is not None]
        table.add_row(
            c.call_id,
            c.caller
            + (" (guessed)" if c.caller_guess else "")
            + (" (as recorded)" if c.caller_source == "recording" else ""),
            str(len(c.turns)),
            str(len(latencies)),
            _ms(latencies),
            str(sum(t.barge_in for t in c.turns)),
            _ms(stops),
            f"{sum(t.talk_over_s for t in c.turns):.1f}",
            f"{sum(t.dead_air_s for t in c.turns):.1f}",
            str(sum(t.gap_count for t in c.turns)),
            f"{1000 * max((t.longest_gap_s for t in c.turns), default=0.0):,.0f}",
        )
        if c.caller_guess:
            guessed.append(f"{c.call_id}: {c.caller_guess}")
    gaps = (
        f"gaps: silences of {gap_ms:,.0f} ms or more inside the agent's replies, the caller "
        "silent too; a recording cannot tell a stall (audio that arrived late) from a pause "
        "the agent meant"
    )
    table.caption = "\n".join([gaps, *guessed])
    table.caption_justify = "left"
    return table
