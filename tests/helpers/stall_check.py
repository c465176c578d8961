"""The caller's measure of a scripted agent's stalls, held to what the agent logged it sent
(``voicebench.testing.scripted_plan.sent_playback``)."""

from __future__ import annotations

from collections.abc import Iterable

from voicebench.testing.scripted_plan import sent_playback
from voicebench.timing.stalls import Playback, Stall

FRAME_MS = 20.0


def _unmatched(these: Playback, those: Playback) -> list[Stall]:
    """The stalls of ``these`` longer than a frame with none of ``those`` within a frame of
    it, in place and length (one a frame or shorter, at the jitter buffer's edge, may be
    bridged on one side of the wire and not the other)."""
    return [
        s
        for s in these.stalls
        if s.ms > FRAME_MS
        and not any(
            abs(s.audio_ms - t.audio_ms) <= FRAME_MS and abs(s.ms - t.ms) <= FRAME_MS
            for t in those.stalls
        )
    ]


def as_sent(measured: Playback | None, answer: dict) -> Playback:
    """The reply's stalls as the agent sent them, after checking that the caller measured
    each of them within a frame, and no other."""
    sent = sent_playback(answer)
    assert measured is not None and sent is not None
    assert _unmatched(measured, sent) == [] and _unmatched(sent, measured) == [], (
        measured.stalls,
        sent.stalls,
    )
    return sent


def held_as_planned(sent: Playback, plan: Iterable[tuple[float, float]]) -> None:
    """Each planned hold (after ``at`` ms of reply, ``ms`` of nothing), or more: by each hold's
    point the reply as sent has stalled at least as long as the plan's holds up to there. An
    agent that sends late before a hold stalls earlier, and the hold's own stall is shorter by
    that much (the caller is still playing when it ends): lateness moves stall time earlier
    and adds to it, never takes from the total."""
    planned = 0.0
    for at, ms in sorted(plan):
        planned += ms
        stalled = sum(s.ms for s in sent.stalls if s.audio_ms <= at + FRAME_MS)
        assert stalled >= planned - FRAME_MS, (at, planned, sent.stalls)
