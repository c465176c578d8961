"""Build the corpus half of the real-reply gold set from ESConv, labelled by the corpus itself.

Source: ESConv, "Towards Emotional Support Dialog Systems" (Liu et al., ACL 2021), the
repository thu-coai/Emotional-Support-Conversation at commit f262d06 (2024-05). Licence:
Creative Commons Attribution-NonCommercial 4.0 International, and "for academic research use
only" in its README. voicebench therefore ships neither the corpus nor the pairs made from it;
this script makes them from your own copy, and checks that the result is the set the shipped
judge cards were measured on (its sha256 below).

Files read (their sha256 at that commit are checked; ``--no-check`` reads other versions):

- ``codes/dataset/testWithStrategy_short.tsv`` and ``codes/dataset/devWithStrategy_short.tsv``:
  the corpus's test and validation conversations as sliding windows (``corpus-next`` pairs);
- ``FailedESConv.json``: 196 conversations kept out of the corpus, with the seekers' per-turn
  ratings (``corpus-rated`` pairs, and ``corpus-next`` where no rating fits).

``voicebench.judging.corpus`` says how pairs are made. The conversations are split between dev
and holdout by a hash of the conversation, so no conversation is in both.

    git clone https://github.com/thu-coai/Emotional-Support-Conversation esconv
    git -C esconv checkout f262d06
    python benchmarks/import_esconv_pairs.py esconv    # -> reports/gold/pairs-esconv.jsonl

The written file is a gold set like any other: ``voicebench judge-check --gold
reports/gold/pairs-esconv.jsonl``, ``benchmarks/judge_gold.py --gold ...``.
"""

from __future__ import annotations

import argparse
import collections
import hashlib
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from voicebench.fixtures.manifest import file_sha256  # noqa: E402
from voicebench.judging.corpus import (  # noqa: E402
    ESCONV_PAIRS_SHA256,
    corpus_pairs,
    read_conversations,
)
from voicebench.judging.gold import load_gold, save_gold  # noqa: E402

SOURCES = {
    "test": (
        "codes/dataset/testWithStrategy_short.tsv",
        "b85ae888bf747cefa54bba2a6c3e2f6ccb4c1005d4e0b6d1d3be3823cf040aef",
    ),
    "dev": (
        "codes/dataset/devWithStrategy_short.tsv",
        "625b511f40cf9a9285582e808e6bbb4c2f35d0b0cd063f3709db430b8d0c3bdc",
    ),
    "failed": (
        "FailedESConv.json",
        "d21bad5409d88ecbca18abfee26a8c188d09c34b03962cb53a4c30d8de95b279",
    ),
}
"""Tag (in pair ids) -> (path in the repository, sha256 of the file at commit f262d06)."""
LIMIT = 60
"""Pairs per source file by default: the set the shipped cards were measured on."""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("repo", type=Path, help="a checkout of Emotional-Support-Conversation")
    parser.add_argument(
        "--out",
        type=Path,
        default=Path("reports/gold/pairs-esconv.jsonl"),
        help="where the pairs go (not beside the shipped gold sets: they must not ship)",
    )
    parser.add_argument(
        "--limit",
        type=int,
        default=LIMIT,
        help="pairs per source file at most, half from each split (by a hash of the "
        "conversation): a judge is measured on every pair, at seconds a pair",
    )
    parser.add_argument("--no-check", action="store_true", help="read files of other versions")
    args = parser.parse_args()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    sources = []
    for tag, (rel, digest) in SOURCES.items():
        path = args.repo / rel
        if not path.is_file():
            print(f"{path}: not found (is {args.repo} a checkout of the corpus?)", file=sys.stderr)
            return 2
        if not args.no_check and file_sha256(path) != digest:
            print(f"{path}: not the file of commit f262d06 (sha256 differs)", file=sys.stderr)
            return 2
        sources.append((tag, read_conversations(path)))
    pairs = []
    for tag, conversations in sources:
        made = corpus_pairs([(tag, conversations)])
        made.sort(key=lambda p: hashlib.sha256((p.conversation or p.id).encode()).hexdigest())
        for split in ("dev", "holdout"):
            kept = [p for p in made if p.split == split][: args.limit // 2]
            pairs += sorted(kept, key=lambda p: p.id)
    save_gold(pairs, args.out)
    gold = load_gold(args.out)
    counts = collections.Counter((p.category, p.split) for p in gold.pairs)
    print(f"{args.out}: {len(gold.pairs)} pairs, sha256 {gold.sha256}")
    for (category, split), n in sorted(counts.items()):
        print(f"  {category:13} {split:8} {n}")
    if args.limit == LIMIT and not args.no_check and gold.sha256 != ESCONV_PAIRS_SHA256:
        print("warning: not the pairs the shipped cards were measured on", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
