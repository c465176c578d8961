"""Judging throughput against the scripted judge: comparisons per second at each concurrency.

The scripted OpenAI-compatible server answers every request with a valid verdict after a
fixed delay (``--delay-ms``, default 200 ms), so a client that keeps N requests in flight
should decide about N / delay comparisons per second until the server or the client's own
per-request cost becomes the limit. Each comparison goes through the real path: prompt
building, the OpenAI SDK over HTTP on 127.0.0.1, strict parsing, a verdict appended and
fsynced to a verdict file.

    python benchmarks/judge_throughput.py                      # concurrency 1, 8, 32
    python benchmarks/judge_throughput.py --concurrency 1 8 32 64 --comparisons 256
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from voicebench.dialogues import BUILTIN_DIALOGUES, load_dialogues  # noqa: E402
from voicebench.judging.models import Reply  # noqa: E402
from voicebench.judging.prompt import dialogue_context, verdict_key  # noqa: E402
from voicebench.judging.run import Comparison, run_comparisons  # noqa: E402
from voicebench.judging.spec import JudgeModelSpec, Rubric  # noqa: E402
from voicebench.llm import OpenAIChat  # noqa: E402
from voicebench.testing import ScriptedLLMServer  # noqa: E402

ANSWER = json.dumps(
    {
        "winner": "A",
        "strength": 3,
        "dimensions": {"H": "A", "E": None, "A": None, "R": None, "T": None},
        "rationale": "A stays with the feeling.",
    }
)


def comparisons(n: int, judge: JudgeModelSpec, rubric: Rubric, tag: str) -> list[Comparison]:
    dialogues = load_dialogues(BUILTIN_DIALOGUES)
    out = []
    for i in range(n):
        d = dialogues[i % len(dialogues)]
        a = Reply(
            item_id=d.id,
            contestant="x",
            kind="agent",
            family="fx",
            heard=f"Reply {tag}-{i} from x.",
            text="",
        )
        b = Reply(
            item_id=d.id,
            contestant="y",
            kind="agent",
            family="fy",
            heard=f"Reply {tag}-{i} from y.",
            text="",
        )
        ctx = dialogue_context(d)
        out.append(
            Comparison(
                d.id,
                ctx,
                judge,
                a,
                b,
                verdict_key(
                    rubric_sha256=rubric.sha256,
                    judge=judge.id,
                    context=ctx,
                    reply_a=a.heard,
                    reply_b=b.heard,
                    order="AB",
                ),
            )
        )
    return out


async def measure(base_url: str, concurrency: int, n: int) -> dict:
    judge = JudgeModelSpec(
        provider="openai-compatible",
        model="scripted-llm",
        family="s",
        base_url=base_url,
        max_attempts=1,
        parse_retries=0,
    )
    rubric = Rubric(
        path="judges/rubric-v1.md",
        text=(ROOT / "judges" / "rubric-v1.md").read_text(),
        sha256="0" * 64,
    )
    client = OpenAIChat(judge, base_url=base_url, key=None, response_format=None)
    work = comparisons(n, judge, rubric, f"c{concurrency}")
    try:
        with tempfile.TemporaryDirectory() as tmp:
            await run_comparisons(
                work[:concurrency],
                rubric,
                Path(tmp),
                concurrency=concurrency,
                clients={judge.id: client},
            )  # warm the connection pool
            start = time.perf_counter()
            verdicts = await run_comparisons(
                work, rubric, Path(tmp), concurrency=concurrency, clients={judge.id: client}
            )
            elapsed = time.perf_counter() - start
    finally:
        await client.aclose()
    failed = sum(v.answer is None for v in verdicts)
    return {
        "concurrency": concurrency,
        "comparisons": n,
        "failed": failed,
        "seconds": round(elapsed, 3),
        "per_second": round(n / elapsed, 1),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--concurrency", type=int, nargs="+", default=[1, 8, 32])
    ap.add_argument(
        "--comparisons",
        type=int,
        default=None,
        help="per concurrency level (default 16 x concurrency, at least 32)",
    )
    ap.add_argument("--delay-ms", type=float, default=200.0, help="the scripted judge's latency")
    args = ap.parse_args()
    rows = []
    with ScriptedLLMServer(ttft_ms=args.delay_ms, token_delay_ms=0, reply=ANSWER) as server:
        for c in args.concurrency:
            n = args.comparisons or max(32, 16 * c)
            row = asyncio.run(measure(server.base_url, c, n))
            row["ideal_per_second"] = round(c * 1000 / args.delay_ms, 1)
            rows.append(row)
            print(json.dumps(row), flush=True)
    print(json.dumps({"delay_ms": args.delay_ms, "results": rows}, indent=1))


if __name__ == "__main__":
    main()
