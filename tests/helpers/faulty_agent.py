"""An agent in place of the pipeline whose stages fail on the turns a test names: each turn
either answers (ASR, LLM and TTS milestones, audible audio) or reports an error frame from a
stage (``tts``, ``llm``, ``asr``), as the pipeline's observer would. It runs through the real
replay loop and run folder (``voicebench.replaying``), swapped in for ``agent_class``."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from voicebench.agent.interface import HeardTurn
from voicebench.agentspec import AgentSpec
from voicebench.timing import EventKind, TurnEvent

MS = 1_000_000
ANSWER = (
    (EventKind.VAD_STOP, 200, ""),
    (EventKind.TRANSCRIPT, 300, "hello there"),
    (EventKind.LLM_REQUEST, 301, ""),
    (EventKind.LLM_SENT, 302, ""),
    (EventKind.LLM_TOKEN, 600, "I hear you."),
    (EventKind.TTS_REQUEST, 601, ""),
    (EventKind.LLM_END, 650, ""),
    (EventKind.TTS_AUDIO, 700, ""),
    (EventKind.AUDIO_OUT, 720, ""),
    (EventKind.BOT_STOPPED, 2000, ""),
)


def faulty(failing: Sequence[str | None]) -> type:
    """An agent class whose turn ``n`` (counted over the whole run) fails in stage
    ``failing[n % len(failing)]``, or answers where that is None."""

    class FaultyAgent:
        turns = 0

        def __init__(self, _spec: AgentSpec) -> None:
            pass

        async def __aenter__(self) -> FaultyAgent:
            return self

        async def __aexit__(self, *exc: object) -> None:
            return None

        async def speak(self, history, pcm, speech_end_sample, *, timeout_s, cue=None):
            stage = failing[FaultyAgent.turns % len(failing)]
            FaultyAgent.turns += 1
            if stage is not None:
                error = TurnEvent(EventKind.ERROR, 5 * MS, f"{stage} service failed", source=stage)
                return HeardTurn(0, (error,), np.zeros(0, dtype=np.int16), False)
            events = tuple(TurnEvent(kind, ms * MS, text) for kind, ms, text in ANSWER)
            return HeardTurn(0, events, np.full(1600, 1000, dtype=np.int16), False)

    return FaultyAgent
