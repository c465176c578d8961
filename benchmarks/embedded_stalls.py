"""The embedded agent's stalls after its first audio: in a run, in a paired comparison of how
its TTS is fed, and under a step load.

- ``run``: ``voicebench run --agent local --final-only`` on the built-in items; one row with
  how many replies played, how many stalled, the stalls and the longest.
- ``paired``: the same items with ``[tts] later_chunks = "sentence"`` and ``"clause"``
  (the shipped setting), in alternating rounds so that the machine's state is shared; one row
  a run and one with the paired TTFA difference (clause less sentence, per item and round).
- ``load``: the agent served (``voicebench serve``) and called by ``voicebench load --pattern
  step`` (1, 2, 3, 4 calls at once, 60 s each); one row a band, as the load summary has it.

One JSON object a row::

    .venv/bin/python benchmarks/embedded_stalls.py [--only run|paired|load] [--limit N]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from voicebench.metrics.summary import stall_summary
from voicebench.runlog import read_turns

ROOT = Path(__file__).resolve().parents[1]
VOICEBENCH = [sys.executable, "-m", "voicebench"]
TOKEN_ENV = "VOICEBENCH_BENCH_TOKEN"
SERVE = ("--token-env", TOKEN_ENV, "--max-calls", "8")
STEP = (
    *("--token-env", TOKEN_ENV, "--pattern", "step", "--callers", "4"),
    *("--step-callers", "1", "--step-hold", "60", "--duration", "240"),
)


def run(agent: str, out: Path, limit: int | None) -> Path:
    args = [*VOICEBENCH, "run", "--agent", agent, "--final-only", "--out", str(out)]
    if limit is not None:
        args += ["--limit", str(limit)]
    subprocess.run(args, cwd=ROOT, check=True, capture_output=True)
    return out


def stall_row(what: str, folder: Path) -> dict:
    records = read_turns(folder)
    stalls = stall_summary(records)
    ttfa = [r.timing.ttfa_ms for r in records if r.timing.ttfa_ms is not None]
    row: dict = {
        "what": what,
        "turns": len(records),
        "failed": sum(r.error is not None for r in records),
    }
    if ttfa:
        row["ttfa_p50_ms"] = round(statistics.median(ttfa), 1)
    if stalls is not None:
        row |= {
            "played": stalls.replies,
            "stalled_replies": stalls.stalled,
            "stalls": stalls.stalls,
            "longest_stall_ms": stalls.longest_ms,
            "stalled_share": stalls.stalled_share,
        }
    return row


def paired(work: Path, limit: int | None, rounds: int) -> Iterator[dict]:
    shipped = (ROOT / "agents" / "local.toml").read_text()
    assert 'later_chunks = "clause"' in shipped, "agents/local.toml no longer sets later_chunks"
    sentence = work / "local-sentence.toml"
    sentence.write_text(shipped.replace('later_chunks = "clause"', 'later_chunks = "sentence"'))
    ttfa: dict[str, dict] = {"sentence": {}, "clause": {}}
    for k in range(rounds):
        for kind, agent in (("sentence", str(sentence)), ("clause", "local")):
            folder = run(agent, work / f"{kind}-{k}", limit)
            yield stall_row(f"paired:{kind}:{k}", folder)
            for r in read_turns(folder):
                if r.timing.ttfa_ms is not None:
                    ttfa[kind][(k, r.dialogue_id)] = r.timing.ttfa_ms
    both = ttfa["sentence"].keys() & ttfa["clause"].keys()
    diffs = [ttfa["clause"][key] - ttfa["sentence"][key] for key in both]
    if diffs:
        yield {
            "what": "paired:ttfa_clause_less_sentence",
            "n": len(diffs),
            "median_ms": round(statistics.median(diffs), 1),
            "mean_ms": round(statistics.mean(diffs), 1),
        }


def load(work: Path, port: int) -> list[dict]:
    env = os.environ | {TOKEN_ENV: "bench-embedded-stalls-0123456789"}
    said = work / "serve.txt"
    with said.open("w") as log:
        served = subprocess.Popen(
            [*VOICEBENCH, "serve", "--agent", "local", "--port", str(port), *SERVE],
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    try:
        deadline = time.monotonic() + 180
        while f":{port}" not in said.read_text():  # it says where it listens once ready
            if served.poll() is not None:
                raise SystemExit(f"voicebench serve ended before serving:\n{said.read_text()}")
            assert time.monotonic() < deadline, "the embedded agent was never served"
            time.sleep(0.5)
        out = work / "load"
        subprocess.run(
            [*VOICEBENCH, "load", "--agent", f"ws://127.0.0.1:{port}", *STEP, "--out", str(out)],
            cwd=ROOT,
            env=env,
            check=True,
            capture_output=True,
        )
    finally:
        served.terminate()
        served.wait(timeout=60)
    summary = json.loads((out / "summary.json").read_text())
    keys = ("turns", "ttfa_p50_ms", "ttfa_p90_ms", "stalled_replies", "stalled_share")
    return [
        {"what": f"load:{b['low']}-{b['high']} calls"}
        | {k: b.get(k) for k in (*keys, "longest_stall_ms")}
        for b in summary["bands"]
    ]


def show(row: dict) -> None:
    print(json.dumps(row), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", choices=("run", "paired", "load"), action="append")
    parser.add_argument("--limit", type=int, default=None, help="items (default: all 30)")
    parser.add_argument("--rounds", type=int, default=2, help="paired rounds (default 2)")
    parser.add_argument("--port", type=int, default=8790)
    args = parser.parse_args()
    parts = args.only or ["run", "paired", "load"]
    with tempfile.TemporaryDirectory(prefix="embedded-stalls-") as tmp:
        work = Path(tmp)
        if "run" in parts:
            show(stall_row("run", run("local", work / "run", args.limit)))
        if "paired" in parts:
            for row in paired(work, args.limit, args.rounds):
                show(row)
        if "load" in parts:
            for row in load(work, args.port):
                show(row)


if __name__ == "__main__":
    main()
