"""Watching one turn once the caller has said it, for every kind of agent.

What every agent shares is here: the deadline, the reply's first audio after the end of
speech, the hand-over to a caller who barges in (``TurnCue.hand_over_ms`` after that first
audio) and the backchannel said at its moment (``TurnCue.aside``). What differs is the agent's
``TurnSide``: where its first audio is read from, its own rule for when its answer has ended
(a pipeline's events, a remote agent's ``bot_stopped`` or silence), whether it is gone, and how
the watcher waits for news (a pipeline is looked at every few milliseconds; a remote agent
wakes the watcher when something arrives).
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from voicebench.agent.interface import TurnCue


class Ending(enum.Enum):
    """Why the watching of a turn stopped."""

    ANSWERED = "answered"
    """The agent's own rule says its answer ended."""
    HANDED_OVER = "handed over"
    """The next utterance barges in: the turn returns with the agent still speaking."""
    UNHEARD = "unheard"
    """Nothing shows the agent heard the caller, so nothing will be answered."""
    LOST = "lost"
    """The agent is gone (its pipeline stopped, its connection closed or over a cap)."""
    TIMED_OUT = "timed out"
    """The deadline passed first."""


@dataclass(frozen=True)
class Watched:
    """How a turn's watching ended."""

    ending: Ending
    aside_ns: int | None
    """When sample 0 of the backchannel was said; None if it never came due."""
    ended_ns: int
    """When the watching stopped."""


class TurnSide(Protocol):
    """What an agent tells the watcher about the turn under way."""

    def first_audio_ns(self) -> int | None:
        """The reply's first audible moment after the end of speech, once there is one."""
        ...

    def gone(self) -> bool:
        """Whether the agent can no longer answer (looked at before anything else)."""
        ...

    def ended(self, now_ns: int, aside_ns: int | None) -> Ending | None:
        """The agent's own rules, after the shared ones: why the turn ends now, or None."""
        ...

    def due_ns(self, first_ns: int | None, aside_ns: int | None) -> list[int]:
        """Moments its rules next look at, when no news comes before them."""
        ...

    async def wait(self, until_ns: int) -> None:
        """Until news arrives or ``until_ns`` comes, whichever is first (or one look's pause)."""
        ...

    async def say(self, pcm: np.ndarray) -> int:
        """Say a backchannel (16 kHz PCM) now; returns when its sample 0 was said."""
        ...


async def watch_turn(
    side: TurnSide, cue: TurnCue, *, clock: Callable[[], int], deadline_ns: int
) -> Watched:
    """Watch the turn until the agent's answer ends, the hand-over comes, the agent is gone or
    the deadline passes; say the cue's backchannel when it is due."""
    aside_ns: int | None = None
    ending = Ending.TIMED_OUT
    while (now := clock()) < deadline_ns:
        if side.gone():
            ending = Ending.LOST
            break
        first = side.first_audio_ns()
        if first is not None:
            if cue.hand_over_ms is not None and now >= first + cue.hand_over_ms * 1e6:
                ending = Ending.HANDED_OVER
                break
            if cue.aside is not None and aside_ns is None and now >= first + cue.aside_ms * 1e6:
                aside_ns = await side.say(cue.aside)
                continue
        found = side.ended(now, aside_ns)
        if found is not None:
            ending = found
            break
        due = [deadline_ns, *side.due_ns(first, aside_ns)]
        if first is not None and cue.hand_over_ms is not None:
            due.append(first + int(cue.hand_over_ms * 1e6) + 1)
        if first is not None and cue.aside is not None and aside_ns is None:
            due.append(first + int(cue.aside_ms * 1e6) + 1)
        await side.wait(min(due))
    return Watched(ending, aside_ns, clock())
