"""A campaign's steps (the demo's too) as the terminal shows them."""

from __future__ import annotations

from voicebench.api.views import (
    CampaignPlan,
    Cell,
    JudgingResult,
    RatingTable,
    RunProgress,
    TurnRecord,
    Verdict,
    read_header,
)
from voicebench.cli.common import Steps, show
from voicebench.cli.present.judging import show_judging, verdict_line
from voicebench.cli.present.rating import show_rating
from voicebench.cli.present.runs import show_replay, turn_line


class ShownJob:
    """A campaign's steps (the demo's too) as the terminal shows them."""

    def __init__(self, steps: Steps, plan: CampaignPlan) -> None:
        self.steps = steps
        self.plan = plan

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
        with self.steps.paused():
            show_judging(result)

    def rated(self, table: RatingTable | None, why_not: str | None) -> None:
        with self.steps.paused():
            if table is None:
                show(f"no leaderboard: {why_not}")
            else:
                show_rating(table)
