"""Stalls of a remote agent's reply, against the scripted agent's stall plan: a hold after a
known stretch of reply, a reply sent slower than real time, and none where the plan has none."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_remote import _replay, remote
from typer.testing import CliRunner

from voicebench.cli import app
from voicebench.testing.scripted_voice import ScriptedVoiceAgent
from voicebench.timing.stalls import JITTER_ALLOWANCE_MS

pytestmark = pytest.mark.slow

FRAME_MS = 20.0
LEAD_MS = 200.0
"""The agent sends this far ahead of the caller's playout, as streaming agents do: a busy
machine's late sends are then not heard."""


@pytest.mark.parametrize("protocol", ["pcm", "twilio"])
async def test_a_planned_hold_is_measured_within_a_frame_and_a_clean_reply_has_none(
    tmp_path: Path, short_set, protocol: str
):
    plan = ((600.0, 300.0), (1200.0, 200.0))
    async with ScriptedVoiceAgent(
        delay_ms=300, protocol=protocol, holds=plan, lead_ms=LEAD_MS
    ) as agent:
        held = await _replay(remote(agent.url, protocol), tmp_path / "held", short_set)
    async with ScriptedVoiceAgent(
        delay_ms=300, protocol=protocol, lead_ms=LEAD_MS, pause_ms=600
    ) as agent:
        clean = await _replay(remote(agent.url, protocol), tmp_path / "clean", short_set)
    assert len(held) == 2 and len(clean) == 2
    for r in held:
        assert r.error is None and r.playback is not None, r.error
        first, second = r.playback.stalls
        assert abs(first.ms - 300) <= FRAME_MS, first
        assert abs(second.ms - 200) <= FRAME_MS, second
        assert abs(first.at_ms - 600) <= FRAME_MS, first
        assert abs(second.at_ms - (1200 + 300)) <= FRAME_MS, second
        assert abs(second.audio_ms - first.audio_ms - 600) <= FRAME_MS
    for r in clean:
        assert r.error is None and r.playback is not None, r.error
        assert r.playback.stalls == ()  # its 600 ms pauses were sent as silence: meant
        assert r.playback.audio_ms > 2100
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
    assert r.error is None and r.playback is not None, r.error
    # sent from LEAD_MS ahead at 0.8x: the breaks add up to a quarter of the reply less the
    # lead at that pace (and less what the jitter buffer bridges after the last stall)
    must = r.playback.audio_ms / 4 - LEAD_MS / 0.8
    assert abs(r.playback.stalled_ms - must) <= FRAME_MS, (r.playback.stalled_ms, must)
    # in stalls of a 5 ms break and the buffer's filling again
    assert r.playback.longest_stall_ms <= JITTER_ALLOWANCE_MS + 5 + FRAME_MS
