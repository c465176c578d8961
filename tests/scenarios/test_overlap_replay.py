"""Barge-in, backchannel and pause in real replays: against the scripted voice agent, whose
stops are known from its log, and against the real in-process pipeline, whose interruptions
are read on its frames."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from scripted_agent import REPLY, builtin_run, scripted

from voicebench.agentspec import AgentSpec, RemoteSpec
from voicebench.dialogues import BUILTIN_DIALOGUES, load_dialogues
from voicebench.fixtures import load_manifest, lookup_fixture
from voicebench.replaying import replay
from voicebench.testing.scripted_voice import ScriptedVoiceAgent

pytestmark = pytest.mark.slow


THREE_TURNS = "short-tired"
"""A dialogue of the short set with three seeker turns: the first cannot barge in, two can."""
TWO_TURNS = "short-dog"
"""One with two: the second barges in."""


def remote(url: str, protocol: str = "pcm") -> AgentSpec:
    return AgentSpec(
        name="far-bot",
        family="acme",
        remote=RemoteSpec(url=url, protocol=protocol, quiet_secs=0.8),
    )


def seeker_start_ns(record, fixtures: Path) -> int:
    """When the seeker's first sound was said (the fixture has no pause inserted)."""
    entry = lookup_fixture(load_manifest(fixtures), record.user_text)
    assert entry is not None
    speech = entry.speech_end_sample - entry.speech_start_sample
    return record.timing.speech_end_ns - speech * 1_000_000_000 // 16_000


@pytest.mark.alone
async def test_a_remote_agents_stops_and_false_yields_match_what_it_did(tmp_path: Path, short_set):
    barge = ["barge-in:delay_ms=900"]
    word = ["backchannel:delay_ms=900,words=yeah"]
    async with (
        ScriptedVoiceAgent(delay_ms=300, stop_ms=150) as yielding,
        ScriptedVoiceAgent(delay_ms=300, stop_ms=700, yield_after_ms=600) as holding,
    ):
        d = short_set.item(THREE_TURNS)
        barged, held = await asyncio.gather(
            replay(remote(yielding.url), scenarios=barge, **short_set.run([d], tmp_path / "a")),
            replay(remote(holding.url), scenarios=word, **short_set.run([d], tmp_path / "b")),
        )
        said = await replay(
            remote(yielding.url), scenarios=word, **short_set.run([d], tmp_path / "c")
        )
        stops = [s["last_audible_ns"] for s in yielding.stops()]

    assert [r.scenario is None for r in barged] == [True, False, False]  # the first cannot
    for r in barged[1:]:
        s = r.scenario
        assert r.error is None and s is not None and s.name == "barge-in"
        assert s.agent_speaking and s.yielded and s.answered
        assert 850 <= s.at_ms <= 1000  # the seeker's first sound, after the reply's first audio
        # The measured stop is the last sample the agent played, as its own log has it.
        stop_ns = seeker_start_ns(r, short_set.fixtures_dir) + int(s.stop_ms * 1e6)
        assert min(abs(stop_ns - t) for t in stops) < 30_000_000, (s, stops)
        assert 0 < s.talk_over_s <= 0.2
    for r in held:
        s = r.scenario
        assert s is not None and s.name == "backchannel" and s.params["words"] == "yeah"
        assert s.agent_speaking and s.false_yield is False and s.lost_s is None
    for r in said:
        s = r.scenario
        assert s is not None and s.agent_speaking and s.false_yield is True
        # It stopped 150 ms into the word (about 0.3 s long) and answered the word once its
        # 600 ms hangover had passed: some 0.75 s of silence it need not have made.
        assert 0.5 < s.lost_s < 1.5


async def test_a_phone_agents_clear_is_its_stop(tmp_path: Path, short_set):
    """On a Twilio stream the agent stops by sending ``clear`` 150 ms after the caller's first
    sound; the audio it had sent for later is dropped there, and the stop is read at it."""
    async with ScriptedVoiceAgent(delay_ms=300, stop_ms=150, protocol="twilio") as agent:
        barged = await replay(
            remote(agent.url, "twilio"),
            scenarios=["barge-in:delay_ms=900"],
            **short_set.run([short_set.item(THREE_TURNS)], tmp_path),
        )
        stops = [s["last_audible_ns"] for s in agent.stops()]
    assert len(stops) == 2
    for r in barged[1:]:
        s = r.scenario
        assert r.error is None and s is not None and s.agent_speaking and s.yielded
        stop_ns = seeker_start_ns(r, short_set.fixtures_dir) + int(s.stop_ms * 1e6)
        assert min(abs(stop_ns - t) for t in stops) < 30_000_000, (s, stops)
        assert 100 < s.stop_ms < 200


async def test_a_pause_longer_than_the_agents_wait_draws_a_premature_reply(tmp_path: Path):
    # Built-in turns (6.5 s on average): the hasty agent's reply to the first half is over
    # before the second half ends, and it answers again; after a short turn's second half it
    # would still be talking, and the turn would wait out its timeout for a reply.
    d = next(d for d in load_dialogues(BUILTIN_DIALOGUES) if len(d.seeker_turn_indices) == 3)
    async with (
        ScriptedVoiceAgent(delay_ms=300, hangover_ms=600) as hasty,
        ScriptedVoiceAgent(delay_ms=300, hangover_ms=2500) as patient,
    ):
        early, waited = await asyncio.gather(
            replay(
                remote(hasty.url),
                scenarios=["pause:pause_ms=1200"],
                **builtin_run([d], tmp_path / "a"),
            ),
            replay(
                remote(patient.url),
                scenarios=["pause:pause_ms=1200"],
                **builtin_run([d], tmp_path / "b"),
            ),
        )
    for r in early:
        assert r.scenario is not None and r.scenario.premature is True
        assert r.scenario.early_ms > 300  # it began inside the pause, before the second half
    for r in waited:
        assert r.error is None and r.scenario is not None and r.scenario.premature is False
        assert r.timing.ttfa_ms > 2500  # timed from the true end of speech, after the pause


async def test_the_in_process_pipeline_yields_on_its_frames(tmp_path: Path, short_set):
    d = short_set.item(TWO_TURNS)
    barged = await replay(
        scripted(), scenarios=["barge-in:delay_ms=600"], **short_set.run([d], tmp_path / "a")
    )
    for r in barged[1:]:
        s = r.scenario
        assert r.error is None and s is not None and s.agent_speaking
        # pipecat interrupts the bot when the VAD hears the seeker: a yield within a second.
        assert s.yielded and 0 < s.stop_ms < 1000 and s.answered
        assert r.reply_text == REPLY  # its answer to the interruption
    said = await replay(
        scripted(),
        scenarios=["backchannel:delay_ms=600,words=yeah"],
        **short_set.run([d], tmp_path / "b"),
    )
    for r in said:
        s = r.scenario
        assert r.error is None and s is not None and s.agent_speaking
        # The same rule stops it for a backchannel, and it answers the word as a turn.
        assert s.false_yield is True and s.lost_s > 0
