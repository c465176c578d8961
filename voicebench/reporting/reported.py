"""The report's table of each LiveKit agent's TTFA as LiveKit's own figures cut it
(``ReportedLatency``), beside the measured waterfall."""

from __future__ import annotations

from voicebench.reporting.models import Report
from voicebench.reporting.tables import Cell, Table, _numeric, ms
from voicebench.timing import REPORTED_STAGES


def reported_table(report: Report) -> Table | None:
    """Each LiveKit agent's TTFA cut as LiveKit's own latency formula cuts it."""
    agents = [a for a in report.agents if a.reported_ms]
    if not agents:
        return None
    parts = [*REPORTED_STAGES, ("unreported_ms", "not in its figures")]
    headers = (
        "agent",
        *[label for _, label in parts],
        "its own e2e",
        "mean TTFA",
    )
    rows = [
        (
            Cell(a.agent_name),
            *[ms(a.reported_ms.get(key)) for key, _ in parts],
            ms(a.reported_e2e_ms),
            ms(a.reported_total_ms),
        )
        for a in agents
    ]
    return Table(
        "reported",
        "TTFA as LiveKit reports it (ms)",
        headers,
        rows,
        caption=(
            "Mean over the turns that have every figure, so the parts add up to the mean TTFA. "
            "End of turn + LLM TTFT + TTS TTFB is LiveKit's own latency formula, from its own "
            "per-message metrics; what it leaves out is the measured TTFA less that sum "
            "(negative where its parts overlap: the LLM runs during the turn decision). Its own "
            "e2e counts to when it began to play the reply, not to the first audible sample."
        ),
        numeric=_numeric(headers, 0),
    )
