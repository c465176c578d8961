"""``judge``, ``judge_check``, ``rate``, ``check``, ``compare`` and ``report`` from Python."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from voicebench import builtin
from voicebench.api.results import GateResults, Judging, PathLike, Run, folder, run_sync
from voicebench.budgets import TTFA_BUDGET_MS, TTFT_BUDGET_MS

if TYPE_CHECKING:
    from voicebench.gates import Comparison, Gate
    from voicebench.judging import Verdict
    from voicebench.judging.cards import JudgeCard
    from voicebench.rating import RatingTable
    from voicebench.reporting.build import BuiltReport
    from voicebench.reporting.replies import AudioFormat


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
) -> Judging:
    """Pairwise HEART judging of the runs' final replies; see ``judge``."""
    from voicebench.judging import default_out_dir, judge_runs

    run_dirs = [folder(r) for r in runs]
    spec_path = builtin.spec_path("judges", judge)
    if out is None:
        from voicebench.judging import load_judge_spec

        spec, _ = load_judge_spec(spec_path)
        out_dir = default_out_dir(spec.name, run_dirs)
    else:
        out_dir = Path(out)
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
) -> Judging:
    """Judge what the listener heard: every run's final-turn replies and the human reference,
    pairwise on the five HEART dimensions, both orders. Verdicts are cached in the folder, so
    an interrupted judging resumes.

    Args:
        runs: run folders or ``Run`` objects (from ``replay``).
        judge: a judge spec: a TOML path or a shipped one's name (``"local"``, the offline
            judge; ``"local-smoke"``, the default, checks the plumbing only).
        out: the judging folder (default ``reports/judgments/SPEC-HASH``).
        concurrency: requests in flight at once.
        human_replies: JSONL files of more human replies to rank beside the agents.
        pairs_per_item: judge at most this many pairs per item, drawn with ``seed``.
        progress: called after every verdict with (verdict, done, total).
        on_status: called with a line for each step taken.

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
        )
    )


def judge_check(
    judge: PathLike = builtin.SMOKE_JUDGE,
    *,
    gold: PathLike | None = None,
    split: str = "all",
    out: PathLike | None = None,
    concurrency: int = 1,
    refresh: bool = False,
    on_status: Callable[[str], None] | None = None,
) -> JudgeCard:
    """Measure a judge on a gold set, as ``voicebench judge-check`` does: every pair in both
    orders through the judging code, then its card, written beside the spec and reused
    (nothing asked) while neither the spec nor the gold file changes.

    Args:
        judge: a judge spec: a TOML path or a shipped one's name (``"local"``).
        gold: gold pairs: a JSONL path, or a shipped set by name, ``"real"`` (replies agents
            and people really gave) or ``"written"`` (pairs written to carry a defect; the
            default, ``judges/pairs-gold.jsonl``).
        split: ``"all"``, ``"dev"`` (for tuning a judge) or ``"holdout"`` (never tuned on).
        out: the folder for the verdicts (default ``reports/judge-check/...``); resumed.
        concurrency: requests in flight at once.
        refresh: measure again even when a card is there (cached verdicts are still used).
        on_status: called with a line for each step taken.

    Returns:
        The card: ``card.accuracy`` with its Wilson 95% interval (``accuracy_low``,
        ``accuracy_high``), per category and dimension, ``seconds_per_verdict``.
    """
    from voicebench.judging.check import DEFAULT_GOLD, check_judge

    if split not in ("all", "dev", "holdout"):
        raise ValueError(f"split must be all, dev or holdout, not {split!r}")
    result = run_sync(
        check_judge(
            builtin.spec_path("judges", judge),
            Path(gold) if gold is not None else DEFAULT_GOLD,
            split=split,  # type: ignore[arg-type]
            out_dir=Path(out) if out is not None else None,
            concurrency=concurrency,
            refresh=refresh,
            on_status=on_status,
        )
    )
    return result.card


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
    from voicebench.rating import rate_judging

    return rate_judging(
        folder(judging),
        rounds=rounds,
        seed=seed,
        budget_ttft_ms=budget_ttft_ms,
        budget_ttfa_ms=budget_ttfa_ms,
        human_judgments=Path(human_judgments) if human_judgments is not None else None,
    )


def check(
    target: Run | Judging | PathLike,
    *,
    strict: bool = False,
    contestant: str | None = None,
    budget_ttft_ms: float = TTFT_BUDGET_MS,
    budget_ttfa_ms: float = TTFA_BUDGET_MS,
    **gates: float,
) -> GateResults:
    """Check a run (latency, failures, WER) or a judging (Elo, judge accuracy) against gates.

    Gates are keyword arguments ``max_FIGURE`` or ``min_FIGURE`` with a bound, shares in per
    cent: ``check(run, max_ttfa_p90_ms=1200, max_failed_pct=5)``. Each is decided on the
    figure's value; with ``strict`` on its 95% interval's far end, so a run too small to be
    sure fails. An unknown gate name is an ``InputError`` listing the figures.

    Returns:
        The results, true when every gate passed; ``.failed`` lists the others.
    """
    from voicebench.errors import InputError
    from voicebench.gates import make_gate

    if not gates:
        raise InputError("no gates given: pass them as keywords, e.g. max_ttfa_p90_ms=1200")
    if "min_elo" in gates and contestant is None:
        raise InputError("min_elo needs contestant=NAME", field="contestant")
    chosen = [make_gate(name, bound, source=name) for name, bound in gates.items()]
    return check_gates(
        target,
        chosen,
        strict=strict,
        contestant=contestant,
        budget_ttft_ms=budget_ttft_ms,
        budget_ttfa_ms=budget_ttfa_ms,
    )


def check_gates(
    target: Run | Judging | PathLike,
    gates: Sequence[Gate],
    *,
    strict: bool = False,
    contestant: str | None = None,
    budget_ttft_ms: float = TTFT_BUDGET_MS,
    budget_ttfa_ms: float = TTFA_BUDGET_MS,
) -> GateResults:
    """``check`` with the gates already made (``voicebench check`` reads them from options
    and a file): the folder's figures are read first, so a folder of the wrong kind is named
    before missing gates are."""
    from voicebench.gates import check as decide
    from voicebench.gates import folder_figures

    path = folder(target)
    figures = folder_figures(
        path, contestant=contestant, budget_ttft_ms=budget_ttft_ms, budget_ttfa_ms=budget_ttfa_ms
    )
    return GateResults(path, tuple(decide(gates, figures, strict=strict)))


def compare(
    base: Run | PathLike,
    new: Run | PathLike,
    *,
    judging: Judging | PathLike | None = None,
    min_change_ms: float = 10.0,
) -> Comparison:
    """Compare two runs: TTFT and TTFA percentiles, every stage's median, WER, failures (and,
    with a judging holding both agents, their Elo), each change with a 95% bootstrap interval
    and a verdict (``faster``, ``slower``, ``no clear change``...).

    Returns:
        The comparison; ``.regressions`` lists what got clearly slower or worse.
    """
    from voicebench.gates import compare_runs

    return compare_runs(
        folder(base),
        folder(new),
        min_change_ms=min_change_ms,
        judging=folder(judging) if judging is not None else None,
    )


def report(
    inputs: Sequence[Run | Judging | PathLike],
    *,
    out: PathLike | None = None,
    title: str | None = None,
    budget_ttft_ms: float | None = None,
    budget_ttfa_ms: float | None = None,
    human_judgments: PathLike | None = None,
    audio_format: AudioFormat = "wav",
    on_status: Callable[[str], None] | None = None,
) -> BuiltReport:
    """Write the latency-budget report and the quality-latency frontier for runs and (at most)
    one judging: ``index.html`` (one self-contained page), ``report.md``, ``report.json`` and
    ``figures/``. A campaign or demo folder, given alone, is reported as the campaign reported
    it: its judging and runs, its cells' labels, its title and budgets (unless given here).
    The budgets default to 500 ms TTFT and 1000 ms TTFA.

    The judged replies' audio is copied to ``audio/`` as recorded (``audio_format="wav"``) or
    encoded as Opus in Ogg (``"opus"``, about a tenth of the size, for a report to share).
    ``on_status`` is called with a line for each step taken.

    Returns:
        The report's folder, its data (``.report``) and the files written.
    """
    from voicebench.campaign.folder import is_campaign, report_inputs
    from voicebench.errors import InputError
    from voicebench.reporting import build_report
    from voicebench.runlog import folder_stamp

    paths = [folder(x) for x in inputs]
    labels: dict[Path, str] = {}
    ttft, ttfa = TTFT_BUDGET_MS, TTFA_BUDGET_MS
    campaigns = [p for p in paths if is_campaign(p)]
    if campaigns:
        if len(paths) > 1:
            raise InputError("a campaign folder is reported on its own", file=campaigns[0])
        found = report_inputs(campaigns[0])
        paths, labels, title = found.paths, found.labels, title or found.title
        ttft, ttfa = found.budgets.ttft_ms, found.budgets.ttfa_ms
    return build_report(
        paths,
        Path(out) if out is not None else Path("reports") / f"report-{folder_stamp()}",
        title=title,
        budget_ttft_ms=ttft if budget_ttft_ms is None else budget_ttft_ms,
        budget_ttfa_ms=ttfa if budget_ttfa_ms is None else budget_ttfa_ms,
        human_judgments=Path(human_judgments) if human_judgments is not None else None,
        audio_format=audio_format,
        on_status=on_status,
        labels=labels,
    )
