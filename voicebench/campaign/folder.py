"""A finished campaign folder read back: what its report is made from.

``campaign.json`` says what the campaign was (``voicebench.campaign.run.plan_record``); this
module reads it so that ``voicebench report`` on a campaign or demo folder makes the report the
campaign made, from the same judging folder and runs, under the same labels and budgets, wherever
the folder has been moved since.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from voicebench._model import read_model
from voicebench.campaign.spec import Budgets, CampaignSpec, slug
from voicebench.errors import InputError
from voicebench.judging.store import HEADER_FILE as JUDGING_HEADER

PLAN_FILE = "campaign.json"


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


def is_campaign(folder: Path) -> bool:
    return (folder / PLAN_FILE).is_file()


def report_inputs(folder: Path) -> CampaignReportInputs:
    """What ``finish_campaign`` made the report of ``folder`` from, found in the folder itself:
    a cell's runs are in ``cells/KEY`` (the demo's in ``VARIANT``), a judge's verdicts in
    ``judging/JUDGE`` (the demo's in ``judging``)."""
    record = read_model(CampaignRecord, folder / PLAN_FILE)

    def run_dir(cell: PlannedCell) -> Path:
        nested = folder / "cells" / cell.key
        return nested if nested.is_dir() else folder / cell.variant

    runs = {cell.key: run_dir(cell) for cell in record.cells}
    missing = [str(p) for p in runs.values() if not p.is_dir()]
    if missing:
        raise InputError(
            f"the campaign's run folder {missing[0]} is missing (run the campaign again to "
            "finish it)",
            file=folder / PLAN_FILE,
        )
    paths = [runs[c.key] for c in record.cells if not c.judged]
    if record.judges:
        flat = folder / "judging"
        judging = (
            flat if (flat / JUDGING_HEADER).exists() else flat / slug(Path(record.judges[0]).stem)
        )
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
    )
