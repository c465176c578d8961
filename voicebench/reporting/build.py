"""Building a report folder from run directories and a judging folder.

Inputs. Each path is a run directory (``run.json``, a converse folder included) or a judging
folder (``judging.json``); a judging folder brings in the runs it judged. Without a judging
folder among the paths, a ``judging/`` folder inside a run directory (where ``voicebench
demo`` puts it) is used. One judging folder of final replies at most, and one of whole calls:
ratings are fitted on one set of verdicts each, and the report shows the two Elo side by side.

Secrets. Every file written passes through ``redact`` with the values of the environment
variables the runs' and judges' specs name for their keys, and of any variable whose name
looks like a credential (``*API_KEY*``, ``*TOKEN*``, ``*SECRET*``, ``*PASSWORD*``).
"""

from __future__ import annotations

import datetime as dt
import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from voicebench._jsonl import write_atomic
from voicebench._version import __version__
from voicebench.budgets import TTFA_BUDGET_MS, TTFT_BUDGET_MS
from voicebench.calling.outcomes import call_outcomes
from voicebench.calling.records import read_calls
from voicebench.errors import InputError, VoicebenchError, redact
from voicebench.judging import HEADER_FILE as JUDGING_HEADER
from voicebench.judging import (
    current_verdicts,
    judge_health,
    judged_runs,
    load_judge_spec,
    own_family_of,
    pair_results,
    read_judging_header,
    read_replies,
)
from voicebench.judging.cards import card_of_judging
from voicebench.judging.trust import figure_warning, trust_warning
from voicebench.metrics import AgentLatency, agent_latency, count_kinds
from voicebench.rating import NothingToRateError, current_ratings
from voicebench.reporting import figures
from voicebench.reporting.humans import agreement_figure
from voicebench.reporting.models import JudgingSummary, Report, StrategySummary
from voicebench.reporting.recordings import call_recordings
from voicebench.reporting.replies import AudioFormat, call_views, heard_turns, item_replies
from voicebench.reporting.scenarios import has_noise, snr_curves
from voicebench.runlog import HEADER_FILE as RUN_HEADER
from voicebench.runlog import (
    ReplayMode,
    RunHeader,
    TurnRecord,
    read_header,
    read_openings,
)
from voicebench.strategies import LABELS_FILE, read_labels, summarize_labels

CREDENTIAL_NAME = re.compile(r"API_KEY|TOKEN|SECRET|PASSWORD", re.IGNORECASE)
SECRET_MIN_LENGTH = 8


@dataclass(frozen=True)
class RunData:
    dir: Path
    header: RunHeader
    records: list[TurnRecord]


@dataclass(frozen=True)
class BuiltReport:
    out_dir: Path
    report: Report
    files: list[Path]


@dataclass(frozen=True)
class Inputs:
    """What a report is built from."""

    runs: list[Path]
    judging: Path | None
    """The judging of final replies, if any."""
    call_judging: Path | None = None
    """The judging of whole simulated calls, if any."""


def resolve_inputs(paths: Sequence[Path]) -> Inputs:
    """The run directories and the judging folders (one of final replies, one of whole calls,
    each at most) named by ``paths``."""
    if not paths:
        raise InputError("give at least one run directory or judging folder")
    runs: list[Path] = []
    judging: list[Path] = []
    for p in map(Path, paths):
        if (p / RUN_HEADER).exists():
            runs.append(p)
        elif (p / JUDGING_HEADER).exists():
            judging.append(p)
        else:
            raise InputError(
                "neither a run directory (run.json), a judging folder (judging.json) nor a load "
                "folder (load.json)",
                file=p,
            )
    if not judging:
        judging = [r / "judging" for r in runs if (r / "judging" / JUDGING_HEADER).exists()]
    by_unit: dict[str, list[Path]] = {"reply": [], "call": []}
    for folder in judging:
        by_unit[read_judging_header(folder).unit].append(folder)
    for unit, folders in by_unit.items():
        if len(folders) > 1:
            what = "final replies" if unit == "reply" else "whole calls"
            raise InputError(
                f"{len(folders)} judging folders of {what} ({', '.join(map(str, folders))}); a "
                "report rates one set of verdicts of each: name one of them",
                file=folders[1],
            )
    reply, call = (by_unit[unit][0] if by_unit[unit] else None for unit in ("reply", "call"))
    for chosen in (reply, call):
        if chosen is not None:
            runs.extend(judged_runs(chosen))
    unique: dict[Path, Path] = {}
    for r in runs:
        unique.setdefault(r.resolve(), r)
    return Inputs(list(unique.values()), reply, call)


CALLS_LABEL = " (calls)"
"""How a converse folder's agent is named in a report, beside its replayed runs."""


def _simulated(run: RunData) -> bool:
    return run.header.mode is ReplayMode.SIMULATED


def _judging_summary(
    folder: Path,
    *,
    budget_ttft_ms: float,
    budget_ttfa_ms: float,
    human_judgments: Path | None,
    seed: int,
) -> JudgingSummary:
    header = read_judging_header(folder)
    replies = [r for r in read_replies(folder) if r.failed is None]
    verdicts = current_verdicts(folder)
    pairs = pair_results(verdicts)
    ratings, why = None, None
    try:
        ratings = current_ratings(
            folder,
            seed=seed,
            budget_ttfa_ms=budget_ttfa_ms,
            budget_ttft_ms=budget_ttft_ms,
            human_judgments=human_judgments,
        )
    except NothingToRateError as exc:
        why = exc.message
    card = card_of_judging(folder)
    return JudgingSummary(
        judging_dir=str(folder),
        judges=header.judges,
        smoke=header.smoke,
        card=card,
        trust_warning=trust_warning(card),
        own_family=own_family_of(folder),
        rubric_sha256=header.rubric_sha256,
        contestants=tuple(sorted({r.contestant for r in replies})),
        verdicts=len(verdicts),
        failed_verdicts=sum(v.answer is None for v in verdicts),
        failed_by_kind=count_kinds(
            v.failure.split(":", 1)[0] for v in verdicts if v.answer is None and v.failure
        ),
        pairs=len(pairs),
        decided_pairs=sum(p.winner is not None for p in pairs),
        health=tuple(judge_health(verdicts)),
        ratings=ratings,
        no_ratings=why,
    )


def _secrets(runs: Sequence[RunData], judgings: Sequence[Path | None]) -> list[str]:
    names = {r.header.agent.key_variable for r in runs} - {None}
    for judging in filter(None, judgings):
        try:
            spec, _ = load_judge_spec(Path(read_judging_header(judging).judge_spec_path))
            names |= {j.api_key_env for j in spec.judges} - {None}
        except VoicebenchError:
            pass  # the spec moved or its key is unset: the name pattern below still applies
    names |= {k for k in os.environ if CREDENTIAL_NAME.search(k)}
    values = {os.environ.get(n, "") for n in names if n is not None}
    return sorted((v for v in values if len(v) >= SECRET_MIN_LENGTH), key=len, reverse=True)


def _frontier_points(agents: Sequence[AgentLatency], judging: JudgingSummary, field: str):
    by_name: dict[str, AgentLatency] = {}
    for a in agents:  # an agent judged over several runs is placed at its first
        by_name.setdefault(a.judged_as or a.agent_name, a)
    points, humans = [], []
    assert judging.ratings is not None
    for r in judging.ratings.ratings:
        ci = r.elo_ci_bootstrap or r.elo_ci_asymptotic
        if r.kind == "human":
            humans.append((r.contestant, r.elo))
            continue
        latency = by_name.get(r.contestant)
        median = getattr(latency, field).quantile(50) if latency else None
        if latency is not None and median is not None:
            points.append(
                figures.FrontierPoint(
                    r.contestant, r.elo, ci, median.value_ms, median.ci_ms, latency.kind
                )
            )
    return points, humans


def _draw(runs: Sequence[RunData], report: Report, folder: Path) -> list[str]:
    series = [
        figures.Series.of(a.agent_name, r.records) for r, a in zip(runs, report.agents, strict=True)
    ]
    names = [
        figures.latency_ecdf(series, report.budget_ttft_ms, report.budget_ttfa_ms, folder),
        figures.waterfall(report.agents, report.budget_ttfa_ms, folder),
    ]
    if has_noise(report.agents):
        names.append(snr_curves(report.agents, folder))
    j = report.judging
    if j is not None and j.ratings is not None:
        for field, label, budget in (
            ("ttft", "TTFT", report.budget_ttft_ms),
            ("ttfa", "TTFA", report.budget_ttfa_ms),
        ):
            points, humans = _frontier_points(report.agents, j, field)
            names.append(
                figures.frontier(
                    points,
                    humans,
                    axis_label=label,
                    budget_ms=budget,
                    name=f"frontier_{field}",
                    folder=folder,
                    warning=figure_warning(j.card),
                )
            )
        names.append(figures.radar(j.ratings, folder))
        if j.ratings.people is not None and j.ratings.people.judge_agreement:
            names.append(agreement_figure(j.ratings.people, folder))
    s = report.strategies
    if s is not None and any(r.subset == "all" for r in s.rows):
        names.append(figures.strategy_heatmap(s.rows, folder, smoke=s.smoke))
    return names


def _strategy_summary(folder: Path) -> StrategySummary | None:
    """Diversity from the folder's strategy labels (``voicebench strategies``), if any."""
    if not (folder / LABELS_FILE).exists():
        return None
    return summarize_labels(read_labels(folder))


def build_report(
    paths: Sequence[Path],
    out_dir: Path,
    *,
    title: str | None = None,
    budget_ttft_ms: float = TTFT_BUDGET_MS,
    budget_ttfa_ms: float = TTFA_BUDGET_MS,
    human_judgments: Path | None = None,
    seed: int = 0,
    on_status: Callable[[str], None] | None = None,
    labels: Mapping[Path, str] | None = None,
    audio_format: AudioFormat = "wav",
) -> BuiltReport:
    """Write ``index.html``, ``report.md``, ``report.json`` and ``figures/`` into ``out_dir``.
    Each run is shown under its agent's name, or under ``labels[run_dir]`` (a campaign names
    its cells so, one agent having several runs); the names shown must be distinct. The judged
    replies' audio goes to ``audio/`` in ``audio_format``."""
    from voicebench.reporting.render import render_html, render_markdown

    say = on_status or (lambda _m: None)
    inputs = resolve_inputs(paths)
    run_dirs, judging_dir = inputs.runs, inputs.judging
    runs = [RunData(d, read_header(d), heard_turns(d, judging_dir)) for d in run_dirs]
    label = {d.resolve(): text for d, text in (labels or {}).items()}
    names = [
        label.get(r.dir.resolve(), r.header.agent.name + (CALLS_LABEL if _simulated(r) else ""))
        for r in runs
    ]
    for r, name in zip(runs, names, strict=True):
        if names.count(name) > 1:
            raise InputError(
                f"agent name {name!r} appears in more than one run; a report needs distinct names",
                file=r.dir / RUN_HEADER,
                field="agent.name",
            )
    say(
        f"{len(runs)} run(s), {sum(len(r.records) for r in runs)} turns"
        + (f"; judging {judging_dir}" if judging_dir else "; no judging folder")
        + (f"; judging of calls {inputs.call_judging}" if inputs.call_judging else "")
    )
    agents = tuple(
        agent_latency(
            r.dir,
            r.header,
            r.records,
            budget_ttft_ms=budget_ttft_ms,
            budget_ttfa_ms=budget_ttfa_ms,
            seed=seed,
            turn_timeout_ms=r.header.turn_timeout_s * 1000,
            openings=read_openings(r.dir),
        ).model_copy(
            update={"agent_name": name, "judged_as": r.header.agent.name}
            if name != r.header.agent.name
            else {}
        )
        for r, name in zip(runs, names, strict=True)
    )
    judging = (
        _judging_summary(
            judging_dir,
            budget_ttft_ms=budget_ttft_ms,
            budget_ttfa_ms=budget_ttfa_ms,
            human_judgments=human_judgments,
            seed=seed,
        )
        if judging_dir
        else None
    )
    strategies = _strategy_summary(judging_dir) if judging_dir else None
    call_judging = (
        _judging_summary(
            inputs.call_judging,
            budget_ttft_ms=budget_ttft_ms,
            budget_ttfa_ms=budget_ttfa_ms,
            human_judgments=None,
            seed=seed,
        )
        if inputs.call_judging
        else None
    )
    calls = tuple(
        call_outcomes(read_calls(r.dir), r.records, seed=seed).model_copy(
            update={"agent_name": name}
        )
        for r, name in zip(runs, names, strict=True)
        if _simulated(r)
    )
    report = Report(
        created_at=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        voicebench_version=__version__,
        title=title or "voicebench report: " + ", ".join(names),
        budget_ttft_ms=budget_ttft_ms,
        budget_ttfa_ms=budget_ttfa_ms,
        agents=agents,
        judging=judging,
        strategies=strategies,
        calls=calls,
        call_judging=call_judging,
    )
    out_dir.mkdir(parents=True, exist_ok=True)
    if judging_dir is not None:
        say("collecting the replies and their audio")
        replies = item_replies(
            judging_dir, out_dir, human_judgments=human_judgments, audio_format=audio_format
        )
        report = report.model_copy(update={"replies": replies})
    if inputs.call_judging is not None:
        say("collecting the calls and their audio")
        report = report.model_copy(
            update={"call_replies": call_views(inputs.call_judging, out_dir, audio_format)}
        )
    say("collecting the runs' call recordings")
    named = [(name, r.dir, r.records) for r, name in zip(runs, names, strict=True)]
    recorded, left_out = call_recordings(named, out_dir, audio_format)
    report = report.model_copy(update={"recordings": recorded, "recordings_left_out": left_out})
    say("drawing figures")
    report = report.model_copy(update={"figures": tuple(_draw(runs, report, out_dir / "figures"))})
    secrets = _secrets(runs, (judging_dir, inputs.call_judging))

    def scrub(text: str) -> str:
        return redact(text, *secrets, limit=len(text))

    files = [out_dir / "report.json", out_dir / "report.md", out_dir / "index.html"]
    write_atomic(files[0], scrub(report.model_dump_json(indent=2) + "\n"))
    write_atomic(files[1], scrub(render_markdown(report)))
    # Last, so a page that exists belongs to a complete report.
    write_atomic(files[2], scrub(render_html(report, out_dir / "figures")))
    audio = [
        out_dir / r.audio
        for item in (*report.replies, *report.call_replies)
        for r in item.replies
        if r.audio
    ] + [out_dir / c.audio for c in report.recordings]
    figure_files = [
        out_dir / "figures" / f"{n}.{ext}" for n in report.figures for ext in ("png", "svg")
    ]
    return BuiltReport(out_dir, report, files + figure_files + audio)
