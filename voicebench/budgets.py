"""The latency budgets figures are measured against, their defaults written once.

A delay under about a second between turns still feels fluid, so a caller should hear the
reply within 1,000 ms of the end of their speech (TTFA); after endpointing, ASR and the first
synthesized audio, that leaves the LLM about 500 ms to its first token (TTFT), HEART's design
budget. Every command, the Python API, campaign files and the reports take these defaults
from here, and the turn timeouts beside them.
"""

from __future__ import annotations

from pydantic import Field

from voicebench._model import FrozenModel

TTFT_BUDGET_MS = 500.0
"""LLM time to first token, from the request to the first answer token."""
TTFA_BUDGET_MS = 1000.0
"""Time to first audio, from the true end of the caller's speech to the first audible sample."""
TURN_TIMEOUT_S = 60.0
"""Seconds an agent's turn may take before it is recorded as a timeout (reports count a failed
turn as this long)."""
LOAD_TURN_TIMEOUT_S = 30.0
"""The same under load (``voicebench load``), where a turn that long has already failed the
caller."""


class Budgets(FrozenModel):
    """A pair of budgets (ms)."""

    ttfa_ms: float = Field(default=TTFA_BUDGET_MS, gt=0)
    ttft_ms: float = Field(default=TTFT_BUDGET_MS, gt=0)
