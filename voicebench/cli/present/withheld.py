"""What the demo and a campaign print in place of the ranking when their judge's card does not
clear the trust bars (``JudgeCard.trusted``), on one screen: the latency table, why the
ranking is withheld (the judge's card), and how to bring a judge that can rank and judge the
same runs with it. The ranking itself stays where a person asks for it: the judging folder's
``ratings.json``, ``voicebench rate`` and the report, each as indicative only."""

from __future__ import annotations

from pathlib import Path

from voicebench import api
from voicebench.api import TTFA_BUDGET_MS, TTFT_BUDGET_MS
from voicebench.api.views import (
    TRUSTED_ACCURACY,
    TRUSTED_MARGIN,
    CampaignPlan,
    JudgeCard,
    RatingTable,
    card_line,
    family_lines,
    own_family_of,
)
from voicebench.cli.common import out, show
from voicebench.cli.present.rating import human_ladder_table, latency_table, people_lines

LOCAL_SERVER = "openai-compatible"
"""The shipped spec for a model of one's own on an OpenAI-compatible server."""
HOSTED = ("openai", "anthropic")
"""The shipped specs of hosted judges."""
REJUDGED = "rejudged"
"""The folder, in the demo's or campaign's, that the commands shown judge the runs again in."""
REPORT = "report-rejudged"
"""And the folder of their report."""


def ranks(card: JudgeCard | None) -> bool:
    """Whether a judge with this card may rank: measured, and clearing the trust bars."""
    return card is not None and card.trusted


def _shown(path: Path) -> Path:
    """A path as short as it is still right from here."""
    try:
        return path.relative_to(Path.cwd())
    except ValueError:
        return path


def _options(table: RatingTable, plan: CampaignPlan) -> tuple[str, str]:
    """The judging's and the rating's own settings where they are not the commands' defaults:
    what ``voicebench judge`` and ``report`` (or ``rate``) need to do the same again."""
    judging = ""
    if plan.spec.judging.pairs_per_item is not None:
        judging = f" --pairs-per-item {plan.spec.judging.pairs_per_item} --seed {plan.spec.seed}"
    budgets = ""
    if table.budget_ttfa_ms != TTFA_BUDGET_MS:
        budgets += f" --budget-ttfa-ms {table.budget_ttfa_ms:g}"
    if table.budget_ttft_ms != TTFT_BUDGET_MS:
        budgets += f" --budget-ttft-ms {table.budget_ttft_ms:g}"
    return judging, budgets


def how_to_rank(table: RatingTable, plan: CampaignPlan) -> list[str]:
    """Judges that can rank, as shipped specs name them, and the commands that measure one and
    judge and report the same runs with it."""
    server = api.judge_spec(LOCAL_SERVER).judges[0]
    copy = _shown(api.shared.spec_path("judges", LOCAL_SERVER))
    hosted = [(name, api.judge_spec(name).judges[0]) for name in HOSTED]
    runs = " ".join(
        str(_shown(Path(r))) for r in api.Judging.load(table.judging_dir).header.run_dirs
    )
    out_dir, judging_dir = _shown(plan.out_dir), _shown(Path(table.judging_dir))
    judging, budgets = _options(table, plan)
    return [
        "to rank, bring a judge (SPEC) that clears them, measure it and judge the same runs:",
        f"  {LOCAL_SERVER}: a bigger model on your own server (vLLM, Ollama, llama.cpp): as "
        "shipped,",
        f"    {server.model} at {server.base_url}; edit a copy of {copy}",
        "  " + " or ".join(f"{name} ({j.model}; set {j.api_key_env})" for name, j in hosted),
        "  voicebench judge-check --judge SPEC --gold real",
        f"  voicebench judge {runs} --judge SPEC --out {out_dir / REJUDGED}{judging}",
        f"  voicebench report {out_dir / REJUDGED} --out {out_dir / REPORT}{budgets}",
        f"its ranking, indicative only: voicebench rate {judging_dir}{budgets}, and the report",
    ]


def show_withheld(
    table: RatingTable, card: JudgeCard | None, spec: str, plan: CampaignPlan
) -> None:
    """The latency table, the people's own ladder when they rated, the trust bars and the
    judge's card that falls short of them (with its figure on the family of each agent a
    judge of its own family rated), and how to rank."""
    own = own_family_of(Path(table.judging_dir))
    out.print(latency_table(table, own))
    if table.people is not None:  # people's votes, not the judge's verdicts
        out.print(human_ladder_table(table.people))
        for line in people_lines(table.people):
            show(line)
    show(
        f"quality ranking withheld: a judge ranks at {100 * TRUSTED_ACCURACY:.0f}% right, "
        f"{100 * TRUSTED_MARGIN:.0f} points over the best trivial rule; this one's card:",
        style="bold",
    )
    show(card_line(card, spec))
    for line in family_lines(card, own):
        show(line, style="yellow")
    for line in how_to_rank(table, plan):
        show(line)
