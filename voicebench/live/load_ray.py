"""A load spread over Ray workers (``voicebench load --backend ray [--address HOST:6379]
[--workers N]``).

Each worker is a Ray actor holding one caller pool (``voicebench.live.callers``) on its own
event loop and clock; caller k goes to worker k mod N, and a worker takes at most
``PER_WORKER_CALLERS`` callers (the most one 2-core machine timed within the error bound,
measured by ``benchmarks/ws_load.py --find-limit``). Before the start the driver measures each
worker's clock against its own (the reading with the shortest of a few round trips: offset and its
uncertainty, half that round trip, written to ``load.json``), then names a start time on its
clock that every worker converts to its own; so every offset in the folder is on one
wall-clock timeline across machines.

Results stream back as they happen (Ray's streaming generators, as the campaign's cells do):
a call dialled, a turn finished, a call ended. The driver writes each turn and call as it
arrives into the one ``turns.jsonl`` and ``calls.jsonl`` that a load on one process writes, a
turn's concurrency being the calls in progress on every worker when it started. A worker lost
mid-run loses only its calls in progress: they are written to ``calls.jsonl`` as ``lost``
(their unfinished turns never existed), the other workers carry on, and nothing written before
changes. Without ``--address`` a Ray instance is started on 127.0.0.1 and stopped at the end,
as campaigns do.
"""

from __future__ import annotations

import asyncio
import bisect
import math
import os
import queue
import socket
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from voicebench._model import FrozenModel
from voicebench.agentspec import AgentSpec
from voicebench.dialogues import Dialogue
from voicebench.errors import InputError, VoicebenchError
from voicebench.fixtures import Manifest
from voicebench.fixtures.manifest import is_builtin
from voicebench.live.callers import CallerPool
from voicebench.live.load_summary import CallSpan, LoadTurn
from voicebench.live.patterns import Window

PER_WORKER_CALLERS = 100
"""The most callers one worker takes: on a 2-core machine (harness and scripted agent) the
harness's TTFA error p99 stayed within 10 ms up to 150 callers on ``pcm`` and 100 on
``twilio`` (``benchmarks/ws_load.py --find-limit``; 200 and 150 were over)."""
LEAD_S = 3.0
"""How far ahead of the clock readings the common start is set (the workers' pools start
then, together)."""
PINGS = 5


class WorkerClock(FrozenModel):
    """A worker's clock against the driver's, measured before the start."""

    worker: int
    host: str
    pid: int
    offset_ms: float
    """Its wall clock minus the driver's."""
    uncertainty_ms: float
    """Half the round trip of the reading used: the offset is within this much."""


@dataclass(frozen=True)
class WorkerJob:
    spec: AgentSpec
    dialogues: list[Dialogue]
    manifest: Manifest
    fixtures_dir: str
    callers: list[tuple[int, Window]]
    run_id: str
    turn_timeout_s: float
    seed: int
    scenarios: tuple[str, ...]
    start_at: float
    """The start, on this worker's wall clock."""


class LoadWorker:
    """One worker's caller pool (a Ray actor)."""

    def clock(self) -> float:
        return time.time()

    def where(self) -> tuple[str, int]:
        return socket.gethostname(), os.getpid()

    def run(self, job: WorkerJob) -> Iterator[tuple]:
        """Run the job's callers from its start, yielding ``("call", caller, call, at)`` as a
        call is dialled, ``("turn", LoadTurn)``, ``("span", CallSpan)`` as a call ends."""
        events: queue.Queue[tuple | BaseException | None] = queue.Queue()
        fixtures = Path(job.fixtures_dir)
        manifest = job.manifest
        if not fixtures.is_dir():  # another machine: the seeker audio is made here
            from voicebench.fixtures import synthesize_fixtures

            fixtures = Path(tempfile.mkdtemp(prefix="voicebench-load-")) / "fixtures"
            manifest = synthesize_fixtures(job.dialogues, fixtures).manifest
        elif is_builtin(fixtures):  # built-in items' audio made on first use: this machine's
            from voicebench.fixtures import synthesize_fixtures

            manifest = synthesize_fixtures(job.dialogues, fixtures).manifest

        def pool_thread() -> None:
            async def main() -> None:
                delay = job.start_at - time.time()
                await asyncio.sleep(max(0.0, delay))

                async def on_turn(t: LoadTurn) -> None:
                    events.put(("turn", t))

                async def on_call(s: CallSpan) -> None:
                    events.put(("span", s))

                pool = CallerPool(
                    job.spec,
                    job.dialogues,
                    manifest,
                    fixtures,
                    run_id=job.run_id,
                    turn_timeout_s=job.turn_timeout_s,
                    seed=job.seed,
                    scenarios=job.scenarios,
                    on_turn=on_turn,
                    on_call=on_call,
                    on_call_start=lambda caller, call, at: events.put(("call", caller, call, at)),
                    start=time.monotonic() - max(0.0, -delay),
                )
                await pool.run(job.callers)

            try:
                asyncio.run(main())
                events.put(None)
            except BaseException as exc:  # handed to the driver through the stream
                events.put(exc)

        threading.Thread(target=pool_thread, name="load-pool", daemon=True).start()
        while True:
            event = events.get()
            if event is None:
                return
            if isinstance(event, BaseException):
                raise event
            yield event


def _measure_clock(ray: Any, actor: Any, worker: int) -> WorkerClock:
    best: tuple[float, float] | None = None
    for _ in range(PINGS):
        sent = time.time()
        theirs = ray.get(actor.clock.remote())
        back = time.time()
        sample = (back - sent, theirs - (sent + back) / 2)
        if best is None or sample[0] < best[0]:
            best = sample
    assert best is not None
    host, pid = ray.get(actor.where.remote())
    return WorkerClock(
        worker=worker,
        host=host,
        pid=pid,
        offset_ms=round(best[1] * 1000, 3),
        uncertainty_ms=round(best[0] * 500, 3),
    )


def workers_for(callers: int, workers: int | None) -> int:
    """How many workers a load of ``callers`` uses; refused when one would take too many."""
    n = workers or math.ceil(callers / PER_WORKER_CALLERS)
    if math.ceil(callers / n) > PER_WORKER_CALLERS:
        raise InputError(
            f"{callers} callers on {n} workers is {math.ceil(callers / n)} a worker, over the "
            f"{PER_WORKER_CALLERS} one worker times within the error bound: use "
            f"--workers {math.ceil(callers / PER_WORKER_CALLERS)} or more",
            field="--workers",
        )
    return n


@dataclass
class RayLoad:
    """The driver's side: workers started, clocks measured, then the load run."""

    spec: AgentSpec
    dialogues: Sequence[Dialogue]
    manifest: Manifest
    fixtures_dir: Path
    windows: Sequence[Window]
    run_id: str
    turn_timeout_s: float
    seed: int
    scenarios: tuple[str, ...]
    workers: int
    on_turn: Callable[[LoadTurn], None]
    on_span: Callable[[CallSpan], None]
    on_status: Callable[[str], None] = lambda _line: None

    def run(self, ray: Any, clocks_known: Callable[[list[WorkerClock]], None]) -> None:
        """Start the workers, measure their clocks (``clocks_known`` is told before the
        start), run the load to its end; a lost worker's calls in progress end as lost."""
        actor = ray.remote(num_cpus=1, max_restarts=0)(LoadWorker)
        self.on_status(f"starting {self.workers} Ray workers")  # (slow on a busy machine)
        actors = [actor.remote() for _ in range(self.workers)]
        clocks = [_measure_clock(ray, a, k) for k, a in enumerate(actors)]
        clocks_known(clocks)
        start_at = time.time() + LEAD_S
        events: queue.Queue[tuple] = queue.Queue()
        for k, a in enumerate(actors):
            job = WorkerJob(
                self.spec,
                list(self.dialogues),
                self.manifest,
                str(self.fixtures_dir),
                [(c, w) for c, w in enumerate(self.windows) if c % self.workers == k],
                self.run_id,
                self.turn_timeout_s,
                self.seed,
                self.scenarios,
                start_at + clocks[k].offset_ms / 1000,
            )
            threading.Thread(
                target=_drain, args=(ray, a.run.remote(job), k, events), daemon=True
            ).start()
        self._collect(events, start_at)

    def _collect(self, events: queue.Queue[tuple], start_at: float) -> None:
        running: dict[tuple[int, int], tuple[int, float]] = {}  # call -> (worker, start)
        # Every call's start and every ended call's end, sorted: the calls in progress at t
        # are the starts up to t less the ends up to t.
        starts: list[float] = []
        ends: list[float] = []

        def ended(span: CallSpan) -> None:
            bisect.insort(ends, span.end_s)
            self.on_span(span)

        left, failure = self.workers, None
        while left:
            kind, worker, *what = events.get()
            if kind == "call":
                caller, call, at = what
                running[(caller, call)] = (worker, at)
                bisect.insort(starts, at)
            elif kind == "turn":
                (t,) = what
                at = t.offset_s
                busy = bisect.bisect_right(starts, at) - bisect.bisect_right(ends, at)
                self.on_turn(t.model_copy(update={"concurrency": max(1, busy)}))
            elif kind == "span":
                (s,) = what
                running.pop((s.caller, s.call), None)
                ended(s.model_copy(update={"worker": worker}))
            elif kind in ("done", "lost", "failed"):
                left -= 1
                if kind == "lost":
                    now = round(time.time() - start_at, 3)
                    lost = [(c, s) for c, (w, s) in running.items() if w == worker]
                    self.on_status(f"worker {worker} was lost with {len(lost)} calls in progress")
                    for (caller, call), began in lost:
                        del running[(caller, call)]
                        ended(
                            CallSpan(
                                caller=caller,
                                call=call,
                                start_s=began,
                                end_s=max(now, began),
                                answered=True,
                                lost=True,
                                worker=worker,
                            )
                        )
                elif kind == "failed":
                    failure = failure or what[0]
        if failure is not None:
            raise failure


def _drain(ray: Any, stream: Any, worker: int, events: queue.Queue[tuple]) -> None:
    """One worker's stream into the driver's queue: its events, then done, lost or failed."""
    try:
        for ref in stream:
            event = ray.get(ref)
            events.put((event[0], worker, *event[1:]))
        events.put(("done", worker))
    except ray.exceptions.RayTaskError as exc:  # the pool itself failed (e.g. unanswered)
        cause = exc.cause
        events.put(
            (
                "failed",
                worker,
                cause if isinstance(cause, VoicebenchError) else exc.as_instanceof_cause(),
            )
        )
    except ray.exceptions.RayError:  # the worker died or its node went away
        events.put(("lost", worker))
