"""The ``converse`` command: simulated seekers calling the agent."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from voicebench import api
from voicebench.api import TURN_TIMEOUT_S
from voicebench.cli.common import (
    DEFAULT_DIALOGUES,
    TURNS_EXIT_HELP,
    AgentOpt,
    DialoguesOpt,
    FailOnErrorOpt,
    ScenarioOpt,
    Steps,
    VerboseOpt,
    commands,
    exit_on_failed_turns,
    on_interrupt,
    quiet_libraries,
)
from voicebench.cli.present.calls import call_line, show_calls
from voicebench.cli.present.runs import show_replay

app = commands()


@app.command(epilog=TURNS_EXIT_HELP.format(some="an agent turn succeeded", none="none did"))
def converse(
    agent: AgentOpt,
    seeker: Annotated[
        Path | None,
        typer.Option(
            help="Seeker spec: a TOML file with an [llm] table (provider, model, ...). "
            "Default: the packaged Qwen2.5-Coder-1.5B on llama.cpp (the offline-judge extra)."
        ),
    ] = None,
    turns: Annotated[
        int, typer.Option("--turns", "-t", min=1, max=50, help="Most caller lines per call.")
    ] = 6,
    limit: Annotated[
        int | None, typer.Option("--limit", "-n", min=1, help="Call only the first N items.")
    ] = None,
    ids: Annotated[
        list[str] | None, typer.Option("--id", help="Call as this item's seeker (repeatable).")
    ] = None,
    dialogues: DialoguesOpt = DEFAULT_DIALOGUES,
    personas: Annotated[
        Path | None,
        typer.Option(
            help="Persona cards (JSONL). Default: the dialogue set's own (NAME.personas.jsonl "
            "beside it, as an ESConv import writes them), else the built-in cards; an item "
            "without one gets a card derived from it."
        ),
    ] = None,
    out_dir: Annotated[
        Path | None,
        typer.Option(
            "--out",
            "-o",
            help="Calls folder (default reports/runs/calls-AGENT-TIMESTAMP); an existing one "
            "is resumed call by call.",
        ),
    ] = None,
    scenario: ScenarioOpt = None,
    seed: Annotated[
        int, typer.Option(help="Fixes each turn's scenario draw and the seeker's cache key.")
    ] = 0,
    turn_timeout: Annotated[
        float, typer.Option(min=1.0, max=600.0, help="Seconds an agent turn may take.")
    ] = TURN_TIMEOUT_S,
    fail_on_error: FailOnErrorOpt = False,
    verbose: VerboseOpt = False,
) -> None:
    """Simulated calls: an LLM plays each item's seeker from its persona card, live. Each
    line is spoken with Piper into the agent in real time and the agent's turn is timed as a
    replayed one; the seeker hears the agent's reply as transcribed from its audio. A call
    ends at --turns lines, at the seeker's goodbye, at a failed agent turn, or when the seeker
    broke role twice (invalid). Writes a run (every agent turn), calls.jsonl (each call, its
    ending and the seeker's own report) and items.jsonl with fixtures/ (each call as an item
    that `voicebench run` replays against any agent)."""
    quiet_libraries(verbose)
    target = out_dir or api.run_folder(agent, prefix="calls-")
    on_interrupt(f"finished calls are kept in {target}: run again with --out {target} to resume")
    with Steps("calls") as s:
        done = s.advance
        result = api.converse(
            agent,
            dialogues,
            seeker=seeker,
            personas=personas,
            out=target,
            limit=limit,
            ids=ids,
            turns=turns,
            scenarios=scenario or (),
            seed=seed,
            turn_timeout_s=turn_timeout,
            progress=lambda p: done(p.call - (p.finished is None), p.calls, call_line(p)),
        )
    records = list(result.run.records)
    show_replay(result.run.header.agent, target, records, result.run.header.hosts)
    show_calls(target, list(result.calls), records)
    summary = result.run.summary
    exit_on_failed_turns(
        [(result.run.header.agent.name, summary.turns, summary.failed)],
        fail_on_error=fail_on_error,
    )
