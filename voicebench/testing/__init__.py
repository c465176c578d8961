"""Test doubles that run through the real code paths.

``ScriptedLLMServer`` starts a scripted OpenAI-compatible chat-completions server in its own
process on 127.0.0.1, with a known time to first token, a known reply and scripted faults; real
clients and real pipecat services talk to it over HTTP, exactly as to a provider. Its request
log format is documented in ``voicebench.testing.scripted_llm``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from voicebench.testing.scripted_records import FAULTS, Fault, RequestRecord
    from voicebench.testing.scripted_server import ScriptedLLMServer

__all__ = ["FAULTS", "Fault", "RequestRecord", "ScriptedLLMServer"]


def __getattr__(name: str) -> Any:
    # Imported on first use: `python -m voicebench.testing.scripted_llm` would otherwise find
    # its own module already imported by this package and run it twice (runpy warns).
    if name in __all__:
        from voicebench.testing import scripted_records, scripted_server

        return getattr(scripted_server if name == "ScriptedLLMServer" else scripted_records, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
