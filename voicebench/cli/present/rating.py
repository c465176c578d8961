"""The leaderboard, the people's ladder and the latency views, for the terminal (the
agreement sentences are the report's own, from ``voicebench.api.views``)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from rich.table import Table

from voicebench.api import Judging
from voicebench.api.views import (
    DIMENSIONS,
    HEART_HUMAN_KAPPA,
    HEART_INTER_HUMAN,
    HEART_JUDGE_HUMAN,
    RATINGS_FILE,
    JudgeCard,
    OwnFamily,
    PeopleSummary,
    RatingTable,
    agreement_lines,
    card_line,
    card_of_judging,
    family_lines,
    marked,
    own_family_of,
    share,
    trust_warning,
)
from voicebench.cli.common import out, show
from voicebench.cli.present.fit import span
from voicebench.cli.present.judging import show_trust


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.0f}"


def _num(x: float | None) -> str:
    return "-" if x is None else f"{x:,.0f}"


def leaderboard(
    table: RatingTable, card: JudgeCard | None = None, own: Sequence[OwnFamily] = ()
) -> Table:
    """Quality: Elo with both intervals and the win rate (``win_rates_table`` has the win
    rates per dimension); the caption carries the judge's measured gold accuracy (its card),
    and its figure on the family of each contestant marked as rated by a judge of its own
    family (``own``)."""
    title = "HEART leaderboard"
    if card is None:
        title += " (judge unmeasured)"
    elif card.chance_level:
        title += " (carries no information: its judge is at chance)"
    elif trust_warning(card) is not None:
        title += " (judge below the trust bar)"
    t = Table(
        title=title,
        caption=(
            f"{table.decided} decided pairs on {table.items} items ({table.undecided} undecided); "
            f"95% CI by bootstrap over items ({table.bootstrap_rounds} rounds) and asymptotic\n"
            + "\n".join([card_line(card), *family_lines(card, own)])
        ),
    )
    t.add_column("contestant", no_wrap=True)
    for c in ("Elo", "95% CI boot", "95% CI asym"):
        t.add_column(c, justify="right", no_wrap=True)
    t.add_column("win %", justify="right")
    for r in table.ratings:
        boot = span(*r.elo_ci_bootstrap) if r.elo_ci_bootstrap else "-"
        t.add_row(
            marked(r.contestant, own),
            f"{r.elo:,.0f}",
            boot,
            span(*r.elo_ci_asymptotic),
            _pct(r.win_rate),
        )
    return t


def win_rates_table(table: RatingTable) -> Table:
    """Each contestant's win rate on each HEART dimension, and on the regular and the
    adversarial items (beside the leaderboard: one table of both would not fit 80 columns)."""
    t = Table(
        title="win % by HEART dimension and by kind of item",
        caption="H E A R T: human alignment, empathic responsiveness, attunement, resonance, "
        "task-following",
    )
    t.add_column("contestant", no_wrap=True)
    for c in (*DIMENSIONS, "regular", "adversarial"):
        t.add_column(c, justify="right")
    for r in table.ratings:
        t.add_row(
            r.contestant,
            *[_pct(r.dimension_win_rates[d]) for d in DIMENSIONS],
            _pct(r.win_rate_regular),
            _pct(r.win_rate_adversarial),
        )
    return t


def _budget(table: RatingTable) -> str:
    return (
        f"budget: TTFA <= {table.budget_ttfa_ms:,.0f} ms and TTFT <= {table.budget_ttft_ms:,.0f} ms"
    )


def latency_board(table: RatingTable) -> Table:
    """Responsiveness beside quality: medians, budget goodput, Elo within budget and at
    equal latency."""
    t = Table(title="quality and latency", caption=_budget(table))
    t.add_column("contestant", no_wrap=True)
    t.add_column("Elo", justify="right", no_wrap=True)
    for c in (
        "TTFT p50 ms",
        "TTFA p50 ms",
        "turns in budget %",
        "Elo in budget",
        "Elo at equal latency",
    ):
        t.add_column(c, justify="right")
    for r in table.ratings:
        t.add_row(
            r.contestant,
            f"{r.elo:,.0f}",
            _num(r.ttft_p50_ms),
            _num(r.ttfa_p50_ms),
            _pct(r.goodput),
            _num(r.elo_within_budget),
            _num(r.elo_latency_adjusted),
        )
    return t


def latency_table(table: RatingTable, own: Sequence[OwnFamily] = ()) -> Table:
    """Responsiveness alone, for where the quality ranking is withheld: each agent's medians
    and budget goodput, the quickest first (no Elo, nor the Elo's order); an agent a judge of
    its own family rated is marked (``own``)."""
    t = Table(title="latency", caption=_budget(table))
    t.add_column("agent", no_wrap=True)
    for c in ("TTFT p50 ms", "TTFA p50 ms", "turns in budget %"):
        t.add_column(c, justify="right")
    agents = [r for r in table.ratings if r.kind == "agent"]
    agents.sort(key=lambda r: (r.ttfa_p50_ms is None, r.ttfa_p50_ms or 0.0, r.contestant))
    for r in agents:
        t.add_row(
            marked(r.contestant, own), _num(r.ttft_p50_ms), _num(r.ttfa_p50_ms), _pct(r.goodput)
        )
    return t


def latency_line(table: RatingTable) -> str | None:
    """The contextual fit's latency coefficient, when it was fitted."""
    if table.latency_beta is None:
        return None
    se = f" +- {table.latency_beta_se:.2f}" if table.latency_beta_se is not None else ""
    return (
        f"latency coefficient (log-odds per ln TTFA): {table.latency_beta:.2f}{se} over "
        f"{table.latency_comparisons} agent-agent pairs"
    )


def human_ladder_table(people: PeopleSummary) -> Table:
    """The people's Bradley-Terry ladder."""
    t = Table(
        title="people's ladder",
        caption=(
            f"{people.judgments} answers by {len(people.raters)} rater(s) on {people.pairs} "
            f"pairs ({people.repeats} repeats, used for consistency only); 95% CI by bootstrap "
            "over items"
        ),
    )
    for c in ("contestant", "Elo", "95% CI boot", "votes", "win %"):
        t.add_column(c, justify="left" if c == "contestant" else "right", no_wrap=c != "votes")
    for r in people.ladder:
        ci = r.elo_ci_bootstrap
        t.add_row(
            r.contestant,
            f"{r.elo:,.0f}",
            "-" if ci is None else span(*ci),
            str(r.votes),
            _pct(r.win_rate),
        )
    return t


def people_lines(people: PeopleSummary) -> list[str]:
    """Judge-human agreement per judge, agreement between people, each rater's consistency."""
    lines = [
        f"People vs {judge}: {share(v, lo, hi)} over {n} pairs "
        f"(HEART: {100 * HEART_JUDGE_HUMAN:.1f}%)"
        for judge, (v, lo, hi, n) in people.judge_agreement.items()
    ]
    if people.inter_rater is not None:
        v, lo, hi, n = people.inter_rater
        kappa = "-" if people.fleiss_kappa is None else f"{people.fleiss_kappa:.3f}"
        alpha = "-" if people.krippendorff_alpha is None else f"{people.krippendorff_alpha:.3f}"
        lines.append(
            f"Between people: {share(v, lo, hi)} over {n} rater pairs "
            f"(HEART: {100 * HEART_INTER_HUMAN:.1f}%); Fleiss' kappa {kappa} "
            f"(HEART: {HEART_HUMAN_KAPPA:.3f}); Krippendorff's alpha {alpha}"
        )
    else:
        lines.append("Between people: no pair has two raters yet")
    for c in people.consistency:
        lines.append(
            f"Rater {c.rater}: {c.judgments} answers; "
            + (
                "no repeated pair answered yet"
                if c.consistent is None
                else f"same answer on {100 * c.consistent:.0f}% of {c.repeats} repeated pairs"
            )
        )
    return lines


def disagreement_table(people: PeopleSummary) -> Table:
    """The pairs where people and the judges disagree most, with both replies."""
    t = Table(title="where people and judges disagree most", show_lines=True)
    for c in ("item", "first reply", "second reply", "people", "judges"):
        t.add_column(c, overflow="fold")
    for d in people.disagreements:
        t.add_row(
            d.item_id,
            f"{d.first}: {d.first_reply}",
            f"{d.second}: {d.second_reply}",
            f"{d.people_winner} (votes {d.people['first']}/{d.people['same']}/"
            f"{d.people['second']}, mean {d.people_score:+.1f})",
            f"{d.judge_winner} (strength {d.judge_strength:.1f}): {d.rationale}",
        )
    return t


def show_rating(table: RatingTable) -> None:
    card = card_of_judging(Path(table.judging_dir))
    out.print(leaderboard(table, card, own_family_of(Path(table.judging_dir))))
    out.print(win_rates_table(table))
    out.print(latency_board(table))
    for line in [latency_line(table)] + (agreement_lines(table) if table.agreement else []):
        if line is not None:
            show(line)
    if table.people is not None:
        out.print(human_ladder_table(table.people))
        for line in people_lines(table.people):
            show(line)
        if table.people.disagreements:
            out.print(disagreement_table(table.people))
    show_trust(card, Judging.load(table.judging_dir).header.judge_spec_path)
    show(f"ratings: {Path(table.judging_dir) / RATINGS_FILE}")
