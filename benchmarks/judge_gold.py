"""Judges on the gold set: one table of every given judge spec's card figures.

Each spec is measured with ``voicebench judge-check`` (the real judging path: its provider,
prompt, parsing, retries and verdict cache), once per split asked for; a card already made
for the same spec and gold file is reused, so a second run prints at once. Accuracy is pairs
decided and right over all pairs, with its Wilson 95% interval. Every spec after the first is
compared with the first on the same pairs: the difference in accuracy with its 95% interval
and McNemar's exact test (``voicebench.judging.paired.paired_comparison``). A second table
gives the accuracy of rules that read only the replies' surface (the shorter reply, the one
asking a question...), the floor every judge must clear.

    python benchmarks/judge_gold.py judges/local-smoke.toml judges/local.toml
    python benchmarks/judge_gold.py judges/local.toml --split dev holdout
    python benchmarks/judge_gold.py judges/local.toml judges/candidates/*.toml --split dev holdout
    python benchmarks/judge_gold.py my-judge.toml --gold my-pairs.jsonl
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from voicebench.judging.cards import JudgeCard  # noqa: E402
from voicebench.judging.check import check_judge  # noqa: E402
from voicebench.judging.gold import SPLITS, cue_accuracy, load_gold  # noqa: E402
from voicebench.judging.mcnemar import shown_p  # noqa: E402
from voicebench.judging.paired import paired_comparison  # noqa: E402


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.0f}%"


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("specs", nargs="+", type=Path, help="Judge specs (TOML).")
    parser.add_argument("--gold", type=Path, default=ROOT / "judges" / "pairs-gold.jsonl")
    parser.add_argument("--split", nargs="+", default=["all"], choices=SPLITS)
    parser.add_argument("--concurrency", type=int, default=1)
    args = parser.parse_args()

    table = Table(title=f"judges on {args.gold.name}")
    for col in (
        "judge spec",
        "split",
        "pairs",
        "accuracy (95% CI)",
        "decided",
        "flips",
        "reply A won",
        "longer worse",
        "close",
        "failed",
        "s/pair",
        "vs first (95% CI)",
        "McNemar p",
    ):
        table.add_column(col, justify="left" if col in ("judge spec", "split") else "right")
    console = Console(stderr=True)
    first: dict[str, JudgeCard] = {}
    for spec in args.specs:
        for split in args.split:
            console.print(f"measuring {spec} on {split} pairs")
            result = await check_judge(
                spec,
                args.gold,
                split=split,
                concurrency=args.concurrency,
                on_status=lambda line: console.print(f"  {line}"),
            )
            c = result.card
            close = c.by_category.get("close")
            vs, p = "-", "-"
            if split in first:
                cmp = paired_comparison(c, first[split])
                vs = (
                    f"{100 * cmp.difference:+.0f} ({100 * cmp.difference_low:+.0f} to "
                    f"{100 * cmp.difference_high:+.0f})"
                )
                p = shown_p(cmp.p_value).lstrip("= ")
            else:
                first[split] = c
            answered = c.verdicts - c.failed_verdicts
            table.add_row(
                c.spec_name,
                split,
                str(c.pairs),
                f"{_pct(c.accuracy)} ({_pct(c.accuracy_low)}-{_pct(c.accuracy_high)})",
                _pct(c.decided_rate),
                _pct(c.flip_rate),
                _pct(c.first_slot_rate),
                _pct(c.longer_worse.accuracy),
                "-" if close is None else _pct(close.accuracy),
                f"{c.failed_verdicts}/{c.verdicts}",
                "-"
                if c.seconds_per_verdict is None
                else f"{c.seconds_per_verdict * answered / c.pairs:.1f}",
                vs,
                p,
            )
    shown = Console()
    if not shown.is_terminal:
        shown = Console(width=200)  # a log or a pipe: one row per line
    shown.print(table)
    # What a judge must beat: rules that read only the replies' surface.
    gold = load_gold(args.gold)
    cues = Table(title="surface cues on the same pairs (a judge should beat every one)")
    cues.add_column("rule")
    for split in args.split:
        cues.add_column(split, justify="right")
    by_split = {split: cue_accuracy(gold.select(split)) for split in args.split}
    for rule in by_split[args.split[0]]:
        cues.add_row(rule, *(_pct(by_split[split][rule]) for split in args.split))
    shown.print(cues)


if __name__ == "__main__":
    asyncio.run(main())
