"""Seconds a judge takes per gold pair, every spec on the same pairs in one run.

Each spec judges the first ``--pairs`` pairs of the gold set (both orders) from nothing cached,
in a fresh folder, through ``voicebench judge-check``'s path; seconds per pair are the summed
times of its answered verdicts over the pairs (the model's loading is not counted). A local
log-probability judge is timed twice, with its model in the judging process (only the next
token's logits computed) and on the llama.cpp server (``in_process = false``: the logits of
every prompt position computed), so the two runtimes are compared on one machine in one run.

    python benchmarks/judge_speed.py judges/local.toml judges/local-checklist.toml
    python benchmarks/judge_speed.py judges/local.toml --pairs 20
    python benchmarks/judge_speed.py judges/candidates/*.toml --runtime in-process
"""

from __future__ import annotations

import argparse
import asyncio
import re
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from voicebench.judging.check import check_judge  # noqa: E402
from voicebench.judging.spec import load_judge_spec  # noqa: E402

LOGPROB_METHODS = ("letter-margin", "pointwise", "checklist")


def variant(spec_path: Path, folder: Path, *, in_process: bool | None) -> Path:
    """A copy of the spec in ``folder``, its rubric named by absolute path, with every judge's
    ``in_process`` set when given."""
    spec, _ = load_judge_spec(spec_path)
    text = spec_path.read_text()
    rubric = (spec_path.parent / spec.rubric).resolve()
    text = re.sub(r'(?m)^rubric = ".*"$', f'rubric = "{rubric}"', text)
    if in_process is not None:
        text = text.replace("[[judges]]\n", f"[[judges]]\nin_process = {str(in_process).lower()}\n")
    out = folder / f"{spec_path.stem}-{'default' if in_process is None else in_process}.toml"
    out.write_text(text)
    return out


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("specs", nargs="+", type=Path, help="Judge specs (TOML).")
    parser.add_argument("--gold", type=Path, default=ROOT / "judges" / "pairs-gold.jsonl")
    parser.add_argument("--pairs", type=int, default=12)
    parser.add_argument(
        "--runtime",
        choices=("both", "in-process", "server"),
        default="both",
        help="Local log-probability judges: time which runtime(s).",
    )
    args = parser.parse_args()

    console = Console(stderr=True)
    table = Table(title=f"seconds per pair, first {args.pairs} pairs of {args.gold.name}")
    for col in ("judge spec", "runtime", "pairs", "s/pair", "s/verdict"):
        table.add_column(col, justify="left" if col in ("judge spec", "runtime") else "right")
    with tempfile.TemporaryDirectory(prefix="judge-speed-") as tmp:
        folder = Path(tmp)
        gold = folder / "gold.jsonl"
        gold.write_text("".join(args.gold.read_text().splitlines(keepends=True)[: args.pairs]))
        for spec_path in args.specs:
            spec, _ = load_judge_spec(spec_path)
            local = all(j.provider == "local" and j.method in LOGPROB_METHODS for j in spec.judges)
            chosen = {"both": [True, False], "in-process": [True], "server": [False]}
            runtimes: list[bool | None] = list(chosen[args.runtime]) if local else [None]
            for in_process in runtimes:
                copy = variant(spec_path, folder, in_process=in_process)
                name = {True: "in process", False: "llama.cpp server", None: "-"}[in_process]
                console.print(f"timing {spec_path} ({name})")
                result = await check_judge(
                    copy, gold, out_dir=folder / copy.stem, refresh=True, on_status=console.print
                )
                c = result.card
                answered = c.verdicts - c.failed_verdicts
                per_verdict = c.seconds_per_verdict or 0.0
                table.add_row(
                    spec.name,
                    name,
                    str(c.pairs),
                    f"{per_verdict * answered / c.pairs:.2f}",
                    f"{per_verdict:.2f}",
                )
    shown = Console()
    if not shown.is_terminal:
        shown = Console(width=160)
    shown.print(table)


if __name__ == "__main__":
    asyncio.run(main())
