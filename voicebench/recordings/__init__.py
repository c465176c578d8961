"""Call recordings: two-channel recordings of calls (the caller on one channel, the agent on the
other) read and timed turn by turn."""

from voicebench.recordings.analyze import (
    MIN_GAP_S,
    Gap,
    RecordedTurn,
    Recording,
    call_turns,
    read_recording,
    recorded_turns,
)
from voicebench.recordings.speech import FRAME_S, Span, speech_spans

__all__ = [
    "FRAME_S",
    "MIN_GAP_S",
    "Gap",
    "RecordedTurn",
    "Recording",
    "Span",
    "call_turns",
    "read_recording",
    "recorded_turns",
    "speech_spans",
]
