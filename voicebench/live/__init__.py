"""Live agents: serving a voicebench agent over WebSocket."""

from voicebench.live.serve import serve

__all__ = ["serve"]
