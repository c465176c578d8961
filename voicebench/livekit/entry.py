"""The user's entrypoint (``[livekit] entrypoint = "MODULE:FUNCTION"``): imported from the
spec's folder and called for the ``Agent`` and ``AgentSession`` to measure."""

from __future__ import annotations

import importlib
import inspect
import sys
import traceback
from collections.abc import Callable
from typing import Any

from voicebench.agentspec import LiveKitSpec
from voicebench.errors import InputError, RunError


def load_entrypoint(spec: LiveKitSpec, *, file: str | None = None) -> Callable[[], Any]:
    """The user's function that builds their agent (``MODULE:FUNCTION``, imported from
    ``spec.path``); an InputError naming ``livekit.entrypoint`` when it is not there."""
    module_name, func_name = spec.entrypoint.split(":")
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
    func = getattr(module, func_name, None)
    if not callable(func):
        raise InputError(
            f"{module_name} has no function {func_name!r}", file=file, field="livekit.entrypoint"
        )
    return func


async def build_session(spec: LiveKitSpec) -> tuple[Any, Any]:
    """Call the entrypoint: the user's ``(Agent, AgentSession)``, or their ``Agent`` with a
    default ``AgentSession``. What their code raises is a RunError quoting it."""
    from livekit.agents import Agent, AgentSession

    build = load_entrypoint(spec)
    try:
        made = build()
        if inspect.isawaitable(made):
            made = await made
    except Exception as exc:
        raise RunError(
            f"the LiveKit entrypoint {spec.entrypoint} raised {type(exc).__name__}: {exc}\n"
            + "".join(traceback.format_exception(exc)[-3:])
        ) from exc
    if isinstance(made, Agent):
        return made, AgentSession()
    if isinstance(made, tuple) and len(made) == 2:
        agent, session = made if isinstance(made[0], Agent) else made[::-1]
        if isinstance(agent, Agent) and isinstance(session, AgentSession):
            return agent, session
    raise RunError(
        f"the LiveKit entrypoint {spec.entrypoint} returned {type(made).__name__}; it must "
        "return (Agent, AgentSession) or an Agent"
    )
