"""The report as sections of blocks: one model that the page and the Markdown both render.

Blocks hold plain, unescaped text (replies and dialogue text included); the templates escape
it for their format (``voicebench/reporting/templates/``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from voicebench.judging import SMOKE_WARNING
from voicebench.judging.trust import card_line, family_lines
from voicebench.metrics import kinds_text
from voicebench.reporting import calls, hosts, humans
from voicebench.reporting import scenarios as sc
from voicebench.reporting import tables as tb
from voicebench.reporting.lines import agreement_lines, quality_notes
from voicebench.reporting.models import CallRecordingView, ItemReplies, Report, StrategySummary
from voicebench.reporting.recordings import CALLS_SHOWN
from voicebench.reporting.repeats import passes_table
from voicebench.reporting.replies import LEAD_S
from voicebench.reporting.reported import reported_table
from voicebench.reporting.strategy_table import strategies_table
from voicebench.timing import STAGE_LABELS, STAGES

FIGURE_CAPTIONS = {
    "latency_ecdf": "Share of turns answered within a given time: LLM time to first token (left) "
    "and time to first audio (right). Dashed: the budgets. Triangles: cold turns.",
    "waterfall": "Where the time to first audio goes: mean time per stage, in pipeline order.",
    "frontier_ttft": "HEART Elo against median TTFT (log scale): vertical bars are the Elo 95% "
    "CI, horizontal bars the median's 95% CI; the dotted steps join the "
    "Pareto frontier; dashed horizontal lines are human replies.",
    "frontier_ttfa": "HEART Elo against median time to first audio (log scale), as above.",
    "radar": "Per-dimension win rate: H human alignment, E empathic responsiveness, "
    "A attunement, R resonance, T task-following.",
    "strategy_heatmap": "How often each contestant uses each of the 15 support strategies: "
    "the share of its replies in which the classifier marked it present.",
    sc.SNR_FIGURE: sc.SNR_CAPTION,
    "human_agreement": "How often each judge, and the ensemble, names the people's majority "
    "winner, with 95% bootstrap intervals; dashed: HEART's 78.7% (judges vs people), dotted: "
    "its 79.5% between people.",
}


@dataclass(frozen=True)
class Text:
    """A paragraph: ``plain``, a ``note`` (set apart) or a ``banner`` (a warning)."""

    text: str
    style: Literal["plain", "note", "banner"] = "plain"
    kind: str = "text"


@dataclass(frozen=True)
class Plot:
    name: str
    caption: str
    kind: str = "figure"


@dataclass(frozen=True)
class Plots:
    """Plots side by side."""

    figures: tuple[Plot, ...]
    kind: str = "figures"


@dataclass(frozen=True)
class TableBlock:
    table: tb.Table
    kind: str = "table"


@dataclass(frozen=True)
class Card:
    title: str
    headline: str
    lines: tuple[str, ...]


@dataclass(frozen=True)
class Cards:
    cards: tuple[Card, ...]
    kind: str = "cards"


@dataclass(frozen=True)
class Replies:
    """Per item, the conversation and every contestant's reply, with the verdicts and the
    people's answers."""

    items: tuple[ItemReplies, ...]
    kind: str = "replies"


@dataclass(frozen=True)
class Recordings:
    """Calls to play, each with where its turns lie in it."""

    calls: tuple[CallRecordingView, ...]
    kind: str = "recordings"


Block = Text | Plot | Plots | TableBlock | Cards | Replies | Recordings


@dataclass(frozen=True)
class Section:
    id: str
    title: str
    blocks: list[Block] = field(default_factory=list)


def _figure(report: Report, name: str) -> list[Plot]:
    return [Plot(name, FIGURE_CAPTIONS.get(name, name))] if name in report.figures else []


def _cards(report: Report) -> Cards:
    elo = {}
    j = report.judging
    if j and j.ratings and j.trust_warning is None:  # an untrusted judge ranks nobody here
        elo = {r.contestant: r for r in j.ratings.ratings}
    cards = []
    for a in report.agents:
        ttfa, ttft = a.ttfa.quantile(50), a.ttft.quantile(50)
        lines = [
            f"TTFT p50 {tb.ms(ttft.value_ms if ttft else None).text} ms; within both "
            f"budgets {tb.pct(a.within_budget).text} of {a.turns} turns ({a.failed} failed"
            + (f": {kinds_text(a.failed_by_kind)}" if a.failed else "")
            + ")"
        ]
        r = elo.get(a.judged_as or a.agent_name)
        if r is not None:
            lines.append(f"HEART Elo {r.elo:,.0f}")
        if j is not None:  # its judge's card on its family, when a judge of it rated it
            lines += family_lines(j.card, j.own_family, a.judged_as or a.agent_name)
        cards.append(
            Card(a.agent_name, f"{tb.ms(ttfa.value_ms if ttfa else None).text} ms", tuple(lines))
        )
    return Cards(tuple(cards))


def strategy_note(s: StrategySummary) -> str:
    return (
        f"Each judged reply was labelled with the 15 HEART support strategies by "
        f"{s.classifier} (voicebench strategies). Humans tend to spread their support over "
        "more strategies; a narrow repertoire shows as low coverage, low entropy and a high "
        "usage SD."
    )


def _latency(report: Report) -> Section:
    blocks: list[Block] = [
        TableBlock(tb.budget_table(report)),
        *_figure(report, "latency_ecdf"),
        TableBlock(tb.distribution_table(report)),
        *_figure(report, "waterfall"),
        TableBlock(tb.waterfall_table(report)),
    ]
    reported = reported_table(report)
    if reported is not None:
        blocks.append(TableBlock(reported))
    if any(a.passes for a in report.agents):
        blocks.append(TableBlock(passes_table(report)))
    for a in report.agents:
        blocks.append(TableBlock(tb.slowest_table(a)))
        if a.failures:
            blocks.append(TableBlock(tb.failures_table(a)))
    return Section("latency", "Latency budget", blocks)


def _scenarios(report: Report) -> Section | None:
    if not any(a.scenarios for a in report.agents):
        return None
    blocks: list[Block] = [TableBlock(sc.scenario_table(report))]
    overlap = sc.overlap_table(report)
    if overlap.rows:
        blocks.append(TableBlock(overlap))
    blocks += _figure(report, sc.SNR_FIGURE)
    return Section("scenarios", "Scenarios", blocks)


def _quality(report: Report) -> Section:
    """The ranking and the figures drawn from it; an untrusted judge's under its banner, first,
    and titled as indicative only."""
    j = report.judging
    blocks: list[Block] = [Text(n) for n in quality_notes(report)]
    indicative = j is not None and j.ratings is not None and j.trust_warning is not None
    if j is not None and j.ratings is not None:
        if j.trust_warning:  # above all the section shows
            blocks.insert(0, Text(f"{j.trust_warning}.", "banner"))
        blocks.append(
            Plots(tuple(_figure(report, "frontier_ttft") + _figure(report, "frontier_ttfa")))
        )
        blocks.append(TableBlock(tb.leaderboard_table(j)))
        blocks += [Text(line, "note") for line in card_line(j.card).splitlines()]
        blocks += [Text(line, "note") for line in family_lines(j.card, j.own_family)]
        blocks += _figure(report, "radar")
    title = "Quality and latency" + (", indicative only" if indicative else "")
    return Section("quality", title, blocks)


def _strategies(s: StrategySummary, report: Report) -> Section:
    blocks: list[Block] = [Text(strategy_note(s))]
    if s.smoke:
        blocks.append(Text(f"{SMOKE_WARNING}: the strategy labels are not meaningful.", "banner"))
    blocks += _figure(report, "strategy_heatmap")
    blocks.append(TableBlock(strategies_table(s)))
    return Section("strategies", "Support strategies", blocks)


def _judging(report: Report) -> Section:
    j = report.judging
    if j is None:
        return Section("judging", "Judging health", [Text("No judging in this report.", "note")])
    blocks: list[Block] = [Text(f"Judges: {', '.join(j.judges)}")]
    blocks += [Text(line) for line in card_line(j.card).splitlines()]
    blocks += [Text(line) for line in family_lines(j.card, j.own_family)]
    if j.trust_warning:
        blocks.append(Text(f"{j.trust_warning}.", "banner"))
    blocks.append(TableBlock(tb.health_table(j)))
    if j.ratings is not None:
        blocks += [Text(line) for line in agreement_lines(j.ratings)]
    else:
        blocks.append(Text("No agreement figures: no ratings were fitted."))
    return Section("judging", "Judging health", blocks)


def _people(report: Report) -> Section | None:
    j = report.judging
    p = None if j is None or j.ratings is None else j.ratings.people
    if p is None:
        return None
    blocks: list[Block] = [
        Text(
            "People rated pairs of replies by ear on the rating page (voicebench annotate), "
            "blind to who said what. Their ladder is fitted like the judges', on their votes."
        ),
        TableBlock(humans.ladder_table(p)),
        *_figure(report, "human_agreement"),
        TableBlock(humans.agreement_table(p)),
        TableBlock(humans.consistency_table(p)),
        TableBlock(humans.disagreement_table(p)),
    ]
    return Section("people", "People as judges", blocks)


def _replies(report: Report) -> Section:
    return Section(
        "replies",
        "Replies",
        [
            Text(
                "What each contestant said on each judged item, as the listener heard it (the "
                "transcript of its audio, which is what the judges read), with the audio to "
                "play, the judges' verdicts and reasons, and what people said."
            ),
            Replies(report.replies),
        ],
    )


def _calls(report: Report) -> Section:
    j = report.call_judging
    blocks: list[Block] = [
        Text(
            "Simulated callers (voicebench converse): an LLM played each item's caller from "
            "its persona card and talked with the agent live, hearing the agent's replies "
            "transcribed from their audio. Every agent turn was timed as a replayed one; those "
            "turns are in the latency section under the agent's name with (calls)."
        ),
        TableBlock(calls.outcomes_table(report)),
        TableBlock(calls.places_table(report)),
    ]
    seekers = ", ".join(sorted({o.seeker for o in report.calls})) or "-"
    if j is None:
        blocks.append(Text(f"Callers played by {seekers}; the calls were not judged."))
    else:
        blocks.append(
            Text(
                f"Callers played by {seekers}; whole calls judged by {', '.join(j.judges)}. "
                f"{card_line(j.card).replace(chr(10), '; ')}"
            )
        )
        if j.trust_warning:
            blocks.append(Text(f"{j.trust_warning}.", "banner"))
        if j.ratings is None:
            blocks.append(Text(f"No call ratings: {j.no_ratings}"))
        else:
            blocks.append(TableBlock(calls.elo_table(report)))
            if j.ratings.people is not None:
                blocks.append(TableBlock(calls.people_table(j.ratings.people)))
    if report.call_replies:
        blocks += [
            Text(
                "Each judged call, by caller: the call as heard, turn by turn with the time "
                "the caller waited for each answer, how it ended, the caller's own report, "
                "the whole call to play as it happened (the caller on the left, the agent on "
                "the right) and the judges' verdicts."
            ),
            Replies(report.call_replies),
        ]
    return Section("calls", "Whole calls", blocks)


def _recordings(report: Report) -> Section:
    more = (
        f" {report.recordings_left_out} more recorded call(s) are in the runs' calls/ folders."
        if report.recordings_left_out
        else ""
    )
    return Section(
        "recordings",
        "Calls to play",
        [
            Text(
                "Each call as it happened: the caller on the left, the agent on the right as the "
                "caller heard it, on the clock its turns were timed on. Each turn plays from "
                f"{LEAD_S:g} s before the caller's end of speech; the times are from the start "
                f"of the recording (at most {CALLS_SHOWN} calls a run).{more}"
            ),
            Recordings(report.recordings),
        ],
    )


def _method(report: Report) -> Section:
    shown = tb.stages_shown(report)
    rows = [(tb.Cell(STAGE_LABELS[n]), tb.Cell(what)) for n, _, what in STAGES if n in shown]
    stages = tb.Table("stages", "Stages", ("stage", "from and to"), rows)
    runs = "; ".join(f"{a.agent_name}: {a.run_dir}" for a in report.agents)
    return Section(
        "method",
        "Method",
        [
            Text(
                "Every seeker turn is replayed as speech in real time; each latency is measured "
                "from the true end of the seeker's speech (known from the audio) on one monotonic "
                "clock. TTFT runs from the LLM request to its first token received (a speculative "
                "reply's wait for the turn to end is the turn hold); TTFA from the end of "
                "speech to the first audible sample of the reply. The stages cut TTFA at these "
                "milestones:"
            ),
            TableBlock(stages),
            Text(
                "Quality: the final reply of each item, transcribed from the agent's audio, is "
                "judged pairwise in both orders. A judge that writes its verdict decides a pair "
                "only when both orders agree; one read by log-probabilities decides it by its "
                "margins summed over both orders, which cancels a preference for a slot. "
                "Ratings are strength-weighted Bradley-Terry on the decided pairs, as Elo."
            ),
            Text(f"Runs: {runs}"),
            *(
                [TableBlock(hosts.hosts_table(report))]
                if any(a.hosts for a in report.agents)
                else []
            ),
        ],
    )


def sections(report: Report) -> list[Section]:
    """Every section of the report, in page order."""
    busy = [Text(line, "banner") for line in hosts.busy_banners(report)]
    out = [Section("summary", "", [*busy, _cards(report)]), _latency(report)]
    scenarios = _scenarios(report)
    if scenarios is not None:
        out.append(scenarios)
    out.append(_quality(report))
    if report.strategies is not None:
        out.append(_strategies(report.strategies, report))
    out.append(_judging(report))
    people = _people(report)
    if people is not None:
        out.append(people)
    if report.replies:
        out.append(_replies(report))
    if report.calls or report.call_judging is not None:
        out.append(_calls(report))
    if report.recordings:
        out.append(_recordings(report))
    out.append(_method(report))
    return out
