"""``campaign`` and ``demo`` from Python: agents, settings, dialogue sets, scenarios and judges
run cell by cell, judged together, rated and reported in one resumable folder."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from pathlib import Path

from voicebench import builtin
from voicebench.api.results import PathLike
from voicebench.campaign import CampaignHooks, CampaignPlan, run_here
from voicebench.campaign import plan_campaign as lay_out_campaign
from voicebench.campaign import run_campaign as run_cells_judge_report
from voicebench.campaign.cluster import run_on_ray  # Ray itself is loaded when cells run on it
from voicebench.campaign.run import RunCells
from voicebench.demo import missing_models, plan_demo
from voicebench.demo import run_demo as run_demo_plan
from voicebench.errors import InputError
from voicebench.reporting import BuiltReport
from voicebench.reporting.replies import AudioFormat

BACKENDS = ("local", "ray")


def plan_campaign(file: PathLike, *, out: PathLike | None = None) -> CampaignPlan:
    """Load everything a campaign file names and lay out its cells; nothing runs. The plan
    says how many cells, turns, hours of real-time audio and judge calls it holds."""
    return lay_out_campaign(Path(file), Path(out) if out is not None else None)


def run_campaign(
    plan: CampaignPlan,
    hooks: CampaignHooks,
    *,
    backend: str = "local",
    address: str | None = None,
    workers: int | None = None,
) -> BuiltReport:
    """Run a planned campaign: every cell (one run folder each) here one after another, or as
    Ray tasks (``backend="ray"``, on the cluster at ``address`` or a local instance, at most
    ``workers`` cells at once), then judge, rate and report. ``hooks`` is told each step.
    Running it again resumes: finished cells and verdicts are kept."""
    if backend not in BACKENDS:
        raise InputError(f"must be {' or '.join(BACKENDS)}", field="backend")
    if backend == "local" and (address is not None or workers is not None):
        raise InputError(
            "address and workers need the ray backend (here cells run one after another)",
            field="backend",
        )
    run_cells: RunCells = run_here
    if backend == "ray":
        run_cells = functools.partial(run_on_ray, address=address, workers=workers)
    return run_cells_judge_report(plan, hooks, run_cells)


def demo_plan(
    agents: Sequence[PathLike] | None = None,
    *,
    limit: int = 6,
    out: PathLike | None = None,
    judge: PathLike | None = None,
    no_judge: bool = False,
    scenarios: Sequence[str] = (),
    seed: int = 0,
    all_turns: bool = False,
    audio: AudioFormat = "wav",
    on_note: Callable[[str], None] | None = None,
) -> CampaignPlan:
    """The demo laid out as a campaign: the given agents (default the two local ones, the
    second only when its model is installed) on the first ``limit`` built-in items, judged
    by ``judge`` (default the offline judge, or the smoke judge when its model is missing)
    unless ``no_judge``. Each item's final seeker turn is replayed (the judged one, on its
    written history), or with ``all_turns`` every seeker turn. The report keeps the calls'
    recordings and the replies as ``audio`` says (``"opus"``: Opus in Ogg, about a tenth of
    the size). ``on_note`` is told what was left out, and why."""
    note = on_note or (lambda _: None)
    if agents is None:
        paths = [builtin.DEFAULT_AGENT]
        missing = missing_models(builtin.SECOND_AGENT)
        if missing:
            note(
                f"second agent skipped: {', '.join(missing)} is not installed "
                "(pip install 'voicebench-heart[offline-judge]')"
            )
        else:
            paths.append(builtin.SECOND_AGENT)
    else:
        paths = [builtin.spec_path("agents", a) for a in agents]
    judge_path = builtin.spec_path("judges", judge) if judge is not None else None
    if judge_path is None and not no_judge:
        missing = missing_models(builtin.OFFLINE_JUDGE)
        judge_path = builtin.SMOKE_JUDGE if missing else builtin.OFFLINE_JUDGE
        if missing:
            note(
                f"offline judge unavailable ({', '.join(missing)} is not installed: pip "
                "install 'voicebench-heart[offline-judge]'); judging with the smoke judge"
            )
    return plan_demo(
        paths,
        limit=limit,
        out_dir=Path(out) if out is not None else None,
        judge_spec=None if no_judge else judge_path,
        scenarios=tuple(scenarios),
        seed=seed,
        final_only=not all_turns,
        audio=audio,
    )


def run_demo(plan: CampaignPlan, hooks: CampaignHooks) -> BuiltReport:
    """Run the demo ``demo_plan`` laid out: replay, judge, rate and report; a re-run with the
    same folder resumes each step."""
    return run_demo_plan(plan, hooks)
