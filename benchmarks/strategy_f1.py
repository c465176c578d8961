"""The strategy classifier against the project's labelled replies: macro F1 per judge model.

Each judge spec's first judge model labels the 64 replies of ``judges/strategy-gold.jsonl``
(cached in ``--cache``, so a re-run only scores); per strategy, precision, recall and F1 of
"present"; the macro F1 is their mean (HEART reports 0.86 for its classifier). A key for a
paid judge is read from the variable its spec names.

    python benchmarks/strategy_f1.py                                   # the offline local model
    python benchmarks/strategy_f1.py --judge judges/openai.toml --judge judges/anthropic.toml
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from voicebench.judging.clients import AnswerFormat, open_judge  # noqa: E402
from voicebench.judging.spec import load_judge_spec  # noqa: E402
from voicebench.strategies import STRATEGIES  # noqa: E402
from voicebench.strategies.label import classifier_model  # noqa: E402
from voicebench.strategies.taxonomy import answer_schema  # noqa: E402
from voicebench.strategies.validation import (  # noqa: E402
    GOLD_SET,
    classify_gold,
    load_gold,
    score,
)


async def one(spec_path: Path, gold, cache_dir: Path, concurrency: int) -> dict:
    spec, _ = load_judge_spec(spec_path)
    judge = classifier_model(spec.judges[0])
    cache = cache_dir / f"{judge.provider}-{Path(judge.model).name}.jsonl"
    start = time.perf_counter()
    async with contextlib.AsyncExitStack() as stack:
        client = await open_judge(judge, stack, AnswerFormat("support_strategies", answer_schema()))
        result = await classify_gold(gold, judge, client, cache, concurrency=concurrency)
    wall = time.perf_counter() - start
    print(
        f"\n{judge.id} ({spec_path}){' - smoke judge' if judge.smoke else ''}: "
        f"{result.replies} replies, {result.failed} failed to label, {wall:.1f} s"
    )
    print(f"{'strategy':34} {'tp':>3} {'fp':>3} {'fn':>3} {'prec':>5} {'rec':>5} {'F1':>5}")
    for s in result.labels:
        print(
            f"{STRATEGIES[s.label][0]:34} {s.tp:3d} {s.fp:3d} {s.fn:3d} {s.precision:5.2f} "
            f"{s.recall:5.2f} {s.f1:5.2f}"
        )
    print(f"macro F1 {result.macro_f1:.3f}  (HEART's classifier: 0.86)")
    return {
        "judge": judge.id,
        "spec": str(spec_path),
        "smoke": judge.smoke,
        "replies": result.replies,
        "failed": result.failed,
        "macro_f1": round(result.macro_f1, 4),
        "wall_s": round(wall, 1),
        "per_strategy": {
            s.label: {"tp": s.tp, "fp": s.fp, "fn": s.fn, "f1": round(s.f1, 4)}
            for s in result.labels
        },
    }


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--judge",
        type=Path,
        action="append",
        help="judge spec (repeatable; default judges/local-smoke.toml)",
    )
    parser.add_argument("--gold", type=Path, default=GOLD_SET)
    parser.add_argument("--cache", type=Path, default=ROOT / "reports" / "strategy-f1")
    parser.add_argument("--concurrency", type=int, default=2)
    args = parser.parse_args()
    gold = load_gold(args.gold)
    everything = score(gold, {g.id: set(STRATEGIES) for g in gold}, "baseline").macro_f1
    print(
        f"baseline: marking every strategy present on every reply scores macro F1 {everything:.3f}"
    )
    results = [
        await one(p, gold, args.cache, args.concurrency)
        for p in (args.judge or [ROOT / "judges" / "local-smoke.toml"])
    ]
    out = args.cache / "summary.json"
    out.write_text(json.dumps(results, indent=2) + "\n")
    print(f"\nsummary: {out}")


if __name__ == "__main__":
    asyncio.run(main())
