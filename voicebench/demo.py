"""The whole job on the embedded default, as ``voicebench demo`` runs it: replay a slice of the
built-in set through an agent, judge its final replies against the human reference replies,
rate, and write the report (``OUT/report``). Everything runs offline with the local agent and
the local smoke judge.

What happens is told through a ``DemoHooks`` (progress lines, tables), so this module does the
work and the caller decides how to show it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from voicebench.agentspec import AgentSpec, load_agent_spec
from voicebench.dialogues import BUILTIN_DIALOGUES, Dialogue, load_dialogues
from voicebench.fixtures import BUILTIN_FIXTURES
from voicebench.judging import JudgingResult, Verdict, run_judging
from voicebench.rating import NothingToRateError, RatingTable, rate_judging
from voicebench.replay import RunProgress, demo_items, run_replay
from voicebench.report import BuiltReport, build_report
from voicebench.runlog import TurnRecord, default_run_dir


class DemoHooks(Protocol):
    def status(self, message: str) -> None: ...

    def turn(self, progress: RunProgress) -> None: ...

    def replayed(self, spec: AgentSpec, out_dir: Path, records: list[TurnRecord]) -> None: ...

    def verdict(self, verdict: Verdict, done: int, total: int) -> None: ...

    def judged(self, result: JudgingResult) -> None: ...

    def rated(self, table: RatingTable | None, why_not: str | None) -> None: ...


@dataclass(frozen=True)
class DemoPlan:
    spec: AgentSpec
    spec_path: Path
    items: list[Dialogue]
    out_dir: Path
    judge_spec: Path | None


def plan_demo(
    agent: Path, *, limit: int, out_dir: Path | None, judge_spec: Path | None
) -> DemoPlan:
    """Check the inputs before anything starts; the default folder is ``reports/runs/``."""
    spec = load_agent_spec(agent)
    items = demo_items(load_dialogues(BUILTIN_DIALOGUES), limit)
    return DemoPlan(spec, agent, items, out_dir or default_run_dir(spec.name, "demo-"), judge_spec)


def run_demo(plan: DemoPlan, hooks: DemoHooks) -> BuiltReport:
    """Replay, judge, rate and report; a re-run with the same folder resumes each step."""
    spec, out_dir = plan.spec, plan.out_dir
    hooks.status(f"demo: {len(plan.items)} items through {spec.name} ({spec.id}) -> {out_dir}")
    records = run_replay(
        spec,
        spec_path=plan.spec_path,
        dialogues=plan.items,
        dialogues_path=BUILTIN_DIALOGUES,
        fixtures_dir=BUILTIN_FIXTURES,
        out_dir=out_dir,
        progress=hooks.turn,
    )
    hooks.replayed(spec, out_dir, records)
    if plan.judge_spec is not None:
        judged = out_dir / "judging"
        hooks.status(f"judging {spec.name} against the human reference replies -> {judged}")
        hooks.judged(
            run_judging(
                [out_dir],
                plan.judge_spec,
                judged,
                concurrency=1,
                on_status=hooks.status,
                progress=hooks.verdict,
            )
        )
        try:
            hooks.rated(rate_judging(judged), None)
        except NothingToRateError as exc:
            hooks.rated(None, str(exc))
    return build_report([out_dir], out_dir / "report", on_status=hooks.status)
