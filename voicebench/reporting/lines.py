"""Sentences the report and the terminal both show, and the report's notes on its judging."""

from __future__ import annotations

from voicebench.metrics import kinds_text
from voicebench.rating import RatingTable
from voicebench.reporting.models import Report


def share(v: float | None, lo: float | None, hi: float | None) -> str:
    if v is None or lo is None or hi is None:
        return "-"
    return f"{100 * v:.1f}% (95% CI {100 * lo:.1f}\u2013{100 * hi:.1f})"


def agreement_lines(table: RatingTable) -> list[str]:
    """The judges' agreement with each other and with people, one sentence each."""
    a = table.agreement
    if a is None:
        return [
            "No agreement figures: one judge and no human judgments (use an ensemble judge "
            "spec, rate replies with voicebench annotate, or pass --human-judgments)."
        ]
    lines = [
        f"Agreement {name}: {share(v, lo, hi)} over {n} pairs"
        for name, (v, lo, hi, n) in a.pairwise.items()
    ]
    if a.three_way:
        lines.append(f"Three-way agreement: {share(*a.three_way[:3])} over {a.three_way[3]} pairs")
    if a.fleiss_kappa is not None:
        alpha = "-" if a.krippendorff_alpha is None else f"{a.krippendorff_alpha:.3f}"
        lines.append(f"Fleiss' kappa {a.fleiss_kappa:.3f}; Krippendorff's alpha {alpha}")
    if a.human_agreement and table.people is None:  # else people_lines says it, per judge
        lines.append(
            f"Judges vs human majority: {share(*a.human_agreement[:3])} over "
            f"{a.human_agreement[3]} pairs"
        )
    return lines


def quality_notes(report: Report) -> list[str]:
    j = report.judging
    if j is None:
        return [
            "No judging folder: judge the runs (voicebench judge RUN_DIR...) and pass the "
            "judging folder to voicebench report for the quality-latency frontier."
        ]
    notes = [
        f"Judging folder {j.judging_dir}: {len(j.contestants)} contestants, {j.pairs} "
        f"pairs, {j.decided_pairs} decided; {j.verdicts} verdicts, {j.failed_verdicts} "
        "failed"
        + (f" ({kinds_text(j.failed_by_kind)})" if j.failed_by_kind else "")
        + f". Rubric sha256 {j.rubric_sha256[:12]}."
    ]
    if j.ratings is None:
        notes.append(f"No ratings: {j.no_ratings}")
    return notes
