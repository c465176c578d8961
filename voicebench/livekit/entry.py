"""The user's entrypoint (``[livekit] entrypoint = "MODULE:NAME"``), imported from the spec's
folder and run to start the ``Agent`` and ``AgentSession`` to measure. ``NAME`` is one of:

- a worker entrypoint, as LiveKit's docs write one: a function taking a ``JobContext``
  (``async def entrypoint(ctx)``, the one given to ``WorkerOptions(entrypoint_fnc=...)`` or
  decorated with ``@server.rtc_session()``). It is called with a stand-in job whose room is
  voicebench's audio (``voicebench.livekit.job``), and it starts the session itself
  (``session.start(room=ctx.room, ...)``) and may greet (``session.generate_reply``). An
  ``AgentServer`` in its module that registered it has its ``setup_fnc`` run first, on the
  job's ``proc``;
- the ``AgentServer`` itself (``server``): its registered entrypoint, as above;
- a function with no arguments (plain or ``async``) returning the ``Agent`` and
  ``AgentSession`` as a pair, or the ``Agent`` alone (a default ``AgentSession`` then runs it
  on the agent's own components): voicebench starts that session.
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import sys
import traceback
from collections.abc import Callable
from typing import Any

from voicebench.agentspec import LiveKitSpec
from voicebench.errors import InputError, RunError
from voicebench.livekit.job import (
    Bind,
    StandInJob,
    StandInRoom,
    bind_sessions_started_on_stand_in_rooms,
)


def load_entrypoint(spec: LiveKitSpec, *, file: str | None = None) -> Any:
    """What ``spec.entrypoint`` names in the user's code (``MODULE:NAME``, imported from
    ``spec.path``); an InputError naming ``livekit.entrypoint`` when it is not there."""
    module_name, name = spec.entrypoint.split(":")
    if spec.path not in sys.path:
        sys.path.insert(0, spec.path)
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise InputError(
            f"cannot import {module_name!r} from {spec.path}: {exc}",
            file=file,
            field="livekit.entrypoint",
        ) from exc
    found = getattr(module, name, None)
    if not callable(found) and _server_entrypoint(found) is None:
        raise InputError(
            f"{module_name} has no function {name!r}", file=file, field="livekit.entrypoint"
        )
    return found


def _server_entrypoint(found: Any) -> Callable[..., Any] | None:
    """An ``AgentServer``'s registered session entrypoint; None for anything else."""
    from livekit.agents import AgentServer

    return getattr(found, "_entrypoint_fnc", None) if isinstance(found, AgentServer) else None


def _setup_of(entrypoint: Callable[..., Any]) -> Callable[[Any], Any] | None:
    """The ``setup_fnc`` of the ``AgentServer`` in ``entrypoint``'s module that registered it."""
    from livekit.agents import AgentServer

    module = sys.modules.get(getattr(entrypoint, "__module__", ""), None)
    for value in vars(module).values() if module is not None else ():
        if isinstance(value, AgentServer) and _server_entrypoint(value) is entrypoint:
            return value.setup_fnc
    return None


def takes_job(func: Callable[..., Any]) -> bool:
    """Whether ``func`` is a worker entrypoint: it needs an argument (the ``JobContext``)."""
    params = inspect.signature(func).parameters.values()
    return any(
        p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        for p in params
    )


def _raised(spec: LiveKitSpec, exc: BaseException) -> RunError:
    return RunError(
        f"the LiveKit entrypoint {spec.entrypoint} raised {type(exc).__name__}: {exc}\n"
        + "".join(traceback.format_exception(exc)[-3:])
    )


async def start_agent(spec: LiveKitSpec, bind: Bind, *, timeout_s: float) -> StandInJob | None:
    """Run the entrypoint and start the session it makes, given voicebench's audio by
    ``bind`` just before it starts. A worker entrypoint is run until its session has started
    (``timeout_s`` at most) and goes on from there (to its greeting, say) as the stand-in
    job's ``running`` task; the job is returned, to be closed with the agent. What the
    user's code raises before its session starts is a RunError quoting it."""
    found = load_entrypoint(spec)
    entrypoint = _server_entrypoint(found) or found
    if _server_entrypoint(found) is not None or takes_job(entrypoint):
        return await _run_job(spec, entrypoint, bind, timeout_s=timeout_s)
    agent, session = await _build(spec, entrypoint)
    bind(agent, session)
    try:
        await session.start(agent=agent)
    except Exception as exc:
        raise RunError(
            f"the LiveKit session of {spec.entrypoint} did not start: {type(exc).__name__}: {exc}"
        ) from exc
    return None


async def _run_job(
    spec: LiveKitSpec, entrypoint: Callable[..., Any], bind: Bind, *, timeout_s: float
) -> StandInJob:
    bind_sessions_started_on_stand_in_rooms()
    job = StandInJob(StandInRoom(bind))
    task: asyncio.Task | None = None
    try:
        setup = _setup_of(entrypoint)
        if setup is not None:
            made = setup(job.proc)
            if inspect.isawaitable(made):
                await made
        task = asyncio.ensure_future(entrypoint(job))
        ready = asyncio.ensure_future(job.room.ready.wait())
        try:
            await asyncio.wait({task, ready}, timeout=timeout_s, return_when="FIRST_COMPLETED")
        finally:
            ready.cancel()
        if task.done():
            task.result()
    except Exception as exc:
        raise _raised(spec, exc) from exc
    finally:
        if task is not None and not task.done() and not job.room.ready.is_set():
            task.cancel()
    if not job.room.ready.is_set():
        what = "returned" if task is not None and task.done() else f"ran {timeout_s:g} s"
        raise RunError(
            f"the LiveKit entrypoint {spec.entrypoint} {what} without starting an "
            "AgentSession on ctx.room (await session.start(room=ctx.room, agent=...))"
        )
    job.running = None if task is None or task.done() else task
    return job


async def _build(spec: LiveKitSpec, build: Callable[[], Any]) -> tuple[Any, Any]:
    """Call a builder: the user's ``(Agent, AgentSession)``, or their ``Agent`` with a default
    ``AgentSession``."""
    from livekit.agents import Agent, AgentSession

    try:
        made = build()
        if inspect.isawaitable(made):
            made = await made
    except Exception as exc:
        raise _raised(spec, exc) from exc
    if isinstance(made, Agent):
        return made, AgentSession()
    if isinstance(made, tuple) and len(made) == 2:
        agent, session = made if isinstance(made[0], Agent) else made[::-1]
        if isinstance(agent, Agent) and isinstance(session, AgentSession):
            return agent, session
    raise RunError(
        f"the LiveKit entrypoint {spec.entrypoint} returned {type(made).__name__}; it must "
        "return (Agent, AgentSession) or an Agent, or take a JobContext and start its session "
        "on ctx.room"
    )
