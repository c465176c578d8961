"""The whole job on the embedded default, as ``voicebench demo`` runs it: a campaign of the
given agents on a slice of the built-in set, one cell each. Each agent's run goes in
``OUT/AGENT``, the judging of their final replies against each other and the human reference
replies in ``OUT/judging``, and the report in ``OUT/report``. Everything runs offline: the
local agents and the offline judge.

It runs, resumes and tells what happens (``CampaignHooks``) as a campaign does; only its plan
is made from the command's options instead of a campaign file.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from voicebench.agentspec import load_agent_spec
from voicebench.campaign import CampaignHooks, CampaignPlan, CampaignSpec, run_campaign
from voicebench.campaign.plan import lay_out
from voicebench.campaign.spec import (
    CampaignAgent,
    CampaignDialogues,
    JudgingLimits,
    ReportSettings,
)
from voicebench.dialogues import BUILTIN_DIALOGUES
from voicebench.errors import InputError
from voicebench.reporting import BuiltReport
from voicebench.reporting.replies import AudioFormat
from voicebench.runlog import default_run_dir
from voicebench.scenarios import barges_in


def missing_models(spec_path: Path) -> list[str]:
    """Packaged local models an agent or judge spec names that are neither installed (the
    ``offline-judge`` extra's) nor in the model cache; empty when it can run."""
    from voicebench._model import read_toml
    from voicebench.judging.scorer import ENCODER, encoder_installed
    from voicebench.llm.local import SPLIT_MODELS, split_model_available

    data = read_toml(spec_path)
    endpoints = [data.get("llm") or {}, *(data.get("judges") or [])]
    missing = []
    for e in endpoints:
        if e.get("provider") != "local":
            continue
        if e.get("model") in SPLIT_MODELS and not split_model_available(e["model"]):
            missing.append(e["model"])
        elif e.get("method") == "scorer" and not encoder_installed():
            missing.append(ENCODER)
    return missing


def plan_demo(
    agents: Sequence[Path],
    *,
    limit: int,
    out_dir: Path | None,
    judge_spec: Path | None,
    scenarios: Sequence[str] = (),
    seed: int = 0,
    final_only: bool = True,
    audio: AudioFormat = "wav",
) -> CampaignPlan:
    """Check the inputs before anything starts; the default folder is ``reports/runs/``.
    The judge's requests go one at a time (the local judge shares the machine).
    ``final_only``: replay only each item's final seeker turn, the one judged. ``audio``: how
    the report keeps the calls' recordings and the replies (``opus``: Opus in Ogg)."""
    names: list[str] = []
    for path in agents:
        name = load_agent_spec(path).name
        if name in names:
            raise InputError(
                f"agent name {name!r} is given twice; contestants need distinct names",
                file=path,
                field="name",
            )
        names.append(name)
    if final_only and barges_in(scenarios):
        raise InputError(
            "a barge-in talks over the reply to the turn before, which the demo does not play "
            "when it replays only each item's final turn: add --all-turns",
            field="scenario",
        )
    label = names[0] if len(names) == 1 else f"{len(names)}-agents"
    spec = CampaignSpec(
        name=f"demo {label}",
        agents=tuple(CampaignAgent(spec=str(path)) for path in agents),
        dialogues=(CampaignDialogues(path=str(BUILTIN_DIALOGUES), limit=limit),),
        scenarios=(tuple(scenarios),),
        judges=() if judge_spec is None else (str(judge_spec),),
        seed=seed,
        final_only=final_only,
        judging=JudgingLimits(concurrency=1),
        report=ReportSettings(audio=audio),
    )
    return lay_out(spec, out_dir or default_run_dir(label, "demo-"), file=None, flat=True)


def run_demo(plan: CampaignPlan, hooks: CampaignHooks) -> BuiltReport:
    """Replay, judge, rate and report; a re-run with the same folder resumes each step."""
    return run_campaign(plan, hooks)
