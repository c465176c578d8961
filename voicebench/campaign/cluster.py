"""A campaign's cells on a Ray cluster (``voicebench campaign --backend ray``).

Each cell is one Ray task that declares the CPUs it needs (``Cell.cpus``: whole cores for a
pipeline run on the worker, whose timing would suffer from sharing them; a quarter of one for a
remote agent, which only streams audio). The task replays the cell into a scratch folder on
its worker, timing every turn there on the worker's own clock, and streams the folder's new
files back after every turn (``voicebench.campaign.sync``); the driver writes them into the
campaign folder at once. So when a worker dies, what it finished is already here: the cell is
submitted again with the folder as it stands, and the new worker continues at the next turn.

The worker finds the campaign's inputs at the driver's paths when they are there (a shared
file system, or the same checkout at the same path); otherwise the built-in set and fixtures
come with its own voicebench, a dialogue set is sent with the task, and missing fixtures are
synthesized there. The run folder's ``run.json`` names the driver's paths either way.

Without an address a Ray instance is started on 127.0.0.1 for the campaign and stopped at its
end; nothing listens beyond loopback, and Ray's usage reporting is switched off.
"""

from __future__ import annotations

import hashlib
import os
import queue
import shutil
import socket
import tempfile
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from voicebench._ray import ray_session
from voicebench.campaign.plan import CampaignPlan, Cell
from voicebench.campaign.run import CampaignHooks, replay_cell
from voicebench.campaign.sync import FileChange, FolderSync, apply, snapshot
from voicebench.errors import VoicebenchError
from voicebench.fixtures import BUILTIN_FIXTURES
from voicebench.replaying import RunProgress
from voicebench.runlog import HEADER_FILE, TurnRecord, header_json, parse_header, read_turns

MAX_RESCHEDULES = 5
"""A cell rescheduled this many times in a row without finishing a turn is given up (the
campaign stops, naming it)."""


@dataclass(frozen=True)
class CellJob:
    """What a worker needs to run one cell: the cell, and its inputs' bytes in case the
    driver's paths are not there."""

    cell: Cell
    turn_timeout_s: float
    seed: int
    dialogues: bytes
    builtin_fixtures: bool


@dataclass(frozen=True)
class Update:
    changes: list[FileChange]
    done: int
    total: int
    record: TurnRecord | None
    host: str
    pid: int


def _inputs(job: CellJob, scratch: Path) -> tuple[Path, Path]:
    """The dialogue set and fixture folder on this worker."""
    cell = job.cell
    dialogues = cell.dialogues_path
    sha = hashlib.sha256(job.dialogues).hexdigest()
    if not (dialogues.is_file() and hashlib.sha256(dialogues.read_bytes()).hexdigest() == sha):
        dialogues = scratch / "inputs" / f"{sha[:16]}-{cell.dialogues_path.name}"
        dialogues.parent.mkdir(parents=True, exist_ok=True)
        dialogues.write_bytes(job.dialogues)
    fixtures = cell.fixtures_dir
    if job.builtin_fixtures:
        fixtures = BUILTIN_FIXTURES
    elif not fixtures.is_dir():
        fixtures = scratch / "fixtures" / hashlib.sha256(str(fixtures).encode()).hexdigest()[:16]
    return dialogues, fixtures


def cell_task(job: CellJob, seed: list[FileChange]) -> Iterator[Update]:
    """Run on a worker: replay the cell into a scratch folder seeded with what the campaign
    folder holds, yielding the folder's new files after every turn."""
    cell = job.cell
    root = Path(tempfile.mkdtemp(prefix="voicebench-cell-"))
    folder = root / cell.key  # the run id is the folder's name
    apply(folder, seed)
    sync = FolderSync(folder, seed)
    dialogues, fixtures = _inputs(job, root)
    ticks: queue.Queue[RunProgress | BaseException | None] = queue.Queue()

    def replay() -> None:
        try:
            replay_cell(
                cell,
                folder,
                turn_timeout_s=job.turn_timeout_s,
                seed=job.seed,
                dialogues_path=dialogues,
                fixtures_dir=fixtures,
                progress=ticks.put,
            )
            ticks.put(None)
        except BaseException as exc:  # handed to the driver through the task's result
            ticks.put(exc)

    thread = threading.Thread(target=replay, name=f"cell {cell.key}", daemon=True)
    thread.start()
    host, pid = socket.gethostname(), os.getpid()
    done, total = 0, 0
    try:
        while True:
            tick = ticks.get()
            if isinstance(tick, BaseException):
                raise tick
            if tick is not None:
                done, total = tick.done, tick.total
            record = tick.record if tick is not None else None
            yield Update(sync.changes(), done, total, record, host, pid)
            if tick is None:
                break
    finally:
        thread.join(timeout=1)
        shutil.rmtree(root, ignore_errors=True)


def _write_header(run_dir: Path, change: FileChange, cell: Cell) -> FileChange:
    """``run.json`` as the worker wrote it, with the driver's paths."""
    header = parse_header(change.data, file=run_dir / HEADER_FILE)
    header = header.model_copy(
        update={
            "dialogues_path": str(cell.dialogues_path),
            "fixtures_dir": str(cell.fixtures_dir),
            "agent_spec_path": str(cell.spec_path),
        }
    )
    return FileChange(change.path, header_json(header).encode())


def run_on_ray(
    plan: CampaignPlan,
    cells: Sequence[Cell],
    hooks: CampaignHooks,
    *,
    address: str | None = None,
    workers: int | None = None,
) -> None:
    """Run ``cells`` as Ray tasks, at most ``workers`` at once (default: as many as the
    cluster's CPUs allow), each cell's files streamed into the campaign folder."""
    with ray_session(address) as ray:
        task = ray.remote(max_retries=0)(cell_task)
        lock = threading.Lock()
        stopping = threading.Event()  # set when the campaign stops early: nothing is resubmitted
        progress = {c.key: (0, c.turns) for c in cells}

        def tell(cell: Cell, update: Update) -> None:
            progress[cell.key] = (update.done, update.total)
            if update.record is not None:  # the count at a cell's start is not news
                done = sum(d for d, _ in progress.values())
                total = sum(t for _, t in progress.values())
                hooks.turn(RunProgress(done, total, update.record))

        def drive(cell: Cell) -> None:
            run_dir = plan.run_dir(cell)
            job = CellJob(
                cell,
                plan.spec.budgets.turn_timeout_s,
                plan.spec.seed,
                cell.dialogues_path.read_bytes(),
                cell.fixtures_dir == BUILTIN_FIXTURES,
            )
            losses, kept = 0, -1  # workers lost in a row, without a turn finished between
            while True:
                if stopping.is_set():
                    return
                seed = snapshot(run_dir)
                stream = task.options(num_cpus=cell.cpus, name=f"cell {cell.key}").remote(job, seed)
                try:
                    for n, ref in enumerate(stream):
                        update: Update = ray.get(ref)
                        if n == 0:
                            with lock:
                                hooks.status(
                                    f"cell {cell.key}: on {update.host} (pid {update.pid}), "
                                    f"{update.done}/{update.total} turns done"
                                )
                        changes = [
                            _write_header(run_dir, c, cell) if c.path == HEADER_FILE else c
                            for c in update.changes
                        ]
                        with lock:
                            apply(run_dir, changes)
                            tell(cell, update)
                    break
                except ray.exceptions.RayTaskError as exc:  # the cell itself failed
                    if isinstance(exc.cause, VoicebenchError):
                        raise exc.cause from None
                    raise exc.as_instanceof_cause() from None
                except ray.exceptions.RayError as exc:
                    if stopping.is_set():
                        return
                    now = len(read_turns(run_dir)) if (run_dir / HEADER_FILE).exists() else 0
                    losses, kept = (losses + 1 if now == kept else 1), now
                    if losses > MAX_RESCHEDULES:
                        raise VoicebenchError(
                            f"cell {cell.key}: its worker was lost {losses} times in a row with "
                            f"no turn finished; last: {type(exc).__name__}"
                        ) from exc
                    with lock:
                        hooks.status(
                            f"cell {cell.key}: its worker was lost ({type(exc).__name__}); "
                            f"rescheduled, resuming after its {kept} finished turns"
                        )
            records = read_turns(run_dir)
            with lock:
                hooks.cell(cell, records)

        hooks.status(
            f"{len(cells)} cells on Ray ({'a local instance' if address is None else address}), "
            f"CPUs: {ray.cluster_resources().get('CPU', 0):g}"
        )
        # One daemon thread per cell, at most ``workers`` of them driving a task at once.
        # Daemons: a thread waiting on a task when the campaign stops (an error, Ctrl-C) is
        # left behind as Ray shuts down, and never holds up the exit.
        slots = threading.Semaphore(workers or len(cells) or 1)
        finished: queue.Queue[BaseException | None] = queue.Queue()

        def one(cell: Cell) -> None:
            try:
                with slots:
                    if not stopping.is_set():
                        drive(cell)
                finished.put(None)
            except BaseException as exc:
                finished.put(exc)

        for cell in cells:
            threading.Thread(target=one, args=(cell,), name=f"cell {cell.key}", daemon=True).start()
        try:
            for _ in cells:
                while True:
                    try:  # waits in short steps, so that Ctrl-C is heard at once
                        outcome = finished.get(timeout=0.5)
                        break
                    except queue.Empty:
                        continue
                if outcome is not None:
                    raise outcome
        finally:
            stopping.set()
