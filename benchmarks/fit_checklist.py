"""Fit a checklist judge's weights on the gold set's dev pairs, and write them into its spec.

A checklist judge (``method = "checklist"``) asks each reply its yes/no questions alone (and
may weigh its ``likelihood``) and records, for every pair, each feature's margin of reply A
over reply B; its weights are a regularized logistic regression on those margins
(``voicebench.judging.fitting``), the strength chosen by 10-fold cross-validation on the dev
pairs. Only dev pairs are read, whatever else has been asked, unless ``--holdout`` asks for
the held-out accuracy of the weights fitted on dev (read once, nothing tuned on it).

The features are read from verdicts already asked: the spec's own (asked here on the dev
pairs when missing), or those of other specs named by ``--features-from`` whose verdicts hold
them (a checklist's question margins; a letter-margin judge's margins, summed over both
orders, as the feature ``letter``). ``--select K`` keeps the K features that do best by
greedy forward selection, each step judged by cross-validation on dev, and writes those: a
judge asking fewer questions is faster. A combination that includes ``letter`` (the combiner
of a checklist with the letter judge) is measured and printed, never written: a checklist
cannot ask a letter question. New weights are applied to the recorded margins, so neither a
refit nor the cards measured after it ask the model again.

    python benchmarks/fit_checklist.py judges/candidates/qwen-1.5b-checklist.toml
    python benchmarks/fit_checklist.py judges/candidates/qwen-1.5b-checklist.toml --select 4 \
        --dry-run
    python benchmarks/fit_checklist.py judges/local-checklist.toml

``--gold`` names the gold set whose dev pairs are fitted on (default the written set); given
several times, the dev pairs of all of them together, and ``--holdout`` then prints each set's
held-out accuracy. The checklist judge is fitted on the written set and the real replies:

    python benchmarks/fit_checklist.py judges/local-checklist.toml --select 6 --dry-run --holdout \
        --gold judges/pairs-gold.jsonl --gold judges/pairs-real.jsonl \
        --gold reports/gold/pairs-esconv.jsonl

The combiner of the ten questions, the reply likelihood and the letter judge's margins (each
spec's verdicts asked first with ``voicebench judge-check --judge SPEC``):

    python benchmarks/fit_checklist.py judges/candidates/qwen-1.5b-checklist.toml --dry-run \
        --holdout --features-from judges/candidates/qwen-1.5b-likelihood.toml \
        --features-from judges/candidates/qwen-1.5b-letter.toml
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

from voicebench.bootstrap import wilson  # noqa: E402
from voicebench.judging.cards import spec_sha256  # noqa: E402
from voicebench.judging.check import _cached, check_judge, comparisons, default_check_dir  # noqa: E402
from voicebench.judging.fitting import FOLDS, choose, fit  # noqa: E402
from voicebench.judging.gold import GoldPair, GoldSet, load_gold  # noqa: E402
from voicebench.judging.questions import FEATURES  # noqa: E402
from voicebench.judging.spec import load_judge_spec  # noqa: E402

LETTER = "letter"
"""The feature a letter-margin judge's verdicts give: its margins, both orders summed."""

Margins = dict[str, dict[str, float]]
"""Gold pair id -> feature -> margin of reply A over reply B."""


def write_weights(spec_path: Path, weights: dict[str, float]) -> None:
    text = spec_path.read_text()
    table = ", ".join(f"{name} = {w:.3f}" for name, w in weights.items())
    new, n = re.subn(r"(?m)^weights = \{.*\}$", f"weights = {{ {table} }}", text)
    if n != 1:
        raise SystemExit(f"{spec_path}: expected one 'weights = {{ ... }}' line, found {n}")
    spec_path.write_text(new)


def recorded(
    spec_path: Path, gold_set: GoldSet, pairs: list[GoldPair], out: Path | None
) -> Margins:
    """Every feature the spec's verdicts in ``out`` (default: its judge-check folder) record
    for ``pairs``."""
    spec, rubric = load_judge_spec(spec_path)
    (judge,) = spec.judges
    wanted = comparisons(pairs, spec, rubric)
    out = out or default_check_dir(
        spec.name, spec_sha256(spec, rubric, weights=False), gold_set.sha256
    )
    margins: Margins = {}
    for v in _cached(out, wanted):
        if v.answer is None:
            continue
        if judge.method == "checklist" and v.contestant_a == "a" and v.answer.question_margins:
            margins[v.item_id] = dict(v.answer.question_margins)
        elif judge.method == "letter-margin" and v.answer.margin is not None:
            toward_a = v.answer.margin if v.contestant_a == "a" else -v.answer.margin
            pair = margins.setdefault(v.item_id, {})
            pair[LETTER] = pair.get(LETTER, 0.0) + toward_a
    return margins


def features(sources: list[Margins], pairs: list[GoldPair], names: list[str]) -> np.ndarray:
    """Pairs x features, each feature from the first source that has it for every pair."""
    columns = []
    for name in names:
        source = next((s for s in sources if all(name in s.get(g.id, {}) for g in pairs)), None)
        if source is None:
            raise SystemExit(f"no verdicts record {name!r} for every pair; ask them first")
        columns.append([source[g.id][name] for g in pairs])
    return np.array(columns).T


def forward(
    x: np.ndarray, y: np.ndarray, names: list[str], keep: int
) -> list[tuple[list[str], float]]:
    """Greedy forward selection: each step adds the feature whose addition cross-validates
    best on the pairs (the strength chosen inside each try); the path of (features, accuracy)."""
    chosen: list[int] = []
    path = []
    while len(chosen) < min(keep, len(names)):
        tries = {}
        for j in range(len(names)):
            if j not in chosen:
                _, scores = choose(x[:, [*chosen, j]], y)
                tries[j] = max(scores.values())
        best = max(tries, key=lambda j: (tries[j], -j))
        chosen.append(best)
        path.append(([names[j] for j in chosen], tries[best]))
    return path


def _source(arg: str) -> tuple[Path, Path | None]:
    spec, _, out = arg.partition("=")
    return Path(spec), Path(out) if out else None


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("spec", type=Path, help="A judge spec with one checklist judge.")
    parser.add_argument(
        "--gold",
        type=Path,
        action="append",
        help="A gold set whose dev pairs the weights are fitted on; repeatable: the dev pairs "
        "of all of them together (default: judges/pairs-gold.jsonl).",
    )
    parser.add_argument(
        "--features-from",
        action="append",
        default=[],
        metavar="SPEC[=FOLDER]",
        help="Another spec whose recorded verdicts (in FOLDER, default its judge-check "
        "folder) supply features; repeatable.",
    )
    parser.add_argument(
        "--select", type=int, metavar="K", help="Keep the best K features (forward selection)."
    )
    parser.add_argument(
        "--holdout",
        action="store_true",
        help="Also print the held-out accuracy of the weights fitted on dev.",
    )
    parser.add_argument("--dry-run", action="store_true", help="Print the weights only.")
    args = parser.parse_args()

    console = Console(stderr=True)
    spec, _ = load_judge_spec(args.spec)
    (judge,) = spec.judges
    if judge.method != "checklist":
        raise SystemExit(f"{args.spec}: method must be 'checklist', not {judge.method!r}")
    gold_sets = [load_gold(g) for g in args.gold or [ROOT / "judges" / "pairs-gold.jsonl"]]
    dev = [p for g in gold_sets for p in g.select("dev")]
    others = [_source(a) for a in args.features_from]
    pool = list(judge.asked)
    for path, _out in others:
        if path.exists() and load_judge_spec(path)[0].judges[0].method == "letter-margin":
            pool.append(LETTER)
        else:
            pool += [n for n in load_judge_spec(path)[0].judges[0].asked if n not in pool]

    def sources(pairs: list[GoldPair]) -> list[Margins]:
        """Each spec's recorded features for ``pairs``, read from every gold set's folder."""
        ids = {p.id for p in pairs}
        found: list[Margins] = []
        for spec_path, out in [(args.spec, None), *others]:
            margins: Margins = {}
            for g in gold_sets:
                mine = [p for p in g.pairs if p.id in ids]
                if mine:
                    margins.update(recorded(spec_path, g, mine, out))
            found.append(margins)
        return found

    dev_sources = sources(dev)
    own_names = [
        n
        for n in judge.asked
        if not all(n in s.get(g.id, {}) for s in dev_sources[1:] for g in dev)
    ]
    if own_names and len(dev_sources[0]) < len(dev):
        console.print(f"asking the questions of {len(dev)} dev pairs")
        for g in gold_sets:
            await check_judge(args.spec, Path(g.path), split="dev", on_status=console.print)
        dev_sources = sources(dev)
    x_all = features(dev_sources, dev, pool)
    y = np.array([1.0 if g.better == "a" else -1.0 for g in dev])

    names = pool
    shown = Console(width=120)
    if args.select:
        path = forward(x_all, y, pool, args.select)
        steps = Table(title=f"forward selection on {len(dev)} dev pairs ({FOLDS}-fold CV)")
        steps.add_column("features")
        steps.add_column("dev accuracy (CV)", justify="right")
        for chosen, acc in path:
            steps.add_row(", ".join(chosen), f"{100 * acc:.1f}%")
        shown.print(steps)
        names = path[-1][0]
    x = x_all[:, [pool.index(n) for n in names]]

    table = Table(title=f"{spec.name}: {len(dev)} dev pairs, {FOLDS}-fold cross-validation")
    table.add_column("weighing")
    table.add_column("dev accuracy", justify="right")
    mean = float((np.sign(x.sum(axis=1)) == y).mean())
    table.add_row("every feature alike (no fit)", f"{100 * mean:.1f}%")
    best, scores = choose(x, y)
    for s, acc in scores.items():
        table.add_row(f"fitted, L2 strength {s:g}", f"{100 * acc:.1f}%")
    w = fit(x, y, best)
    weights = dict(zip(names, (round(float(v), 3) for v in w), strict=True))
    shown.print(table)
    shown.print(f"chosen strength {best:g} (cross-validated {100 * scores[best]:.1f}% on dev)")
    shown.print(", ".join(f"{n} {v:+.3f}" for n, v in weights.items()))
    if args.holdout:
        for name, held in [(Path(g.path).name, g.select("holdout")) for g in gold_sets]:
            xh = features(sources(held), held, names)
            yh = np.array([1.0 if g.better == "a" else -1.0 for g in held])
            right = int((np.sign(xh @ w) == yh).sum())
            _, low, high = wilson(right, len(held)) or (0.0, 0.0, 0.0)
            shown.print(
                f"held out, {name}: {right}/{len(held)} = {100 * right / len(held):.1f}% "
                f"(95% CI {100 * low:.0f}-{100 * high:.0f}%; weights fitted on dev)"
            )
    if args.dry_run:
        return
    unaskable = [n for n in names if n not in FEATURES]
    if unaskable:
        raise SystemExit(f"not written: a checklist cannot ask {unaskable} (measured only)")
    write_weights(args.spec, weights)
    shown.print(f"written into {args.spec}")


if __name__ == "__main__":
    asyncio.run(main())
