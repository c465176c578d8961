"""The ``voicebench`` command line: each command parses its options and calls one library function."""

from __future__ import annotations

import contextlib
import os
import sys
import warnings
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from voicebench.errors import InputError, VoicebenchError

app = typer.Typer(
    help="Live voice-agent latency and empathy evaluation on HEART support dialogues.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
dialogues_app = typer.Typer(help="Dialogue sets: import, make adversarial items, check.", no_args_is_help=True)
import_app = typer.Typer(help="Import dialogue items from a corpus.", no_args_is_help=True)
dialogues_app.add_typer(import_app, name="import")
app.add_typer(dialogues_app, name="dialogues")

# Off a terminal rich would fall back to 80 columns and wrap the tables; logs are wide enough.
out = Console(width=None if sys.stdout.isatty() else 110)
err = Console(stderr=True, width=None if sys.stderr.isatty() else 110)

DEFAULT_DIALOGUES = Path(__file__).resolve().parents[1] / "audio_fixtures" / "dialogues.jsonl"
DEFAULT_FIXTURES = DEFAULT_DIALOGUES.parent
DEFAULT_AGENT = DEFAULT_DIALOGUES.parents[1] / "agents" / "local.toml"
DEFAULT_JUDGE = DEFAULT_DIALOGUES.parents[1] / "judges" / "local-smoke.toml"

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


@contextlib.contextmanager
def _resumable(kept: str):
    """Long work: an error is one line; Ctrl-C says where the finished part is (``kept``) and
    exits 130."""
    try:
        yield
    except VoicebenchError as exc:
        _fail(exc)
    except KeyboardInterrupt:
        err.print(f"interrupted; {kept}", highlight=False)
        raise typer.Exit(130) from None


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
    turn_timeout: Annotated[float, typer.Option(
        min=1.0, max=600.0, help="Seconds a turn may take before it is recorded as a timeout "
        "(reports count failed turns as this long).")] = 60.0,
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
                       mode=replay_mode, turn_timeout_s=turn_timeout)


def _replay_and_report(spec, *, out_dir: Path, **kwargs) -> None:
    """Replay with per-turn progress, then print the latency table; errors become one line."""
    from voicebench.replay import run_replay
    from voicebench.runlog import summarize, summary_table

    with _resumable(f"finished turns are kept in {out_dir}: run again with --out {out_dir} to "
                    "resume"):
        records = run_replay(spec, out_dir=out_dir, progress=_progress_printer(), **kwargs)
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
    judge_spec: Annotated[Path | None, typer.Option(
        "--judge", "-j", help="Judge spec for the final replies (default: the offline smoke "
        "judge).")] = DEFAULT_JUDGE,
    no_judge: Annotated[bool, typer.Option("--no-judge", help="Stop after the latency table.")] = False,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Show pipeline logs.")] = False,
) -> None:
    """The whole job offline on the embedded default: replay a slice of the built-in set through
    the local agent (Whisper tiny.en, SmolLM2 on llama.cpp, Piper) and print the latencies, then
    judge its final replies against the human reference replies (offline smoke judge), print
    the leaderboard and write the report (RUN_DIR/report/index.html)."""
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
    if no_judge:
        judge_spec = None
    err.print(f"demo: {len(items)} items through {spec.name} ({spec.id}) -> {out_dir}",
              highlight=False)
    _replay_and_report(spec, spec_path=agent, dialogues=items, dialogues_path=BUILTIN_DIALOGUES,
                       fixtures_dir=BUILTIN_FIXTURES, out_dir=out_dir)
    if judge_spec is None:
        _report_and_show([out_dir], out_dir / "report")
        return
    judged = out_dir / "judging"
    err.print(f"judging {spec.name} against the human reference replies -> {judged}",
              highlight=False)
    _judge_and_show([out_dir], judge_spec, judged, concurrency=1)
    _rate_and_show(judged, tolerate_undecided=True)
    _report_and_show([out_dir], out_dir / "report")


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
        figures = "  ".join(f"{name} {value:,.0f} ms" for name, value in
                            (("TTFT", t.ttft_ms if t else None), ("TTFA", t.ttfa_ms if t else None))
                            if value is not None)
        status = f"[red]{r.error.kind}: {r.error.reason}[/]" if r.error else figures
        err.print(f"[{p.done}/{p.total}] {r.dialogue_id} turn {r.turn_index}  {status}",
                  highlight=False)

    return show


@app.command()
def judge(
    run_dirs: Annotated[list[Path], typer.Argument(help="Run directories whose final turns to judge.")],
    judge_spec: Annotated[Path, typer.Option(
        "--judge", "-j", envvar="VOICEBENCH_JUDGE", help="Judge spec (judges/*.toml).")
    ] = DEFAULT_JUDGE,
    out_dir: Annotated[Path | None, typer.Option(
        "--out", "-o", help="Judging folder (default reports/judgments/SPEC-HASH of the runs); "
        "an existing one is resumed.")] = None,
    concurrency: Annotated[int, typer.Option(min=1, max=256,
                                             help="Judge requests in flight at once.")] = 4,
    human_replies: Annotated[list[Path] | None, typer.Option(
        "--human-replies", help="JSONL of extra human replies (repeatable).")] = None,
    pairs_per_item: Annotated[int | None, typer.Option(
        min=1, help="Judge at most this many pairs per item, drawn with --seed (default all).")
    ] = None,
    seed: Annotated[int, typer.Option(help="Seed for --pairs-per-item.")] = 0,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Show library logs.")] = False,
) -> None:
    """Pairwise HEART judging of what the listener heard: every contestant's final-turn reply
    (and the human reference) on each item, both orders, verdicts cached and resumable."""
    _quiet_libraries(verbose)
    from voicebench.judging import default_out_dir, load_judge_spec

    try:
        spec, _ = load_judge_spec(judge_spec)
    except VoicebenchError as exc:
        _fail(exc)
    _judge_and_show(run_dirs, judge_spec, out_dir or default_out_dir(spec.name, run_dirs),
                    concurrency=concurrency, human_files=human_replies or [],
                    pairs_per_item=pairs_per_item, seed=seed)


@app.command()
def strategies(
    judging_dir: Annotated[Path, typer.Argument(help="Judging folder (from voicebench judge).")],
    judge_spec: Annotated[Path, typer.Option(
        "--judge", "-j", envvar="VOICEBENCH_JUDGE",
        help="Judge spec whose first judge model labels the replies.")] = DEFAULT_JUDGE,
    concurrency: Annotated[int, typer.Option(min=1, max=256,
                                             help="Requests in flight at once.")] = 4,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Show library logs.")] = False,
) -> None:
    """Label every judged reply with the 15 HEART support strategies (present, absent or
    uncertain, with evidence; cached in JUDGING_DIR/strategies.jsonl) and print each
    contestant's strategy diversity. `voicebench report` adds a heatmap and the table."""
    import asyncio

    _quiet_libraries(verbose)
    from voicebench.judging import SMOKE_WARNING
    from voicebench.strategies import LABELS_FILE, label_judging, summarize_labels
    from voicebench.strategies.display import diversity_table, most_used

    def progress(r, n: int, total: int) -> None:
        if n == total or n % max(1, total // 20) == 0 or r.marks is None:
            what = (f"[red]failed: {r.failure}[/]" if r.marks is None
                    else ", ".join(sorted(r.present())) or "none present")
            err.print(f"[{n}/{total}] {r.item_id} {r.contestant}: {what}", highlight=False)

    with _resumable(f"finished labels are kept in {judging_dir / LABELS_FILE}: run the same "
                    "command again to resume"):
        result = asyncio.run(label_judging(
            judging_dir, judge_spec, concurrency=concurrency, progress=progress,
            on_status=lambda m: err.print(m, highlight=False)))
    summary = summarize_labels(result.labels)
    if summary is None:
        _fail(VoicebenchError(f"{judging_dir}: no usable replies to label"))
    if summary.smoke:
        err.print(f"[yellow]{SMOKE_WARNING}: these labels are not meaningful[/]", highlight=False)
    out.print(diversity_table(summary))
    for line in most_used(summary):
        out.print(line, highlight=False)
    out.print(f"labels: {judging_dir / LABELS_FILE}", highlight=False)


def _judge_and_show(run_dirs: list[Path], judge_spec: Path, target: Path, **kwargs):
    """Judge with progress lines, then print judge health and each contestant's record."""
    from voicebench.judging import (
        SMOKE_WARNING,
        health_table,
        load_judge_spec,
        record_table,
        run_judging,
    )

    def progress(v, n: int, total: int) -> None:
        if n == total or n % max(1, total // 20) == 0 or v.answer is None:
            what = f"[red]failed: {v.failure}[/]" if v.answer is None else "ok"
            err.print(f"[{n}/{total}] {v.item_id} {v.contestant_a} vs {v.contestant_b} "
                      f"({v.judge}) {what}", highlight=False)

    with _resumable(f"decided verdicts are kept in {target}: run the same command again to "
                    "resume"):
        spec, _ = load_judge_spec(judge_spec)
        if spec.smoke:
            err.print(f"[yellow]{SMOKE_WARNING}[/]", highlight=False)
        result = run_judging(run_dirs, judge_spec, target,
                             on_status=lambda m: err.print(m, highlight=False),
                             progress=progress, **kwargs)
    out.print(health_table(result))
    out.print(record_table(result))
    if result.skipped_pairs:
        out.print(f"{result.skipped_pairs} pairs skipped: every judge shares a family with a "
                  "contestant", highlight=False)
    if result.smoke:
        out.print(f"[yellow]{SMOKE_WARNING}[/]", highlight=False)
    out.print(f"verdicts: {result.out_dir}/verdicts.jsonl", highlight=False)
    return result


@app.command()
def rate(
    judging_dirs: Annotated[list[Path], typer.Argument(
        help="Judging folders (from voicebench judge).")],
    rounds: Annotated[int, typer.Option(min=0, help="Bootstrap rounds (0: skip).")] = 1000,
    seed: Annotated[int, typer.Option(help="Bootstrap seed.")] = 0,
    budget_ttfa_ms: Annotated[float, typer.Option(help="TTFA budget for goodput.")] = 1000.0,
    budget_ttft_ms: Annotated[float, typer.Option(help="TTFT budget for goodput.")] = 500.0,
    human_judgments: Annotated[Path | None, typer.Option(
        help="Human judgments (CSV or JSONL, 5-point scale) to measure agreement with.")] = None,
) -> None:
    """Fit strength-weighted Bradley-Terry ratings (Elo with bootstrap and asymptotic 95% CIs),
    win rates per dimension, latency goodput and latency-adjusted Elo; write ratings.json and
    print the leaderboard."""
    for d in judging_dirs:
        _rate_and_show(d, rounds=rounds, seed=seed, budget_ttfa_ms=budget_ttfa_ms,
                       budget_ttft_ms=budget_ttft_ms, human_judgments=human_judgments)


def _rate_and_show(d: Path, *, tolerate_undecided: bool = False, **kwargs) -> None:
    """Fit the ratings of one judging folder and print the leaderboard and agreement."""
    from voicebench.judging import SMOKE_WARNING
    from voicebench.rating import (
        RATINGS_FILE,
        NothingToRateError,
        latency_board,
        leaderboard,
        rate_judging,
    )

    try:
        table = rate_judging(d, **kwargs)
    except NothingToRateError as exc:
        if not tolerate_undecided:
            _fail(exc)
        out.print(f"no leaderboard: {exc}", highlight=False)
        return
    except VoicebenchError as exc:
        _fail(exc)
    out.print(leaderboard(table))
    out.print(latency_board(table))
    if table.latency_beta is not None:
        se = f" +- {table.latency_beta_se:.2f}" if table.latency_beta_se is not None else ""
        out.print(f"latency coefficient (log-odds per ln TTFA): {table.latency_beta:.2f}{se} "
                  f"over {table.latency_comparisons} agent-agent pairs", highlight=False)
    a = table.agreement
    if a is not None:
        for name, (v, lo, hi, n) in a.pairwise.items():
            out.print(f"agreement {name}: {_share(v, lo, hi)} over {n} pairs", highlight=False)
        if a.three_way:
            out.print(f"three-way agreement: {_share(*a.three_way[:3])} over {a.three_way[3]} "
                      "pairs", highlight=False)
        if a.fleiss_kappa is not None:
            alpha = "-" if a.krippendorff_alpha is None else f"{a.krippendorff_alpha:.3f}"
            out.print(f"Fleiss kappa {a.fleiss_kappa:.3f}, Krippendorff alpha {alpha}",
                      highlight=False)
        if a.human_agreement:
            out.print(f"ensemble vs human majority: {_share(*a.human_agreement[:3])} over "
                      f"{a.human_agreement[3]} pairs", highlight=False)
    if table.smoke:
        out.print(f"[yellow]{SMOKE_WARNING}[/]", highlight=False)
    out.print(f"ratings: {d / RATINGS_FILE}", highlight=False)


def _share(v: float | None, lo: float | None, hi: float | None) -> str:
    if v is None:
        return "-"
    return f"{100 * v:.1f}% (95% CI {100 * lo:.1f}-{100 * hi:.1f})"


@app.command()
def serve(
    agent: Annotated[Path, typer.Option("--agent", "-a", envvar="VOICEBENCH_AGENT",
                                        help="Agent spec to serve (default: the local agent).")
                     ] = DEFAULT_AGENT,
    port: Annotated[int, typer.Option(min=0, max=65535, help="Port on 127.0.0.1 (0: any free "
                                      "port).")] = 8765,
    protocol: Annotated[str, typer.Option(help="pcm (voicebench's protocol) or pipecat "
                                          "(pipecat's protobuf frames).")] = "pcm",
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Show pipeline logs.")] = False,
) -> None:
    """Serve an agent as a WebSocket voice agent on 127.0.0.1: one pipeline per call, helper
    servers shared. Test a remote-agent spec against it, or let others benchmark it."""
    import asyncio

    _quiet_libraries(verbose)
    from voicebench.agentspec import load_agent_spec
    from voicebench.live import serve as serve_agent

    if protocol not in ("pcm", "pipecat"):
        _fail(VoicebenchError("--protocol must be pcm or pipecat"))
    try:
        spec = load_agent_spec(agent)
    except VoicebenchError as exc:
        _fail(exc)

    def ready(url: str) -> None:
        out.print(f"serving {spec.name} ({spec.id}) on {url}, protocol {protocol}; Ctrl-C stops",
                  highlight=False)

    def call(event: str, in_progress: int) -> None:
        err.print(f"call {event} ({in_progress} in progress)", highlight=False)

    try:
        asyncio.run(serve_agent(spec, port=port, protocol=protocol, on_ready=ready,
                                on_call=call))
        err.print("stopped", highlight=False)
    except VoicebenchError as exc:
        _fail(exc)
    except OSError as exc:
        _fail(VoicebenchError(f"cannot listen on 127.0.0.1:{port}: {exc.strerror or exc}"))
    except KeyboardInterrupt:
        err.print("stopped", highlight=False)


@app.command()
def load(
    agent: Annotated[str, typer.Option("--agent", "-a", help="A ws:// URL, or an agent spec "
                                       "with [remote].")],
    callers: Annotated[int, typer.Option(min=1, max=200, help="Simulated callers.")] = 4,
    ramp: Annotated[float, typer.Option(min=0.0, help="Seconds over which callers arrive.")
                    ] = 10.0,
    duration: Annotated[float, typer.Option(min=1.0, max=3600.0, help="Seconds after the first "
                                            "arrival during which calls start.")] = 60.0,
    arrivals: Annotated[str, typer.Option(help="fixed (evenly spaced) or poisson.")] = "fixed",
    protocol: Annotated[str, typer.Option(help="With a URL: pcm or pipecat.")] = "pcm",
    out_dir: Annotated[Path | None, typer.Option(
        "--out", "-o", help="Load folder (default reports/load/TIMESTAMP).")] = None,
    dialogues: DialoguesOpt = DEFAULT_DIALOGUES,
    fixtures: FixturesOpt = DEFAULT_FIXTURES,
    budget_ttfa_ms: Annotated[float, typer.Option(help="TTFA budget (ms).")] = 1000.0,
    turn_timeout: Annotated[float, typer.Option(min=1.0, max=300.0, help="Seconds a turn may "
                                                "take; failed turns count as this long.")] = 30.0,
    seed: Annotated[int, typer.Option(help="Seed for poisson arrivals.")] = 0,
) -> None:
    """Many callers at once against a remote voice agent: TTFA percentiles by concurrency,
    failures by kind, and the concurrency at which the TTFA budget breaks."""
    import asyncio

    _quiet_libraries(False)
    from voicebench._model import validate_record
    from voicebench.agentspec import AgentSpec, load_agent_spec
    from voicebench.dialogues import load_dialogues
    from voicebench.fixtures import synthesize_fixtures
    from voicebench.live import run_load, summarize_load

    try:
        if arrivals not in ("fixed", "poisson"):
            raise InputError("must be fixed or poisson", field="--arrivals")
        if "://" in agent and not agent.startswith(("ws://", "wss://")):
            raise InputError(f"{agent!r} is not a ws:// or wss:// URL", field="--agent")
        if agent.startswith(("ws://", "wss://")):
            spec = validate_record(AgentSpec, {"name": "remote", "family": "remote", "remote": {
                "url": agent, "protocol": protocol}}, file="--agent")
        else:
            spec = load_agent_spec(Path(agent))
        items = load_dialogues(dialogues)
        manifest = synthesize_fixtures(items, fixtures).manifest
    except VoicebenchError as exc:
        _fail(exc)
    target = out_dir or Path("reports") / "load" / datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    err.print(f"load: {callers} callers over {ramp:g} s ({arrivals}), calls start for "
              f"{duration:g} s -> {target}", highlight=False)

    def show(t) -> None:
        r = t.turn
        what = (f"[red]{r.error.kind}: {r.error.reason}[/]" if r.error else
                f"TTFA {r.timing.ttfa_ms:,.0f} ms")
        err.print(f"[{t.offset_s:6.1f} s, {t.concurrency} calls] caller {t.caller} "
                  f"{r.dialogue_id} turn {r.turn_index}  {what}", highlight=False)

    with _resumable(f"finished turns are in {target}/turns.jsonl"):
        turns = asyncio.run(run_load(spec, items, manifest, fixtures, target, callers=callers,
                                     ramp_s=ramp, duration_s=duration, arrivals=arrivals,
                                     seed=seed, turn_timeout_s=turn_timeout, progress=show))
    summary = summarize_load(turns, budget_ttfa_ms=budget_ttfa_ms, turn_timeout_s=turn_timeout)
    from voicebench._jsonl import write_atomic
    from voicebench.live.display import load_table

    write_atomic(target / "summary.json", summary.model_dump_json(indent=2) + "\n")
    out.print(load_table(summary, f"{spec.name} ({spec.remote.url}) under load"))
    out.print(f"turns: {target}/turns.jsonl; summary: {target}/summary.json", highlight=False)


@app.command()
def report(
    paths: Annotated[list[Path], typer.Argument(
        help="Run directories and/or one judging folder (its runs are included). A run's "
        "judging/ folder is used when no judging folder is given.")],
    out_dir: Annotated[Path | None, typer.Option(
        "--out", "-o", help="Report folder (default reports/report-TIMESTAMP).")] = None,
    title: Annotated[str | None, typer.Option(help="Page title.")] = None,
    budget_ttft_ms: Annotated[float, typer.Option(help="TTFT budget (ms).")] = 500.0,
    budget_ttfa_ms: Annotated[float, typer.Option(help="TTFA budget (ms).")] = 1000.0,
    human_judgments: Annotated[Path | None, typer.Option(
        help="Human judgments (CSV or JSONL) for the agreement figures.")] = None,
) -> None:
    """Write the latency-budget report and the quality-latency frontier: index.html (one
    self-contained page), report.md, report.json and figures/ (PNG and SVG)."""
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    _report_and_show(paths, out_dir or Path("reports") / f"report-{stamp}", title=title,
                     budget_ttft_ms=budget_ttft_ms, budget_ttfa_ms=budget_ttfa_ms,
                     human_judgments=human_judgments)


def _report_and_show(paths: list[Path], target: Path, **kwargs) -> None:
    from voicebench.report import build_report

    try:
        built = build_report(paths, target, on_status=lambda m: err.print(m, highlight=False),
                             **kwargs)
    except VoicebenchError as exc:
        _fail(exc)
    j = built.report.judging
    if j is not None and j.smoke:
        from voicebench.judging import SMOKE_WARNING

        out.print(f"[yellow]{SMOKE_WARNING}[/]", highlight=False)
    out.print(f"report: {target / 'index.html'} (also report.md, report.json, "
              f"{len(built.report.figures)} figures as PNG and SVG)", highlight=False)


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


@dialogues_app.command("adversarial")
def adversarial_cmd(
    file: Annotated[Path, typer.Argument(help="Dialogue set to rewrite (JSONL).")],
    profile: Annotated[str, typer.Option(
        help="Escalation of the seeker's hostility: always-10, linear-ramp, mid-spike or "
        "mid-ramp.")],
    llm: Annotated[Path, typer.Option(
        "--llm", help="Agent spec (TOML) whose [llm] rewrites the seeker turns.")],
    dest: Annotated[Path | None, typer.Option(
        "--out", "-o", help="Set to append the new items to (default FILE-PROFILE.jsonl); "
        "items already there are skipped, so re-running resumes.")] = None,
    limit: Annotated[int | None, typer.Option("--limit", "-n", min=1,
                                              help="Rewrite only the first N items.")] = None,
    attempts: Annotated[int, typer.Option(min=1, max=10, help="Requests per item before it "
                                          "is rejected.")] = 3,
) -> None:
    """Make adversarial items: an LLM rewrites only the seeker turns so that hostility follows
    the profile's 0-10 schedule (shown first); each answer is checked, asked again, or the item
    rejected with its reason (in OUT.rejected.jsonl)."""
    import asyncio

    _quiet_libraries(False)
    from voicebench.agentspec import load_agent_spec
    from voicebench.dialogues import EscalationProfile, load_dialogues
    from voicebench.dialogues.adversarial import (
        intensity_schedule,
        make_adversarial,
        rejected_path,
    )

    try:
        try:
            chosen = EscalationProfile(profile)
        except ValueError:
            raise InputError(f"must be one of: {', '.join(p.value for p in EscalationProfile)}",
                             field="--profile") from None
        spec = load_agent_spec(llm)
        if spec.llm is None:
            raise InputError("needs an [llm] section to rewrite with", file=llm, field="llm")
        items = load_dialogues(file)[:limit]
    except VoicebenchError as exc:
        _fail(exc)
    target = dest or file.with_name(f"{file.stem}-{chosen.value}.jsonl")
    sizes = sorted({len(d.seeker_turn_indices) for d in items})
    out.print(f"{chosen.value}: target hostility (0-10) per seeker turn", highlight=False)
    for n in sizes:
        out.print(f"  {n} seeker turns: {' '.join(map(str, intensity_schedule(chosen, n)))}",
                  highlight=False)

    def show(outcome, n: int, total: int) -> None:
        if outcome.item is not None:
            err.print(f"[{n}/{total}] {outcome.source_id} -> {outcome.item.id} ok",
                      highlight=False)
        else:
            err.print(f"[{n}/{total}] {outcome.source_id} [red]rejected[/]: "
                      f"{outcome.rejected.reason}", highlight=False)

    with _resumable(f"finished items are kept in {target}: run the same command again to "
                    "resume"):
        outcomes = asyncio.run(make_adversarial(items, spec, chosen, target, attempts=attempts,
                                                progress=show))
    made = sum(o.item is not None for o in outcomes)
    out.print(f"{made} adversarial items written to {target}; {len(outcomes) - made} rejected"
              + (f" (reasons in {rejected_path(target)})" if len(outcomes) > made else "")
              + (f"; {len(items) - len(outcomes)} were already done" if len(items) > len(outcomes)
                 else ""), highlight=False)


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
