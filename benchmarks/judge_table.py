"""Judges beside the trivial rules on the read pairs, from their cards: one table.

For each judge spec and each set of pairs (the real replies' dev and held-out pairs, of the
held-out ones the length-matched subset and the pairs of two agents' replies, the written
held-out pairs): its accuracy with a Wilson 95% interval, its seconds per pair (two
verdicts: both orders), and its paired comparison with the first judge named (McNemar's
exact test, the difference with its 95% interval); beside them, each trivial rule on the
same pairs. Nothing is asked of any judge: the figures come from the cards ``voicebench
judge-check`` wrote (each keeps every pair's outcome), and a set a judge has no card for
says the command that measures it.

The real replies are ``judges/pairs-real-more.jsonl`` and ``judges/pairs-real.jsonl`` counted
together. The length-matched subset (``voicebench.judging.gold.length_matched``) keeps every
held-out pair whose longer reply is the worse one and as many whose longer reply is the
better, so "the longer reply" is right on exactly half.

    python benchmarks/judge_table.py --judge local-checklist --judge local
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from voicebench import builtin  # noqa: E402
from voicebench.bootstrap import wilson  # noqa: E402
from voicebench.judging import load_judge_spec  # noqa: E402
from voicebench.judging.cards import JudgeCard, card_path, read_card, spec_sha256  # noqa: E402
from voicebench.judging.gold import GoldPair, length_matched, load_gold  # noqa: E402
from voicebench.judging.mcnemar import compare_outcomes, shown_p  # noqa: E402
from voicebench.judging.trivial import RULE_NAMES, rule_outcomes  # noqa: E402

REAL = (builtin.PAIRS_REAL_MORE, builtin.PAIRS_REAL)
WRITTEN = builtin.PAIRS_GOLD


def _cards(spec: str, gold: Path, split: str) -> JudgeCard | str:
    """The card of ``spec`` on ``gold``'s ``split``, or the command that measures it."""
    path = builtin.spec_path("judges", spec)
    judge, rubric = load_judge_spec(path, require_secrets=False)
    card = card_path(path, judge, spec_sha256(judge, rubric), load_gold(gold).sha256, split)
    if card.exists():
        return read_card(card)
    shown = gold.relative_to(ROOT) if gold.is_relative_to(ROOT) else gold
    return f"voicebench judge-check --judge {spec} --gold {shown} --split {split}"


def _rows() -> list[tuple[str, list[tuple[Path, str]], list[GoldPair]]]:
    def pairs(files: tuple[Path, ...], split: str) -> list[GoldPair]:
        return [p for f in files for p in load_gold(f).select(split)]  # type: ignore[arg-type]

    held = pairs(REAL, "holdout")
    return [
        ("real replies, dev", [(f, "dev") for f in REAL], pairs(REAL, "dev")),
        ("real replies, held out", [(f, "holdout") for f in REAL], held),
        ("  length-matched", [(f, "holdout") for f in REAL], length_matched(held)),
        ("  two agents' replies", [(f, "holdout") for f in REAL], between_agents(held)),
        ("written, held out", [(WRITTEN, "holdout")], pairs((WRITTEN,), "holdout")),
    ]


def between_agents(pairs: list[GoldPair]) -> list[GoldPair]:
    """The pairs of two agents' replies: neither is a human reference, so no judge is right
    on them by knowing how references are written."""
    return [p for p in pairs if p.families and "human" not in p.families]


def _share(outcomes: dict[str, str]) -> str:
    right = sum(o == "right" for o in outcomes.values())
    share, low, high = wilson(right, len(outcomes)) or (0.0, 0.0, 0.0)
    return f"{share:.1%} ({low:.0%}-{high:.0%})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--judge", action="append", required=True, help="a judge spec (repeat)")
    args = parser.parse_args()
    judges: list[str] = args.judge
    head = ["pairs", "n", *judges, *RULE_NAMES.values()]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    missing: list[str] = []
    notes: list[str] = []
    for name, sources, pairs in _rows():
        ids = {p.id for p in pairs}
        cells = [name, str(len(pairs))]
        outcomes: dict[str, dict[str, str]] = {}
        for spec in judges:
            found = [_cards(spec, gold, split) for gold, split in sources]
            absent = [f for f in found if isinstance(f, str)]
            if absent:
                missing += absent
                cells.append("not measured")
                continue
            cards = [f for f in found if isinstance(f, JudgeCard)]
            joined = {k: v for c in cards for k, v in (c.outcomes or {}).items() if k in ids}
            if len(joined) != len(ids):
                cells.append("cards keep no outcomes")
                continue
            outcomes[spec] = joined
            seconds = [c.seconds_per_verdict for c in cards if c.seconds_per_verdict]
            per_pair = f", {2 * sum(seconds) / len(seconds):.2f} s/pair" if seconds else ""
            cells.append(_share(joined) + per_pair)
        for rule, by_pair in rule_outcomes(pairs).items():
            cells.append(_share(by_pair))
            outcomes.setdefault(f"rule {rule}", by_pair)
        print("| " + " | ".join(cells) + " |")
        first = judges[0]
        for spec in judges[1:]:
            if first in outcomes and spec in outcomes:
                c = compare_outcomes(spec, first, name, outcomes[spec], outcomes[first])
                notes.append(
                    f"{name.strip()}: {spec} - {first}: {100 * c.difference:+.1f} points "
                    f"({100 * c.difference_low:+.1f} to {100 * c.difference_high:+.1f}); "
                    f"right only for {spec} on {c.first_only}, only for {first} on "
                    f"{c.second_only}; McNemar p {shown_p(c.p_value)}"
                )
    print()
    for note in notes:
        print(note)
    for command in dict.fromkeys(missing):
        print(f"not measured: {command}")


if __name__ == "__main__":
    main()
