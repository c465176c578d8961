"""A campaign folder's ``campaign.json``, written and read back here: it says what the
campaign was, for people and for a resume to check, and ``voicebench report`` on a campaign or
demo folder reads it to make the report the campaign made, from the same judging folder and
runs, under the same labels and budgets, wherever the folder has been moved since.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from voicebench._model import read_model
from voicebench.campaign.plan import CampaignPlan, cell_folder, judging_folder
from voicebench.campaign.spec import Budgets, CampaignSpec
from voicebench.errors import InputError
from voicebench.judging.store import HEADER_FILE as JUDGING_HEADER
from voicebench.reporting.replies import AudioFormat

PLAN_FILE = "campaign.json"


def plan_record(plan: CampaignPlan) -> str:
    """``campaign.json``: what the campaign is, for people and for a resume to check."""
    cells = [
        {
            "key": c.key,
            "label": c.label,
            "variant": c.variant,
            "run_dir": str(plan.run_dir(c)),
            "dialogues": str(c.dialogues_path),
            "items": [d.id for d in c.items],
            "scenarios": list(c.scenarios),
            "judged": c.judged,
            "turns": c.turns,
            "cpus": c.cpus,
        }
        for c in plan.cells
    ]
    record = {
        "campaign": plan.spec.model_dump(mode="json"),
        "file": None if plan.file is None else str(plan.file),
        "cells": cells,
        "judges": [str(j) for j in plan.judges],
        "title": plan.title,
    }
    return json.dumps(record, indent=2) + "\n"


class _Read(BaseModel):
    """Read for a report: the fields it needs, the rest of the record ignored."""

    model_config = ConfigDict(frozen=True, extra="ignore")


class PlannedCell(_Read):
    key: str
    label: str
    variant: str
    judged: bool


class CampaignRecord(_Read):
    """``campaign.json``, the parts a report needs."""

    campaign: CampaignSpec
    cells: list[PlannedCell]
    judges: list[str]
    title: str | None = None


@dataclass(frozen=True)
class CampaignReportInputs:
    paths: list[Path]
    """The first judge's judging folder (its runs come with it) and the unjudged cells' runs."""
    labels: dict[Path, str]
    """Each cell's run folder and its name in the report."""
    title: str | None
    budgets: Budgets
    audio: AudioFormat
    """How the campaign's report keeps its audio (``[report] audio``)."""


def is_campaign(folder: Path) -> bool:
    return (folder / PLAN_FILE).is_file()


def report_inputs(folder: Path) -> CampaignReportInputs:
    """What ``finish_campaign`` made the report of ``folder`` from, found in the folder itself:
    a cell's runs are in ``cells/KEY`` (the demo's in ``VARIANT``), a judge's verdicts in
    ``judging/JUDGE`` (the demo's in ``judging``)."""
    record = read_model(CampaignRecord, folder / PLAN_FILE)
    flat = not (folder / "cells").is_dir()  # the demo's layout
    runs = {c.key: cell_folder(folder, c.key, c.variant, flat=flat) for c in record.cells}
    missing = [str(p) for p in runs.values() if not p.is_dir()]
    if missing:
        raise InputError(
            f"the campaign's run folder {missing[0]} is missing (run the campaign again to "
            "finish it)",
            file=folder / PLAN_FILE,
        )
    paths = [runs[c.key] for c in record.cells if not c.judged]
    if record.judges:
        judging = judging_folder(folder, Path(record.judges[0]), flat=flat)
        if not (judging / JUDGING_HEADER).exists():
            raise InputError(
                f"the campaign has not been judged yet ({judging} is missing); run it again to "
                "finish it",
                file=folder / PLAN_FILE,
            )
        paths.insert(0, judging)
    return CampaignReportInputs(
        paths=paths,
        labels={runs[c.key]: c.label for c in record.cells},
        title=record.title,
        budgets=record.campaign.budgets,
        audio=record.campaign.report.audio,
    )
