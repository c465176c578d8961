"""Timing: Milestones stamped on frames against the true end of user speech."""

from voicebench.timing.events import (
    EventKind,
    TurnEvent,
    derive_timing,
    reply_text,
    user_transcript,
)
from voicebench.timing.models import (
    REPORTED_STAGES,
    STAGE_LABELS,
    STAGE_NAMES,
    STAGES,
    ReportedLatency,
    TurnTiming,
)

__all__ = [
    "REPORTED_STAGES",
    "STAGES",
    "STAGE_LABELS",
    "STAGE_NAMES",
    "EventKind",
    "ReportedLatency",
    "RunClock",
    "TimingObserver",
    "TurnEvent",
    "TurnTiming",
    "derive_timing",
    "reply_text",
    "user_transcript",
]


def __getattr__(name: str):
    # The observer needs pipecat (seconds to import); readers of run logs do not.
    if name in ("RunClock", "TimingObserver"):
        from voicebench.timing import observer

        return getattr(observer, name)
    raise AttributeError(name)
