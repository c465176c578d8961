"""Scaling a campaign out on Ray: the same cells with 1 worker and with 2, on this machine.

Replay runs in real time, so a campaign finishes sooner only by running cells side by side.
Each cell replays a slice of the built-in set to a scripted WebSocket voice agent (its own
process) whose reply's first audible sample comes a known ``--delay-ms`` after the end of the
caller's speech; the cells run as Ray tasks on a local instance started for each pass. Printed:
the wall time of each pass (Ray's start and stop included, judging and the report left out,
as a campaign without judges spends almost nothing there), their ratio (target at least 1.8),
and in each pass the timing error, measured TTFA minus the injected delay, whose |error| p99
must stay within 5 ms: cells that share a machine must not spoil each other's timing.

    .venv/bin/python benchmarks/campaign_scale.py [--cells 4] [--limit 3] [--delay-ms 800]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np

from voicebench.campaign import plan_campaign
from voicebench.campaign.cluster import run_on_ray
from voicebench.dialogues import BUILTIN_DIALOGUES
from voicebench.runlog import read_turns
from voicebench.testing.scripted_voice import ScriptedVoiceAgent

RATIO_TARGET = 1.8
ERROR_TARGET_MS = 5.0


class Quiet:
    """Campaign hooks that print a line per finished cell."""

    def status(self, message: str) -> None:
        pass

    def turn(self, progress) -> None:
        pass

    def cell(self, cell, records) -> None:
        print(f"    {cell.key}: {len(records)} turns")

    def verdict(self, verdict, done, total) -> None:
        pass

    def judged(self, result) -> None:
        pass

    def rated(self, table, why_not) -> None:
        pass


def one_pass(folder: Path, url: str, args, workers: int) -> dict:
    spec = folder / "agent.toml"
    spec.write_text(
        f'name = "scripted"\nfamily = "scripted"\n[remote]\nurl = "{url}"\nquiet_secs = 1.0\n'
    )
    agents = "".join(
        f'[[agents]]\nspec = "agent.toml"\nname = "cell-{k}"\n' for k in range(args.cells)
    )
    file = folder / "campaign.toml"
    file.write_text(
        f'name = "scale"\n{agents}'
        f'[[dialogues]]\npath = "{BUILTIN_DIALOGUES}"\nlimit = {args.limit}\n'
    )
    plan = plan_campaign(file, folder / "out")
    start = time.monotonic()
    run_on_ray(plan, plan.cells, Quiet(), workers=workers)
    wall = time.monotonic() - start
    records = [r for c in plan.cells for r in read_turns(plan.run_dir(c))]
    ok = [r for r in records if r.error is None and r.timing and r.timing.ttfa_ms is not None]
    err = np.array([r.timing.ttfa_ms - args.delay_ms for r in ok])
    return {
        "wall": wall,
        "turns": len(records),
        "failed": len(records) - len(ok),
        "p50": float(np.percentile(np.abs(err), 50)) if err.size else float("nan"),
        "p99": float(np.percentile(np.abs(err), 99)) if err.size else float("nan"),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cells", type=int, default=4)
    parser.add_argument("--limit", type=int, default=3, help="items of the built-in set a cell")
    parser.add_argument("--delay-ms", type=float, default=800.0)
    args = parser.parse_args()
    print(
        f"{args.cells} cells of {args.limit} items each, scripted agent, injected delay "
        f"{args.delay_ms:g} ms"
    )
    results = {}
    with ScriptedVoiceAgent(delay_ms=args.delay_ms, reply="Okay. I hear you.") as agent:
        assert agent.url is not None
        for workers in (1, 2):
            print(f"  {workers} worker(s):")
            with tempfile.TemporaryDirectory() as tmp:
                results[workers] = one_pass(Path(tmp), agent.url, args, workers)
    print(
        f"{'workers':>7} {'turns':>6} {'failed':>6} {'wall s':>8} "
        f"{'|err| p50':>10} {'|err| p99':>10}"
    )
    for workers, r in results.items():
        verdict = "ok" if r["p99"] <= ERROR_TARGET_MS else "MISSED"
        print(
            f"{workers:>7} {r['turns']:>6} {r['failed']:>6} {r['wall']:>8.1f} "
            f"{r['p50']:>8.2f}ms {r['p99']:>8.2f}ms  (target <= {ERROR_TARGET_MS:g} {verdict})"
        )
    ratio = results[1]["wall"] / results[2]["wall"]
    verdict = "ok" if ratio >= RATIO_TARGET else "MISSED"
    print(
        f"wall-time ratio, 1 worker / 2 workers: {ratio:.2f} (target >= {RATIO_TARGET:g} {verdict})"
    )


if __name__ == "__main__":
    main()
