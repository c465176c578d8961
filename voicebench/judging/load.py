"""Quality under load (``voicebench judge LOAD_DIR``): the replies a load recorded, judged by
how many calls were in progress, and where quality breaks.

Each call of a load keeps its final reply's audio. The calls are grouped by the concurrency
band their final turn started in (the bands of the load's summary); in each band, each item's
earliest answered call gives that band's reply to it. Each band becomes one contestant, named
``AGENT at LOW-HIGH calls``, in a run folder of its own under the judging folder
(``bands/``), so the judging, the ratings and their reports are the ones every run gets. The
bands are judged pairwise against one baseline, in both orders, on the five HEART dimensions:
the lowest band, or a reference run of the same items (``against``); the human reference is
judged against the baseline too, as a scale.

Each band's quality is how often its reply was preferred to the baseline's on the same item:
a win counts 1, a loss 0, and a pair the judge left undecided (its verdict flipped with the
order, or the two replies were the same) one half, so 50% is "as good as the baseline". Its
95% interval resamples items (``bootstrap.clustered``); a band judged on fewer items than an
interval needs (``bootstrap.clusters_needed``) has none: too few to tell. (An Elo fit would
put a band whose every pair was undecided at the prior's centre, far from a baseline that
won elsewhere: a head-to-head share says what was measured.) A band is *worse* when its
interval lies wholly below 50%; quality **breaks** at the lowest band from which on every
band is worse.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import numpy as np

from voicebench import bootstrap
from voicebench._jsonl import write_atomic
from voicebench._model import FrozenModel, read_model
from voicebench.errors import InputError
from voicebench.judging.combine import pair_results
from voicebench.judging.models import Verdict
from voicebench.judging.run import JudgingResult, judge_runs
from voicebench.judging.store import current_verdicts
from voicebench.live.load import LOAD_FILE, LoadHeader, read_load
from voicebench.live.load_summary import LoadTurn, band_edges
from voicebench.runlog import ReplayMode, RunHeader, header_json, read_header

JUDGING_DIR = "judging"
"""Where ``voicebench judge LOAD_DIR`` writes unless told: ``LOAD_DIR/judging``."""
BANDS_FILE = "bands.json"


class JudgedBand(FrozenModel):
    low: int
    high: int
    contestant: str
    run_dir: str
    items: int
    """Items this band answered (each by its earliest call in the band)."""


class LoadJudging(FrozenModel):
    """What a judging folder of a load holds besides the judging itself (``bands.json``)."""

    load_dir: str
    baseline: str
    """The contestant every band was judged against."""
    against: str | None = None
    """The reference run, when the baseline is not the lowest band."""
    bands: tuple[JudgedBand, ...]


class BandQuality(FrozenModel):
    low: int
    high: int
    contestant: str
    items: int
    pairs: int = 0
    """Items on which it was judged against the baseline."""
    preferred: float | None = None
    """Share of those items on which its reply was preferred (undecided: one half); None for
    the baseline itself, or with no pair judged."""
    low_ci: float | None = None
    high_ci: float | None = None
    """The 95% interval over resampled items; None when too few items to tell."""
    worse: bool = False
    """The interval lies wholly below one half."""


class LoadQuality(FrozenModel):
    baseline: str
    against: str | None
    bands: tuple[BandQuality, ...]
    breaks_at: int | None
    """The lowest band's lower edge from which on every band is worse than the baseline."""


def is_load(path: Path) -> bool:
    return (path / LOAD_FILE).is_file()


def _band_label(low: int, high: int) -> str:
    return str(low) if low == high else f"{low}-{high}"


def band_runs(load_dir: Path, out_dir: Path) -> list[JudgedBand]:
    """A run folder per concurrency band under ``out_dir/bands``, each holding its items'
    final replies (the earliest answered call in the band) and their audio."""
    header, turns = read_load(load_dir)
    if header.dialogues_path is None:
        raise InputError(
            "this load kept no dialogue set (it was made before loads could be judged)",
            file=load_dir / LOAD_FILE,
            field="dialogues_path",
        )
    answered = [t for t in turns if t.turn.final and t.turn.error is None and t.turn.audio_path]
    if not answered:
        raise InputError(
            "no call of this load kept a final reply to judge (calls that never reached their "
            "last turn, or a load run on Ray workers, which keep no audio)",
            file=load_dir,
        )
    out: list[JudgedBand] = []
    for low, high in band_edges(turns):
        chosen: dict[str, LoadTurn] = {}
        for t in sorted(answered, key=lambda t: t.offset_s):
            if low <= t.concurrency <= high:
                chosen.setdefault(t.turn.dialogue_id, t)
        if not chosen:
            continue
        name = f"{header.agent.name[:60]} at {_band_label(low, high)} calls"
        run_dir = out_dir / "bands" / f"c{low:03d}-{high:03d}"
        _write_band(run_dir, header, name, list(chosen.values()), load_dir)
        out.append(
            JudgedBand(
                low=low,
                high=high,
                contestant=name,
                run_dir=str(run_dir),
                items=len(chosen),
            )
        )
    return out


def _write_band(
    run_dir: Path, load: LoadHeader, name: str, turns: list[LoadTurn], load_dir: Path
) -> None:
    """A run folder of one band's replies, made afresh from the load each time."""
    (run_dir / "audio").mkdir(parents=True, exist_ok=True)
    assert load.dialogues_path is not None
    header = RunHeader(
        run_id=run_dir.name,
        created_at=load.created_at,
        voicebench_version=load.voicebench_version,
        agent=load.agent.model_copy(update={"name": name}),
        agent_spec_path=str(load_dir / LOAD_FILE),
        dialogues_path=load.dialogues_path,
        dialogues_sha256="0" * 64,
        dialogue_ids=tuple(t.turn.dialogue_id for t in turns),
        mode=ReplayMode.TEACHER_FORCED,
        fixtures_dir="",
        turn_timeout_s=load.turn_timeout_s,
        seed=load.seed,
    )
    lines = []
    for t in turns:
        assert t.turn.audio_path is not None
        shutil.copyfile(load_dir / t.turn.audio_path, run_dir / t.turn.audio_path)
        lines.append(t.turn.model_copy(update={"run_id": run_dir.name}).model_dump_json())
    write_atomic(run_dir / "run.json", header_json(header))
    write_atomic(run_dir / "turns.jsonl", "".join(line + "\n" for line in lines))


async def judge_load(
    load_dir: Path,
    judge_spec: Path,
    out_dir: Path | None = None,
    *,
    against: Path | None = None,
    concurrency: int = 4,
    seed: int = 0,
    on_status: Callable[[str], None] | None = None,
    progress: Callable[[Verdict, int, int], None] | None = None,
    client_factory: Callable | None = None,
) -> JudgingResult:
    """Judge a load's replies band by band against the lowest band (or ``against``, a run of
    the same items) into ``out_dir`` (default ``LOAD_DIR/judging``); resumable."""
    out_dir = out_dir if out_dir is not None else load_dir / JUDGING_DIR
    bands = band_runs(load_dir, out_dir)
    runs = [Path(b.run_dir) for b in bands]
    baseline = bands[0].contestant
    if against is not None:
        reference = read_header(against)
        if reference.mode is not ReplayMode.TEACHER_FORCED:
            raise InputError("the reference must be a teacher-forced run", file=against)
        baseline = reference.agent.name
        runs.append(against)
    record = LoadJudging(
        load_dir=str(load_dir),
        baseline=baseline,
        against=None if against is None else str(against),
        bands=tuple(bands),
    )
    result = await judge_runs(
        runs,
        judge_spec,
        out_dir,
        concurrency=concurrency,
        seed=seed,
        on_status=on_status,
        progress=progress,
        client_factory=client_factory,
        anchor=baseline,
    )
    write_atomic(out_dir / BANDS_FILE, record.model_dump_json(indent=2) + "\n")
    return result


def read_load_judging(judging_dir: Path) -> LoadJudging | None:
    """A load judging's bands (None for a judging of runs)."""
    path = judging_dir / BANDS_FILE
    return read_model(LoadJudging, path) if path.is_file() else None


def load_quality(judging_dir: Path, *, rounds: int = 1000, seed: int = 0) -> LoadQuality:
    """Each band's share of items preferred to the baseline, with its interval, and where
    quality breaks."""
    record = read_load_judging(judging_dir)
    if record is None:
        raise InputError("not the judging of a load (no bands.json)", file=judging_dir)
    pairs = pair_results(current_verdicts(judging_dir))
    out: list[BandQuality] = []
    for band in record.bands:
        scores, items = [], []
        for p in pairs:
            if {p.first, p.second} == {band.contestant, record.baseline}:
                won = p.winner == band.contestant
                scores.append(0.5 if p.winner is None else float(won))
                items.append(p.item_id)
        base = {
            "low": band.low,
            "high": band.high,
            "contestant": band.contestant,
            "items": band.items,
            "pairs": len(scores),
        }
        if band.contestant == record.baseline or not scores:
            out.append(BandQuality(**base))
            continue
        share = round(float(np.mean(scores)), 4)
        if len(set(items)) < bootstrap.clusters_needed():
            out.append(BandQuality(**base, preferred=share))
            continue
        _, (low,), (high,) = bootstrap.clustered(
            scores, items, [bootstrap.weighted_mean], rounds=rounds, seed=seed
        )
        out.append(
            BandQuality(
                **base,
                preferred=share,
                low_ci=round(float(low), 4),
                high_ci=round(float(high), 4),
                worse=float(high) < 0.5,
            )
        )
    breaks_at = None
    for k, q in enumerate(out):
        if q.contestant != record.baseline and all(b.worse for b in out[k:]):
            breaks_at = q.low
            break
    return LoadQuality(
        baseline=record.baseline, against=record.against, bands=tuple(out), breaks_at=breaks_at
    )
