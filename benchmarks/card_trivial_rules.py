"""Trivial rules onto judge cards written before them, without asking any judge again.

A card keeps each gold pair's outcome (right, wrong, undecided); the trivial rules
(``voicebench.judging.trivial``: the longer reply, the reply sharing the seeker's words, the
reply that asks a question) read only the gold file. So each card gains the rules' accuracy on
its own pairs and the judge's margin over the best of them from its outcomes and its gold file,
as ``voicebench judge-check`` now writes them. A card is left as it is, saying why, when its
gold file is not here (the ESConv pairs are not shipped: ``benchmarks/import_esconv_pairs.py``
makes them), when the file has changed since the card was measured, when the card keeps no
per-pair outcomes, or when it has the rules already.

    python benchmarks/card_trivial_rules.py                     # judges/cards/*.json
    python benchmarks/card_trivial_rules.py judges/candidates/cards
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from voicebench._jsonl import write_atomic  # noqa: E402
from voicebench.judging.cards import JudgeCard, read_card, with_trivial_rules  # noqa: E402
from voicebench.judging.gold import GoldPair, gold_sha256, load_gold  # noqa: E402
from voicebench.judging.trivial import rule_outcomes  # noqa: E402
from voicebench.judging.trust import points  # noqa: E402


def gold_path_of(card: JudgeCard, root: Path) -> Path:
    path = Path(card.gold_path)
    return path if path.is_absolute() else root / path


def measured_pairs(card: JudgeCard, root: Path) -> list[GoldPair] | str:
    """The gold pairs a card's outcomes are of, or why they cannot be had."""
    if card.outcomes is None:
        return "keeps no per-pair outcomes"
    gold_path = gold_path_of(card, root)
    if not gold_path.exists():
        return f"its gold file {card.gold_path} is not here"
    if gold_sha256(gold_path) != card.gold_sha256:
        return f"{card.gold_path} has changed since the card was measured"
    pairs = load_gold(gold_path).select(card.split)  # type: ignore[arg-type]
    if {p.id for p in pairs} != set(card.outcomes):
        return f"its outcomes are not the {card.split} pairs of {card.gold_path}"
    return pairs


def filled(card: JudgeCard, root: Path) -> JudgeCard | str:
    """The card with the trivial rules, or why it is left as it is."""
    if card.trivial_rules is not None:
        return "has the trivial rules already"
    pairs = measured_pairs(card, root)
    if isinstance(pairs, str):
        return pairs
    return with_trivial_rules(card, rule_outcomes(pairs))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "paths",
        nargs="*",
        type=Path,
        default=[ROOT / "judges" / "cards"],
        help="Cards (JSON), or folders of them (default judges/cards).",
    )
    args = parser.parse_args()
    files = [f for p in args.paths for f in (sorted(p.glob("*.json")) if p.is_dir() else [p])]
    for path in files:
        card = read_card(path)
        result = filled(card, ROOT)
        if isinstance(result, str):
            print(f"{path.name}: left as it is: {result}")
            continue
        write_atomic(path, result.model_dump_json(indent=2) + "\n")
        assert result.trivial_rules is not None and result.margin is not None
        rules = ", ".join(
            f"{name} {100 * s.accuracy:.0f}%" for name, s in result.trivial_rules.items()
        )
        m = result.margin
        print(
            f"{path.name}: judge {100 * result.accuracy:.0f}% on {result.pairs} {result.split} "
            f"pairs; {rules}; judge {points(m.difference)} points over {m.second} (95% CI "
            f"{points(m.difference_low)} to {points(m.difference_high)})"
        )


if __name__ == "__main__":
    main()
