"""Simulated calls against scripted parts: the seeker is the scripted LLM server answering
queued lines, the agent the scripted voice agent answering a known reply a known delay after
the end of speech. Every turn is real time and real audio (Piper speaks the seeker's lines,
Whisper transcribes the agent's replies for the seeker)."""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path

import numpy as np
import pytest
from processes import voicebench

from voicebench.agent.interface import HeardTurn
from voicebench.agentspec import AgentSpec, RemoteSpec
from voicebench.api import Calls, converse_async, replay_async
from voicebench.calling.seeker import CUT_IN, REASK
from voicebench.dialogues import BUILTIN_DIALOGUES, load_dialogues
from voicebench.dialogues.personas import load_personas, personas_path
from voicebench.fixtures.manifest import read_manifest
from voicebench.recordings import call_turns, read_recording
from voicebench.testing.scripted_server import ScriptedLLMServer
from voicebench.testing.scripted_voice import ScriptedVoiceAgent
from voicebench.timing import EventKind, TurnEvent

pytestmark = pytest.mark.slow

DELAY_MS = 800.0  # after the agent's 600 ms hangover
REPLY = "That sounds hard. How have you been sleeping?"
ITEM = "adv-linear-ramp-01"  # the shortest opening line of the built-in items
REPORT = {"intensity_before": 4, "intensity_after": 3, "felt_heard": 4, "would_call_again": True}


def far(url: str) -> AgentSpec:
    return AgentSpec(
        name="far-bot", family="acme", remote=RemoteSpec(url=url, protocol="pcm", quiet_secs=0.8)
    )


def item_opening() -> str:
    """The caller's first line in a call on ``ITEM``: the item's own first seeker turn."""
    return next(d for d in load_dialogues(BUILTIN_DIALOGUES) if d.id == ITEM).turns[1].text


def seeker_spec(tmp_path: Path, server: ScriptedLLMServer) -> Path:
    path = tmp_path / "seeker.toml"
    path.write_text(
        f'name = "scripted-seeker"\n[llm]\nprovider = "openai-compatible"\n'
        f'model = "scripted-llm"\nbase_url = "{server.base_url}"\n'
    )
    return path


def asked(server: ScriptedLLMServer) -> list[list[dict]]:
    return [body["messages"] for body in server.history()]


async def test_a_scripted_call_is_timed_heard_reported_and_saved(tmp_path: Path):
    """Through the command, as a user runs it."""
    lines = ["Thank you, that helps a little. Goodbye. [END]"]  # the seeker's second line
    with ScriptedLLMServer(ttft_ms=20) as seeker:
        for line in lines:
            seeker.enqueue(line)
        seeker.enqueue(json.dumps(REPORT))
        async with ScriptedVoiceAgent(delay_ms=DELAY_MS, reply=REPLY) as agent:
            spec = tmp_path / "far.toml"
            spec.write_text(
                f'name = "far-bot"\nfamily = "acme"\n[remote]\nurl = "{agent.url}"\n'
                'protocol = "pcm"\nquiet_secs = 0.8\n'
            )
            done = await asyncio.to_thread(
                subprocess.run,
                voicebench(
                    *("converse", "--agent", str(spec), "--id", ITEM, "--turns", "6"),
                    *("--seeker", str(seeker_spec(tmp_path, seeker))),
                    *("--out", str(tmp_path / "calls")),
                ),
                capture_output=True,
                text=True,
                timeout=600,
            )
        requests = asked(seeker)
    assert done.returncode == 0, done.stderr[-3000:]
    # The command shows each turn as it is timed and the call as it ends (progress, on
    # stderr), then the tables and where it all is.
    assert f"call 1/1 {ITEM} turn 3  TTFA" in done.stderr
    assert "the caller said goodbye; intensity 4 -> 3, felt heard 4/5" in done.stderr
    assert "latency by the turn's place in the call" in done.stdout
    assert "1 call(s): 1 valid, 0 invalid" in done.stdout
    assert f"--id call-{ITEM}" in done.stdout
    result = Calls.load(tmp_path / "calls")

    (call,) = result.calls
    assert call.ended_by == "goodbye" and call.valid and call.role_breaks == 0
    # The caller opens with the item's own first seeker turn, then says the seeker's lines.
    said = [item_opening(), "Thank you, that helps a little. Goodbye."]
    assert [e.said for e in call.exchanges] == said
    # Every agent turn is timed as a replayed one: its first audible sample DELAY_MS after the
    # end of the seeker's synthesized speech, as the remote-agent tests bound it.
    records = list(result.run.records)
    assert [r.turn_index for r in records] == [1, 3]
    for r in records:
        assert r.error is None, r.error
        assert DELAY_MS - 5 <= r.timing.ttfa_ms < DELAY_MS + 300, r.timing
    assert [r.final for r in records] == [False, True]
    assert result.run.header.mode.value == "simulated"
    assert result.run.header.seeker == "openai-compatible/scripted-llm"
    # The seeker was given the agent's words as transcribed from its audio, not its text.
    assert len(requests) == 2  # the second line and the report
    first, second = call.exchanges
    assert f"Caller: {first.said}\nSupporter: {first.heard}\n" in requests[0][-1]["content"]
    assert f"Caller: {second.said}\nSupporter: {second.heard}\n" in requests[1][-1]["content"]
    # The far agent sends only audio: what the seeker heard is Whisper's transcript of it.
    assert all("sleeping" in e.heard.lower() for e in call.exchanges)
    # The persona card is the system prompt; the item's greeting opens the call.
    (card,) = [c for c in load_personas() if c.id == ITEM]
    assert card.who in requests[0][0]["content"] and card.wants in requests[0][0]["content"]
    assert "so far:\nSupporter: Hi" in requests[0][1]["content"]
    assert call.report is not None and call.report.model_dump() == REPORT
    # The call as it happened, the caller on the left and the agent on the right, each turn
    # placed in it; timed from its audio alone, it gives each turn's TTFA within 20 ms.
    assert call.audio_path == f"calls/{ITEM}.wav"
    assert {r.call.path for r in records} == {call.audio_path}
    recording = read_recording(tmp_path / "calls" / call.audio_path)
    heard = call_turns(recording)
    assert len(heard) == len(records)
    for r, h in zip(records, heard, strict=True):
        assert h.end_s == pytest.approx(r.call.seconds(r.timing.speech_end_ns), abs=0.002)
        assert h.latency_s * 1000 == pytest.approx(r.timing.ttfa_ms, abs=20)

    # The call is saved as an item that a replay speaks again, teacher-forced.
    saved = [json.loads(x) for x in result.items.read_text().splitlines()]
    assert [d["id"] for d in saved] == [f"call-{ITEM}"]
    # With its caller's card beside it, where a converse of the saved items finds it.
    (saved_card,) = load_personas(personas_path(result.items))
    assert saved_card == call.persona.model_copy(update={"id": f"call-{ITEM}"})
    assert [t["text"] for t in saved[0]["turns"] if t["role"] == "seeker"] == [
        e.said for e in call.exchanges
    ]
    async with ScriptedVoiceAgent(delay_ms=DELAY_MS, reply=REPLY) as agent:
        again = await replay_async(
            far(agent.url), result.items, fixtures=result.fixtures, out=tmp_path / "again"
        )
    assert [r.user_text for r in again.records] == [e.said for e in call.exchanges]
    assert all(r.error is None for r in again.records)


async def test_a_seeker_that_breaks_role_is_asked_again_then_the_call_is_invalid(
    tmp_path: Path,
):
    with ScriptedLLMServer(ttft_ms=20) as seeker:
        # The first call's second line: the supporter's label, then a stage direction: two
        # breaks, invalid.
        seeker.enqueue("Supporter: How can I help you today?")
        seeker.enqueue("*sighs* I guess I'm fine.")
        # The second call's: one break, asked again, then a line in role that ends the call.
        seeker.enqueue("(long pause) I don't know.")
        seeker.enqueue("I don't really know where to start. Bye for now. [END]")
        seeker.enqueue(json.dumps(REPORT))
        async with ScriptedVoiceAgent(delay_ms=DELAY_MS, reply=REPLY) as agent:
            result = await converse_async(
                far(agent.url),
                seeker=seeker_spec(tmp_path, seeker),
                ids=["adv-mid-ramp-01", ITEM],
                turns=4,
                out=tmp_path / "calls",
            )
            requests = asked(seeker)
            # The same command again: every call is done, nothing is asked or spoken.
            again = await converse_async(
                far(agent.url),
                seeker=seeker_spec(tmp_path, seeker),
                ids=["adv-mid-ramp-01", ITEM],
                turns=4,
                out=tmp_path / "calls",
            )
            assert asked(seeker) == requests and again.calls == result.calls

    invalid, valid = result.calls
    assert invalid.call_id == "adv-mid-ramp-01"
    assert not invalid.valid and invalid.ended_by == "role" and invalid.role_breaks == 2
    assert len(invalid.exchanges) == 1  # its opening line was said and answered
    assert invalid.report is None and invalid.item_id is None
    assert valid.valid and valid.ended_by == "goodbye" and valid.role_breaks == 1
    e = valid.exchanges[1]
    assert e.role_breaks == ("narration or stage directions",)
    assert e.said == "I don't really know where to start. Bye for now."
    # Asked again with the broken line and why it broke, in the same request.
    retry = requests[3]  # after the first call's two and the second's broken line
    assert retry[-2] == {"role": "assistant", "content": "(long pause) I don't know."}
    assert retry[-1]["content"] == REASK.format(why="narration or stage directions")
    # Every turn said was timed (the invalid call's opening too); only the valid call was
    # saved as an item.
    assert [r.dialogue_id for r in result.run.records] == ["adv-mid-ramp-01", ITEM, ITEM]
    assert [json.loads(x)["id"] for x in result.items.read_text().splitlines()] == [f"call-{ITEM}"]


class ReadyOrNot:
    """An agent that notes, as it is called, which of the caller's lines are already spoken
    (their audio in the call folder's fixtures), then fails the turn it is given."""

    def __init__(self, fixtures: Path) -> None:
        self.fixtures = fixtures
        self.ready_at_start: list[str] = []

    def __call__(self, _spec: AgentSpec) -> ReadyOrNot:
        return self

    async def __aenter__(self) -> ReadyOrNot:
        self.ready_at_start = [e.text for e in read_manifest(self.fixtures).entries]
        return self

    async def __aexit__(self, *exc: object) -> None:
        return None

    async def speak(self, history, pcm, speech_end_sample, *, timeout_s, cue=None):
        events = (TurnEvent(EventKind.ERROR, 5_000_000, "the agent is down for the test"),)
        return HeardTurn(0, events, np.zeros(0, dtype=np.int16), False)


async def test_the_callers_first_line_is_ready_before_the_agent_answers(
    tmp_path: Path, monkeypatch
):
    """An agent may speak as soon as it answers (an IVR menu waiting a few seconds for its
    digits, a greeting): the caller's first line is synthesized before the agent is called,
    not while its opening plays."""
    agent = ReadyOrNot(tmp_path / "calls" / "fixtures")
    monkeypatch.setattr("voicebench.replaying.folder.agent_class", lambda _spec: agent)
    with ScriptedLLMServer(ttft_ms=20) as seeker:
        seeker.enqueue(json.dumps(REPORT))
        result = await converse_async(
            far("ws://127.0.0.1:9"),
            ids=[ITEM],
            seeker=seeker_spec(tmp_path, seeker),
            out=tmp_path / "calls",
        )
    opening = item_opening()
    assert agent.ready_at_start == [opening]
    (call,) = result.calls
    assert call.ended_by == "agent" and [e.said for e in call.exchanges] == [opening]


async def test_a_caller_who_barges_in_cuts_in_on_the_reply(tmp_path: Path):
    """With the barge-in scenario the caller's second line is asked for before the reply to
    the first is heard, and said over it, 600 ms after the reply's first sound."""
    with ScriptedLLMServer(ttft_ms=20) as seeker:
        seeker.enqueue("Sorry, can I just say something first?")
        seeker.enqueue(json.dumps(REPORT))
        async with ScriptedVoiceAgent(delay_ms=DELAY_MS, reply=REPLY) as agent:
            result = await converse_async(
                far(agent.url),
                seeker=seeker_spec(tmp_path, seeker),
                ids=[ITEM],
                turns=2,
                scenarios=["barge-in:delay_ms=600"],
                out=tmp_path / "calls",
            )
        requests = asked(seeker)
    (call,) = result.calls
    first, second = result.run.records
    assert first.scenario is None and first.error is None  # the opening plays clean
    assert second.scenario is not None and second.scenario.name == "barge-in"
    assert second.scenario.agent_speaking  # said over the reply still playing
    assert 550 <= second.scenario.at_ms <= 700, second.scenario  # its first sound at 600 ms
    assert second.error is None and second.timing.ttfa_ms >= DELAY_MS - 5
    # The line was written before the reply was heard: the seeker was told it cut in.
    assert f"Caller: {call.exchanges[0].said}\nSupporter: {CUT_IN}" in requests[0][-1]["content"]
    # The recording holds the barge-in as it happened: read off it, the caller cut in on the
    # agent, which stopped when the run measured it stop.
    recording = read_recording(tmp_path / "calls" / call.audio_path)
    heard = call_turns(recording)
    assert [h.barge_in for h in heard] == [False, True]
    assert second.scenario.yielded and second.scenario.stop_ms is not None
    assert heard[1].stop_s * 1000 == pytest.approx(second.scenario.stop_ms, abs=20)
    assert call.exchanges[1].said == "Sorry, can I just say something first?"
