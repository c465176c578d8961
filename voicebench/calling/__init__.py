"""Simulated calls: an LLM plays the seeker of each item's persona card, live, against the agent
(``voicebench converse``)."""

from voicebench.calling.call import converse
from voicebench.calling.records import CallProgress, CallRecord, Exchange, read_calls
from voicebench.calling.roles import role_break
from voicebench.calling.seeker import (
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
