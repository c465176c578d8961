"""Turn-taking settings against latency and correctness: a sweep over the built-in items.

Each setting (VAD stop and start, speech timeout after the stop, speculation on or off and
what it holds, the first TTS chunk) replays the same items through the agent spec (default
``agents/local.toml``) and prints TTFA p50/p90, the median hold (``turn_hold`` or
``audio_hold``), the turns cut short and the ASR word error rate. A turn is cut short when
the agent answered before the seeker had finished (its reply was released to the speaker
before the true end of speech) or answered more than once (the turn ended on part of the
speech and was asked again). The Pareto-best settings (no other setting is at least as good
on TTFA p50, cut short turns and WER, and better on one) are marked ``*``. The presets are the
shipped agent, each of its levers undone on its own, the agent as it shipped before, and the
spec defaults.

    python benchmarks/turn_taking.py                      # the presets, all 30 items
    python benchmarks/turn_taking.py --limit 6 --grid full
    python benchmarks/turn_taking.py --only shipped --only default

Replay runs in real time: a setting takes about 30 minutes over the 30 items on 2 cores, 6
minutes over 6. The agent spec's pipeline has no learned turn detector, so none is swept;
``benchmarks/turn_window.py`` chooses the silence window from the fixtures' pauses.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from pathlib import Path

import numpy as np
from local_agent import ROOT, cut_short, load_with_overrides, replay_builtin, report

from voicebench.cli.common import quiet_libraries
from voicebench.dialogues import BUILTIN_DIALOGUES, load_dialogues
from voicebench.replaying import demo_items

DEFAULTS = [
    "vad.stop_secs=0.5",
    "vad.start_secs=0.2",
    "vad.confidence=0.7",
    "vad.min_volume=0.6",
    "turn.user_speech_timeout=0.35",
    "turn.speculate=false",
    "turn.hold=text",
    "tts.first_chunk=sentence",
    "turn.unfinished_timeout=null",
]
"""The spec defaults, for settings that start from them rather than from the agent's."""

PRESETS: dict[str, list[str]] = {
    # The agent as shipped, and each of its levers undone on its own.
    "shipped": [],
    "no-unfinished-wait": ["turn.unfinished_timeout=null"],
    "hold-text": ["turn.hold=text"],
    "start0.2": ["vad.start_secs=0.2"],
    "first-sentence": ["tts.first_chunk=sentence"],
    # pipecat's confidence and loudness floor, with the timeout turn_window.py chooses for them
    "floor0.6-wait0.60": [
        "vad.confidence=0.7",
        "vad.min_volume=0.6",
        "turn.user_speech_timeout=0.60",
    ],
    "stop0.2-wait0.42": ["vad.stop_secs=0.2", "turn.user_speech_timeout=0.42"],
    # The 50 ms margin this agent first shipped with (pipecat's floor, 0.1 + 0.55 s).
    "floor0.6-wait0.55": [
        "vad.confidence=0.7",
        "vad.min_volume=0.6",
        "turn.user_speech_timeout=0.55",
    ],
    # The agent as it shipped before (text held, 0.2 + 0.65 s), and the spec defaults.
    "previous": [
        "vad.stop_secs=0.2",
        "vad.start_secs=0.2",
        "vad.confidence=0.7",
        "vad.min_volume=0.6",
        "turn.user_speech_timeout=0.65",
        "turn.hold=text",
        "tts.first_chunk=sentence",
        "turn.unfinished_timeout=null",
    ],
    # Shorter silence windows: earlier answers, at the price of the pauses between sentences.
    "wait0.40": ["turn.user_speech_timeout=0.40"],
    "wait0.30": ["turn.user_speech_timeout=0.30"],
    "default": DEFAULTS,
    "default-wait0.15": [*DEFAULTS, "turn.user_speech_timeout=0.15"],
}


def full_grid() -> dict[str, list[str]]:
    grid = {"shipped": []}
    for stop, wait, start, hold in itertools.product(
        (0.1, 0.2, 0.5), (0.15, 0.45, 0.65), (0.03, 0.2), ("audio", "text", "none")
    ):
        grid[f"stop{stop}-wait{wait:.2f}-start{start}-{hold}"] = [
            f"vad.stop_secs={stop}",
            f"turn.user_speech_timeout={wait}",
            f"vad.start_secs={start}",
            f"turn.speculate={'false' if hold == 'none' else 'true'}",
            f"turn.hold={'text' if hold == 'none' else hold}",
        ]
    return grid


def hold_ms(timing) -> float | None:
    """The time the reply waited for the turn end, whichever part of it was held."""
    stages = timing.stages_ms
    held = [stages[s] for s in ("turn_hold", "audio_hold") if stages[s] is not None]
    return sum(held) if held else None


def pareto(rows: list[dict]) -> set[str]:
    keys = ("ttfa_p50_ms", "cut_short", "asr_wer")
    best = set()
    for a in rows:
        dominated = any(
            all(b[k] <= a[k] for k in keys) and any(b[k] < a[k] for k in keys)
            for b in rows
            if b is not a
        )
        if not dominated:
            best.add(a["setting"])
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--agent", type=Path, default=ROOT / "agents" / "local.toml")
    ap.add_argument("--limit", type=int, default=None, help="items, spread over the set")
    ap.add_argument("--grid", choices=("presets", "full"), default="presets")
    ap.add_argument("--only", action="append", default=[], help="run only these settings")
    ap.add_argument(
        "--scenario",
        action="append",
        default=[],
        help="play each turn through a scenario, e.g. pause (repeatable, as voicebench run)",
    )
    ap.add_argument("--json", type=Path, help="also write the rows here")
    args = ap.parse_args()
    quiet_libraries(False)
    grid = PRESETS if args.grid == "presets" else full_grid()
    if args.only:
        unknown = set(args.only) - set(grid)
        if unknown:
            sys.exit(f"unknown settings: {', '.join(sorted(unknown))} (known: {', '.join(grid)})")
        grid = {k: v for k, v in grid.items() if k in args.only}
    items = load_dialogues(BUILTIN_DIALOGUES)
    if args.limit:
        items = demo_items(items, args.limit)
    rows = []
    for name, overrides in grid.items():
        spec = load_with_overrides(args.agent, overrides)
        print(f"{name}: {len(items)} items ...", file=sys.stderr, flush=True)
        records = replay_builtin(spec, args.agent, items, scenarios=args.scenario)
        summary = report(records)
        holds = [hold_ms(r.timing) for r in records if r.timing and hold_ms(r.timing) is not None]
        rows.append(
            {
                "setting": name,
                "overrides": overrides,
                "turns": summary["turns"],
                "failed": summary["failed"],
                "ttfa_p50_ms": summary["ttfa_p50_ms"],
                "ttfa_p90_ms": summary["ttfa_p90_ms"],
                "ttft_p50_ms": summary["ttft_p50_ms"],
                "turn_hold_p50_ms": round(float(np.median(holds)), 1) if holds else None,
                "cut_short": cut_short(records),
                "asr_wer": summary["asr_wer"],
                "stages_p50_ms": summary["stages_p50_ms"],
            }
        )
    best = pareto(rows)
    print(
        f"{'':1} {'setting':24} {'turns':>5} {'TTFA p50':>9} {'TTFA p90':>9} {'TTFT p50':>9} "
        f"{'hold p50':>9} {'cut short':>9} {'WER':>6}"
    )
    for r in rows:
        hold = "-" if r["turn_hold_p50_ms"] is None else f"{r['turn_hold_p50_ms']:,.0f}"
        print(
            f"{'*' if r['setting'] in best else ' '} {r['setting']:24} {r['turns']:>5} "
            f"{r['ttfa_p50_ms']:>9,.0f} {r['ttfa_p90_ms']:>9,.0f} {r['ttft_p50_ms']:>9,.0f} "
            f"{hold:>9} {r['cut_short']:>9} {r['asr_wer']:>6.3f}"
        )
    print("* Pareto-best on TTFA p50, turns cut short and WER")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main()
