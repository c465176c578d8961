"""Self-check of the interruption scenarios: stop latency and false yields measured against a
scripted voice agent whose behaviour is known.

Each case is a scripted agent (its own process) that stops a reply it is talked over in
``stop_ms`` after the caller's first sound, once the caller has kept speaking for
``yield_after_ms``, and logs the spoken time of the last audible sample it played. The
built-in dialogues are replayed to it twice at once, with ``--scenario barge-in`` (every turn
after a dialogue's first barges in on the reply before it) and with ``--scenario backchannel``:

- stop latency: the harness's measured stop (the seeker's first sound plus the recorded
  ``stop_ms``) against the agent's logged last audible sample; target |error| p99 <= 10 ms;
- false yields: with ``yield_after_ms`` 0 the agent stops for every backchannel word it hears
  while speaking, with 600 ms (longer than any of the words) for none. The harness must
  report exactly that on every backchannel turn.

    .venv/bin/python benchmarks/interruptions.py [--items 10] [--seed 7] [--verbose]
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
from pathlib import Path

import numpy as np

from voicebench.agentspec import AgentSpec, RemoteSpec
from voicebench.dialogues import BUILTIN_DIALOGUES, load_dialogues
from voicebench.fixtures import BUILTIN_FIXTURES, load_manifest, lookup_fixture
from voicebench.replaying import replay
from voicebench.testing.scripted_voice import ScriptedVoiceAgent

CASES = ((50.0, 0.0), (150.0, 0.0), (400.0, 0.0), (700.0, 600.0))
"""(stop_ms, yield_after_ms)"""
REPLY = (
    "I hear you, and it makes sense that this has been weighing on you. "
    "Take your time and tell me what feels heaviest right now."
)
TARGET_P99_MS = 10.0


async def one_case(stop_ms: float, yield_after_ms: float, args, dialogues) -> dict:
    manifest = load_manifest(BUILTIN_FIXTURES)
    async with ScriptedVoiceAgent(
        delay_ms=300, reply=REPLY, stop_ms=stop_ms, yield_after_ms=yield_after_ms
    ) as agent:
        spec = AgentSpec(name="scripted-voice", family="scripted", remote=RemoteSpec(url=agent.url))
        with tempfile.TemporaryDirectory() as tmp:
            runs = await asyncio.gather(
                *(
                    replay(
                        spec,
                        spec_path=Path("scripted-voice.toml"),
                        dialogues=dialogues,
                        dialogues_path=BUILTIN_DIALOGUES,
                        fixtures_dir=BUILTIN_FIXTURES,
                        out_dir=Path(tmp) / scenario,
                        scenarios=[scenario],
                        seed=args.seed,
                        turn_timeout_s=30.0,
                    )
                    for scenario in ("barge-in", "backchannel")
                )
            )
        records = [r for run in runs for r in run]
        stops = agent.stops()
    logged = [(s["speech_start_ns"], s["last_audible_ns"]) for s in stops if s["last_audible_ns"]]
    errors, actual = [], []
    yields = {"heard": 0, "detected": 0, "expected": 0, "mismatched": 0}
    for r in records:
        s = r.scenario
        if r.error is not None or s is None or not s.agent_speaking:
            continue
        if s.name == "barge-in" and s.yielded and s.stop_ms is not None and logged:
            entry = lookup_fixture(manifest, r.user_text)
            assert entry is not None and r.timing is not None
            speech_ns = entry.speech_end_sample - entry.speech_start_sample
            start = r.timing.speech_end_ns - speech_ns * 1_000_000_000 // 16_000
            measured = start + int(s.stop_ms * 1e6)
            # The agent's stop for this seeker turn: the one that heard it begin (its own
            # reading of the first sound differs from the fixture's by a few ms at most).
            near = [last for first, last in logged if abs(first - start) < 100_000_000]
            if not near:
                errors.append(float("inf"))
                continue
            true = min(near, key=lambda last: abs(last - measured))
            errors.append((measured - true) / 1e6)
            actual.append((true - start) / 1e6)
        elif s.name == "backchannel":
            expected = yield_after_ms == 0.0
            yields["heard"] += 1
            yields["detected"] += bool(s.false_yield)
            yields["expected"] += expected
            yields["mismatched"] += bool(s.false_yield) != expected
            if args.verbose and bool(s.false_yield) != expected:
                print(
                    f"  stop {stop_ms:g} ms: {r.dialogue_id} turn {r.turn_index}: word at "
                    f"{s.at_ms} ms into the talk, false yield {s.false_yield}, lost {s.lost_s} s"
                )
    err = np.abs(np.array(errors)) if errors else np.zeros(0)
    return {
        "stop_ms": stop_ms,
        "yield_after_ms": yield_after_ms,
        "barge_ins": len(errors),
        "actual_p50": float(np.median(actual)) if actual else float("nan"),
        "err_p50": float(np.percentile(err, 50)) if err.size else float("nan"),
        "err_p99": float(np.percentile(err, 99)) if err.size else float("nan"),
        "err_max": float(err.max()) if err.size else float("nan"),
        "errors": list(err),
        **yields,
    }


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=10, help="built-in dialogues per case")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--verbose", action="store_true", help="print each misread backchannel")
    args = parser.parse_args()
    dialogues = load_dialogues(BUILTIN_DIALOGUES)[: args.items]
    results = await asyncio.gather(*(one_case(s, y, args, dialogues) for s, y in CASES))
    print(
        "stop_ms  yield_after  barge-ins  actual stop p50  |err| p50   p99    max"
        "   backchannels  false yields (expected)  mismatched"
    )
    for r in results:
        print(
            f"{r['stop_ms']:7.0f}  {r['yield_after_ms']:11.0f}  {r['barge_ins']:9d}"
            f"  {r['actual_p50']:15.1f}  {r['err_p50']:9.2f}  {r['err_p99']:5.2f}"
            f"  {r['err_max']:5.2f}  {r['heard']:13d}  {r['detected']:12d} ({r['expected']:d})"
            f"  {r['mismatched']:10d}"
        )
    pooled = np.array([e for r in results for e in r["errors"]])
    p99 = float(np.percentile(pooled, 99)) if pooled.size else float("nan")
    exact = all(r["mismatched"] == 0 for r in results)
    print(
        f"\nstop latency |error| p99 over {pooled.size} barge-ins: {p99:.2f} ms "
        f"(target <= {TARGET_P99_MS:g}): {'PASS' if p99 <= TARGET_P99_MS else 'FAIL'}"
    )
    heard = sum(r["heard"] for r in results)
    print(
        f"false yields detected exactly on {heard} backchannel turns: "
        f"{'PASS' if exact and heard else 'FAIL'}"
    )


if __name__ == "__main__":
    asyncio.run(main())
