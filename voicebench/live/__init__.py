"""Live agents: serving a voicebench agent over WebSocket, and many callers at once."""

from voicebench.live.load import LoadTurn, load_target, load_test, read_load, run_load
from voicebench.live.load_summary import LoadLevel, LoadSummary, summarize_load
from voicebench.live.serve import serve

__all__ = [
    "LoadLevel",
    "LoadSummary",
    "LoadTurn",
    "load_target",
    "load_test",
    "read_load",
    "run_load",
    "serve",
    "summarize_load",
]
