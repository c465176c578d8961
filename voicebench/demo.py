"""The whole job on the embedded default, as ``voicebench demo`` runs it: replay a slice of the
built-in set through each agent (``OUT/AGENT``), judge their final replies against each other
and the human reference replies (``OUT/judging``), rate, and write the report
(``OUT/report``). Everything runs offline: the local agents and the offline judge.

What happens is told through a ``DemoHooks`` (progress lines, tables), so this module does the
work and the caller decides how to show it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from voicebench.agentspec import AgentSpec, load_agent_spec
from voicebench.dialogues import BUILTIN_DIALOGUES, Dialogue, load_dialogues
from voicebench.errors import InputError
from voicebench.fixtures import BUILTIN_FIXTURES
from voicebench.judging import JudgingResult, Verdict, run_judging
from voicebench.rating import NothingToRateError, RatingTable, rate_judging
from voicebench.replaying import RunProgress, demo_items, run_replay
from voicebench.reporting import BuiltReport, build_report
from voicebench.runlog import TurnRecord, default_run_dir
from voicebench.scenarios import parse_scenario


class DemoHooks(Protocol):
    def status(self, message: str) -> None: ...

    def turn(self, progress: RunProgress) -> None: ...

    def replayed(self, spec: AgentSpec, out_dir: Path, records: list[TurnRecord]) -> None: ...

    def verdict(self, verdict: Verdict, done: int, total: int) -> None: ...

    def judged(self, result: JudgingResult) -> None: ...

    def rated(self, table: RatingTable | None, why_not: str | None) -> None: ...


@dataclass(frozen=True)
class DemoAgent:
    spec: AgentSpec
    spec_path: Path
    run_dir: Path


@dataclass(frozen=True)
class DemoPlan:
    agents: list[DemoAgent]
    items: list[Dialogue]
    out_dir: Path
    judge_spec: Path | None
    scenarios: tuple[str, ...] = ()
    """``--scenario`` options for every agent's run (``voicebench.scenarios``)."""
    seed: int = 0


def missing_models(spec_path: Path) -> list[str]:
    """Packaged local models an agent or judge spec names that are not installed (the
    ``offline-judge`` extra's); empty when it can run."""
    from voicebench._model import read_toml
    from voicebench.llm.local import SPLIT_MODELS, split_model_installed

    data = read_toml(spec_path)
    endpoints = [data.get("llm") or {}, *(data.get("judges") or [])]
    return [
        e["model"]
        for e in endpoints
        if e.get("provider") == "local"
        and e.get("model") in SPLIT_MODELS
        and not split_model_installed(e["model"])
    ]


def plan_demo(
    agents: Sequence[Path],
    *,
    limit: int,
    out_dir: Path | None,
    judge_spec: Path | None,
    scenarios: Sequence[str] = (),
    seed: int = 0,
) -> DemoPlan:
    """Check the inputs before anything starts; the default folder is ``reports/runs/``.
    Each agent's run goes in ``OUT/AGENT_NAME``."""
    specs = [(load_agent_spec(path), path) for path in agents]
    names = [spec.name for spec, _ in specs]
    for spec, path in specs:
        if names.count(spec.name) > 1:
            raise InputError(
                f"agent name {spec.name!r} is given twice; contestants need distinct names",
                file=path,
                field="name",
            )
    items = demo_items(load_dialogues(BUILTIN_DIALOGUES), limit)
    label = names[0] if len(names) == 1 else f"{len(names)}-agents"
    out_dir = out_dir or default_run_dir(label, "demo-")
    planned = [DemoAgent(spec, path, out_dir / spec.name) for spec, path in specs]
    for text in scenarios:
        parse_scenario(text)  # a bad --scenario stops the demo before anything runs
    return DemoPlan(planned, items, out_dir, judge_spec, tuple(scenarios), seed)


def run_demo(plan: DemoPlan, hooks: DemoHooks) -> BuiltReport:
    """Replay, judge, rate and report; a re-run with the same folder resumes each step."""
    out_dir = plan.out_dir
    who = ", ".join(f"{a.spec.name} ({a.spec.id})" for a in plan.agents)
    hooks.status(f"demo: {len(plan.items)} items through {who} -> {out_dir}")
    for agent in plan.agents:
        records = run_replay(
            agent.spec,
            spec_path=agent.spec_path,
            dialogues=plan.items,
            dialogues_path=BUILTIN_DIALOGUES,
            fixtures_dir=BUILTIN_FIXTURES,
            out_dir=agent.run_dir,
            progress=hooks.turn,
            scenarios=plan.scenarios,
            seed=plan.seed,
        )
        hooks.replayed(agent.spec, agent.run_dir, records)
    run_dirs = [a.run_dir for a in plan.agents]
    if plan.judge_spec is not None:
        judged = out_dir / "judging"
        hooks.status(
            f"judging {', '.join(a.spec.name for a in plan.agents)} and the human reference "
            f"replies -> {judged}"
        )
        hooks.judged(
            run_judging(
                run_dirs,
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
    # A judging folder brings its runs into the report.
    paths = [out_dir / "judging"] if plan.judge_spec is not None else run_dirs
    return build_report(paths, out_dir / "report", on_status=hooks.status)
