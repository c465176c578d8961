"""Reports: the latency-budget report and the quality-latency frontier, as a page, Markdown
and JSON, built from run logs and a judging folder."""

from voicebench.reporting.build import BuiltReport, build_report, resolve_inputs
from voicebench.reporting.models import REPORT_SCHEMA_VERSION, JudgingSummary, Report

__all__ = [
    "REPORT_SCHEMA_VERSION",
    "BuiltReport",
    "JudgingSummary",
    "Report",
    "build_report",
    "resolve_inputs",
]
