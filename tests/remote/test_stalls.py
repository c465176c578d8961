"""Stalls of a remote agent's reply, against the scripted agent's stall plan: a hold after a
known stretch of reply, a reply sent slower than real time, and none where the plan has none.

The caller's measure is held to what the agent logged it sent (by the kernel's send stamps):
a busy machine can make the agent send late and stall beyond its plan, which is then a real
stall the caller must find. The plan is in what was sent: lateness only adds to it."""

from __future__ import annotations

from pathlib import Path

import pytest
from stall_check import FRAME_MS, as_sent, held_as_planned
from test_remote import _replay, remote
from typer.testing import CliRunner

from voicebench.cli import app
from voicebench.testing.scripted_plan import sent_playback
from voicebench.testing.scripted_voice import ScriptedVoiceAgent

pytestmark = pytest.mark.slow

LEAD_MS = 200.0
"""The agent sends this far ahead of the caller's playout, as streaming agents do."""


@pytest.mark.parametrize("protocol", ["pcm", "twilio"])
async def test_a_planned_hold_is_measured_within_a_frame_and_a_clean_reply_has_none(
    tmp_path: Path, short_set, protocol: str
):
    plan = ((600.0, 300.0), (1200.0, 200.0))
    async with ScriptedVoiceAgent(
        delay_ms=300, protocol=protocol, holds=plan, lead_ms=LEAD_MS
    ) as agent:
        held = await _replay(remote(agent.url, protocol), tmp_path / "held", short_set)
        held_sent = agent.turns()
    async with ScriptedVoiceAgent(
        delay_ms=300, protocol=protocol, lead_ms=LEAD_MS, pause_ms=600
    ) as agent:
        clean = await _replay(remote(agent.url, protocol), tmp_path / "clean", short_set)
        clean_sent = agent.turns()
    assert len(held) == len(held_sent) == 2 and len(clean) == len(clean_sent) == 2
    for r, answer in zip(held, held_sent, strict=True):
        assert r.error is None, r.error
        # measured as sent, and each hold sent as planned or later (lateness before it only
        # moves stall time earlier)
        held_as_planned(as_sent(r.playback, answer), plan)
    for r, answer in zip(clean, clean_sent, strict=True):
        assert r.error is None, r.error
        # its 600 ms pauses were sent as silence: meant, not stalls (a stall is found only
        # where the agent itself sent late, by more than its lead)
        as_sent(r.playback, answer)
        assert r.playback is not None and r.playback.audio_ms > 2100
    # the gate on the longest stall fails the stalling agent and passes the clean one
    for run, code in (("held", 1), ("clean", 0)):
        result = CliRunner().invoke(app, ["check", str(tmp_path / run), "--max-stall-ms", "250"])
        assert result.exit_code == code, result.output
        assert "stall_ms" in result.output


async def test_a_reply_sent_at_four_fifths_of_real_time_stalls_what_it_must(
    tmp_path: Path, short_set
):
    async with ScriptedVoiceAgent(delay_ms=300, pace=0.8, lead_ms=LEAD_MS) as agent:
        (r, *_) = await _replay(remote(agent.url), tmp_path / "slow", short_set)
        (answer, *_) = agent.turns()
    assert r.error is None and r.playback is not None, r.error
    sent = sent_playback(answer)
    assert sent is not None
    assert abs(r.playback.stalled_ms - sent.stalled_ms) <= FRAME_MS
    # sent from LEAD_MS ahead at 0.8x: the breaks add up to about a quarter of the reply less
    # the lead at that pace (less what the jitter buffer bridges after the last stall, and
    # less what a first chunk sent late takes off the whole)
    assert sent.stalled_ms >= 0.8 * (r.playback.audio_ms / 4 - LEAD_MS / 0.8)
