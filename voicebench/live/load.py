"""``voicebench load``: many simulated callers at once against a remote voice agent, or many
sessions of a LiveKit agent in this process (``[livekit]``).

Callers. A load pattern (``voicebench.live.patterns``: ``ramp``, ``step``, ``spike``,
``soak``) says when each caller is on the line; by default ``callers`` callers arrive over
``ramp_s`` seconds, evenly spaced (``fixed``) or with exponential gaps of the same mean
(``poisson``, seeded), and stay until ``duration_s``. On the line, a caller makes calls back
to back (``voicebench.live.callers``: the caller pool, its calls, back-off and giving up). No
call starts after the caller leaves; calls under way finish their turns.

Each turn is appended to ``turns.jsonl`` as a ``LoadTurn`` the moment it ends, with the
number of calls in progress when it started (its concurrency), and each call to
``calls.jsonl`` (when it started and ended: the calls-in-progress timeline) as it ends.
``load.json`` says what was run, the pattern's windows included. A load folder can be
summarized again at any time, also after a kill.

When not one call has been answered in the first seconds the load stops there with
``AgentUnanswered``, its failed turns kept.

Summary: ``voicebench.live.load_summary``.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import gc
import os
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from voicebench._folder import claimed
from voicebench._jsonl import append_record, complete_lines, read_models, write_atomic
from voicebench._model import Versioned, read_model
from voicebench._version import __version__
from voicebench.agent.interface import AgentFactory
from voicebench.agentspec import AgentSpec
from voicebench.budgets import LOAD_TURN_TIMEOUT_S
from voicebench.dialogues import Dialogue
from voicebench.errors import InputError, MissingSecretError
from voicebench.fixtures import Manifest
from voicebench.live.callers import AgentUnanswered, CallerPool
from voicebench.live.load_ray import WorkerClock
from voicebench.live.load_summary import CallSpan, LoadSummary, LoadTurn, summarize_load
from voicebench.live.patterns import LoadPattern, Window
from voicebench.remotespec import SIP_SCHEMES
from voicebench.scenarios import parse_scenario
from voicebench.scenarios.apply import backchannel_texts

LOAD_FILE = "load.json"
TURNS_FILE = "turns.jsonl"
CALLS_FILE = "calls.jsonl"
MAX_CALLERS = 200
MAX_DURATION_S = 3600.0


class LoadHeader(Versioned):
    schema_version: int = 1
    created_at: str
    voicebench_version: str
    agent: AgentSpec
    callers: int
    ramp_s: float
    duration_s: float
    arrivals: str
    seed: int
    turn_timeout_s: float
    dialogue_ids: tuple[str, ...]
    scenarios: tuple[str, ...] = ()
    """``--scenario`` options; each turn plays one, drawn with ``seed`` (as in a run)."""
    pattern: LoadPattern | None = None
    """The load pattern (None in folders from before patterns: a ramp of the fields above)."""
    backend: str = "local"
    """``local`` (one process) or ``ray`` (callers spread over Ray workers)."""
    clocks: tuple[WorkerClock, ...] = ()
    """Ray: each worker's clock against the driver's, measured before the start."""
    windows: tuple[Window, ...] = ()
    """Each caller's time on the line, as the pattern drew it with ``seed``."""
    dialogues_path: str | None = None
    """The dialogue set the callers spoke (None in folders from before it was kept), where
    judging a load finds each item's history."""


def read_calls(out_dir: Path) -> list[CallSpan]:
    """A load folder's calls (none in folders from before ``calls.jsonl``)."""
    path = out_dir / CALLS_FILE
    return read_models(path, CallSpan) if path.exists() else []


def read_load(out_dir: Path) -> tuple[LoadHeader, list[LoadTurn]]:
    path = out_dir / LOAD_FILE
    if not path.exists():
        raise InputError("not a load folder (no load.json)", file=out_dir)
    header = read_model(LoadHeader, path)
    return header, read_models(out_dir / TURNS_FILE, LoadTurn)


async def run_load(
    spec: AgentSpec,
    dialogues: Sequence[Dialogue],
    manifest: Manifest,
    fixtures_dir: Path,
    out_dir: Path,
    *,
    callers: int | None = None,
    ramp_s: float = 10.0,
    duration_s: float | None = None,
    arrivals: str = "fixed",
    pattern: LoadPattern | None = None,
    backend: str = "local",
    address: str | None = None,
    workers: int | None = None,
    on_status: Callable[[str], None] | None = None,
    seed: int = 0,
    turn_timeout_s: float = LOAD_TURN_TIMEOUT_S,
    progress: Callable[[LoadTurn], None] | None = None,
    agent_factory: AgentFactory | None = None,
    scenarios: Sequence[str] = (),
    dialogues_path: Path | None = None,
    record_calls: bool = False,
) -> list[LoadTurn]:
    """Run the load and return every turn (also appended to ``out_dir/turns.jsonl``): the
    ``pattern``, or a ramp of ``callers`` over ``ramp_s`` calling for ``duration_s``.
    ``scenarios``: ``--scenario`` options, drawn per turn with ``seed`` as in a run. Each
    call's final reply is kept in ``out_dir/audio`` (one process only), for judging
    quality under load (``voicebench judge LOAD_DIR``). ``record_calls``: each call is also
    written as it happened, in ``out_dir/calls`` (``recordings.calls``; one process only)."""
    if spec.remote is None and spec.livekit is None:
        raise InputError(
            "load needs a remote agent (a [remote] spec or a ws:// URL) or a LiveKit agent "
            "([livekit], run in this process); serve a local agent with voicebench serve first",
            field="remote",
        )
    if spec.livekit is not None and backend != "local":
        raise InputError(
            "a LiveKit agent's sessions run in this process: --backend local", field="backend"
        )
    if pattern is None:
        if callers is None or duration_s is None:
            raise InputError("give a pattern, or callers and a duration", field="pattern")
        pattern = load_pattern(
            callers=callers, ramp_s=ramp_s, duration_s=duration_s, arrivals=arrivals
        )
    if backend not in ("local", "ray"):
        raise InputError("must be local or ray", field="backend")
    if record_calls and backend == "ray":
        raise InputError(
            "calls are recorded by the one-process backend only (--backend local)",
            field="record_calls",
        )
    # one process takes MAX_CALLERS; on Ray each worker takes its share (workers_for)
    if pattern.callers < 1 or (backend == "local" and pattern.callers > MAX_CALLERS):
        raise InputError(
            f"callers must be 1..{MAX_CALLERS} in one process (more with --backend ray)",
            field="callers",
        )
    if not pattern.duration_s <= MAX_DURATION_S:
        raise InputError(f"duration must be in (0, {MAX_DURATION_S:g}] s", field="duration")
    windows = pattern.windows(seed)
    if backend == "ray":
        from voicebench.live.load_ray import workers_for

        workers = workers_for(pattern.callers, workers)  # refused before anything is written
    if not dialogues:
        raise InputError("no dialogues to call with", field="dialogues")
    for text in scenarios:
        parse_scenario(text)  # refused here, before anything is written
    with claimed(out_dir, "load"):
        kept = complete_lines(out_dir / TURNS_FILE)
        if kept:
            raise InputError(
                f"holds a load of {len(kept)} turns already; a load is measured once: "
                "choose a new --out (or delete the folder to measure again)",
                file=out_dir,
            )
        header = LoadHeader(
            created_at=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
            voicebench_version=__version__,
            agent=spec,
            callers=pattern.callers,
            ramp_s=pattern.ramp_s,
            duration_s=pattern.duration_s,
            arrivals=pattern.arrivals,
            seed=seed,
            turn_timeout_s=turn_timeout_s,
            dialogue_ids=tuple(d.id for d in dialogues),
            scenarios=tuple(scenarios),
            pattern=pattern,
            windows=windows,
            backend=backend,
            dialogues_path=None if dialogues_path is None else str(dialogues_path),
        )
        write_atomic(out_dir / LOAD_FILE, header.model_dump_json(indent=2) + "\n")
        (out_dir / TURNS_FILE).write_text("")
        (out_dir / CALLS_FILE).write_text("")
        if backend == "ray":  # (the driver waits on its workers: nothing else runs here)
            return _on_ray(
                header,
                dialogues,
                manifest,
                fixtures_dir,
                out_dir,
                address,
                workers,
                progress,
                on_status,
            )
        loop = asyncio.get_running_loop()
        writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="load-turns")
        frozen = gc.get_freeze_count() > 0  # by whoever runs this; left as they had it
        gc.freeze()  # what is loaded by now needs no scanning: shorter collection pauses
        done: list[LoadTurn] = []

        async def on_turn(record: LoadTurn) -> None:
            # written and fsynced off the event loop, in order: the other calls' audio keeps
            # its time meanwhile
            await loop.run_in_executor(writer, append_record, out_dir / TURNS_FILE, record)
            done.append(record)
            if progress is not None:
                progress(record)

        async def on_call(span: CallSpan) -> None:
            await loop.run_in_executor(writer, append_record, out_dir / CALLS_FILE, span)

        pool = CallerPool(
            spec,
            dialogues,
            manifest,
            fixtures_dir,
            run_id=out_dir.name,
            turn_timeout_s=turn_timeout_s,
            seed=seed,
            scenarios=tuple(scenarios),
            agent_factory=agent_factory,
            on_turn=on_turn,
            on_call=on_call,
            audio_dir=out_dir / "audio",
            calls_dir=out_dir / "calls" if record_calls else None,
        )
        try:
            await pool.run(list(enumerate(windows)))
        except AgentUnanswered as exc:
            raise AgentUnanswered(f"{exc}. What it measured is in {out_dir}") from None
        finally:
            writer.shutdown(wait=True)
            if not frozen:
                gc.unfreeze()
        return done


SUMMARY_FILE = "summary.json"


def _on_ray(
    header: LoadHeader,
    dialogues: Sequence[Dialogue],
    manifest: Manifest,
    fixtures_dir: Path,
    out_dir: Path,
    address: str | None,
    workers: int | None,
    progress: Callable[[LoadTurn], None] | None,
    on_status: Callable[[str], None] | None,
) -> list[LoadTurn]:
    """The load on Ray workers (``voicebench.live.load_ray``), written here as it arrives."""
    from voicebench._ray import ray_session
    from voicebench.live.load_ray import RayLoad

    assert workers is not None
    done: list[LoadTurn] = []

    def on_turn(t: LoadTurn) -> None:
        append_record(out_dir / TURNS_FILE, t)
        done.append(t)
        if progress is not None:
            progress(t)

    def clocks_known(clocks: list[WorkerClock]) -> None:
        updated = header.model_copy(update={"clocks": tuple(clocks)})
        write_atomic(out_dir / LOAD_FILE, updated.model_dump_json(indent=2) + "\n")
        if on_status is not None:
            for c in clocks:
                on_status(
                    f"worker {c.worker} on {c.host} (pid {c.pid}): clock "
                    f"{c.offset_ms:+.1f} ms against this one, within {c.uncertainty_ms:.1f} ms"
                )

    with ray_session(address) as ray:
        RayLoad(
            header.agent,
            dialogues,
            manifest,
            fixtures_dir,
            header.windows,
            out_dir.name,
            header.turn_timeout_s,
            header.seed,
            header.scenarios,
            workers,
            on_turn=on_turn,
            on_span=lambda s: append_record(out_dir / CALLS_FILE, s),
            on_status=on_status or (lambda _line: None),
        ).run(ray, clocks_known)
    return done


def load_pattern(**fields: Any) -> LoadPattern:
    """A load pattern from its fields (``LoadPattern``); a bad value is an InputError naming
    the field."""
    from voicebench._model import validate_record

    return validate_record(LoadPattern, fields, file="load pattern")


def load_target(agent: str, protocol: str = "pcm", token_env: str | None = None) -> AgentSpec:
    """What ``--agent`` names: a ``ws://`` or ``wss://`` URL, or for ``webrtc`` an ``http(s)://``
    offer endpoint (spoken to in ``protocol``, with the token in ``token_env`` presented as a
    bearer token when given), a ``sip:USER@HOST[:PORT]`` URI, or an agent spec file with
    ``[remote]``."""
    from voicebench._model import validate_record
    from voicebench.agentspec import load_agent_spec

    if agent.startswith(SIP_SCHEMES):
        from voicebench.remote.sip import sip_agent_spec

        return sip_agent_spec(agent)
    schemes = ("ws://", "wss://", "http://", "https://")
    if "://" in agent and not agent.startswith(schemes):
        raise InputError(f"{agent!r} is not a ws:// or wss:// URL", field="--agent")
    if agent.startswith(schemes):
        remote: dict[str, Any] = {"url": agent, "protocol": protocol}
        if token_env is not None:
            remote["auth"] = {"token_env": token_env}
        spec = validate_record(
            AgentSpec, {"name": "remote", "family": "remote", "remote": remote}, file="--agent"
        )
        if token_env is not None and not os.environ.get(token_env):
            raise MissingSecretError("--agent", "--token-env", token_env)
        return spec
    if token_env is not None:
        raise InputError("give the token in the spec's [remote.auth]", field="--token-env")
    return load_agent_spec(Path(agent))


def load_test(
    spec: AgentSpec,
    dialogues_path: Path,
    fixtures_dir: Path,
    out_dir: Path,
    *,
    budget_ttfa_ms: float,
    turn_timeout_s: float = LOAD_TURN_TIMEOUT_S,
    failure_budget: float = 0.05,
    **kwargs: Any,
) -> LoadSummary:
    """The whole ``voicebench load`` job: the seeker audio made where missing, the load run
    (``run_load``'s keyword arguments), and its summary written to ``summary.json``."""
    from voicebench.dialogues import load_dialogues
    from voicebench.fixtures import synthesize_fixtures

    items = load_dialogues(dialogues_path)
    played = [parse_scenario(text) for text in kwargs.get("scenarios", ())]
    manifest = synthesize_fixtures(items, fixtures_dir, extra=backchannel_texts(played)).manifest
    try:
        turns = asyncio.run(
            run_load(
                spec,
                items,
                manifest,
                fixtures_dir,
                out_dir,
                turn_timeout_s=turn_timeout_s,
                dialogues_path=dialogues_path,
                **kwargs,
            )
        )
    except AgentUnanswered:
        _summarize(read_load(out_dir)[1], out_dir, budget_ttfa_ms, turn_timeout_s, failure_budget)
        raise
    return _summarize(turns, out_dir, budget_ttfa_ms, turn_timeout_s, failure_budget)


def _summarize(
    turns: Sequence[LoadTurn],
    out_dir: Path,
    budget_ttfa_ms: float,
    turn_timeout_s: float,
    failure_budget: float,
) -> LoadSummary:
    summary = summarize_load(
        turns,
        budget_ttfa_ms=budget_ttfa_ms,
        turn_timeout_s=turn_timeout_s,
        failure_budget=failure_budget,
        spans=read_calls(out_dir),
    )
    write_atomic(out_dir / SUMMARY_FILE, summary.model_dump_json(indent=2) + "\n")
    return summary
