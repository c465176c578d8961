"""The ``campaign`` command: a matrix of agents, settings, sets, scenarios and judges."""

from __future__ import annotations

import enum
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from voicebench import api
from voicebench.api.views import CampaignPlan, Cell, TurnRecord
from voicebench.cli.common import (
    Steps,
    VerboseOpt,
    commands,
    on_interrupt,
    out,
    quiet_libraries,
    show,
)
from voicebench.cli.present.fit import titled
from voicebench.cli.present.job import ShownJob
from voicebench.cli.present.report import show_report

app = commands()


class Backend(enum.StrEnum):
    local = "local"
    ray = "ray"


def show_plan(plan: CampaignPlan) -> None:
    table = Table(title=titled(f"campaign {plan.spec.name} -> {plan.out_dir}"))
    for column in ("cell", "items", "turns", "scenarios", "judged", "CPUs"):
        table.add_column(column, justify="left" if column in ("cell", "scenarios") else "right")
    for c in plan.cells:
        table.add_row(
            c.key,
            str(len(c.items)),
            str(c.turns),
            ", ".join(c.scenarios) or "clean",
            "yes" if c.judged else "-",
            f"{c.cpus:g}",
        )
    out.print(table)
    judges = ", ".join(j.name for j in plan.judges) or "none"
    show(
        f"{len(plan.cells)} cells, {plan.turns} turns, about {plan.audio_hours:.2f} h of real-time "
        f"audio; judges: {judges}, up to {plan.judge_calls} judge calls"
    )


@app.command()
def campaign(
    file: Annotated[Path, typer.Argument(help="The campaign file (TOML).")],
    out_dir: Annotated[
        Path | None,
        typer.Option(
            "--out",
            "-o",
            help="Campaign folder (default reports/campaigns/NAME); an existing one is resumed.",
        ),
    ] = None,
    plan_only: Annotated[bool, typer.Option("--plan", help="Print the plan and stop.")] = False,
    backend: Annotated[
        Backend,
        typer.Option(
            help="Where the cells run: here, one after another, or as Ray tasks (pip install "
            "'voicebench-heart[ray]').",
        ),
    ] = Backend.local,
    address: Annotated[
        str | None,
        typer.Option(
            help="A Ray cluster to join, HOST:6379, from a machine of the cluster (cells stream "
            "their files back to it); without it a local instance is started on 127.0.0.1 and "
            "stopped at the end.",
        ),
    ] = None,
    workers: Annotated[
        int | None,
        typer.Option(
            min=1,
            help="With --backend ray: at most this many cells at once (default: as many as "
            "the cluster's CPUs allow, each cell declaring its own).",
        ),
    ] = None,
    verbose: VerboseOpt = False,
) -> None:
    """Run a campaign: print its plan (cells, turns, hours of real-time audio, judge calls),
    run every cell (one run folder each), judge all variants together with each judge, rate
    and write one report; a judge's leaderboard is printed only when its card clears the trust
    bars (else the latency table, its card and how to bring a judge that can rank). Running it
    again resumes: finished cells and verdicts are kept, a half-run cell continues where it
    stopped. With --backend ray the cells run as Ray tasks, a lost worker's cell continuing on
    another."""
    quiet_libraries(verbose)
    plan = api.plan_campaign(file, out=out_dir)
    show_plan(plan)
    if plan_only:
        return
    on_interrupt(
        f"finished turns and verdicts are kept in {plan.out_dir}: run the same command again "
        "to resume"
    )

    class Shown(ShownJob):
        def cell(self, cell: Cell, records: list[TurnRecord]) -> None:
            super().cell(cell, records)
            show(f"cell {cell.key} done")

    with Steps("campaign") as s:
        built = api.run_campaign(
            plan, Shown(s, plan), backend=backend.value, address=address, workers=workers
        )
    show_report(built, card=False)
