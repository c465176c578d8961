"""The local agent's latency waterfall over the built-in set, and what each setting buys.

Replays built-in items through an agent spec (default ``agents/local.toml``: Whisper tiny.en,
SmolLM2-135M on llama.cpp, Piper) and reports the per-stage p50, TTFT/TTFA p50 and p90, the
ASR word error rate and how many turns were cut short (answered before the true end of
speech, or asked more than once). ``--scenario pause`` plays each turn with a pause in it.
``--set`` overrides spec fields, so settings can be compared on the same items:

    python benchmarks/local_agent.py                                   # all 30 items
    python benchmarks/local_agent.py --limit 8 --set vad.stop_secs=0.3 --set tts.first_chunk=clause

Goal: TTFA p50 <= 800 ms and p90 <= 1,100 ms over the 30 items on 2 CPU cores, with no turn
cut short and the word error rate unchanged.
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

from voicebench.agentspec import AgentSpec, load_agent_spec, parse_override  # noqa: E402
from voicebench.cli.common import quiet_libraries  # noqa: E402
from voicebench.dialogues import BUILTIN_DIALOGUES, load_dialogues  # noqa: E402
from voicebench.fixtures import BUILTIN_FIXTURES  # noqa: E402
from voicebench.replaying import demo_items, replay  # noqa: E402
from voicebench.text import word_errors  # noqa: E402
from voicebench.timing import STAGE_NAMES  # noqa: E402


def load_with_overrides(path: Path, overrides: list[str]) -> AgentSpec:
    return load_agent_spec(path, overrides=dict(parse_override(o) for o in overrides))


def cut_short(records) -> int:
    """Turns the agent answered before the seeker had finished (its reply was released to the
    speaker before the true end of speech) or more than once (the turn ended on part of the
    speech and was asked again)."""
    n = 0
    for r in records:
        t = r.timing
        released = t and (t.audio_release_ns or t.llm_release_ns or t.llm_first_token_ns)
        early = released is not None and released < t.speech_end_ns
        n += bool(early or r.llm_requests > 1)
    return n


def report(records) -> dict:
    timed = [r.timing for r in records if r.timing and r.timing.ttfa_ms is not None]
    seen = {s: [t.stages_ms[s] for t in timed if t.stages_ms[s] is not None] for s in STAGE_NAMES}
    stages = {s: float(np.median(v)) if v else None for s, v in seen.items()}  # None: no such stage
    ttft = [t.ttft_ms for t in timed]
    ttfa = [t.ttfa_ms for t in timed]
    errors = [word_errors(r.user_text, r.user_transcript) for r in records]
    return {
        "turns": len(records),
        "failed": sum(r.error is not None for r in records),
        "cut_short": cut_short(records),
        "llm_calls_per_turn": (
            round(float(np.mean([r.llm_calls for r in records if r.llm_calls])), 2)
            if any(r.llm_calls for r in records)
            else None
        ),
        "stages_p50_ms": {k: None if v is None else round(v, 1) for k, v in stages.items()},
        "ttft_p50_ms": round(float(np.median(ttft)), 1),
        "ttft_p90_ms": round(float(np.percentile(ttft, 90)), 1),
        "ttfa_p50_ms": round(float(np.median(ttfa)), 1),
        "ttfa_p90_ms": round(float(np.percentile(ttfa, 90)), 1),
        "asr_wer": round(sum(e for e, _ in errors) / max(1, sum(n for _, n in errors)), 4),
    }


def replay_builtin(
    spec: AgentSpec,
    spec_path: Path,
    items,
    keep: Path | None = None,
    scenarios: list[str] | None = None,
) -> list:
    """Replay built-in ``items`` through ``spec``, each turn playing one of ``scenarios``
    (``--scenario`` options) if given; the run directory is discarded unless ``keep`` names
    where to put it."""
    with tempfile.TemporaryDirectory() as tmp:
        return asyncio.run(
            replay(
                spec,
                spec_path=spec_path,
                dialogues=items,
                dialogues_path=BUILTIN_DIALOGUES,
                fixtures_dir=BUILTIN_FIXTURES,
                out_dir=keep or Path(tmp) / "run",
                scenarios=scenarios or (),
            )
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--agent", type=Path, default=ROOT / "agents" / "local.toml")
    ap.add_argument("--limit", type=int, default=None, help="items, spread over the set")
    ap.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        help="override a spec field, e.g. vad.stop_secs=0.3 (repeatable)",
    )
    ap.add_argument(
        "--scenario",
        action="append",
        default=[],
        help="play each turn through a scenario, e.g. pause (repeatable, as voicebench run)",
    )
    ap.add_argument("--json", type=Path, help="also write the result here")
    ap.add_argument("--keep", type=Path, help="keep the run directory here (default: discarded)")
    args = ap.parse_args()
    quiet_libraries(False)
    spec = load_with_overrides(args.agent, args.overrides)
    items = load_dialogues(BUILTIN_DIALOGUES)
    if args.limit:
        items = demo_items(items, args.limit)
    records = replay_builtin(spec, args.agent, items, keep=args.keep, scenarios=args.scenario)
    result = {
        "agent": str(args.agent),
        "overrides": args.overrides,
        "scenarios": args.scenario,
        **report(records),
    }
    print(json.dumps(result, indent=1))
    if args.json:
        args.json.write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
