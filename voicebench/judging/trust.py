"""What a judge card says beside the outputs its judge made: the card's lines under a
leaderboard, and the banners of a judge short of the trust bars (``JudgeCard.trusted``), each
saying which bar it fell short of."""

from __future__ import annotations

from collections.abc import Sequence

from voicebench.judging.cards import TRUSTED_ACCURACY, TRUSTED_MARGIN, JudgeCard
from voicebench.judging.families import NAMED, OwnFamily
from voicebench.judging.trivial import RULE_NAMES

UNMEASURED_RULES = "trivial rules not measured on this card"
"""Said of a card written before the trivial rules were measured on its pairs."""


def _pct(x: float) -> str:
    return f"{100 * x:.0f}%"


def points(x: float) -> str:
    """A difference of shares in whole points, signed: ``+12``, ``+0``, ``-6``."""
    return f"{round(100 * x):+d}"


def split_text(card: JudgeCard) -> str:
    """Which pairs a card's figures count, saying so when dev pairs are among them."""
    if not card.includes_dev:
        return card.split
    if card.split == "dev" or card.dev_pairs is None:
        return f"{card.split}: includes dev pairs, tuned on"
    return f"{card.split}: includes {card.dev_pairs:,} dev pairs, tuned on"


def trivial_line(card: JudgeCard) -> str:
    """The trivial rules' accuracy on the card's pairs and the judge's margin over the best of
    them, on one line."""
    if card.trivial_rules is None or card.margin is None:
        return UNMEASURED_RULES
    rules = ", ".join(f"{name} {_pct(s.accuracy)}" for name, s in card.trivial_rules.items())
    m = card.margin
    return (
        f"trivial rules on the same pairs: {rules}; judge {points(m.difference)} points over "
        f"the best (95% CI {points(m.difference_low)} to {points(m.difference_high)})"
    )


def card_line(card: JudgeCard | None, spec: str = "SPEC") -> str:
    """The lines for beside a leaderboard: the judge's measured accuracy on real replies and
    the trivial rules' on the same pairs, then its accuracy on the written gold set ("catches
    plain defects"); or that it has none."""
    if card is None:
        return (
            "judge unmeasured: no judge card, so nobody knows how far its verdicts agree with "
            f"careful people (voicebench judge-check --judge {spec})"
        )
    interval = f"95% CI {_pct(card.accuracy_low)}-{_pct(card.accuracy_high)}"
    what = "pairs of real replies" if card.real_replies else "gold pairs"
    line = (
        f"judge {card.spec_name}: {_pct(card.accuracy)} right on {card.pairs:,} {what} "
        f"({split_text(card)}; {interval}), {_pct(card.decided_rate)} decided, "
        f"{card.flips} position flips"
    )
    if not card.real_replies:
        return f"{line}; not measured on real replies\n{trivial_line(card)}"
    line += f"\n{trivial_line(card)}"
    w = card.written
    if w is not None:
        line += (
            f"\ncatches plain defects: {_pct(w.accuracy)} right on {w.pairs:,} written gold pairs "
            f"({split_text(w)}; 95% CI {_pct(w.accuracy_low)}-{_pct(w.accuracy_high)})"
        )
    return line


OWN_FAMILY_MARK = "\u2020"
"""Marks, in a table, the contestant a judge of its own family rated; the line beside the
table that starts with it (``family_line``) gives the judge's card on that family."""


def family_line(card: JudgeCard | None, own: OwnFamily) -> str:
    """The judge that rated a contestant of its own family, and its card on the pairs with a
    reply of that family beside its card on all pairs; or that nobody measured it there."""
    head = f"{own.judge} ({own.family}) rated {own.contestant}, its own family: "
    if card is None:
        return head + "judge unmeasured, so how far it favours its own family is unknown"
    tally = (card.by_family or {}).get(own.family)
    if tally is None or tally.accuracy is None or tally.interval is None:
        why = (
            "its gold pairs do not say which family wrote each reply"
            if card.by_family is None
            else f"none of its gold pairs has a {own.family} reply"
        )
        return head + f"its card is unmeasured on {own.family} replies ({why})"
    low, high = tally.interval
    line = (
        f"on the {tally.pairs:,} pairs with a {own.family} reply ({split_text(card)}) it is right "
        f"on {_pct(tally.accuracy)} (95% CI {_pct(low)}-{_pct(high)})"
    )
    best = tally.best_rule
    if best is not None:
        line += f", '{RULE_NAMES.get(best[0], best[0])}' on {_pct(best[1])} of them"
    named = (card.by_family or {}).get(NAMED)
    if named is None or named.accuracy is None or named.pairs == card.pairs:
        return f"{head}{line}; against {_pct(card.accuracy)} on all {card.pairs:,} pairs"
    return (
        f"{head}{line}; against {_pct(named.accuracy)} on the {named.pairs:,} pairs that name "
        f"their families ({_pct(card.accuracy)} on all {card.pairs:,})"
    )


def family_lines(
    card: JudgeCard | None, own: Sequence[OwnFamily], contestant: str | None = None
) -> list[str]:
    """``family_line`` for each contestant a judge of its own family rated (``contestant``'s
    only, when named), each after the mark its row carries (``marked``)."""
    return [
        f"{OWN_FAMILY_MARK} {family_line(card, o)}"
        for o in own
        if contestant is None or o.contestant == contestant
    ]


def marked(contestant: str, own: Sequence[OwnFamily]) -> str:
    """A contestant's name as a table's row shows it: marked when a judge of its own family
    rated it (``family_lines`` say how that judge does on its family)."""
    if any(o.contestant == contestant for o in own):
        return f"{contestant} {OWN_FAMILY_MARK}"
    return contestant


def short_of_rules(card: JudgeCard) -> str | None:
    """How the judge falls short of the trivial-rule bar (``TRUSTED_MARGIN``); None when it
    clears it."""
    if card.beats_trivial_rules:
        return None
    if card.trivial_rules is None or card.margin is None:
        return UNMEASURED_RULES
    m = card.margin
    rule = f"'{RULE_NAMES.get(m.second, m.second)}' ({_pct(card.trivial_rules[m.second].accuracy)}"
    if round(100 * m.difference) <= 0:
        return f"no better than {rule})"
    return f"only {points(m.difference)} points over {rule}; the bar is {points(TRUSTED_MARGIN)})"


def trust_warning(card: JudgeCard | None) -> str | None:
    """The banner for outputs made by an untrusted judge; None for a trusted one."""
    if card is None:
        return (
            "unmeasured judge: its accuracy on the gold set is unknown, so read the quality "
            "figures as unverified"
        )
    if card.chance_level:
        where = "real replies" if card.real_replies else "the gold set"
        return (
            f"judge no better than chance on {where} ({_pct(card.accuracy)} of "
            f"{card.pairs:,} pairs, 95% CI {_pct(card.accuracy_low)}-{_pct(card.accuracy_high)}): "
            "its quality figures and rankings carry no information"
        )
    if card.trusted:
        return None
    where = "pairs of real replies" if card.real_replies else "gold pairs"
    low = card.accuracy < TRUSTED_ACCURACY
    text = f"judge right on {'only ' if low else ''}{_pct(card.accuracy)} of {where}"
    if low:
        text += f" (below {_pct(TRUSTED_ACCURACY)})"
    rules = short_of_rules(card)
    if rules is not None:
        text += f", {rules}"
    return f"{text}: read the quality figures as indicative only"


def figure_warning(card: JudgeCard | None) -> str | None:
    """The banner in a quality figure's title; None for a trusted judge. Short of the
    trivial-rule bar, a second line says so."""
    if card is None:
        return "UNMEASURED JUDGE: quality figures are unverified"
    where = "REAL REPLIES" if card.real_replies else "GOLD PAIRS"
    if card.chance_level:
        return f"JUDGE AT CHANCE ON {where} ({_pct(card.accuracy)}): quality figures mean nothing"
    if card.trusted:
        return None
    text = f"JUDGE RIGHT ON {_pct(card.accuracy)} OF {where}: quality figures are indicative"
    rules = short_of_rules(card)
    return text if rules is None else f"{text}\n{rules.upper()}"
