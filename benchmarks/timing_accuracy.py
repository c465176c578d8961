"""How exactly does voicebench measure TTFT? Replay against a scripted LLM with known delays.

For each injected time to first token, the built-in dialogues' seeker turns are replayed
through the real pipeline (real-time audio, Silero VAD, Whisper, Piper, playback: the
pipeline's other work runs while the token arrives) against the scripted OpenAI-compatible
server, and the measured TTFT is compared with the injected one. The server counts its delay
from the request's arrival at its socket and, as OpenAI does, sends a role-only chunk first
(``--role-chunk-ms`` after the request), so the first *answer* token must be picked out.
The first turn of each pass opens the HTTP connection and is reported apart as "cold".

The error's median (a bias: every turn read long or short) and its spread are printed apart,
with where it lies: the request leg (the client's "sent" stamp to the server's arrival stamp)
and the answer leg (the server writing the token to the client's arrival stamp), both from the
server's request log on the same clock. CPU steal over the run is printed beside them.

    python benchmarks/timing_accuracy.py                  # 100, 300, 800 ms; 12 turns each
    python benchmarks/timing_accuracy.py --ttft 300 --turns 30

Target: |measured - injected| p99 <= 2 ms on warm turns.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from machine import CpuSteal  # noqa: E402

from voicebench.agentspec import AgentSpec, LLMSpec  # noqa: E402
from voicebench.cli.common import quiet_libraries  # noqa: E402
from voicebench.dialogues import BUILTIN_DIALOGUES, load_dialogues  # noqa: E402
from voicebench.fixtures import BUILTIN_FIXTURES  # noqa: E402
from voicebench.replaying import replay  # noqa: E402
from voicebench.testing import ScriptedLLMServer  # noqa: E402

SHORT_REPLY = "I hear you. That sounds heavy."
TARGET_MS = 2.0


def pick_dialogues(turns: int):
    """Enough dialogues, in order, to give ``turns`` seeker turns."""
    chosen, n = [], 0
    for d in load_dialogues(BUILTIN_DIALOGUES):
        if n >= turns:
            break
        chosen.append(d)
        n += len(d.seeker_turn_indices)
    return chosen


def _ms(values, q: float) -> float:
    return round(float(np.percentile(values, q)), 2)


async def one_pass(ttft_ms: float, turns: int, role_ms: float | None, workdir: Path) -> dict:
    async with ScriptedLLMServer(
        ttft_ms=ttft_ms, token_delay_ms=10, reply=SHORT_REPLY, role_chunk_ms=role_ms
    ) as server:
        spec = AgentSpec(
            name=f"scripted-{ttft_ms:.0f}ms",
            family="scripted",
            llm=LLMSpec(
                provider="openai-compatible", model="scripted-llm", base_url=server.base_url
            ),
        )
        records = await replay(
            spec,
            spec_path=Path("benchmark"),
            dialogues=pick_dialogues(turns),
            dialogues_path=BUILTIN_DIALOGUES,
            fixtures_dir=BUILTIN_FIXTURES,
            out_dir=workdir / f"ttft-{ttft_ms:.0f}",
        )
        requests = [r for r in server.requests() if r.stream and r.first_token_sent_ns]
    records = sorted(records, key=lambda r: r.started_at)[:turns]
    timed = [r.timing for r in records if r.timing and r.timing.ttft_ms is not None]
    errors = np.array([t.ttft_ms - ttft_ms for t in timed])
    warm = errors[1:]
    # Each timed request matched to the server's record of it: the one it sent just before.
    legs = []
    for t in timed[1:]:
        req = min(requests, key=lambda q: abs(q.received_ns - t.llm_request_ns))
        legs.append(
            (
                (req.received_ns - t.llm_request_ns) / 1e6,
                (t.llm_first_token_ns - req.first_token_sent_ns) / 1e6,
            )
        )
    legs_ms = np.array(legs) if legs else np.zeros((0, 2))
    return {
        "injected_ms": ttft_ms,
        "turns": len(records),
        "failed": sum(r.error is not None for r in records),
        "cold_error_ms": round(float(errors[0]), 2) if errors.size else None,
        "warm_median_error_ms": _ms(warm, 50),
        "warm_error_p1_ms": _ms(warm, 1),
        "warm_error_p99_ms": _ms(warm, 99),
        "warm_abs_p99_ms": _ms(np.abs(warm), 99),
        "request_leg_median_ms": _ms(legs_ms[:, 0], 50) if legs else None,
        "answer_leg_median_ms": _ms(legs_ms[:, 1], 50) if legs else None,
        "answer_leg_p99_ms": _ms(legs_ms[:, 1], 99) if legs else None,
        "ttfa_p50_ms": round(
            float(np.median([r.timing.ttfa_ms for r in records if r.timing and r.timing.ttfa_ms])),
            1,
        ),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ttft", type=float, action="append", help="injected TTFT in ms (repeatable)")
    ap.add_argument("--turns", type=int, default=12, help="turns per injected TTFT")
    ap.add_argument(
        "--role-chunk-ms",
        type=float,
        default=20.0,
        help="the role-only chunk's delay after the request (negative: none)",
    )
    ap.add_argument("--json", type=Path, help="also write the results here")
    args = ap.parse_args()
    quiet_libraries(False)
    role_ms = args.role_chunk_ms if args.role_chunk_ms >= 0 else None
    results = []
    with CpuSteal() as steal, tempfile.TemporaryDirectory() as tmp:
        for ttft in args.ttft or [100.0, 300.0, 800.0]:
            res = asyncio.run(one_pass(ttft, args.turns, role_ms, Path(tmp)))
            results.append(res)
            print(json.dumps(res), flush=True)
    print(
        f"\n{'injected':>8} {'median err':>10} {'p1 err':>8} {'p99 err':>8} {'|err| p99':>9} "
        f"{'request leg':>11} {'answer leg':>10} (ms; warm turns)"
    )
    for r in results:
        print(
            f"{r['injected_ms']:>8.0f} {r['warm_median_error_ms']:>+10.2f} "
            f"{r['warm_error_p1_ms']:>+8.2f} {r['warm_error_p99_ms']:>+8.2f} "
            f"{r['warm_abs_p99_ms']:>9.2f} {r['request_leg_median_ms']:>+11.3f} "
            f"{r['answer_leg_median_ms']:>+10.3f}"
        )
    worst = max(r["warm_abs_p99_ms"] for r in results)
    print(
        f"warm |measured - injected| TTFT p99, worst over passes: {worst:.2f} ms "
        f"(target <= {TARGET_MS:g} ms): {'PASS' if worst <= TARGET_MS else 'FAIL'}\n{steal}"
    )
    if args.json:
        args.json.write_text(
            json.dumps({"passes": results, "steal_pct": steal.percent}, indent=2) + "\n"
        )


if __name__ == "__main__":
    main()
