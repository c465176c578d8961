"""Live agents: serving a voicebench agent over WebSocket, and many callers at once."""

from voicebench.live.load import (
    LoadLevel,
    LoadSummary,
    LoadTurn,
    load_target,
    load_test,
    read_load,
    run_load,
    summarize_load,
)
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
