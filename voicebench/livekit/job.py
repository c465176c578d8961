"""The job a LiveKit worker entrypoint is given, stood in for: ``entrypoint(ctx)`` is called
with a ``StandInJob`` whose ``room`` is voicebench's audio, not a LiveKit room.

An entrypoint written as LiveKit's docs write one::

    async def entrypoint(ctx: JobContext):
        await ctx.connect()
        session = AgentSession(stt=..., llm=..., tts=..., vad=...)
        await session.start(room=ctx.room, agent=Assistant())
        await session.generate_reply(instructions="Greet the user.")

runs unchanged: ``connect`` has nothing to join, and ``session.start(room=ctx.room, ...)``
binds voicebench's microphone and loudspeaker to the session in place of a room's tracks
(``StandInRoom``), then starts it with no room, as LiveKit starts a session whose audio is set.
LiveKit's ``AgentSession.start`` is wrapped once, in this process, to do that; given any other
room it does what it always did. The room options a call passes (noise cancellation, text
input) belong to a room's tracks and are set aside with the room.

``ctx.proc`` is a real ``JobProcess`` whose ``userdata`` the server's ``setup_fnc`` (a
``prewarm``) filled first; shutdown callbacks run when the session is closed.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
from collections.abc import Awaitable, Callable
from typing import Any

from livekit.agents import Agent, AgentSession, JobProcess
from livekit.agents.job import JobExecutorType

ROOM_ARGUMENTS = ("room", "room_options", "room_input_options", "room_output_options")
"""What ``AgentSession.start`` is told about a room; none of it applies to voicebench's audio."""

Bind = Callable[[Agent, AgentSession], None]
"""Gives a session voicebench's audio and timing, just before it starts."""


class StandInRoom:
    """``ctx.room``: a session started on it is bound to voicebench's audio."""

    name = "voicebench"
    """What a room's name is read for (log fields): this one's."""

    def __init__(self, bind: Bind) -> None:
        self._bind = bind
        self.started: tuple[Agent, AgentSession] | None = None
        """The agent and session the entrypoint started on this room."""
        self.ready = asyncio.Event()
        """Set once that session has started."""

    def isconnected(self) -> bool:
        return True

    async def start(self, session: AgentSession, agent: Agent, start: Callable[[], Awaitable]):
        if self.started is not None:
            raise RuntimeError(
                "a second AgentSession was started on ctx.room; voicebench measures one"
            )
        self._bind(agent, session)
        self.started = (agent, session)
        result = await start()
        self.ready.set()
        return result


class StandInJob:
    """``ctx``, for an entrypoint that takes a ``JobContext``."""

    def __init__(self, room: StandInRoom, proc: JobProcess | None = None) -> None:
        self.room = room
        self.proc = proc or JobProcess(
            executor_type=JobExecutorType.THREAD, user_arguments=None, http_proxy=None
        )
        self.log_context_fields: dict[str, Any] = {}
        self._shutdown: list[Callable[..., Awaitable[None]]] = []
        self.running: asyncio.Task | None = None
        """The entrypoint, when it goes on after its session started (awaiting its greeting)."""

    async def connect(self, *args: Any, **kwargs: Any) -> None:
        """Nothing to join: the session's audio is voicebench's."""

    async def wait_for_participant(self, *args: Any, **kwargs: Any) -> None:
        """The caller is already there: voicebench is."""

    @property
    def primary_session(self) -> AgentSession:
        if self.room.started is None:
            raise RuntimeError("No AgentSession was started for this job")
        return self.room.started[1]

    def add_shutdown_callback(self, callback: Callable[..., Awaitable[None]]) -> None:
        self._shutdown.append(callback)

    def shutdown(self, reason: str = "user requested") -> None:
        """Ends the job when voicebench does."""

    async def close(self, reason: str = "voicebench is done") -> None:
        """Stop the entrypoint if it is still running, then call the shutdown callbacks, each
        with the reason if it takes one."""
        if self.running is not None and not self.running.done():
            self.running.cancel()
            await asyncio.gather(self.running, return_exceptions=True)
        for callback in self._shutdown:
            takes_reason = len(inspect.signature(callback).parameters) >= 1
            await (callback(reason) if takes_reason else callback())


def bind_sessions_started_on_stand_in_rooms() -> None:
    """Wrap ``AgentSession.start`` (once): a session started with ``room=`` a ``StandInRoom``
    is bound to it and started with no room; any other call is passed on as it was."""
    original = AgentSession.start
    if getattr(original, "_voicebench_stand_in", False):
        return

    @functools.wraps(original)
    async def start(self: AgentSession, *args: Any, **kwargs: Any) -> Any:
        room = kwargs.get("room")
        if not isinstance(room, StandInRoom):
            return await original(self, *args, **kwargs)
        for name in ROOM_ARGUMENTS:
            kwargs.pop(name, None)
        agent = args[0] if args else kwargs["agent"]
        return await room.start(self, agent, lambda: original(self, *args, **kwargs))

    start._voicebench_stand_in = True  # type: ignore[attr-defined]
    AgentSession.start = start  # type: ignore[method-assign]
