"""Every latency figure, computed once: percentiles with bootstrap intervals, cold and warm
turns, within-budget shares, Wilson intervals for shares, each scenario's figures, and the
per-stage summary printed after a run. The run summary, the report, the gates, compare, the
ratings' latency columns and load read them here, so a figure is the same wherever it shows.
"""

from voicebench.metrics.latency import agent_latency, cold_flags, distribution, pass_figures
from voicebench.metrics.models import (
    QUANTILES,
    AgentLatency,
    Distribution,
    FailedTurn,
    Quantile,
    SlowTurn,
)
from voicebench.metrics.repeats import PassFigures, by_pass, spread
from voicebench.metrics.scenarios import Interval, ScenarioFigures, scenario_figures
from voicebench.metrics.summary import (
    ReportedSummary,
    RunSummary,
    StageSummary,
    count_kinds,
    kinds_text,
    reported_summary,
    summarize,
)

__all__ = [
    "QUANTILES",
    "AgentLatency",
    "Distribution",
    "FailedTurn",
    "Interval",
    "PassFigures",
    "Quantile",
    "ReportedSummary",
    "RunSummary",
    "ScenarioFigures",
    "SlowTurn",
    "StageSummary",
    "agent_latency",
    "by_pass",
    "cold_flags",
    "count_kinds",
    "distribution",
    "kinds_text",
    "pass_figures",
    "reported_summary",
    "scenario_figures",
    "spread",
    "summarize",
]
