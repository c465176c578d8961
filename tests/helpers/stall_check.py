"""The caller's measure of a scripted agent's stalls, held to what the agent logged it sent
(``voicebench.testing.scripted_plan.sent_playback``)."""

from __future__ import annotations

from collections.abc import Iterable

from voicebench.testing.scripted_plan import FRAME_MS, sent_playback, short_of_plan, unmatched
from voicebench.timing.stalls import Playback

__all__ = ["FRAME_MS", "as_sent", "held_as_planned"]


def as_sent(measured: Playback | None, answer: dict) -> Playback:
    """The reply's stalls as the agent sent them, after checking that the caller measured
    each of them within a frame, and no other."""
    sent = sent_playback(answer)
    assert measured is not None and sent is not None
    assert unmatched(measured, sent) == [] and unmatched(sent, measured) == [], (
        measured.stalls,
        sent.stalls,
    )
    return sent


def held_as_planned(sent: Playback, plan: Iterable[tuple[float, float]]) -> None:
    """Each planned hold (after ``at`` ms of reply, ``ms`` of nothing), or more, in the reply
    as sent (``voicebench.testing.scripted_plan.short_of_plan``)."""
    assert short_of_plan(sent, plan) == [], (sorted(plan), sent.stalls)
