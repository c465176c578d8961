"""What every agent voicebench calls implements, local pipeline and remote caller alike: it
starts (``async with``), is spoken to one seeker turn at a time (``speak``) and stops.

The turn loop (``voicebench.replaying.play``) speaks to an ``Agent`` and never asks which
kind it is; ``HeardTurn`` is what comes back, before it is interpreted into a turn record.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from voicebench.agent.realtime import Placed
from voicebench.agentspec import AgentSpec
from voicebench.budgets import TURN_TIMEOUT_S
from voicebench.runlog import ScenarioOutcome, TurnError
from voicebench.timing import ReportedLatency, TurnEvent

AFTER_ASIDE_S = 2.0
"""After a backchannel, how long an agent that went quiet is given to answer it before the turn
ends (its turn-end wait, ASR and first audio fit well inside)."""


@dataclass(frozen=True)
class TurnCue:
    """What the caller does besides saying the turn (``voicebench.scenarios``)."""

    barge_in: bool = False
    """The utterance is said over the reply still playing, so the agent keeps its own context
    (its reply cut where it was interrupted) rather than being given the history."""
    hand_over_ms: float | None = None
    """Stop waiting this long after the reply's first audible sample and return with the
    agent still speaking: the next turn barges in on it."""
    aside: np.ndarray | None = None
    """A backchannel ("mm-hmm"), said ``aside_ms`` after the reply's first audible sample."""
    aside_ms: float = 0.0


PLAIN = TurnCue()
"""A turn said on its own."""


@dataclass(frozen=True)
class HeardTurn:
    """What happened in one spoken turn, before interpretation."""

    speech_end_ns: int
    events: tuple[TurnEvent, ...]
    audio: np.ndarray
    timed_out: bool
    failure: TurnError | None = None
    """A failure the agent itself reported (a remote agent's connection, for one)."""
    black_box: bool = False
    """Only the audio is observed (a remote agent): no stage milestones, no LLM events."""
    start_ns: int = 0
    """When sample 0 of the utterance was said."""
    played: tuple[tuple[int, int], ...] = ()
    """The agent's audible spans (``realtime.Audible``) from the talk under way when the
    utterance began to the end of the turn."""
    aside_ns: int | None = None
    """When sample 0 of the backchannel was said; None if the reply ended before it was due."""
    ended_ns: int = 0
    """When the turn stopped being watched."""
    speech_to_speech: bool = False
    """One model heard and spoke (``[s2s]``): no transcript, tokens or TTS are observed."""
    placed: Placed = ()
    """Where ``audio`` lies on the clock (``realtime.Placed``); empty when nothing played."""
    before: tuple[tuple[int, np.ndarray], ...] = ()
    """What the agent played during the turn before ``audio`` begins (the talk a barge-in
    was said over), each chunk with when it began to play: the rest of the call's recording."""
    reported: ReportedLatency | None = None
    """What the agent's framework reported of the turn (a LiveKit agent's metrics)."""
    scenario: ScenarioOutcome | None = None
    """What the agent itself played out of a scenario (a SIP call's IVR menus, on its
    opening)."""


class Agent(Protocol):
    """A voice agent to call: an async context (start on entry, stop on exit) spoken to one
    seeker turn at a time."""

    async def __aenter__(self) -> Agent: ...

    async def __aexit__(self, *exc: object) -> None: ...

    @property
    def connected(self) -> bool:
        """Whether the agent answered: a remote agent's connection opened; a local pipeline,
        once started, always."""
        ...

    async def speak(
        self,
        history: list[dict[str, str]],
        pcm: np.ndarray,
        speech_end_sample: int,
        *,
        timeout_s: float = TURN_TIMEOUT_S,
        cue: TurnCue = PLAIN,
    ) -> HeardTurn:
        """Say ``pcm`` (16 kHz; the speech ends at ``speech_end_sample``) after ``history``
        and watch the agent answer, for at most ``timeout_s`` after the utterance."""
        ...


async def opening_of(agent: Agent) -> HeardTurn | None:
    """What a just-started agent said before anyone spoke to it (its greeting), heard to its
    end, with its start as the anchor: an agent that may speak first hears it out in
    ``hear_opening``; None for every other (the protocol does not ask for it)."""
    hear = getattr(agent, "hear_opening", None)
    return None if hear is None else await hear()


AgentFactory = Callable[[AgentSpec], Agent]
"""Builds the agent a spec describes (not started)."""
