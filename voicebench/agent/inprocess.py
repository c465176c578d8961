"""One spoken turn of an agent that runs in this process (the pipecat pipeline, the
speech-to-speech pipeline, a LiveKit session): the utterance is queued on its microphone, its
loudspeaker's tape and audible spans are read back, and the turn is watched
(``voicebench.agent.watch``) by looking at its timing observer's events every ``POLL_S``.

What differs between them is the agent's own rules, which ``InProcessAgent`` names: when its
answer has ended, whether it heard the caller at all, a failure it knows of, and whether it has
stopped."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, Protocol

import numpy as np

from voicebench.agent.interface import HeardTurn, TurnCue
from voicebench.agent.realtime import FIXTURE_RATE, NS_PER_S, Utterance, at_rate
from voicebench.agent.watch import Ending, watch_turn
from voicebench.runlog import TurnError
from voicebench.timing import EventKind, TurnEvent

POLL_S = 0.02
SETTLE_S = 0.3
"""After the answer ended, how long the loudspeaker is left to play out before it is read."""
UNHEARD_S = 2.0
"""After the seeker's audio has all been played, how long an agent that never heard speech is
given before the turn ends as unheard (its VAD runs in real time, so this is slack, not a
guess)."""


class InProcessAgent(Protocol):
    """What an in-process agent gives the turn: its observer and clock, and its own rules."""

    observer: Any
    """Its ``TimingObserver``."""
    in_rate: int
    """Its microphone's rate."""
    _speech_end_ns: int
    """The true end of the caller's speech in the turn under way (set here)."""

    def _now(self) -> int: ...

    async def _set_history(self, history: list[dict[str, str]]) -> None: ...

    def _turn_done(self, events: list[TurnEvent], now_ns: int, aside_ns: int | None) -> bool: ...

    def _heard(self, events: list[TurnEvent]) -> bool: ...

    def _failure(self) -> TurnError | None: ...

    def _stopped(self) -> bool:
        """It can no longer answer (noticed after its last events are read)."""
        ...


async def speak_in_process(
    agent: InProcessAgent,
    say: Callable[[np.ndarray], Utterance],
    speaker: Any,
    history: list[dict[str, str]],
    pcm: np.ndarray,
    speech_end_sample: int,
    *,
    timeout_s: float,
    cue: TurnCue,
    speech_to_speech: bool = False,
) -> HeardTurn:
    """Say ``pcm`` (16 kHz; the speech ends at ``speech_end_sample``) on the microphone
    (``say`` queues audio at its rate) after ``history``, and watch the answer on ``speaker``
    (``begin_turn``, ``tape``, ``audible``)."""
    if not cue.barge_in:
        await agent._set_history(history)
    speaker.begin_turn()
    utterance = say(at_rate(pcm, agent.in_rate))
    start_ns = await utterance.started
    agent.observer.forget_before(start_ns)  # earlier turns are taken; polling stays cheap
    speaker.audible.forget_before(start_ns)
    speech_end_ns = start_ns + speech_end_sample * NS_PER_S // FIXTURE_RATE
    agent._speech_end_ns = speech_end_ns
    await utterance.finished
    finished_ns = agent._now()
    watched = await watch_turn(
        _Polled(agent, say, start_ns, speech_end_ns, finished_ns),
        cue,
        clock=agent._now,
        deadline_ns=finished_ns + int(timeout_s * 1e9),
    )
    if cue.hand_over_ms is None:
        await asyncio.sleep(SETTLE_S)
    since = speech_end_ns if cue.barge_in else 0
    audio, placed = speaker.tape.take(since, FIXTURE_RATE)
    return HeardTurn(
        speech_end_ns=speech_end_ns,
        events=tuple(agent.observer.since(start_ns)),
        audio=audio,
        placed=placed,
        before=speaker.tape.before(since, FIXTURE_RATE),
        # an agent that stopped mid-turn is a turn that never ended
        timed_out=watched.ending in (Ending.TIMED_OUT, Ending.LOST),
        start_ns=start_ns,
        played=speaker.audible.since(start_ns),
        aside_ns=watched.aside_ns,
        ended_ns=watched.ended_ns,
        failure=agent._failure(),
        speech_to_speech=speech_to_speech,
    )


class _Polled:
    """An in-process agent's side of watching a turn: its observer's events, looked at every
    ``POLL_S``."""

    def __init__(
        self,
        agent: InProcessAgent,
        say: Callable[[np.ndarray], Utterance],
        start_ns: int,
        speech_end_ns: int,
        said_ns: int,
    ) -> None:
        self.agent = agent
        self._say = say
        self.start_ns = start_ns
        self.speech_end_ns = speech_end_ns
        self.said_ns = said_ns
        self.events: list[TurnEvent] = []

    def first_audio_ns(self) -> int | None:
        self.events = self.agent.observer.since(self.start_ns)  # this look's events
        return next(
            (
                e.ns
                for e in self.events
                if e.kind is EventKind.AUDIO_OUT and e.ns >= self.speech_end_ns
            ),
            None,
        )

    def gone(self) -> bool:
        return False  # a stopped agent is noticed after its last events are read

    def ended(self, now_ns: int, aside_ns: int | None) -> Ending | None:
        agent = self.agent
        if agent._turn_done(self.events, now_ns, aside_ns) or agent._failure() is not None:
            return Ending.ANSWERED
        if now_ns - self.said_ns > UNHEARD_S * 1e9 and not agent._heard(self.events):
            return Ending.UNHEARD
        if agent._stopped():
            return Ending.LOST
        return None

    def due_ns(self, first_ns: int | None, aside_ns: int | None) -> list[int]:
        return []  # looked at every POLL_S anyway

    async def wait(self, until_ns: int) -> None:
        await asyncio.sleep(POLL_S)

    async def say(self, pcm: np.ndarray) -> int:
        return await self._say(at_rate(pcm, self.agent.in_rate)).started
