"""Fit a checklist judge's weights on the gold set's dev pairs, and write them into its spec.

A checklist judge (``method = "checklist"``) asks each reply its yes/no questions alone and
records, for every pair, each question's margin of reply A over reply B; its weights are a
regularized logistic regression on those margins (``voicebench.judging.fitting``), the
strength chosen by 10-fold cross-validation on the dev pairs. Only dev pairs are read,
whatever else has been asked; the held-out pairs are for reporting with ``voicebench
judge-check --split holdout`` or ``benchmarks/judge_gold.py``.

The questions are asked once (``voicebench judge-check --split dev`` on the spec, done here
when verdicts are missing); new weights are applied to the recorded margins, so neither a
refit nor the cards measured after it ask the model again.

    python benchmarks/fit_checklist.py judges/candidates/qwen-1.5b-checklist.toml
    python benchmarks/fit_checklist.py my-checklist.toml --gold my-pairs.jsonl --dry-run
"""

from __future__ import annotations

import argparse
import asyncio
import re
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from voicebench.judging.cards import spec_sha256  # noqa: E402
from voicebench.judging.check import _cached, check_judge, comparisons, default_check_dir  # noqa: E402
from voicebench.judging.fitting import FOLDS, choose, fit  # noqa: E402
from voicebench.judging.gold import load_gold  # noqa: E402
from voicebench.judging.spec import load_judge_spec  # noqa: E402


def write_weights(spec_path: Path, weights: dict[str, float]) -> None:
    text = spec_path.read_text()
    table = ", ".join(f"{name} = {w:.3f}" for name, w in weights.items())
    new, n = re.subn(r"(?m)^weights = \{.*\}$", f"weights = {{ {table} }}", text)
    if n != 1:
        raise SystemExit(f"{spec_path}: expected one 'weights = {{ ... }}' line, found {n}")
    spec_path.write_text(new)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("spec", type=Path, help="A judge spec with one checklist judge.")
    parser.add_argument("--gold", type=Path, default=ROOT / "judges" / "pairs-gold.jsonl")
    parser.add_argument("--dry-run", action="store_true", help="Print the weights only.")
    args = parser.parse_args()

    console = Console(stderr=True)
    spec, rubric = load_judge_spec(args.spec)
    (judge,) = spec.judges
    if judge.method != "checklist":
        raise SystemExit(f"{args.spec}: method must be 'checklist', not {judge.method!r}")
    gold_set = load_gold(args.gold)
    dev = gold_set.select("dev")
    wanted = comparisons(dev, spec, rubric)
    out_dir = default_check_dir(
        spec.name, spec_sha256(spec, rubric, weights=False), gold_set.sha256
    )
    answered = {v.key for v in _cached(out_dir, wanted) if v.answer is not None}
    if len(answered) < len(wanted):
        console.print(f"asking the questions of {len(dev)} dev pairs (cached in {out_dir})")
        await check_judge(args.spec, args.gold, split="dev", on_status=console.print)
    first_order = {
        v.item_id: v.answer.question_margins
        for v in _cached(out_dir, wanted)
        if v.answer is not None and v.contestant_a == "a" and v.answer.question_margins
    }
    names = judge.asked
    pairs = [g for g in dev if g.id in first_order]
    x = np.array([[first_order[g.id].get(n, 0.0) for n in names] for g in pairs])
    y = np.array([1.0 if g.better == "a" else -1.0 for g in pairs])

    table = Table(title=f"{spec.name}: {len(pairs)} dev pairs, {FOLDS}-fold cross-validation")
    table.add_column("weighing")
    table.add_column("dev accuracy", justify="right")
    mean = float((np.sign(x.sum(axis=1)) == y).mean())
    table.add_row("every question alike (no fit)", f"{100 * mean:.1f}%")
    best, scores = choose(x, y)
    for s, acc in scores.items():
        table.add_row(f"fitted, L2 strength {s:g}", f"{100 * acc:.1f}%")
    weights = dict(zip(names, (round(float(w), 3) for w in fit(x, y, best)), strict=True))
    shown = Console(width=120)
    shown.print(table)
    shown.print(f"chosen strength {best:g} (cross-validated {100 * scores[best]:.1f}% on dev)")
    shown.print(", ".join(f"{n} {w:+.3f}" for n, w in weights.items()))
    if not args.dry_run:
        write_weights(args.spec, weights)
        shown.print(f"written into {args.spec}")


if __name__ == "__main__":
    asyncio.run(main())
