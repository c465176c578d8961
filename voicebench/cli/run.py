"""Replay commands: ``synth``, ``run``, ``demo`` and ``summary``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from voicebench import api
from voicebench.api import TURN_TIMEOUT_S, shared
from voicebench.cli.common import (
    DEFAULT_DIALOGUES,
    DEFAULT_FIXTURES,
    TURNS_EXIT_HELP,
    AgentOpt,
    AudioChoice,
    DialoguesOpt,
    FailOnErrorOpt,
    FixturesOpt,
    ScenarioOpt,
    Steps,
    VerboseOpt,
    agent_spec,
    audio_format,
    commands,
    exit_on_failed_turns,
    judge_spec,
    on_interrupt,
    out,
    quiet_libraries,
    say,
    show,
)
from voicebench.cli.present.hosts import show_hosts
from voicebench.cli.present.job import ShownJob
from voicebench.cli.present.report import show_report
from voicebench.cli.present.runs import (
    show_passes,
    show_replay,
    show_reported,
    show_scenarios,
    summary_table,
    turn_line,
)

app = commands()


@app.command()
def synth(
    dialogues: DialoguesOpt = DEFAULT_DIALOGUES, fixtures: FixturesOpt = DEFAULT_FIXTURES
) -> None:
    """Speak every seeker turn with the packaged Piper voice; only what is missing is
    synthesized."""
    report = api.synth(
        dialogues, fixtures, progress=lambda n, total: say(f"synthesized {n}/{total}")
    )
    show(
        f"{report.synthesized} synthesized, {report.reused} already there; "
        f"manifest: {report.folder / 'manifest.json'}"
    )


def _resume_note(out_dir: Path) -> str:
    return f"finished turns are kept in {out_dir}: run again with --out {out_dir} to resume"


@app.command(epilog=TURNS_EXIT_HELP.format(some="a turn succeeded", none="none did"))
def run(
    agent: AgentOpt,
    out_dir: Annotated[
        Path | None,
        typer.Option(
            "--out",
            "-o",
            help="Run directory (default reports/runs/AGENT-TIMESTAMP). "
            "An existing run directory is resumed.",
        ),
    ] = None,
    dialogues: DialoguesOpt = DEFAULT_DIALOGUES,
    fixtures: FixturesOpt = DEFAULT_FIXTURES,
    limit: Annotated[
        int | None, typer.Option("--limit", "-n", min=1, help="Replay only the first N items.")
    ] = None,
    ids: Annotated[
        list[str] | None, typer.Option("--id", help="Replay this item (repeatable).")
    ] = None,
    mode: Annotated[
        str,
        typer.Option(
            help="teacher-forced: original history as text, only the current turn spoken; "
            "free-running: the agent's own replies form the history."
        ),
    ] = "teacher-forced",
    turn_timeout: Annotated[
        float,
        typer.Option(
            min=1.0,
            max=600.0,
            help="Seconds a turn may take before it is recorded as a timeout "
            "(reports count failed turns as this long).",
        ),
    ] = TURN_TIMEOUT_S,
    scenario: ScenarioOpt = None,
    seed: Annotated[
        int, typer.Option(help="Fixes what each turn draws from its scenario, and its noise.")
    ] = 0,
    final_only: Annotated[
        bool,
        typer.Option(
            "--final-only",
            help="Replay only each item's final seeker turn, the one whose reply is judged "
            "(teacher-forced).",
        ),
    ] = False,
    repeat: Annotated[
        int,
        typer.Option(
            min=1,
            help="Replay every item K times, one whole pass after another (each pass draws "
            "its scenarios with its own seed); the tables show the spread between passes and "
            "`voicebench check --every-repeat` asks that every pass meets the gates.",
        ),
    ] = 1,
    fail_on_error: FailOnErrorOpt = False,
    verbose: VerboseOpt = False,
) -> None:
    """Replay dialogues as speech through an agent and time every turn (TTFT, TTFA, stages).
    A failed turn is recorded with its kind and reason, counted, and the run goes on."""
    quiet_libraries(verbose)
    target = out_dir or api.run_folder(agent)
    on_interrupt(_resume_note(target))
    if dialogues == shared.DIALOGUE_SETS["more"] and fixtures == DEFAULT_FIXTURES:
        say(
            "the seeker audio of the `more` set is made on first use, about a second an "
            f"utterance, into {shared.first_use_fixtures()} (voicebench synth --dialogues more "
            "makes it all ahead)"
        )
    with Steps("turns") as s:
        run = api.replay(
            agent,
            dialogues,
            out=target,
            limit=limit,
            ids=ids,
            scenarios=scenario or (),
            seed=seed,
            mode=mode,
            fixtures=fixtures,
            turn_timeout_s=turn_timeout,
            progress=lambda p: s.advance(p.done, p.total, turn_line(p)),
            final_only=final_only,
            repeat=repeat,
        )
    show_replay(run.header.agent, target, list(run.records), run.header.hosts, run.openings)
    summary = run.summary
    exit_on_failed_turns(
        [(run.header.agent.name, summary.turns, summary.failed)], fail_on_error=fail_on_error
    )


@app.command(
    epilog=TURNS_EXIT_HELP.format(some="every agent had a turn succeed", none="an agent had none")
)
def demo(
    agents: Annotated[
        list[Path] | None,
        typer.Option(
            "--agent",
            "-a",
            parser=agent_spec,
            help="Agent spec, a file or a shipped name, repeatable (default: the two local "
            "agents, SmolLM2-135M and Qwen2.5-Coder-0.5B; the second only when the "
            "offline-judge extra is installed).",
        ),
    ] = None,
    limit: Annotated[
        int, typer.Option("--limit", "-n", min=1, help="How many items of the built-in set.")
    ] = 6,
    out_dir: Annotated[
        Path | None,
        typer.Option(
            "--out",
            "-o",
            help="Demo folder (default reports/runs/demo-...-TIMESTAMP): a run per agent in "
            "OUT/AGENT, OUT/judging, OUT/report; an existing one is resumed.",
        ),
    ] = None,
    judge_spec: Annotated[
        Path | None,
        typer.Option(
            "--judge",
            "-j",
            parser=judge_spec,
            help="Judge spec for the final replies, a file or a shipped name (default: the "
            "offline judge, local; the smoke judge when the offline-judge extra is missing).",
        ),
    ] = None,
    no_judge: Annotated[
        bool, typer.Option("--no-judge", help="Stop after the latency tables.")
    ] = False,
    scenario: ScenarioOpt = None,
    seed: Annotated[
        int, typer.Option(help="Fixes what each turn draws from its scenario, and its noise.")
    ] = 0,
    all_turns: Annotated[
        bool,
        typer.Option(
            "--all-turns",
            help="Replay every seeker turn of each item, not only its final one (the one "
            "judged, replayed on its written history): about three times as long.",
        ),
    ] = False,
    audio: Annotated[
        AudioChoice,
        typer.Option(
            help="The report's calls' recordings and replies in OUT/report/audio/: wav as "
            "recorded, or opus (Opus in Ogg, about a tenth of the size) for a report to share. "
            "The runs keep theirs as recorded.",
        ),
    ] = AudioChoice.wav,
    fail_on_error: FailOnErrorOpt = False,
    verbose: VerboseOpt = False,
) -> None:
    """The whole job offline on the embedded default: replay a slice of the built-in set through
    the local agents (Whisper tiny.en, an LLM on llama.cpp, Piper) and print the latencies,
    then judge their final replies against each other and the human reference replies with the
    offline judge, and write the report (OUT/report/index.html). The leaderboard is printed
    only under a judge whose card clears the trust bars; under any other, the latency table,
    the judge's card and how to bring a judge that can rank (the ranking stays in the report,
    as indicative only)."""
    quiet_libraries(verbose)
    plan = api.demo_plan(
        agents,
        limit=limit,
        out=out_dir,
        judge=judge_spec,
        no_judge=no_judge,
        scenarios=scenario or (),
        seed=seed,
        all_turns=all_turns,
        audio=audio_format(audio),
        on_note=lambda note: say(note, style="yellow"),
    )
    on_interrupt(_resume_note(plan.out_dir))
    with Steps("demo") as s:
        built = api.run_demo(plan, ShownJob(s, plan))
    show_report(built, card=False)
    show(f"the demo took {s.elapsed()}")
    if built.report.judging is not None:
        show(
            f"rate the replies by ear yourself: voicebench annotate "
            f"{built.report.judging.judging_dir} --rater YOUR_NAME"
        )
    exit_on_failed_turns(
        [(a.agent_name, a.turns, a.failed) for a in built.report.agents],
        fail_on_error=fail_on_error,
    )


@app.command()
def summary(
    paths: Annotated[
        list[Path],
        typer.Argument(
            help="Run directories, judging folders (their runs) or a campaign's or demo's "
            "folder (its runs): what voicebench report takes, found the same way."
        ),
    ],
) -> None:
    """Print the per-stage latency table of finished runs, and the machine each measured on
    (a warning when it was busy)."""
    for d in api.run_folders(paths):
        run = api.Run.load(d)
        agent = run.header.agent
        out.print(summary_table(run.summary, f"{agent.name} ({agent.id}) - {d}"))
        show_reported(list(run.records))
        show_scenarios(list(run.records))
        show_passes(list(run.records))
        show_hosts(agent.name, run.header.hosts)
