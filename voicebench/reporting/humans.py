"""The report's tables and figure of what people said: their ladder, their agreement with the
judges and with each other, each rater's consistency, and the pairs people and judges disagree
on most."""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt

from voicebench.rating import HEART_INTER_HUMAN, HEART_JUDGE_HUMAN, PeopleSummary
from voicebench.reporting.figures import STYLE, save_figure, series_color
from voicebench.reporting.tables import Cell, Table, pct, text


def _share(v: float | None, lo: float | None, hi: float | None) -> Cell:
    if v is None or lo is None or hi is None:
        return Cell("-")
    return Cell(f"{100 * v:.1f}% ({100 * lo:.1f}\u2013{100 * hi:.1f})", v)


def ladder_table(p: PeopleSummary) -> Table:
    return Table(
        "human-ladder",
        "People's ladder",
        ("rank", "contestant", "Elo", "95% CI (bootstrap)", "votes", "win rate"),
        [
            (
                Cell(str(k), k),
                Cell(r.contestant),
                Cell(f"{r.elo:,.0f}", r.elo),
                Cell(
                    "-"
                    if r.elo_ci_bootstrap is None
                    else f"{r.elo_ci_bootstrap[0]:,.0f}\u2013{r.elo_ci_bootstrap[1]:,.0f}"
                ),
                Cell(str(r.votes), r.votes),
                pct(r.win_rate),
            )
            for k, r in enumerate(p.ladder, start=1)
        ],
        caption=f"{p.judgments} answers by {len(p.raters)} rater(s) on {p.pairs} pairs "
        f"({p.repeats} repeats, used for consistency only). Bradley-Terry on the people's "
        "votes: 'slightly' weighs 1, 'much' 2, 'same' nothing.",
        numeric=frozenset({0, 2, 4, 5}),
    )


def agreement_table(p: PeopleSummary) -> Table:
    rows = [
        (Cell(judge), _share(v, lo, hi), Cell(str(n), n), Cell(f"{100 * HEART_JUDGE_HUMAN:.1f}%"))
        for judge, (v, lo, hi, n) in p.judge_agreement.items()
    ]
    if p.inter_rater is not None:
        v, lo, hi, n = p.inter_rater
        rows.append(
            (
                Cell("between people (rater pairs)"),
                _share(v, lo, hi),
                Cell(str(n), n),
                Cell(f"{100 * HEART_INTER_HUMAN:.1f}%"),
            )
        )
    kappa = "-" if p.fleiss_kappa is None else f"{p.fleiss_kappa:.3f}"
    alpha = "-" if p.krippendorff_alpha is None else f"{p.krippendorff_alpha:.3f}"
    return Table(
        "human-agreement",
        "Agreement with people",
        ("who", "agrees with the people's majority (95% CI)", "pairs", "HEART"),
        rows,
        caption=f"Between people: Fleiss' kappa {kappa} (HEART 0.673), Krippendorff's alpha "
        f"{alpha}. Intervals: bootstrap over items.",
        numeric=frozenset({1, 2, 3}),
    )


def consistency_table(p: PeopleSummary) -> Table:
    return Table(
        "rater-consistency",
        "Each rater's consistency",
        ("rater", "answers", "repeated pairs", "same answer both times"),
        [
            (
                Cell(c.rater),
                Cell(str(c.judgments), c.judgments),
                Cell(str(c.repeats), c.repeats),
                pct(c.consistent),
            )
            for c in p.consistency
        ],
        numeric=frozenset({1, 2, 3}),
    )


def disagreement_table(p: PeopleSummary) -> Table:
    return Table(
        "human-disagreements",
        "Where people and judges disagree most",
        ("item", "first", "its reply", "second", "its reply", "people", "judges"),
        [
            (
                Cell(d.item_id),
                Cell(d.first),
                text(d.first_reply, 400),
                Cell(d.second),
                text(d.second_reply, 400),
                Cell(
                    f"{d.people_winner} (votes {d.people['first']}/{d.people['same']}/"
                    f"{d.people['second']}, mean {d.people_score:+.1f})"
                ),
                text(f"{d.judge_winner} (strength {d.judge_strength:.1f}): {d.rationale}", 300),
            )
            for d in p.disagreements
        ],
        caption="Votes: first better / same / second better; mean on -2 (second much better) "
        "to +2 (first much better).",
    )


def agreement_figure(people: PeopleSummary, folder: Path) -> str:
    """Each judge's (and the ensemble's) agreement with the people's majority, with its 95%
    interval, against HEART's 78.7% (dashed) and its agreement between people (dotted)."""
    shares = [*people.judge_agreement.items(), ("between people", people.inter_rater)]
    rows = [
        (name, (v, lo, hi, n))
        for name, s in shares
        if s is not None and None not in s[:3]
        for v, lo, hi, n in [(float(s[0] or 0), float(s[1] or 0), float(s[2] or 0), s[3])]
    ]
    with plt.rc_context(STYLE):
        fig, ax = plt.subplots(figsize=(7, 0.6 * len(rows) + 1.4))
        for k, (_name, (v, lo, hi, n)) in enumerate(rows):
            y = len(rows) - 1 - k
            ax.errorbar(
                100 * v,
                y,
                xerr=[[100 * (v - lo)], [100 * (hi - v)]],
                fmt="o",
                color=series_color(k),
                capsize=4,
            )
            ax.text(100 * v, y + 0.22, f"{100 * v:.0f}% (n={n})", ha="center", fontsize=8)
        ax.axvline(
            100 * HEART_JUDGE_HUMAN,
            color="#444444",
            linestyle="--",
            linewidth=1,
            label=f"HEART judges vs people {100 * HEART_JUDGE_HUMAN:.1f}%",
        )
        ax.axvline(
            100 * HEART_INTER_HUMAN,
            color="#888888",
            linestyle=":",
            linewidth=1,
            label=f"HEART between people {100 * HEART_INTER_HUMAN:.1f}%",
        )
        ax.set_yticks(range(len(rows)), [name for name, _ in reversed(rows)], fontsize=8)
        ax.set_ylim(-0.7, len(rows) - 0.3)
        ax.set_xlim(0, 100)
        ax.set_xlabel("agreement with the people's majority (%)")
        ax.legend(fontsize=8, loc="lower left")
        ax.set_title("do the judges agree with people? (bars: 95% CI)", fontsize=10)
        fig.tight_layout()
        return save_figure(fig, "human_agreement", folder)
