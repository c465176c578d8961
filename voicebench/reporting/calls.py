"""The report's Whole calls section: what simulated callers made of each agent (how the calls
ended, their own reports with 95% intervals, the agent's latency by the turn's place in the
call), the call-level Elo beside the reply-level Elo, and every judged call to read and play."""

from __future__ import annotations

from dataclasses import replace

from voicebench.calling.outcomes import Estimate
from voicebench.rating.people import PeopleSummary
from voicebench.reporting import humans
from voicebench.reporting.models import JudgingSummary, Report
from voicebench.reporting.tables import Cell, Table, ms

DASH = "\u2013"


def estimate(e: Estimate | None, fmt: str = "{:.1f}") -> Cell:
    """A mean or share with its 95% interval."""
    return Cell(Estimate.text(e, fmt, DASH), None if e is None else e.value)


def outcomes_table(report: Report) -> Table:
    headers = (
        "agent",
        "calls",
        "valid",
        "invalid",
        "ended with goodbye",
        "lines to goodbye",
        "reports",
        "intensity before",
        "intensity after",
        "change",
        "felt heard (1-5)",
        "would call again",
    )
    rows = [
        (
            Cell(o.agent_name),
            Cell(str(o.calls), o.calls),
            Cell(str(o.valid), o.valid),
            Cell(str(o.invalid), o.invalid),
            estimate(o.goodbye, "{:.0%}"),
            Cell("-" if o.turns_to_goodbye is None else f"{o.turns_to_goodbye:g}"),
            Cell(str(o.reports), o.reports),
            estimate(o.intensity_before),
            estimate(o.intensity_after),
            estimate(o.intensity_change, "{:+.1f}"),
            estimate(o.felt_heard),
            estimate(o.would_call_again, "{:.0%}"),
        )
        for o in report.calls
    ]
    return Table(
        "call-outcomes",
        "Calls and what the callers said of them",
        headers,
        rows,
        caption="Means and shares over the valid calls with 95% intervals (bootstrap for "
        "means, Wilson for shares). Intensity is the caller's own 1-5 rating of their "
        "emotion before and after the call, asked in character at its end; a negative change "
        "means they felt better. An invalid call (the caller broke role twice) is counted "
        "here and never judged.",
        numeric=frozenset(range(1, len(headers))),
    )


def places_table(report: Report) -> Table:
    places = sorted({p.place for o in report.calls for p in o.by_place})
    headers = ("agent", *[f"turn {p} TTFA p50 ms" for p in places])
    rows = []
    for o in report.calls:
        at = {p.place: p for p in o.by_place}
        rows.append(
            (
                Cell(o.agent_name),
                *[ms(at[p].ttfa_p50_ms if p in at else None) for p in places],
            )
        )
    return Table(
        "call-places",
        "Latency by the turn's place in the call",
        headers,
        rows,
        caption="Median time to first audio of the agent's answer to the caller's first, "
        "second, ... line: does the agent slow down as the call and its context grow?",
        numeric=frozenset(range(1, len(headers))),
    )


def _elo(j: JudgingSummary | None) -> dict[str, tuple[float, tuple[float, float]]]:
    if j is None or j.ratings is None:
        return {}
    return {
        r.contestant: (r.elo, r.elo_ci_bootstrap or r.elo_ci_asymptotic) for r in j.ratings.ratings
    }


def elo_table(report: Report) -> Table:
    """The reply-level and the call-level Elo of each contestant, side by side."""
    replies, calls = _elo(report.judging), _elo(report.call_judging)
    names = sorted(set(replies) | set(calls), key=lambda n: -calls.get(n, (-1e9, ()))[0])

    def cells(found: tuple[float, tuple[float, float]] | None) -> tuple[Cell, Cell]:
        if found is None:
            return Cell("-"), Cell("-")
        elo, (low, high) = found
        return Cell(f"{elo:,.0f}", elo), Cell(f"{low:,.0f}{DASH}{high:,.0f}", low)

    rows = [(Cell(n), *cells(calls.get(n)), *cells(replies.get(n))) for n in names]
    return Table(
        "call-elo",
        "Elo over whole calls beside Elo over final replies",
        ("contestant", "call Elo", "95% CI", "reply Elo", "95% CI"),
        rows,
        caption="Call Elo: pairwise HEART verdicts on whole calls with the same caller (the "
        "judge reads both calls as heard, in both orders). Reply Elo: on the final reply of "
        "each replayed item. An agent can answer one turn well and still lose a caller over "
        "a whole call, or the reverse.",
        numeric=frozenset({1, 2, 3, 4}),
    )


def people_table(p: PeopleSummary) -> Table:
    """The people's ladder over whole calls (rated on ``voicebench annotate``)."""
    return replace(
        humans.ladder_table(p),
        key="call-human-ladder",
        title="People's ladder over whole calls",
        caption="People listened to pairs of whole calls on the rating page (voicebench "
        "annotate on the judging of calls), blind to whose call was whose.",
    )
