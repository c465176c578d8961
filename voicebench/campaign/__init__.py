"""Campaigns: many agents, settings, dialogue sets, scenarios and judges in one resumable
command (``voicebench campaign``), its cells run here or on a Ray cluster
(``voicebench.campaign.cluster``, imported on demand: Ray is an optional extra)."""

from voicebench.campaign.plan import CampaignPlan, Cell, plan_campaign
from voicebench.campaign.run import (
    CampaignHooks,
    finish_campaign,
    run_campaign,
    run_cell,
    run_here,
)
from voicebench.campaign.spec import CampaignSpec, load_campaign

__all__ = [
    "CampaignHooks",
    "CampaignPlan",
    "CampaignSpec",
    "Cell",
    "finish_campaign",
    "load_campaign",
    "plan_campaign",
    "run_campaign",
    "run_cell",
    "run_here",
]
