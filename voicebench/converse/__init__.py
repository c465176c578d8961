"""Simulated calls: an LLM plays the seeker of each item's persona card, live, against the agent
(``voicebench converse``)."""

from voicebench.converse.call import converse
from voicebench.converse.records import CallProgress, CallRecord, Exchange, read_calls
from voicebench.converse.roles import role_break
from voicebench.converse.seeker import (
    DEFAULT_SEEKER,
    CallerReport,
    Seeker,
    SeekerSpec,
    load_seeker_spec,
)

__all__ = [
    "DEFAULT_SEEKER",
    "CallProgress",
    "CallRecord",
    "CallerReport",
    "Exchange",
    "Seeker",
    "SeekerSpec",
    "converse",
    "load_seeker_spec",
    "read_calls",
    "role_break",
]
