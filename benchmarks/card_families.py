"""Tallies by family onto judge cards measured before their gold pairs named families, without
asking any judge again.

A card keeps each gold pair's outcome (right, wrong, undecided); a gold file that names the
family that wrote each reply (``GoldPair.families``) says which pairs have a reply of each
family. So each card gains, per family, the judge's tally and the trivial rules' on those
pairs (``JudgeCard.by_family``) from its outcomes and its gold file, as ``voicebench
judge-check`` now writes them.

A gold file that gained ``families`` and nothing else has new bytes, so a new sha256, which
its cards are keyed on. ``--was OLD`` names the file as the cards were measured on it: when
every pair of the gold file is OLD's, field for field, once its ``families`` are left out
(the id, the turns, both replies, ``better`` and the rest), each card keyed on OLD's sha256 is
keyed on the file's own (its ``gold_sha256`` and the hash in its file name) before it gains
its tallies. A card is left as it is, saying why, when its gold file is not here or has
changed otherwise, when it keeps no per-pair outcomes, when its pairs name no families, or
when it has its tallies already.

    git show HEAD:judges/pairs-real.jsonl > /tmp/pairs-real-before.jsonl
    python benchmarks/card_families.py --was /tmp/pairs-real-before.jsonl \
        judges/cards judges/candidates/cards
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from card_trivial_rules import gold_path_of, measured_pairs  # noqa: E402

from voicebench._jsonl import write_atomic  # noqa: E402
from voicebench.judging.cards import JudgeCard, read_card  # noqa: E402
from voicebench.judging.check import with_families  # noqa: E402
from voicebench.judging.gold import GoldSet, load_gold  # noqa: E402


def only_families_added(old: GoldSet, new: GoldSet) -> bool:
    """Every pair of ``new`` is ``old``'s, in the same order, but for ``families``."""
    drop = {"families"}
    return len(old.pairs) == len(new.pairs) and all(
        o.model_dump(exclude=drop) == n.model_dump(exclude=drop)
        for o, n in zip(old.pairs, new.pairs, strict=True)
    )


def rekeyed(path: Path, card: JudgeCard, was: GoldSet | None, root: Path) -> tuple[Path, JudgeCard]:
    """The card keyed on its gold file as it is now, where ``was`` is that file before only
    its families were added; else as it is."""
    gold_path = gold_path_of(card, root)
    if was is None or card.gold_sha256 != was.sha256 or not gold_path.exists():
        return path, card
    now = load_gold(gold_path)
    if now.sha256 == was.sha256 or not only_families_added(was, now):
        return path, card
    name = path.name.replace(f"-{was.sha256[:12]}-", f"-{now.sha256[:12]}-")
    return path.with_name(name), card.model_copy(update={"gold_sha256": now.sha256})


def filled(card: JudgeCard, root: Path) -> JudgeCard | str:
    """The card with its tallies by family, or why it is left as it is."""
    if card.by_family is not None:
        return "has its tallies by family already"
    pairs = measured_pairs(card, root)
    if isinstance(pairs, str):
        return pairs
    if not any(p.families for p in pairs):
        return f"the pairs of {card.gold_path} name no families"
    return with_families(card, pairs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "paths",
        nargs="*",
        type=Path,
        default=[ROOT / "judges" / "cards"],
        help="Cards (JSON), or folders of them (default judges/cards).",
    )
    parser.add_argument(
        "--was",
        type=Path,
        help="A gold file as the cards were measured on it, before only its families were added.",
    )
    args = parser.parse_args()
    was = None if args.was is None else load_gold(args.was)
    files = [f for p in args.paths for f in (sorted(p.glob("*.json")) if p.is_dir() else [p])]
    for path in files:
        new_path, card = rekeyed(path, read_card(path), was, ROOT)
        if new_path != path:
            write_atomic(new_path, card.model_dump_json(indent=2) + "\n")
            path.unlink()
            print(f"{path.name}: now {new_path.name} (its gold file only gained families)")
        result = filled(card, ROOT)
        if isinstance(result, str):
            print(f"{new_path.name}: left as it is: {result}")
            continue
        write_atomic(new_path, result.model_dump_json(indent=2) + "\n")
        for family, tally in (result.by_family or {}).items():
            share = f"{100 * (tally.accuracy or 0):.0f}%"
            print(f"{new_path.name}: {family}: {tally.correct}/{tally.pairs} = {share}")


if __name__ == "__main__":
    main()
