"""Tables a person reads after judging: judge health and each contestant's record."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from rich.table import Table

from voicebench.api.views import (
    DIMENSION_NAMES,
    NAMED,
    RULE_NAMES,
    TRUSTED_ACCURACY,
    TRUSTED_MARGIN,
    UNMEASURED_RULES,
    JudgeCard,
    JudgingResult,
    OwnFamily,
    Tally,
    Verdict,
    card_line,
    family_lines,
    marked,
    points,
    shown_p,
    split_text,
    trust_warning,
)
from voicebench.cli.common import notable, out, plain, show


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.0f}%"


def health_table(result: JudgingResult) -> Table:
    t = Table(title="judges" + (" (SMOKE: not meaningful)" if result.smoke else ""))
    for col in ("judge", "verdicts", "failed", "pairs decided", "position flips", "reply A won"):
        t.add_column(col, justify="left" if col == "judge" else "right", no_wrap=col == "judge")
    for h in result.health:
        t.add_row(
            h.judge,
            str(h.verdicts),
            str(h.failed),
            str(h.pairs_decided),
            f"{h.flips} ({_pct(h.flip_rate)})",
            _pct(h.first_slot_rate),
        )
    return t


def record_table(result: JudgingResult) -> Table:
    """Wins and losses per contestant over decided pairs."""
    wins: Counter[str] = Counter()
    played: Counter[str] = Counter()
    undecided: Counter[str] = Counter()
    for p in result.pairs:
        for c in (p.first, p.second):
            if p.winner is None:
                undecided[c] += 1
            else:
                played[c] += 1
        if p.winner is not None:
            wins[p.winner] += 1
    t = Table(title="contestants (pairs decided by the judges)")
    for col in ("contestant", "won", "lost", "win rate", "undecided"):
        t.add_column(
            col, justify="left" if col == "contestant" else "right", no_wrap=col == "contestant"
        )
    names = sorted(
        {r.contestant for r in result.replies},
        key=lambda c: (-(wins[c] / played[c]) if played[c] else 0.0, c),
    )
    for c in names:
        rate = wins[c] / played[c] if played[c] else None
        t.add_row(
            marked(c, result.own_family),
            str(wins[c]),
            str(played[c] - wins[c]),
            _pct(rate),
            str(undecided[c]),
        )
    return t


def _tally(t: Tally) -> str:
    return "-" if t.accuracy is None else f"{t.correct}/{t.pairs} ({_pct(t.accuracy)})"


def card_tables(card: JudgeCard) -> list[Table]:
    """A judge card as a person reads it: the headline figures, then the breakdowns."""
    gold = Path(card.gold_path).name
    head = Table(title=f"judge card: {card.spec_name} on {gold} ({split_text(card)})")
    head.add_column("figure")
    head.add_column("value", justify="right")
    rows = [
        ("judges", ", ".join(f"{j} [{m}]" for j, m in zip(card.judges, card.methods, strict=True))),
        (
            "accuracy (decided and right / all pairs)"
            + (", DEV PAIRS INCLUDED" if card.includes_dev else ""),
            f"{card.correct}/{card.pairs} = {_pct(card.accuracy)} "
            f"(95% CI {_pct(card.accuracy_low)}-{_pct(card.accuracy_high)})",
        ),
        ("decided", f"{card.decided}/{card.pairs} ({_pct(card.decided_rate)})"),
        ("position flips", f"{card.flips} ({_pct(card.flip_rate)})"),
        ("reply A won", _pct(card.first_slot_rate)),
        ("longer reply is the worse one", _tally(card.longer_worse)),
        ("failed verdicts", f"{card.failed_verdicts}/{card.verdicts}"),
        (
            "seconds per verdict",
            "-" if card.seconds_per_verdict is None else f"{card.seconds_per_verdict:.2f}",
        ),
    ]
    for row in rows:
        head.add_row(*row)
    cats = Table(title="accuracy per category")
    cats.add_column("category")
    cats.add_column("right", justify="right")
    for cat, t in card.by_category.items():
        cats.add_row(cat, _tally(t))
    dims = Table(title="accuracy per HEART dimension the pair is about")
    dims.add_column("dimension")
    dims.add_column("right", justify="right")
    for d, t in card.by_dimension.items():
        dims.add_row(f"{d} {DIMENSION_NAMES[d]}", _tally(t))
    fams = Table(title="accuracy on the pairs with a reply of each family")
    for col in ("family", "right", "best trivial rule there"):
        fams.add_column(col, justify="left" if col == "family" else "right")
    for family, f in (card.by_family or {}).items():
        best = f.best_rule
        rule = "-" if best is None else f"{RULE_NAMES.get(best[0], best[0])} {_pct(best[1])}"
        name = "any, on the pairs that name them" if family == NAMED else family
        fams.add_row(name, _tally(Tally(pairs=f.pairs, correct=f.correct)), rule)
    rules = rules_table(card)
    return [head] + [t for t in (rules, cats, dims, fams) if t is not None and t.row_count]


def _share(correct: int, pairs: int, share: float, low: float, high: float) -> tuple[str, str]:
    return f"{correct}/{pairs}", f"{_pct(share)} ({_pct(low)}-{_pct(high)})"


def rules_table(card: JudgeCard) -> Table | None:
    """The judge beside the trivial rules on the same pairs, and its margin over the best of
    them (the caption); None for a card that does not measure them."""
    if card.trivial_rules is None or card.margin is None:
        return None
    m = card.margin
    t = Table(
        title="the judge and trivial rules on the same pairs",
        caption=f"judge - {RULE_NAMES.get(m.second, m.second)}: "
        f"{100 * m.difference:+.1f} points (95% CI {100 * m.difference_low:+.1f} to "
        f"{100 * m.difference_high:+.1f}; right only for the judge on {m.first_only} pairs, "
        f"only for the rule on {m.second_only}; McNemar exact p {shown_p(m.p_value)}); "
        f"trusted from {_pct(TRUSTED_ACCURACY)} right and {points(TRUSTED_MARGIN)} points over "
        "the best rule",
        caption_justify="left",
    )
    t.add_column("picks", no_wrap=True)
    t.add_column("right", justify="right", no_wrap=True)
    t.add_column("accuracy (95% CI)", justify="right", no_wrap=True)
    t.add_row(
        f"judge {card.spec_name}",
        *_share(card.correct, card.pairs, card.accuracy, card.accuracy_low, card.accuracy_high),
    )
    for name, s in card.trivial_rules.items():
        t.add_row(
            RULE_NAMES.get(name, name),
            *_share(s.correct, card.pairs, s.accuracy, s.accuracy_low, s.accuracy_high),
        )
    return t


def card_notes(card: JudgeCard) -> list[str]:
    """What a card's figures are beside a leaderboard's: whether they count dev pairs, and
    which gold set the leaderboard leads with."""
    notes = []
    if card.includes_dev:
        notes.append(
            "these figures include dev pairs, which the judge's method was tuned and its "
            "weights fitted on, so they read high; leaderboards quote the held-out pairs "
            "(judge-check --split holdout)"
        )
    if card.trivial_rules is None:
        notes.append(
            f"{UNMEASURED_RULES} (it keeps no per-pair outcomes), so it is not trusted: "
            "judge-check --refresh measures it again"
        )
    if not card.real_replies:
        notes.append(
            "measured on pairs written to carry a plain defect: leaderboards give this as "
            "'catches plain defects', after the figure on real replies (judge-check --gold real)"
        )
    return notes


def verdict_line(v: Verdict, n: int, total: int) -> str | None:
    """A line for every twentieth verdict, the last one and every failure."""
    if notable(n, total, v.answer is None):
        what = f"[red]failed: {plain(v.failure or '')}[/]" if v.answer is None else "ok"
        return f"[{n}/{total}] {v.item_id} {v.contestant_a} vs {v.contestant_b} ({v.judge}) {what}"
    return None


def show_judging(result: JudgingResult, *, ranked: bool = True) -> None:
    """Judge health, each contestant's record and the judge's card, with its figure on the
    family of each contestant a judge of that family rated. ``ranked=False``: no record (an
    order of the contestants) nor card, for a job that withholds its judge's ranking and
    shows the card with the reason (``withheld``)."""
    out.print(health_table(result))
    if ranked:
        out.print(record_table(result))
    if result.skipped_pairs:
        show(f"{result.skipped_pairs} pairs skipped: every judge shares a family with a contestant")
    if ranked:
        show_trust(result.card, result.spec_path, result.own_family)
    show(f"verdicts: {result.out_dir}/verdicts.jsonl")


def show_trust(card: JudgeCard | None, spec: str = "SPEC", own: Sequence[OwnFamily] = ()) -> None:
    """The judge's measured accuracy, its figure on the family of each contestant in ``own``
    (rated by a judge of its own family), and the warning when it is unmeasured or below the
    bar."""
    show(card_line(card, spec))
    for line in family_lines(card, own):
        show(line, style="yellow")
    warning = trust_warning(card)
    if warning:
        show(warning, style="yellow")
