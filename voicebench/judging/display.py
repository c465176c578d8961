"""Tables a person reads after judging: judge health and each contestant's record."""

from __future__ import annotations

from collections import Counter

from rich.table import Table

from voicebench.judging.run import JudgingResult

SMOKE_WARNING = (
    "offline smoke judge: these verdicts test the judging path only; a 135M model "
    "cannot judge empathy, so the quality figures mean nothing"
)


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.0f}%"


def health_table(result: JudgingResult) -> Table:
    t = Table(title="judges" + (" (SMOKE: not meaningful)" if result.smoke else ""))
    for col in ("judge", "verdicts", "failed", "pairs decided", "position flips", "reply A won"):
        t.add_column(col, justify="left" if col == "judge" else "right")
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
        t.add_column(col, justify="left" if col == "contestant" else "right")
    names = sorted(
        {r.contestant for r in result.replies},
        key=lambda c: (-(wins[c] / played[c]) if played[c] else 0.0, c),
    )
    for c in names:
        rate = wins[c] / played[c] if played[c] else None
        t.add_row(c, str(wins[c]), str(played[c] - wins[c]), _pct(rate), str(undecided[c]))
    return t
