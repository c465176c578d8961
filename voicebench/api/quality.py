"""Quality from Python: ``judge`` the runs' replies pairwise, ``judge_check`` a judge on gold
pairs, ``rate`` a judging, label its replies' support ``strategies``, and ``annotate``: people
rating the replies by ear."""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from voicebench import builtin
from voicebench.annotate import open_rating, serve_rating
from voicebench.annotate.server import Rating
from voicebench.api.results import Judging, PathLike, Run, folder, run_sync
from voicebench.budgets import TTFA_BUDGET_MS, TTFT_BUDGET_MS
from voicebench.errors import InputError
from voicebench.judging import JudgeSpec, Verdict, default_out_dir, judge_runs, load_judge_spec
from voicebench.judging.cards import JudgeCard, find_card
from voicebench.judging.check import DEFAULT_GOLD, check_judge
from voicebench.judging.gold import DEFAULT_SPLIT, SPLITS
from voicebench.judging.load import JUDGING_DIR, is_load, judge_load
from voicebench.judging.mcnemar import PairedComparison
from voicebench.judging.paired import paired_comparison
from voicebench.judging.scorer import Encoder, Head
from voicebench.judging.training import dev_pairs, fit_head, write_spec
from voicebench.rating import RatingTable, rate_judging
from voicebench.strategies import LABELS_FILE, ReplyStrategies, run_labelling
from voicebench.strategies.diversity import StrategySummary


def judging_folder(runs: Sequence[Run | PathLike], judge: PathLike = builtin.SMOKE_JUDGE) -> Path:
    """Where ``judge`` writes its verdicts on these runs unless told: ``reports/judgments/``
    and the spec's name with a hash of the runs; for a load folder, ``LOAD_DIR/judging``."""
    spec, _ = load_judge_spec(builtin.spec_path("judges", judge))
    if len(runs) == 1 and is_load(folder(runs[0])):
        return folder(runs[0]) / JUDGING_DIR
    return default_out_dir(spec.name, [folder(r) for r in runs])


def judge_card(judge: PathLike) -> JudgeCard | None:
    """A judge spec's card as it is now (its held-out split first; on real replies where it
    has one), or None when it has not been measured."""
    return find_card(builtin.spec_path("judges", judge))


def judge_spec(judge: PathLike) -> JudgeSpec:
    """A judge spec as written (a path, or a shipped spec's name), its key variables not
    required to be set: what it asks and where."""
    spec, _ = load_judge_spec(builtin.spec_path("judges", judge), require_secrets=False)
    return spec


async def judge_async(
    runs: Sequence[Run | PathLike],
    *,
    judge: PathLike = builtin.SMOKE_JUDGE,
    out: PathLike | None = None,
    concurrency: int = 4,
    human_replies: Sequence[PathLike] = (),
    pairs_per_item: int | None = None,
    seed: int = 0,
    progress: Callable[[Verdict, int, int], None] | None = None,
    on_status: Callable[[str], None] | None = None,
    against: Run | PathLike | None = None,
) -> Judging:
    """Pairwise HEART judging of the runs' final replies; see ``judge``."""
    run_dirs = [folder(r) for r in runs]
    spec_path = builtin.spec_path("judges", judge)
    out_dir = Path(out) if out is not None else judging_folder(runs, judge)
    loads = [d for d in run_dirs if is_load(d)]
    if loads and len(run_dirs) > 1:
        raise InputError("judge a load folder on its own (its bands are the contestants)")
    if against is not None and not loads:
        raise InputError("against goes with a load folder", field="against")
    if loads:
        if human_replies or pairs_per_item is not None:
            raise InputError(
                "a load's bands are judged against one baseline: no extra human replies or "
                "pairs per item",
                file=loads[0],
            )
        result = await judge_load(
            loads[0],
            spec_path,
            out_dir,
            against=None if against is None else folder(against),
            concurrency=concurrency,
            seed=seed,
            on_status=on_status,
            progress=progress,
        )
        return Judging.load(out_dir, result)
    result = await judge_runs(
        run_dirs,
        spec_path,
        out_dir,
        concurrency=concurrency,
        human_files=[Path(p) for p in human_replies],
        pairs_per_item=pairs_per_item,
        seed=seed,
        on_status=on_status,
        progress=progress,
    )
    return Judging.load(out_dir, result)


def judge(
    runs: Sequence[Run | PathLike],
    *,
    judge: PathLike = builtin.SMOKE_JUDGE,
    out: PathLike | None = None,
    concurrency: int = 4,
    human_replies: Sequence[PathLike] = (),
    pairs_per_item: int | None = None,
    seed: int = 0,
    progress: Callable[[Verdict, int, int], None] | None = None,
    on_status: Callable[[str], None] | None = None,
    against: Run | PathLike | None = None,
) -> Judging:
    """Judge what the listener heard: every run's final-turn replies and the human reference,
    pairwise on the five HEART dimensions, both orders. Verdicts are cached in the folder, so
    an interrupted judging resumes. Given one load folder (``load``), its replies are judged
    by concurrency band against the lowest band, or ``against`` a run of the same items
    (``voicebench.judging.load``); its load report then shows quality by band.

    Args:
        runs: run folders or ``Run`` objects (from ``replay``), or one load folder.
        judge: a judge spec: a TOML path or a shipped one's name (``"local"``, the offline
            judge; ``"local-smoke"``, the default, checks the plumbing only).
        out: the judging folder (default ``reports/judgments/SPEC-HASH``).
        concurrency: requests in flight at once.
        human_replies: JSONL files of more human replies to rank beside the agents.
        pairs_per_item: judge at most this many pairs per item, drawn with ``seed``.
        progress: called after every verdict with (verdict, done, total).
        on_status: called with a line for each step taken.
        against: with a load folder, the run its bands are judged against (default: its
            lowest band).

    Returns:
        The judging, whose ``elo_difference(a, b)`` says how two contestants compare.
    """
    return run_sync(
        judge_async(
            runs,
            judge=judge,
            out=out,
            concurrency=concurrency,
            human_replies=human_replies,
            pairs_per_item=pairs_per_item,
            seed=seed,
            progress=progress,
            on_status=on_status,
            against=against,
        )
    )


@dataclass(frozen=True)
class JudgeCheck:
    """A judge measured on a gold set: its card, where the card is, whether it was reused
    (nothing asked); with ``against``, the second judge's and the two compared pair by pair."""

    card: JudgeCard
    path: Path
    reused: bool
    against: JudgeCheck | None = None
    paired: PairedComparison | None = None


def judge_check(
    judge: PathLike = builtin.SMOKE_JUDGE,
    *,
    gold: PathLike | None = None,
    split: str = DEFAULT_SPLIT,
    out: PathLike | None = None,
    concurrency: int = 1,
    refresh: bool = False,
    against: PathLike | None = None,
    on_status: Callable[[str], None] | None = None,
    progress: Callable[[Verdict, int, int], None] | None = None,
) -> JudgeCheck:
    """Measure a judge on a gold set, as ``voicebench judge-check`` does: every pair in both
    orders through the judging code, then its card, reused (nothing asked) while neither the
    spec nor the gold file changes: a shipped judge's in ``reports/judge-cards/`` under the
    current folder (in a checkout, ``judges/cards/``), a spec file of one's own's in ``cards/``
    beside it.

    Args:
        judge: a judge spec: a TOML path or a shipped one's name (``"local"``).
        gold: gold pairs: a JSONL path, or a shipped set by name, ``"real"`` (replies agents
            and people really gave) or ``"written"`` (pairs written to carry a defect; the
            default, ``judges/pairs-gold.jsonl``).
        split: ``"holdout"`` (never tuned on; the default), ``"dev"`` (for tuning a judge)
            or ``"all"``; a card that counts dev pairs says so (``card.includes_dev``).
        out: the folder for the verdicts (default ``reports/judge-check/...``); resumed.
        concurrency: requests in flight at once.
        refresh: measure again even when a card is there (cached verdicts are still used).
        against: a second judge spec measured on the same pairs (its card reused when there is
            one), the two then compared pair by pair (McNemar's exact test, the difference in
            accuracy with its 95% interval).
        on_status: called with a line for each step taken.
        progress: called after every verdict with (verdict, done, total).

    Returns:
        ``JudgeCheck``: ``.card.accuracy`` with its Wilson 95% interval (``accuracy_low``,
        ``accuracy_high``), per category and dimension, ``seconds_per_verdict``.
    """
    if split not in SPLITS:
        raise InputError(f"must be one of {', '.join(SPLITS)}", field="split")
    gold_path = Path(gold) if gold is not None else DEFAULT_GOLD

    def measure(spec: PathLike, **where: Any) -> JudgeCheck:
        result = run_sync(
            check_judge(
                builtin.spec_path("judges", spec),
                gold_path,
                split=split,  # type: ignore[arg-type]
                concurrency=concurrency,
                on_status=on_status,
                progress=progress,
                **where,
            )
        )
        return JudgeCheck(result.card, result.path, result.reused)

    first = measure(judge, out_dir=Path(out) if out is not None else None, refresh=refresh)
    if against is None:
        return first
    other = measure(against)
    return replace(first, against=other, paired=paired_comparison(first.card, other.card))


@dataclass(frozen=True)
class TrainedJudge:
    """What ``judge_train`` wrote: the spec, its head, and the head itself."""

    spec: Path
    head_path: Path
    head: Head


def judge_train(
    gold: Sequence[PathLike],
    *,
    out: PathLike,
    rubric: str = "rubric-reply.md",
    progress: Callable[[int, int], None] | None = None,
) -> TrainedJudge:
    """Fit a learned scorer on read pairs, as ``voicebench judge-train`` does: the dev pairs
    of every gold file (never their held-out ones), each reply's features from the packaged
    encoder, a linear head fitted pairwise with its L2 strength chosen by cross-validation
    over conversations. Writes the judge spec ``out`` and its head beside it (``.npz``); the
    spec is then measured as any judge is (``judge_check``).

    Args:
        gold: gold files (JSONL paths, or the shipped sets' names ``"real"``, ``"written"``).
        out: the spec to write (``.toml``); its rubric, ``rubric``, is named relative to it: the
            shipped one (the reply rubric by default) is copied beside it when it is not there,
            or named by its relative path from a folder under the shipped ``judges/``.
        progress: called after each pair's features with (done, total).
    """
    paths = [builtin.GOLD_SETS.get(str(g), Path(g)) for g in gold]
    if not paths:
        raise InputError("at least one gold file is needed", field="gold")
    spec = Path(out)
    if spec.suffix != ".toml":
        raise InputError("the spec to write must end in .toml", field="out")
    pairs, digests = dev_pairs(paths)
    head = fit_head(pairs, Encoder(), gold=digests, progress=progress)
    if not (spec.parent / rubric).is_file():
        shipped = builtin.JUDGES / rubric
        if not shipped.is_file():
            raise InputError(f"no rubric {rubric!r} beside the spec or shipped", field="rubric")
        if spec.parent.resolve().is_relative_to(builtin.JUDGES.resolve()):
            rubric = os.path.relpath(shipped.resolve(), spec.parent.resolve())
        else:
            spec.parent.mkdir(parents=True, exist_ok=True)
            (spec.parent / rubric).write_bytes(shipped.read_bytes())
    head_path = write_spec(spec, head, paths, rubric)
    return TrainedJudge(spec=spec, head_path=head_path, head=head)


def rate(
    judging: Judging | PathLike,
    *,
    rounds: int = 1000,
    seed: int = 0,
    budget_ttft_ms: float = TTFT_BUDGET_MS,
    budget_ttfa_ms: float = TTFA_BUDGET_MS,
    human_judgments: PathLike | None = None,
) -> RatingTable:
    """Fit Bradley-Terry ratings to a judging (Elo with bootstrap and asymptotic 95%
    intervals), win rates per dimension, latency goodput; writes ``ratings.json`` there.

    Returns:
        The rating table: ``table.ratings``, a contestant each with its Elo and intervals.
    """

    return rate_judging(
        folder(judging),
        rounds=rounds,
        seed=seed,
        budget_ttft_ms=budget_ttft_ms,
        budget_ttfa_ms=budget_ttfa_ms,
        human_judgments=Path(human_judgments) if human_judgments is not None else None,
    )


def label_strategies(
    judging: Judging | PathLike,
    *,
    judge: PathLike = builtin.SMOKE_JUDGE,
    concurrency: int = 4,
    on_status: Callable[[str], None] | None = None,
    progress: Callable[[ReplyStrategies, int, int], None] | None = None,
) -> StrategySummary:
    """Label every judged reply with the 15 HEART support strategies (present, absent or
    uncertain, with evidence) by the spec's first judge, cached in ``strategies_file``, and
    summarize each contestant's strategy diversity."""
    return run_labelling(
        folder(judging),
        builtin.spec_path("judges", judge),
        concurrency=concurrency,
        on_status=on_status,
        progress=progress,
    )


def strategies_file(judging: Judging | PathLike) -> Path:
    """Where a judging's strategy labels are kept (a re-run resumes from them)."""
    return folder(judging) / LABELS_FILE


def rating_session(
    judging: Judging | PathLike, rater: str, *, per_rater: int = 40, seed: int | None = None
) -> tuple[Rating, bool]:
    """One rater's blinded listening plan on a judging (drawn, or read back with their
    answers so far), and whether it is new."""
    return open_rating(folder(judging), rater, per_rater=per_rater, seed=seed)


def serve_rating_page(
    session: Rating,
    *,
    host: str = "127.0.0.1",
    port: int = 8767,
    on_ready: Callable[[str], None] | None = None,
) -> None:
    """Serve a rating session's page until Ctrl-C; answers are appended to the rater's file
    in the judging's ``human/`` folder as they are given."""
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve_rating(session, host=host, port=port, on_ready=on_ready))
