"""The ``voicebench`` command line: each command parses its options and calls one library function."""

from __future__ import annotations

import os
import sys
import warnings
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from voicebench.errors import VoicebenchError

app = typer.Typer(
    help="Live voice-agent latency and empathy evaluation on HEART support dialogues.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
dialogues_app = typer.Typer(help="Dialogue sets: import and check.", no_args_is_help=True)
import_app = typer.Typer(help="Import dialogue items from a corpus.", no_args_is_help=True)
dialogues_app.add_typer(import_app, name="import")
app.add_typer(dialogues_app, name="dialogues")

# Off a terminal rich would fall back to 80 columns and wrap the tables; logs are wide enough.
out = Console(width=None if sys.stdout.isatty() else 110)
err = Console(stderr=True, width=None if sys.stderr.isatty() else 110)

DEFAULT_DIALOGUES = Path(__file__).resolve().parents[1] / "audio_fixtures" / "dialogues.jsonl"
DEFAULT_FIXTURES = DEFAULT_DIALOGUES.parent
DEFAULT_AGENT = DEFAULT_DIALOGUES.parents[1] / "agents" / "local.toml"

DialoguesOpt = Annotated[
    Path, typer.Option("--dialogues", "-d", envvar="VOICEBENCH_DIALOGUES",
                       help="Dialogue set (JSONL). Default: the built-in set.")
]
FixturesOpt = Annotated[
    Path, typer.Option("--fixtures", envvar="VOICEBENCH_FIXTURES",
                       help="Audio fixture folder (manifest.json + audio/).")
]


def _quiet_libraries(verbose: bool) -> None:
    """pipecat logs every frame decision at INFO/DEBUG; show its warnings only when asked."""
    from loguru import logger

    logger.remove()
    logger.add(sys.stderr, level="DEBUG" if verbose else "ERROR")
    if not verbose:
        warnings.filterwarnings("ignore", category=DeprecationWarning)
        warnings.filterwarnings("ignore", category=RuntimeWarning, module="pipecat")


def _fail(exc: VoicebenchError) -> None:
    err.print(f"[bold red]error:[/] {exc}", highlight=False, soft_wrap=True)
    raise typer.Exit(exc.exit_code)


@app.command()
def synth(
    dialogues: DialoguesOpt = DEFAULT_DIALOGUES,
    fixtures: FixturesOpt = DEFAULT_FIXTURES,
) -> None:
    """Speak every seeker turn with the packaged Piper voice; only what is missing is synthesized."""
    from voicebench.dialogues import load_dialogues
    from voicebench.fixtures import synthesize_fixtures

    try:
        items = load_dialogues(dialogues)

        def progress(n: int, total: int) -> None:
            err.print(f"synthesized {n}/{total}", highlight=False)

        report = synthesize_fixtures(items, fixtures, progress=progress)
    except VoicebenchError as exc:
        _fail(exc)
    out.print(
        f"{report.synthesized} synthesized, {report.reused} already there; "
        f"manifest: {Path(fixtures) / 'manifest.json'}",
        highlight=False,
    )


@app.command()
def run(
    agent: Annotated[Path, typer.Option("--agent", "-a", envvar="VOICEBENCH_AGENT",
                                        help="Agent spec (TOML).")],
    out_dir: Annotated[Path | None, typer.Option(
        "--out", "-o", help="Run directory (default reports/runs/AGENT-TIMESTAMP). "
        "An existing run directory is resumed.")] = None,
    dialogues: DialoguesOpt = DEFAULT_DIALOGUES,
    fixtures: FixturesOpt = DEFAULT_FIXTURES,
    limit: Annotated[int | None, typer.Option("--limit", "-n", min=1,
                                              help="Replay only the first N items.")] = None,
    ids: Annotated[list[str] | None, typer.Option("--id", help="Replay this item (repeatable).")] = None,
    mode: Annotated[str, typer.Option(
        help="teacher-forced: original history as text, only the current turn spoken; "
        "free-running: the agent's own replies form the history.")] = "teacher-forced",
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Show pipeline logs.")] = False,
) -> None:
    """Replay dialogues as speech through an agent and time every turn (TTFT, TTFA, stages)."""
    _quiet_libraries(verbose)
    from voicebench.agentspec import load_agent_spec
    from voicebench.dialogues import load_dialogues
    from voicebench.replay import select_dialogues
    from voicebench.runlog import ReplayMode

    try:
        try:
            replay_mode = ReplayMode(mode)
        except ValueError:
            raise VoicebenchError(
                f"--mode must be one of: {', '.join(m.value for m in ReplayMode)}"
            ) from None
        spec = load_agent_spec(agent)
        items = select_dialogues(load_dialogues(dialogues), limit=limit, ids=ids, file=dialogues)
    except VoicebenchError as exc:
        _fail(exc)
    _replay_and_report(spec, spec_path=agent, dialogues=items, dialogues_path=dialogues,
                       fixtures_dir=fixtures, out_dir=out_dir or _default_run_dir(spec.name),
                       mode=replay_mode)


def _replay_and_report(spec, *, out_dir: Path, **kwargs) -> None:
    """Replay with per-turn progress, then print the latency table; errors become one line."""
    from voicebench.replay import run_replay
    from voicebench.runlog import summarize, summary_table

    try:
        records = run_replay(spec, out_dir=out_dir, progress=_progress_printer(), **kwargs)
    except VoicebenchError as exc:
        _fail(exc)
    except KeyboardInterrupt:
        err.print(f"interrupted; finished turns are kept in {out_dir}: "
                  f"run again with --out {out_dir} to resume", highlight=False)
        raise typer.Exit(130) from None
    out.print(summary_table(summarize(records), f"{spec.name} ({spec.id}) - {out_dir}"))
    out.print(f"run log: {out_dir}/turns.jsonl", highlight=False)


def _default_run_dir(name: str, prefix: str = "") -> Path:
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    slug = "".join(c if c.isalnum() or c in "-_." else "-" for c in name)
    return Path("reports") / "runs" / f"{prefix}{slug}-{stamp}"


@app.command()
def demo(
    agent: Annotated[Path, typer.Option("--agent", "-a", envvar="VOICEBENCH_AGENT",
                                        help="Agent spec (default: the local agent).")
                     ] = DEFAULT_AGENT,
    limit: Annotated[int, typer.Option("--limit", "-n", min=1,
                                       help="How many items of the built-in set.")] = 6,
    out_dir: Annotated[Path | None, typer.Option(
        "--out", "-o", help="Run directory (default reports/runs/demo-AGENT-TIMESTAMP); "
        "an existing one is resumed.")] = None,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Show pipeline logs.")] = False,
) -> None:
    """The whole job offline on the embedded default: synthesize, replay a slice of the built-in
    set through the local agent (Whisper tiny.en, SmolLM2 on llama.cpp, Piper), print the latencies."""
    _quiet_libraries(verbose)
    from voicebench.agentspec import load_agent_spec
    from voicebench.dialogues import BUILTIN_DIALOGUES, load_dialogues
    from voicebench.fixtures import BUILTIN_FIXTURES
    from voicebench.replay import demo_items

    try:
        spec = load_agent_spec(agent)
        items = demo_items(load_dialogues(BUILTIN_DIALOGUES), limit)
    except VoicebenchError as exc:
        _fail(exc)
    out_dir = out_dir or _default_run_dir(spec.name, "demo-")
    err.print(f"demo: {len(items)} items through {spec.name} ({spec.id}) -> {out_dir}",
              highlight=False)
    _replay_and_report(spec, spec_path=agent, dialogues=items, dialogues_path=BUILTIN_DIALOGUES,
                       fixtures_dir=BUILTIN_FIXTURES, out_dir=out_dir)


def _progress_printer():
    """One line per finished turn: readable on a terminal and in a CI log alike."""
    from voicebench.replay import RunProgress

    def show(p: RunProgress) -> None:
        r = p.record
        if r is None:
            err.print(f"{p.done}/{p.total} turns already done" if p.done else
                      f"replaying {p.total} turns", highlight=False)
            return
        t = r.timing
        figures = (f"TTFT {t.ttft_ms:,.0f} ms  TTFA {t.ttfa_ms:,.0f} ms"
                   if t and t.ttft_ms is not None and t.ttfa_ms is not None else "")
        status = f"[red]{r.error.kind}: {r.error.reason}[/]" if r.error else figures
        err.print(f"[{p.done}/{p.total}] {r.dialogue_id} turn {r.turn_index}  {status}",
                  highlight=False)

    return show


@app.command()
def summary(run_dir: Annotated[list[Path], typer.Argument(help="Run directories.")]) -> None:
    """Print the per-stage latency table of finished runs."""
    from voicebench.runlog import read_header, read_turns, summarize, summary_table

    try:
        for d in run_dir:
            header = read_header(d)
            out.print(summary_table(summarize(read_turns(d)),
                                    f"{header.agent.name} ({header.agent.id}) - {d}"))
    except VoicebenchError as exc:
        _fail(exc)


@import_app.command("esconv")
def import_esconv_cmd(
    file: Annotated[Path, typer.Argument(help="ESConv JSON file.")],
    dest: Annotated[Path, typer.Option("--out", "-o", help="Dialogue set to write (JSONL).")],
    max_per_conversation: Annotated[int, typer.Option(min=1, max=10)] = 2,
) -> None:
    """Make HEART-style items from ESConv conversations (nothing is written on bad input)."""
    from voicebench.dialogues import import_esconv_to_file

    try:
        items = import_esconv_to_file(file, dest, max_items_per_conversation=max_per_conversation)
    except VoicebenchError as exc:
        _fail(exc)
    conversations = len({d.source for d in items})
    out.print(f"{len(items)} items from {conversations} conversations written to {dest}",
              highlight=False)


@dialogues_app.command("check")
def check_dialogues(file: Annotated[Path, typer.Argument(help="Dialogue set (JSONL).")]) -> None:
    """Validate a dialogue set and print what it holds."""
    from collections import Counter

    from voicebench.dialogues import load_dialogues

    try:
        items = load_dialogues(file)
    except VoicebenchError as exc:
        _fail(exc)
    adversarial = [d for d in items if d.adversarial]
    turns = sum(len(d.seeker_turn_indices) for d in items)
    out.print(f"{file}: {len(items)} items ({len(adversarial)} adversarial), {turns} seeker turns",
              highlight=False)
    for problem, n in sorted(Counter(d.problem_type for d in items).items()):
        out.print(f"  {problem}: {n}", highlight=False)


def main() -> None:
    # Users on an air-gapped machine must never wait on a hub: the models are packaged.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    app()


if __name__ == "__main__":
    main()
