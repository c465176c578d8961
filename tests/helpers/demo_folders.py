"""A demo's folder as ``voicebench demo --no-judge`` leaves it, without replaying anything:
``campaign.json`` and a finished run per agent in ``OUT/AGENT``, each final turn with its
call recording in ``calls/``."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from synthetic_runs import MS, make_run

from voicebench import builtin
from voicebench._jsonl import write_atomic
from voicebench.campaign.folder import PLAN_FILE, plan_record
from voicebench.campaign.plan import CampaignPlan, lay_out
from voicebench.campaign.spec import CampaignAgent, CampaignDialogues, CampaignSpec
from voicebench.fixtures.audio import write_wav
from voicebench.runlog import CallRef, read_turns


def demo_plan(out: Path, names: tuple[str, ...] = ("fast", "slow"), **spec: object) -> CampaignPlan:
    """The demo's plan for the folder ``out``: the scripted agent under each of ``names`` on
    two built-in items (``spec`` sets more of the campaign, as the demo's options do)."""
    scripted = str(builtin.spec_path("agents", "scripted"))
    return lay_out(
        CampaignSpec.model_validate(
            {
                "name": "demo 2-agents",
                "agents": [CampaignAgent(spec=scripted, name=n) for n in names],
                "dialogues": [CampaignDialogues(path=str(builtin.DIALOGUES), limit=2)],
                "final_only": True,
                **spec,
            }
        ),
        out,
        file=None,
        flat=True,
    )


def demo_folder(out: Path, names: tuple[str, ...] = ("fast", "slow"), **spec: object) -> Path:
    """The folder ``out`` of ``demo_plan(out, names, **spec)``, its runs made."""
    plan = demo_plan(out, names, **spec)
    for k, cell in enumerate(plan.cells):
        run = make_run(plan.out_dir, cell.variant, cell.items, 900 + 400 * k)
        _with_calls(run, seed=k)
    out.mkdir(parents=True, exist_ok=True)
    write_atomic(out / PLAN_FILE, plan_record(plan))
    return out


def _with_calls(run: Path, seed: int) -> None:
    """Each turn's call: its caller's end of speech 1 s into a 3 s two-channel recording of
    noise of its own."""
    turns = []
    for n, t in enumerate(read_turns(run)):
        name = f"calls/{t.dialogue_id}.wav"
        noise = np.random.default_rng([seed, n]).normal(0, 3000, (3 * 16_000, 2))
        write_wav(run / name, noise.astype(np.int16), 16_000)
        turns.append(t.model_copy(update={"call": CallRef(path=name, start_ns=-1000 * MS)}))
    (run / "turns.jsonl").write_text("".join(t.model_dump_json() + "\n" for t in turns))
