"""The report's tables as plain text cells, rendered by both the page and the Markdown.

Cells are unescaped text (replies and dialogue text included); each renderer escapes them
for its own format. A cell may carry a number to sort by.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from voicebench.judging import DIMENSIONS
from voicebench.judging.trust import marked
from voicebench.metrics import AgentLatency, Distribution, kinds_text
from voicebench.metrics.models import SoundSummary, StallSummary
from voicebench.reporting.models import JudgingSummary, Report
from voicebench.timing import STAGE_LABELS, STAGE_NAMES

TEXT_LIMIT = 160


@dataclass(frozen=True)
class Cell:
    text: str
    sort: float | None = None


@dataclass(frozen=True)
class Table:
    key: str
    """A stable id (the HTML element id)."""
    title: str
    headers: tuple[str, ...]
    rows: Sequence[tuple[Cell, ...]]
    caption: str = ""
    numeric: frozenset[int] = field(default_factory=frozenset)
    """Columns aligned right."""


def ms(v: float | None) -> Cell:
    return Cell("-" if v is None else f"{v:,.0f}", v)


def pct(v: float | None) -> Cell:
    return Cell("-" if v is None else f"{100 * v:.0f}%", v)


def text(v: str, limit: int = TEXT_LIMIT) -> Cell:
    v = " ".join(v.split())
    return Cell(v if len(v) <= limit else v[: limit - 1] + "\u2026")


def with_ci(d: Distribution, q: int) -> Cell:
    x = d.quantile(q)
    if x is None:
        return Cell("-")
    if x.ci_ms is None:  # too few dialogues for this percentile's interval
        return Cell(f"{x.value_ms:,.0f} (too few to tell)", x.value_ms)
    return Cell(f"{x.value_ms:,.0f} ({x.ci_ms[0]:,.0f}\u2013{x.ci_ms[1]:,.0f})", x.value_ms)


def _numeric(headers: tuple[str, ...], *text_cols: int) -> frozenset[int]:
    return frozenset(k for k in range(len(headers)) if k not in text_cols)


def distribution_table(report: Report) -> Table:
    headers = (
        "agent",
        "figure",
        "turns",
        "dialogues",
        "p50 ms (95% CI)",
        "p90 ms (95% CI)",
        "p95 ms (95% CI)",
        "p99 ms (95% CI)",
        "within budget",
    )
    rows = []
    for a in report.agents:
        rows_of = [
            ("TTFT", a.ttft),
            ("TTFT warm", a.ttft_warm),
            ("TTFA", a.ttfa),
            ("TTFA warm", a.ttfa_warm),
            ("TTFA cold", a.ttfa_cold),
        ]
        if a.ttfa_censored is not None and a.censored_at_ms is not None:
            rows_of.append((f"TTFA, failed as {a.censored_at_ms / 1000:g} s", a.ttfa_censored))
        if a.opening_ttfa is not None:
            failed = f", {a.openings_failed} failed" if a.openings_failed else ""
            rows_of.append((f"opening TTFA ({a.openings}{failed})", a.opening_ttfa))
        for label, d in rows_of:
            rows.append(
                (
                    Cell(a.agent_name),
                    Cell(label),
                    Cell(str(d.n), d.n),
                    Cell(str(d.clusters), d.clusters),
                    *[with_ci(d, q) for q in (50, 90, 95, 99)],
                    Cell(
                        f"{pct(d.within_budget).text} (\u2264 {d.budget_ms:,.0f} ms)",
                        d.within_budget,
                    ),
                )
            )
    return Table(
        "distributions",
        "TTFT and TTFA distributions",
        headers,
        rows,
        caption="Percentiles with 95% bootstrap intervals over dialogues: whole dialogues "
        "are resampled with their turns (1,000 resamples), since a dialogue's turns vary "
        "together. A percentile's interval needs 3 dialogues beyond it (6 for p50, 30 for "
        "p90, 60 for p95, 300 for p99); with fewer it is too few to tell. "
        "Cold: the agent's first turn after each start (model loading, new connections); "
        "warm: the rest. Failed turns have no TTFA: the 'failed as' row counts each as "
        "the turn timeout. Opening: what the agent said when a call started, before anyone "
        "spoke to it (its greeting; how many in brackets), timed from the call's start and "
        "kept apart from the turns.",
        numeric=_numeric(headers, 0, 1),
    )


def _stalled(stalls: StallSummary | None) -> Cell:
    """``1.2% (0.4-2.0%); 3 of 30 replies, longest 310 ms``."""
    if stalls is None:
        return Cell("-")
    ci = stalls.stalled_share_ci
    within = "" if ci is None else f" ({100 * ci[0]:.1f}-{100 * ci[1]:.1f}%)"
    return Cell(
        f"{100 * stalls.stalled_share:.1f}%{within}; {stalls.stalled} of {stalls.replies} "
        f"replies, longest {stalls.longest_ms:,.0f} ms",
        stalls.stalled_share,
    )


def _sounds(sound: SoundSummary | None) -> Cell:
    """``162 wpm; -21.4 LUFS; 0.00% clipped; no click``."""
    if sound is None:
        return Cell("-")
    parts = []
    if sound.words_per_minute is not None:
        parts.append(f"{sound.words_per_minute:,.0f} wpm")
    if sound.loudness_lufs is not None:
        parts.append(f"{sound.loudness_lufs:.1f} LUFS")
    parts.append(f"{100 * sound.clipped_share:.2f}% clipped")
    clicks = f"{sound.clicks} clicks in {sound.clicked} replies"
    parts.append(clicks if sound.clicks else "no click")
    return Cell("; ".join(parts), sound.words_per_minute)


def budget_table(report: Report) -> Table:
    headers = (
        "agent",
        "contestant",
        "turns",
        "failed",
        "within both budgets",
        "cold turns",
        "ASR WER",
        "turns misheard",
        "LLM requests per turn",
        "stalled after first audio",
        "how the replies sound",
    )
    rows = [
        (
            Cell(a.agent_name),
            Cell(a.contestant),
            Cell(str(a.turns), a.turns),
            Cell(f"{a.failed} ({kinds_text(a.failed_by_kind)})" if a.failed else "0", a.failed),
            pct(a.within_budget),
            Cell(str(a.cold_turns)),
            Cell("-" if a.asr_wer_mean is None else f"{100 * a.asr_wer_mean:.1f}%", a.asr_wer_mean),
            Cell(f"{a.asr_turns_with_errors} of {a.asr_wer_turns}", a.asr_turns_with_errors),
            Cell(
                "-" if a.llm_calls_per_turn is None else f"{a.llm_calls_per_turn:.2f}",
                a.llm_calls_per_turn,
            ),
            _stalled(a.stalls),
            _sounds(a.sound),
        )
        for a in report.agents
    ]
    return Table(
        "budget",
        "Turns within budget",
        headers,
        rows,
        caption=(
            f"Within both budgets: TTFT \u2264 {report.budget_ttft_ms:,.0f} ms and TTFA \u2264 "
            f"{report.budget_ttfa_ms:,.0f} ms, over all turns (failed turns count as misses). ASR "
            "WER: mean word error rate of the agent's ASR on the seeker's speech. Stalled: the "
            "share of a reply's playing time in which the caller heard nothing though the "
            "reply was not over (its 95% interval over dialogues), the replies with a stall, "
            "and the longest. Sound: the median speaking rate (words of the reply's text over "
            "its audible time) and integrated loudness (ITU-R BS.1770), the share of samples "
            "clipped, and the clicks (sound starting or stopping abruptly)."
        ),
        numeric=_numeric(headers, 0, 1),
    )


def stages_shown(report: Report) -> list[str]:
    """The stages some agent's turns have, in pipeline order: a stage none has (a
    speech-to-speech model's first audio in a cascade's report) is left out of the tables."""
    timed = [a for a in report.agents if a.waterfall_ms]
    return [s for s in STAGE_NAMES if any(a.stage_p50_ms.get(s) is not None for a in timed)]


def waterfall_table(report: Report) -> Table:
    timed = [a for a in report.agents if a.waterfall_ms]
    stages = stages_shown(report)
    headers = ("agent", *[STAGE_LABELS[s] for s in stages], "mean TTFA")
    rows = []
    for a in timed:
        rows.append(
            (
                Cell(a.agent_name),
                *[
                    Cell(
                        f"{a.waterfall_ms[s]:,.0f} (p50 {ms(a.stage_p50_ms[s]).text})",
                        a.waterfall_ms[s],
                    )
                    for s in stages
                ],
                ms(a.waterfall_total_ms),
            )
        )
    return Table(
        "waterfall",
        "Stage waterfall (ms)",
        headers,
        rows,
        caption=(
            "Mean per stage over the turns with a TTFA, so the stages add up to the mean TTFA; the "
            "median of each stage is in brackets (medians do not add up)."
        ),
        numeric=_numeric(headers, 0),
    )


def slowest_table(a: AgentLatency) -> Table:
    headers = ("dialogue", "turn", "cold", "TTFA ms", "TTFT ms", "slowest stage", "seeker said")
    rows = [
        (
            Cell(s.dialogue_id),
            Cell(str(s.turn_index), s.turn_index),
            Cell("yes" if s.cold else ""),
            ms(s.ttfa_ms),
            ms(s.ttft_ms),
            Cell(
                f"{STAGE_LABELS.get(s.slowest_stage, s.slowest_stage)} "
                f"{ms(s.stages_ms.get(s.slowest_stage)).text} ms"
            ),
            text(s.user_text),
        )
        for s in a.slowest
    ]
    return Table(
        f"slowest-{a.run_id}",
        f"Slowest turns: {a.agent_name}",
        headers,
        rows,
        numeric=frozenset({1, 3, 4}),
    )


def failures_table(a: AgentLatency) -> Table:
    headers = ("dialogue", "turn", "kind", "reason")
    rows = [
        (
            Cell(f.dialogue_id),
            Cell(str(f.turn_index), f.turn_index),
            Cell(f.kind),
            text(f.reason, 300),
        )
        for f in a.failures
    ]
    return Table(
        f"failed-{a.run_id}", f"Failed turns: {a.agent_name}", headers, rows, numeric=frozenset({1})
    )


def leaderboard_table(j: JudgingSummary) -> Table:
    t = j.ratings
    assert t is not None, "a leaderboard needs ratings"
    headers = (
        "#",
        "contestant",
        "Elo",
        "95% CI bootstrap",
        "95% CI asymptotic",
        "decided",
        "win",
        *DIMENSIONS,
        "regular",
        "adversarial",
        "TTFT p50 ms",
        "TTFA p50 ms",
        "turns in budget",
        "Elo in budget",
        "Elo at equal latency",
    )
    rows = []
    for k, r in enumerate(t.ratings, 1):
        boot = (
            Cell(
                f"{r.elo_ci_bootstrap[0]:,.0f}\u2013{r.elo_ci_bootstrap[1]:,.0f}",
                r.elo_ci_bootstrap[0],
            )
            if r.elo_ci_bootstrap
            else Cell("-")
        )
        rows.append(
            (
                Cell(str(k), k),
                Cell(marked(r.contestant, j.own_family)),
                Cell(f"{r.elo:,.1f}", r.elo),
                boot,
                Cell(
                    f"{r.elo_ci_asymptotic[0]:,.0f}\u2013{r.elo_ci_asymptotic[1]:,.0f}",
                    r.elo_ci_asymptotic[0],
                ),
                Cell(str(r.decided), r.decided),
                pct(r.win_rate),
                *[pct(r.dimension_win_rates.get(d)) for d in DIMENSIONS],
                pct(r.win_rate_regular),
                pct(r.win_rate_adversarial),
                ms(r.ttft_p50_ms),
                ms(r.ttfa_p50_ms),
                pct(r.goodput),
                ms(r.elo_within_budget),
                ms(r.elo_latency_adjusted),
            )
        )
    return Table(
        "leaderboard",
        "HEART leaderboard"
        if j.trust_warning is None
        else "HEART ranking, indicative only: its judge is not trusted to rank",
        headers,
        rows,
        caption=(
            f"Strength-weighted Bradley-Terry on {t.decided} decided pairs over {t.items} items "
            f"({t.undecided} undecided: position flips, failed verdicts or no majority). Win rates "
            "are shares of decided pairs; H E A R T: human alignment, empathic responsiveness, "
            "attunement, resonance, task-following. Turns in budget: TTFA \u2264 "
            f"{t.budget_ttfa_ms:,.0f} ms and TTFT \u2264 {t.budget_ttft_ms:,.0f} ms."
        ),
        numeric=_numeric(headers, 1),
    )


def health_table(j: JudgingSummary) -> Table:
    headers = (
        "judge",
        "verdicts",
        "failed",
        "pairs with both orders",
        "position flips",
        "flip rate",
        "reply A won",
    )
    rows = [
        (
            Cell(h.judge),
            Cell(str(h.verdicts), h.verdicts),
            Cell(str(h.failed), h.failed),
            Cell(str(h.pairs_decided), h.pairs_decided),
            Cell(str(h.flips), h.flips),
            pct(h.flip_rate),
            pct(h.first_slot_rate),
        )
        for h in j.health
    ]
    return Table(
        "judges",
        "Judges",
        headers,
        rows,
        caption=(
            "A pair counts only when both orders name the same winner; a flip means the judge "
            "preferred a slot, not a reply. A judge without position bias has reply A win about "
            "half the time."
        ),
        numeric=_numeric(headers, 0),
    )
