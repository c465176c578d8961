"""A pool of simulated callers on one clock: the engine of ``voicebench load``, in one process
(``voicebench.live.load``) or as one Ray worker's share of a load (``voicebench.live.load_ray``).

Each caller is on the line in its window (``voicebench.live.patterns``) and makes calls back to
back there: a call is one dialogue of the set (caller k starts at item k and walks the set), a
new connection, every seeker turn spoken in real time after the dialogue's own history, then a
hang-up. A failed turn ends its call. A call the agent does not answer (refused, or no
connection at the handshake) is one failed turn; its caller then waits before dialling again,
``BACKOFF_S`` doubling with each miss in a row up to ``BACKOFF_MAX_S``, jittered. When not one
call has been answered in the first ``GIVE_UP_S`` seconds the pool stops with
``AgentUnanswered``.

What the pool measured is handed over as it happens: each turn (``on_turn``, with the calls in
progress in this pool when it started) and each call (``on_call_start`` as it is dialled,
``on_call`` with its span as it ends), every time in seconds after ``start`` (a
``time.monotonic()`` reading).
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from voicebench.agent.interface import AgentFactory
from voicebench.agentspec import AgentSpec
from voicebench.dialogues import Dialogue
from voicebench.errors import RunError
from voicebench.fixtures import Manifest
from voicebench.live.load_summary import CallSpan, LoadTurn
from voicebench.live.patterns import Window
from voicebench.recordings.calls import CallTape
from voicebench.replaying.play import play_dialogue
from voicebench.scenarios import parse_scenario

BACKOFF_S = 0.5
"""A caller whose call was not answered waits this long before dialling again, doubling with
each miss in a row up to ``BACKOFF_MAX_S`` (each wait jittered down by up to half, seeded)."""
BACKOFF_MAX_S = 8.0
GIVE_UP_S = 5.0
"""When no call at all has been answered this long after the start, and one has ended
unanswered, the load stops. A call still connecting is not counted against the agent: on a
machine short of cores a caller's first connection can take longer than this to open."""


class AgentUnanswered(RunError):
    """Not one call was answered in the load's first seconds."""


async def _nothing(*_args: object) -> None:
    return None


@dataclass
class CallerPool:
    spec: AgentSpec
    dialogues: Sequence[Dialogue]
    manifest: Manifest
    fixtures_dir: Path
    run_id: str
    turn_timeout_s: float
    seed: int = 0
    scenarios: tuple[str, ...] = ()
    agent_factory: AgentFactory | None = None
    on_turn: Callable[[LoadTurn], Awaitable[None]] = _nothing
    on_call: Callable[[CallSpan], Awaitable[None]] = _nothing
    on_call_start: Callable[[int, int, float], None] = lambda _caller, _call, _at: None
    audio_dir: Path | None = None
    """Where each call's final reply is kept (``cCALLER-CALL__DIALOGUE__tNN.wav``); None keeps
    none."""
    calls_dir: Path | None = None
    """Where each call is written as it happened (``cCALLER-CALL__DIALOGUE.wav``,
    ``recordings.calls``) when it ends; None writes none."""
    start: float = field(default_factory=time.monotonic)
    active: int = 0
    dialled: int = 0

    def __post_init__(self) -> None:
        if self.agent_factory is None:
            from voicebench.replaying.folder import agent_class

            assert self.spec.remote is not None or self.spec.livekit is not None
            self.agent_factory = agent_class(self.spec)
        self._played = [parse_scenario(text) for text in self.scenarios]
        self._answered = asyncio.Event()
        self._unanswered = asyncio.Event()
        """Set when a call ends without its connection having opened."""
        self._failures: list[str] = []

    def now(self) -> float:
        return time.monotonic() - self.start

    async def _call(self, caller: int, number: int, dialogue: Dialogue) -> bool:
        """One call; whether the agent answered it (its connection opened)."""
        assert self.agent_factory is not None
        self.active += 1
        self.dialled += 1
        connected = False
        began = self.now()
        self.on_call_start(caller, number, began)
        try:
            async with self.agent_factory(self.spec) as agent:
                connected = agent.connected
                if connected:
                    self._answered.set()
                starts: dict[int, tuple[int, float]] = {}

                def starting(k: int) -> None:
                    starts[k] = (self.active, self.now())

                tape = None
                if self.calls_dir is not None:
                    name = f"{self.calls_dir.name}/c{caller:03d}-{number:03d}__{dialogue.id}.wav"
                    tape = CallTape(self.calls_dir.parent, name, deferred=True)

                async for turn in play_dialogue(
                    agent,
                    self.spec,
                    dialogue,
                    dialogue.seeker_turn_indices,
                    run_id=self.run_id,
                    manifest=self.manifest,
                    fixtures_dir=self.fixtures_dir,
                    timeout_s=self.turn_timeout_s,
                    played=self._played,
                    seed=self.seed,
                    cold=True,
                    starting=starting,
                    audio_dir=self.audio_dir,
                    audio_prefix=f"c{caller:03d}-{number:03d}__",
                    final_audio_only=True,
                    call=tape,
                ):
                    if turn.opening:  # a greeting: the load's figures are the caller's turns
                        continue
                    concurrency, offset = starts[turn.turn_index]
                    if turn.error is not None:
                        self._failures.append(f"{turn.error.kind}: {turn.error.reason}")
                    await self.on_turn(
                        LoadTurn(
                            caller=caller,
                            call=number,
                            concurrency=concurrency,
                            offset_s=round(offset, 3),
                            turn=turn,
                        )
                    )
                if tape is not None:  # written off the event loop: the other calls keep time
                    await asyncio.get_running_loop().run_in_executor(None, tape.flush)
        finally:
            self.active -= 1
            if not connected:
                self._unanswered.set()
            span = CallSpan(
                caller=caller,
                call=number,
                start_s=round(began, 3),
                end_s=round(self.now(), 3),
                answered=connected,
            )
            await self.on_call(span)
        return connected

    async def _caller(self, caller: int, window: Window) -> None:
        await asyncio.sleep(max(0.0, window.arrive_s - self.now()))
        number, misses = 0, 0
        jitter = random.Random(f"{self.seed}:{caller}")
        while self.now() < window.leave_s:
            dialogue = self.dialogues[(caller + number) % len(self.dialogues)]
            if await self._call(caller, number, dialogue):
                misses = 0
            else:  # not answered: wait before dialling again, longer each time
                misses += 1
                wait = min(BACKOFF_MAX_S, BACKOFF_S * 2 ** (misses - 1))
                left = window.leave_s - self.now()
                await asyncio.sleep(max(0.0, min(left, wait * jitter.uniform(0.5, 1.0))))
            number += 1

    async def run(self, callers: Sequence[tuple[int, Window]]) -> None:
        """Every caller (its id and window) until the last one leaves and its call ends."""
        running = [
            asyncio.create_task(self._caller(k, w)) for k, w in callers if w.arrive_s < w.leave_s
        ]

        async def watch() -> None:
            """Stop the callers when the agent answers no call in its first seconds and one
            call has ended unanswered by then or since."""
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._answered.wait(), GIVE_UP_S)
            if not self._answered.is_set():
                events = (self._answered, self._unanswered)
                either = [asyncio.ensure_future(e.wait()) for e in events]
                try:
                    await asyncio.wait(either, return_when=asyncio.FIRST_COMPLETED)
                finally:
                    for waiting in either:
                        waiting.cancel()
            if not self._answered.is_set():
                for task in running:
                    task.cancel()

        watcher = asyncio.create_task(watch())
        try:
            ended = await asyncio.gather(*running, return_exceptions=True)
        finally:
            watcher.cancel()
        for outcome in ended:
            if isinstance(outcome, Exception):
                raise outcome
        if running and not self._answered.is_set():
            why = f" (last: {self._failures[-1]})" if self._failures else ""
            raise AgentUnanswered(
                f"the agent answered none of {self.dialled} calls in the first "
                f"{self.now():.0f} s{why}; load stopped"
            )
