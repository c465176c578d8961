"""Call recordings: two-channel recordings of calls (the caller on one channel, the agent on the
other) read and timed turn by turn."""

from voicebench.recordings.analyze import (
    FRAME_S,
    RecordedTurn,
    Recording,
    Span,
    call_turns,
    read_recording,
    recorded_turns,
    speech_spans,
)

__all__ = [
    "FRAME_S",
    "RecordedTurn",
    "Recording",
    "Span",
    "call_turns",
    "read_recording",
    "recorded_turns",
    "speech_spans",
]
