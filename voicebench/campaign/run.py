"""Running a campaign: every cell, then judging, rating and one report.

The campaign folder::

    OUT/campaign.json          the plan as run: the file, its cells and their run folders
    OUT/cells/CELL/            one run folder per cell (run.json, turns.jsonl, audio/; with
                               mode = "simulated", a converse folder: its calls too)
    OUT/judging/JUDGE/         one judging folder per judge, over every variant's judged cells
    OUT/report/                the report: every cell's latency, the first judge's ratings

Cells run here one after another, or on a Ray cluster (``voicebench.campaign.cluster``); either
way their run folders end up in ``OUT/cells``. Re-running the same command resumes: a finished
cell is read back, a half-run cell continues at its next turn (run folders resume,
``voicebench.runlog``), and verdicts already given are kept (judging folders resume). The
judges run at once, their requests bounded per provider (``[judging]`` in the file). What
happens is told through ``CampaignHooks``, so this module does the work and the caller decides
how to show it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Protocol

from voicebench._folder import claimed
from voicebench._jsonl import write_atomic
from voicebench.calling import CallProgress, converse
from voicebench.campaign.folder import PLAN_FILE, plan_record
from voicebench.campaign.plan import CampaignPlan, Cell
from voicebench.judging import JudgingResult, Verdict, judge_runs
from voicebench.rating import NothingToRateError, RatingTable, rate_judging
from voicebench.replaying import RunProgress, run_replay
from voicebench.reporting import BuiltReport, build_report
from voicebench.runlog import HEADER_FILE as RUN_HEADER
from voicebench.runlog import TurnRecord, read_turns


class CampaignHooks(Protocol):
    def status(self, message: str) -> None: ...

    def turn(self, progress: RunProgress) -> None: ...

    def cell(self, cell: Cell, records: list[TurnRecord]) -> None: ...

    def verdict(self, verdict: Verdict, done: int, total: int) -> None: ...

    def judged(self, result: JudgingResult) -> None: ...

    def rated(self, table: RatingTable | None, why_not: str | None) -> None: ...


RunCells = Callable[[CampaignPlan, Sequence[Cell], CampaignHooks], None]
"""Runs the cells into their run folders, telling ``hooks.cell`` as each one finishes."""


def replay_cell(
    cell: Cell,
    out_dir: Path,
    *,
    turn_timeout_s: float,
    seed: int,
    dialogues_path: Path | None = None,
    fixtures_dir: Path | None = None,
    progress: Callable[[RunProgress], None] | None = None,
) -> list[TurnRecord]:
    """One cell's run into ``out_dir``, resumed where it stopped; a worker elsewhere gives
    the paths of the cell's inputs there. A simulated cell's run is its calls."""
    if cell.seeker is not None:
        return _converse_cell(
            cell,
            out_dir,
            turn_timeout_s=turn_timeout_s,
            seed=seed,
            dialogues_path=dialogues_path or cell.dialogues_path,
            progress=progress,
        )
    return run_replay(
        cell.agent,
        spec_path=cell.spec_path,
        dialogues=list(cell.items),
        dialogues_path=dialogues_path or cell.dialogues_path,
        fixtures_dir=fixtures_dir or cell.fixtures_dir,
        out_dir=out_dir,
        turn_timeout_s=turn_timeout_s,
        progress=progress,
        scenarios=cell.scenarios,
        seed=seed,
        repeats=cell.repeats,
        final_only=cell.final_only,
    )


def _converse_cell(
    cell: Cell,
    out_dir: Path,
    *,
    turn_timeout_s: float,
    seed: int,
    dialogues_path: Path,
    progress: Callable[[RunProgress], None] | None,
) -> list[TurnRecord]:
    assert cell.seeker is not None
    total = len(cell.items) * cell.call_turns
    done = len(read_turns(out_dir)) if (out_dir / RUN_HEADER).exists() else 0

    def told(p: CallProgress) -> None:
        nonlocal done
        if p.record is not None and progress is not None:
            done += 1
            progress(RunProgress(done, total, p.record))

    asyncio.run(
        converse(
            cell.agent,
            spec_path=cell.spec_path,
            dialogues=list(cell.items),
            dialogues_path=dialogues_path,
            personas={c.id: c for c in cell.personas},
            seeker_spec=cell.seeker,
            out_dir=out_dir,
            turns=cell.call_turns,
            seed=seed,
            scenarios=cell.scenarios,
            turn_timeout_s=turn_timeout_s,
            progress=told,
        )
    )
    return read_turns(out_dir)


def run_cell(
    plan: CampaignPlan, cell: Cell, progress: Callable[[RunProgress], None] | None = None
) -> list[TurnRecord]:
    """One cell's run on this machine, into its folder in the campaign."""
    budgets = plan.spec.budgets
    return replay_cell(
        cell,
        plan.run_dir(cell),
        turn_timeout_s=budgets.turn_timeout_s,
        seed=plan.spec.seed,
        progress=progress,
    )


def run_here(plan: CampaignPlan, cells: Sequence[Cell], hooks: CampaignHooks) -> None:
    """The cells on this machine, one after another (``--backend local``)."""
    for k, cell in enumerate(cells, 1):
        hooks.status(f"cell {k}/{len(cells)}: {cell.key}")
        hooks.cell(cell, run_cell(plan, cell, hooks.turn))


def run_campaign(
    plan: CampaignPlan, hooks: CampaignHooks, run_cells: RunCells = run_here
) -> BuiltReport:
    """Run every cell, judge, rate and report; a re-run resumes each step."""
    with claimed(plan.out_dir, "campaign"):
        plan.out_dir.mkdir(parents=True, exist_ok=True)
        write_atomic(plan.out_dir / PLAN_FILE, plan_record(plan))
        run_cells(plan, plan.cells, hooks)
        return finish_campaign(plan, hooks)


async def _judge_all(plan: CampaignPlan, hooks: CampaignHooks) -> list[JudgingResult]:
    """Every judge over every variant's judged cells, at once; requests bounded per provider."""
    judged = [plan.run_dir(c) for c in plan.cells if c.judged]
    providers = plan.judge_providers
    limits = {p: asyncio.Semaphore(plan.spec.judging.bound(p)) for p in providers}
    hooks.status(
        f"judging {len(plan.spec.agents)} variants with {len(plan.judges)} judge(s); requests "
        "in flight: " + ", ".join(f"{p} {plan.spec.judging.bound(p)}" for p in sorted(limits))
    )
    return list(
        await asyncio.gather(
            *(
                judge_runs(
                    judged,
                    judge,
                    plan.judging_dir(judge),
                    concurrency=sum(plan.spec.judging.bound(p) for p in providers),
                    seed=plan.spec.seed,
                    pairs_per_item=plan.spec.judging.pairs_per_item,
                    on_status=hooks.status,
                    progress=hooks.verdict,
                    limits=limits,
                )
                for judge in plan.judges
            )
        )
    )


def finish_campaign(plan: CampaignPlan, hooks: CampaignHooks) -> BuiltReport:
    """Judge every variant's judged cells together with each judge, rate, and report."""
    budgets = plan.spec.budgets
    results = asyncio.run(_judge_all(plan, hooks)) if plan.judges else []
    for judge, result in zip(plan.judges, results, strict=True):
        hooks.judged(result)
        try:
            table = rate_judging(
                plan.judging_dir(judge),
                budget_ttfa_ms=budgets.ttfa_ms,
                budget_ttft_ms=budgets.ttft_ms,
            )
            hooks.rated(table, None)
        except NothingToRateError as exc:
            hooks.rated(None, str(exc))
    unjudged = [plan.run_dir(c) for c in plan.cells if not c.judged]
    paths = [plan.judging_dir(plan.judges[0]), *unjudged] if plan.judges else unjudged
    return build_report(
        paths,
        plan.out_dir / "report",
        title=plan.title,
        budget_ttft_ms=budgets.ttft_ms,
        budget_ttfa_ms=budgets.ttfa_ms,
        on_status=hooks.status,
        labels={plan.run_dir(c): c.label for c in plan.cells},
        audio_format=plan.spec.report.audio,
    )
