"""A campaign's steps (the demo's too) as the terminal shows them."""

from __future__ import annotations

from voicebench.api.views import (
    CampaignPlan,
    Cell,
    JudgeCard,
    JudgingResult,
    OwnFamily,
    RatingTable,
    RunProgress,
    TurnRecord,
    Verdict,
    read_header,
)
from voicebench.cli.common import Steps, show
from voicebench.cli.present.judging import show_judging, show_trust, verdict_line
from voicebench.cli.present.rating import show_rating
from voicebench.cli.present.runs import show_replay, turn_line
from voicebench.cli.present.withheld import ranks, show_withheld


class ShownJob:
    """A campaign's steps (the demo's too) as the terminal shows them."""

    def __init__(self, steps: Steps, plan: CampaignPlan) -> None:
        self.steps = steps
        self.plan = plan
        self.card: JudgeCard | None = None
        self.spec = "SPEC"
        self.own: tuple[OwnFamily, ...] = ()
        """The card and spec of the judge last judged (a judge's rating follows its judging),
        and the contestants a judge of their own family rated."""

    def status(self, message: str) -> None:
        self.steps.status(message)

    def turn(self, progress: RunProgress) -> None:
        self.steps.advance(progress.done, progress.total, turn_line(progress))

    def cell(self, cell: Cell, records: list[TurnRecord]) -> None:
        with self.steps.paused():
            run_dir = self.plan.run_dir(cell)
            show_replay(cell.agent, run_dir, records, read_header(run_dir).hosts)

    def verdict(self, verdict: Verdict, done: int, total: int) -> None:
        self.steps.advance(done, total, verdict_line(verdict, done, total))

    def judged(self, result: JudgingResult) -> None:
        self.card, self.spec, self.own = result.card, result.spec_path, result.own_family
        with self.steps.paused():
            show_judging(result, ranked=ranks(self.card))

    def rated(self, table: RatingTable | None, why_not: str | None) -> None:
        """The leaderboard under a judge that may rank; else the ranking withheld, for the
        latency table, the judge's card and how to bring one that can rank."""
        with self.steps.paused():
            if table is None:
                show(f"no leaderboard: {why_not}")
                if not ranks(self.card):
                    show_trust(self.card, self.spec, self.own)
            elif ranks(self.card):
                show_rating(table)
            else:
                show_withheld(table, self.card, self.spec, self.plan)
