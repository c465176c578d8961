"""The agents' half of the real-reply gold set: replies the shipped agents gave, as heard,
against the human references and each other, labelled by careful reading.

Two steps. ``sheet`` reads a judging folder (``voicebench judge RUN...``, which transcribed
every contestant's final reply from its audio) and writes one line per item with the
conversation and every contestant's reply as heard, for a person to read. The person fills
in, per item, a note on each reply (what it does well or badly, for this seeker) and
``order``: the contestants from best to worst, those they cannot choose between in one
group. ``build`` turns the filled sheet into gold pairs: every two contestants of different
groups, the better one's group first; contestants of one group give no pair (a careful
reader could not choose). The reason of each pair is the two notes.

    voicebench run --agent local --final-only --out runs/local     # and local-qwen, scripted
    voicebench judge runs/local runs/local-qwen runs/scripted --judge local-smoke --out runs/j
    python benchmarks/real_pairs.py sheet runs/j --out benchmarks/data/real-replies.jsonl
    # ... read and fill in "notes" and "order" ...
    python benchmarks/real_pairs.py build benchmarks/data/real-replies.jsonl \
        --out judges/pairs-real.jsonl

``agree FIRST SECOND`` compares a second, independent reading of some of the items with the
first: how often both order a pair the same way is the ceiling any judge is held to there.

A sheet line::

    {"item": "reg-job-crisis-01", "turns": [{"role": "seeker", "text": "..."}, ...],
     "replies": {"human/reference": "...", "local-smollm2": "..."},
     "families": {"human/reference": "human", "local-smollm2": "smollm"},
     "notes": {"human/reference": "names the fear of telling her father", ...},
     "order": [["human/reference"], ["local-qwen-0.5b", "scripted-300ms"], ["local-smollm2"]]}

Pair ids are ``real-ITEM-A-vs-B`` (contestants in sorted order), each pair names its item as
its ``conversation`` (so an item's pairs share a split), and which reply is ``a`` is fixed by
a hash of the id. Each pair names the families that wrote its two replies (``families``), so
that a judge's card says how it does on a family's replies: the sheet's ``families``
(``sheet`` writes them from the agents' specs as judged), else the family of the shipped agent
spec of that name, else ``OTHER_FAMILIES``; ``human`` for the human replies.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
from itertools import combinations
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from voicebench.agentspec import load_agent_spec  # noqa: E402
from voicebench.builtin import AGENTS  # noqa: E402
from voicebench.dialogues import load_dialogues  # noqa: E402
from voicebench.judging.gold import GoldPair, GoldTurn, load_gold, save_gold  # noqa: E402
from voicebench.judging.models import HUMAN_FAMILY  # noqa: E402
from voicebench.judging.replies import REFERENCE  # noqa: E402
from voicebench.judging.store import read_judging_header, read_replies  # noqa: E402
from voicebench.runlog import read_header  # noqa: E402

OTHER_FAMILIES = {
    "local-qwen-1.5b": "qwen",  # local-qwen.toml running qwen2.5-coder-1.5b
    "local-qwen-0.5b-warm": "qwen",  # reply_sheet.py's contestants
    "local-qwen-1.5b-plain": "qwen",
    "scripted": "scripted",
}
"""The families of contestants the reading sheets name that no shipped agent spec is named."""


def shipped_families() -> dict[str, str]:
    """Each shipped agent spec's name and its family."""
    specs = (load_agent_spec(p, require_secrets=False) for p in sorted(AGENTS.glob("*.toml")))
    return {spec.name: spec.family for spec in specs}


def family_of(contestant: str, row: dict, known: dict[str, str], where: str) -> str:
    """The family that wrote a contestant's reply (see the module's docstring)."""
    if contestant.startswith("human/"):
        return HUMAN_FAMILY
    found = row.get("families", {}).get(contestant) or known.get(contestant)
    if found is None:
        raise SystemExit(
            f"{where}: no family known for {contestant!r}: give the line "
            '"families": {"CONTESTANT": "FAMILY"}'
        )
    return found


def sheet(judging: Path, out: Path) -> None:
    header = read_judging_header(judging)
    first_run = read_header(Path(header.run_dirs[0]))
    items = {d.id: d for d in load_dialogues(first_run.dialogues_path)}
    by_item: dict[str, dict[str, str]] = {}
    families: dict[str, str] = {}
    for reply in read_replies(judging):
        if reply.failed is None:
            by_item.setdefault(reply.item_id, {})[reply.contestant] = reply.heard.strip()
            families[reply.contestant] = reply.family
    lines = []
    for item_id, replies in sorted(by_item.items()):
        d = items[item_id]
        lines.append(
            {
                "item": item_id,
                "turns": [{"role": t.role.value, "text": t.text} for t in d.turns],
                "replies": dict(sorted(replies.items())),
                "families": {c: families[c] for c in sorted(replies)},
                "notes": {c: "" for c in sorted(replies)},
                "order": [],
            }
        )
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines))
    print(f"{out}: {len(lines)} items to read")


def _slug(contestant: str) -> str:
    return re.sub(r"[^A-Za-z0-9.-]+", "-", contestant)


def _ranks(row: dict) -> dict[str, int]:
    return {c: k for k, group in enumerate(row["order"]) for c in group}


def build(sheet_path: Path, out: Path) -> None:
    pairs = []
    known = shipped_families() | OTHER_FAMILIES
    for n, line in enumerate(sheet_path.read_text().splitlines(), start=1):
        row = json.loads(line)
        family = {c: family_of(c, row, known, f"{sheet_path}: line {n}") for c in row["replies"]}
        order: list[list[str]] = row["order"]
        ranked = [c for group in order for c in group]
        if sorted(ranked) != sorted(row["replies"]):
            raise SystemExit(f"{sheet_path}: line {n}: order must name every reply once")
        rank = _ranks(row)
        for first, second in combinations(sorted(row["replies"]), 2):
            if rank[first] == rank[second]:
                continue
            better, worse = (first, second) if rank[first] < rank[second] else (second, first)
            pair_id = f"real-{row['item']}-{_slug(first)}-vs-{_slug(second)}"
            a_is_better = int(hashlib.sha256(pair_id.encode()).hexdigest()[:8], 16) % 2 == 0
            a, b = (better, worse) if a_is_better else (worse, better)
            kind = "reference" if REFERENCE in (first, second) else "agents"
            pairs.append(
                GoldPair(
                    id=pair_id,
                    conversation=row["item"],
                    turns=tuple(GoldTurn(**t) for t in row["turns"]),
                    reply_a=row["replies"][a],
                    reply_b=row["replies"][b],
                    better="a" if a_is_better else "b",
                    category=f"real-vs-{kind}",
                    why=f"better ({better}): {row['notes'][better]}; "
                    f"worse ({worse}): {row['notes'][worse]}",
                    families=(family[a], family[b]),
                )
            )
    save_gold(pairs, out)
    gold = load_gold(out)
    held = len(gold.select("holdout"))
    print(f"{out}: {len(gold.pairs)} pairs ({held} held out), sha256 {gold.sha256}")


def agree(first: Path, second: Path) -> None:
    """How often two independent readings of the same items order a pair the same way, over
    the pairs both order (a tie in either gives no pair, as in ``build``): the ceiling a judge
    is held to on those items."""
    rows = {row["item"]: row for row in map(json.loads, first.read_text().splitlines())}
    counts = {"reference": [0, 0], "agents": [0, 0]}
    tied = 0
    for line in second.read_text().splitlines():
        row = json.loads(line)
        if row["item"] not in rows:
            raise SystemExit(f"{second}: item {row['item']} is not in {first}")
        a, b = _ranks(rows[row["item"]]), _ranks(row)
        for x, y in combinations(sorted(b), 2):
            da, db = (a[x] > a[y]) - (a[x] < a[y]), (b[x] > b[y]) - (b[x] < b[y])
            if not (da and db):
                tied += bool(da or db)
                continue
            kind = "reference" if REFERENCE in (x, y) else "agents"
            counts[kind][0] += da == db
            counts[kind][1] += 1
    same, total = (sum(c[k] for c in counts.values()) for k in (0, 1))
    print(f"{second.name} against {first.name}: {total} pairs ordered by both readings")
    print(f"  the same way: {same} ({same / total:.1%})")
    for kind, (s, n) in counts.items():
        print(f"  {kind:9s} pairs: {s} of {n} ({s / n:.1%})" if n else f"  {kind}: none")
    print(f"  ordered by one reading, tied in the other: {tied}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="step", required=True)
    s = sub.add_parser("sheet", help="a reading sheet from a judging folder")
    s.add_argument("judging", type=Path)
    s.add_argument("--out", type=Path, required=True)
    b = sub.add_parser("build", help="gold pairs from a filled sheet")
    b.add_argument("sheet", type=Path)
    b.add_argument("--out", type=Path, default=ROOT / "judges" / "pairs-real.jsonl")
    g = sub.add_parser("agree", help="how often a second reading orders pairs as the first")
    g.add_argument("first", type=Path)
    g.add_argument("second", type=Path)
    args = parser.parse_args()
    if args.step == "sheet":
        sheet(args.judging, args.out)
    elif args.step == "agree":
        agree(args.first, args.second)
    else:
        build(args.sheet, args.out)


if __name__ == "__main__":
    main()
