"""``report`` from Python: the latency-budget report and the quality-latency frontier of runs
and a judging, a campaign's or the demo's folder as the campaign reported it, or a load
folder's report by concurrency."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from voicebench.api.results import Judging, PathLike, Run, folder
from voicebench.budgets import TTFA_BUDGET_MS, TTFT_BUDGET_MS
from voicebench.campaign.folder import PLAN_FILE, is_campaign, report_inputs
from voicebench.errors import InputError
from voicebench.judging import HEADER_FILE as JUDGING_HEADER
from voicebench.judging.load import LoadQuality
from voicebench.judging.load import load_quality as quality_by_band
from voicebench.live.load import LOAD_FILE
from voicebench.reporting import BuiltReport, build_report, resolve_inputs
from voicebench.reporting.load import write_load_report
from voicebench.reporting.replies import AudioFormat
from voicebench.runlog import HEADER_FILE as RUN_HEADER
from voicebench.runlog import folder_stamp


def is_load(path: PathLike) -> bool:
    """Whether a folder is a load's (``voicebench load``), reported by ``load_report``."""
    return (Path(path) / LOAD_FILE).exists()


def load_report(
    load: PathLike,
    *,
    out: PathLike | None = None,
    budget_ttfa_ms: float = TTFA_BUDGET_MS,
    judging: Judging | PathLike | None = None,
) -> Path:
    """A load folder's report: TTFA and failures by concurrency band with the breaking point,
    and calls in progress over time (``index.html``, ``summary.json``, ``figures/``); once the
    load is judged (``judge([load])``, into ``LOAD_DIR/judging`` unless ``judging`` says
    where), quality by band beside TTFA and where quality breaks. Returns the page."""
    target = Path(out) if out is not None else Path("reports") / f"load-report-{folder_stamp()}"
    return write_load_report(
        Path(load),
        target,
        budget_ttfa_ms=budget_ttfa_ms,
        judging_dir=None if judging is None else folder(judging),
    )


def load_quality(judging: Judging | PathLike) -> LoadQuality:
    """A judged load's quality by concurrency band: each band's Elo less the baseline's with
    its 95% interval over items, and the band from which on quality is clearly worse."""
    return quality_by_band(folder(judging))


def run_folders(inputs: Sequence[Run | Judging | PathLike]) -> list[Path]:
    """The run folders ``report`` reports on, for each input alone: a run folder itself (with
    the runs judged beside it in its ``judging/``), a judging folder's runs, a campaign's or
    the demo's folder's runs; each once, in that order. A load folder is refused (it has no
    run folders: ``load_report`` reports it)."""
    found: dict[Path, Path] = {}
    for path in map(folder, inputs):
        if is_load(path):
            raise InputError("a load folder: voicebench report reports it", file=path)
        if not any((path / name).is_file() for name in (RUN_HEADER, JUDGING_HEADER, PLAN_FILE)):
            raise InputError(
                f"neither a run directory ({RUN_HEADER}), a judging folder ({JUDGING_HEADER}) "
                f"nor a campaign's or the demo's folder ({PLAN_FILE})",
                file=path,
            )
        paths = report_inputs(path).paths if is_campaign(path) else [path]
        for run in resolve_inputs(paths).runs:
            found.setdefault(run.resolve(), run)
    return list(found.values())


def report(
    inputs: Sequence[Run | Judging | PathLike],
    *,
    out: PathLike | None = None,
    title: str | None = None,
    budget_ttft_ms: float | None = None,
    budget_ttfa_ms: float | None = None,
    human_judgments: PathLike | None = None,
    audio_format: AudioFormat | None = None,
    on_status: Callable[[str], None] | None = None,
) -> BuiltReport:
    """Write the latency-budget report and the quality-latency frontier for runs and (at most)
    one judging: ``index.html`` (one self-contained page), ``report.md``, ``report.json`` and
    ``figures/``. A campaign or demo folder, given alone, is reported as the campaign reported
    it: its judging and runs, its cells' labels, its title, budgets and audio format (unless
    given here). The budgets default to 500 ms TTFT and 1000 ms TTFA.

    The judged replies' audio and the calls' recordings are copied to ``audio/`` as recorded
    (``audio_format="wav"``, the default) or encoded as Opus in Ogg (``"opus"``, about a tenth
    of the size, for a report to share); the run folders keep theirs as recorded.
    ``on_status`` is called with a line for each step taken.

    Returns:
        The report's folder, its data (``.report``) and the files written.
    """
    paths = [folder(x) for x in inputs]
    loads = [p for p in paths if is_load(p)]
    if loads:
        raise InputError("a load folder is reported with load_report", file=loads[0])
    labels: dict[Path, str] = {}
    ttft, ttfa = TTFT_BUDGET_MS, TTFA_BUDGET_MS
    audio: AudioFormat = "wav"
    campaigns = [p for p in paths if is_campaign(p)]
    if campaigns:
        if len(paths) > 1:
            raise InputError("a campaign folder is reported on its own", file=campaigns[0])
        found = report_inputs(campaigns[0])
        paths, labels, title = found.paths, found.labels, title or found.title
        ttft, ttfa = found.budgets.ttft_ms, found.budgets.ttfa_ms
        audio = found.audio
    return build_report(
        paths,
        Path(out) if out is not None else Path("reports") / f"report-{folder_stamp()}",
        title=title,
        budget_ttft_ms=ttft if budget_ttft_ms is None else budget_ttft_ms,
        budget_ttfa_ms=ttfa if budget_ttfa_ms is None else budget_ttfa_ms,
        human_judgments=Path(human_judgments) if human_judgments is not None else None,
        audio_format=audio if audio_format is None else audio_format,
        on_status=on_status,
        labels=labels,
    )
