"""SIP calls beyond the plain one: an IVR's menus answered with digits, requests lost on the
way and sent again, a load of calls, a simulated caller, replies judged as heard, and a
reliable ringing PRACKed through kamailio, each against the scripted SIP agent on
127.0.0.1."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from sip_tools import LossyRelay, kamailio
from test_remote import _replay
from test_sip_call import dominant_hz, sip_agent

from voicebench.recordings import call_turns, read_recording

pytestmark = pytest.mark.slow


async def test_an_invite_and_a_bye_lost_on_the_way_are_sent_again_and_the_call_goes_on(
    tmp_path: Path, short_set
):
    """A path that drops the first INVITE and the first BYE: each is sent again after the
    RFC 3261 wait, the call is answered and timed as any other, and the agent is not left in
    it."""
    from voicebench.remote.sip import SipTarget
    from voicebench.testing.scripted_voice import ScriptedVoiceAgent

    async with ScriptedVoiceAgent(delay_ms=300, protocol="sip", reply="I hear you.") as agent:
        assert agent.url is not None
        target = SipTarget.parse(agent.url)
        async with LossyRelay((target.host, target.port), {"INVITE": 1, "BYE": 1}) as relay:
            host, port = relay.address
            spec = sip_agent(agent.url, proxy=f"{host}:{port}")
            (record,) = await _replay(spec, tmp_path / "run", short_set, final_only=True)
            seen = dict(relay.seen)
        answered = agent.turns()
    assert record.error is None, record.error
    assert record.timing is not None and record.timing.ttfa_ms is not None
    (turn,) = answered
    sent_ms = (turn["first_audio_sent_ns"] - record.timing.speech_end_ns) / 1e6
    assert abs(record.timing.ttfa_ms - (sent_ms + 40)) <= 20, (record.timing.ttfa_ms, sent_ms)
    # each dropped once and sent again (more than once where the agent was slow to answer)
    assert seen["INVITE"] >= 2 and seen["BYE"] >= 2, seen


async def test_an_ivr_s_menus_are_answered_with_digits_before_the_first_turn(
    tmp_path: Path, short_set
):
    """An agent behind two menus that it prompts for, answered with the spec's digits as
    RFC 4733 events: it hears them right the first time, the turn is answered, and the
    opening keeps each prompt and press."""
    from voicebench.runlog import read_openings
    from voicebench.testing.scripted_sip import PROMPT_TONE_HZ
    from voicebench.testing.scripted_voice import ScriptedVoiceAgent

    async with ScriptedVoiceAgent(
        delay_ms=300, protocol="sip", ivr=("1", "2#"), reply="I hear you."
    ) as agent:
        assert agent.url is not None
        spec = sip_agent(agent.url, ivr=[{"digits": "1"}, {"digits": "2#"}])
        (record,) = await _replay(spec, tmp_path / "run", short_set, final_only=True)
        menus = agent.logged("ivr")
    assert record.error is None, record.error
    assert [(m["ivr"], m["digits"], m["ok"]) for m in menus] == [(1, "1", True), (2, "2#", True)]
    (opening,) = read_openings(tmp_path / "run")
    assert opening.error is None, opening.error
    ivr = opening.scenario
    assert ivr is not None and ivr.name == "ivr" and ivr.params == {"digits": "1 2#"}
    assert ivr.prompts_ms is not None and ivr.pressed_ms is not None
    assert len(ivr.prompts_ms) == len(ivr.pressed_ms) == 2
    # each press after its prompt, each prompt after the press before it
    assert ivr.prompts_ms[0] < ivr.pressed_ms[0] < ivr.prompts_ms[1] < ivr.pressed_ms[1]
    # and the agent had each menu's digits only after the caller let go of its last key
    dialled_ns = opening.timing.speech_end_ns if opening.timing else 0
    for menu, pressed_ms in zip(menus, ivr.pressed_ms, strict=True):
        assert menu["at_ns"] >= dialled_ns + pressed_ms * 1e6 - 1e6, (menu, pressed_ms)
    assert opening.audio_path is not None
    heard = np.frombuffer((tmp_path / "run" / opening.audio_path).read_bytes()[44:], np.int16)
    assert abs(dominant_hz(heard) - PROMPT_TONE_HZ) < 10


async def test_an_ivr_prompt_that_never_comes_fails_the_call_with_its_menu(
    tmp_path: Path, short_set
):
    """A spec that expects a menu in front of an agent that has none: the call's opening and
    its turn fail as ``ivr_no_prompt``, naming the menu, and the run goes on."""
    from voicebench.runlog import read_openings
    from voicebench.testing.scripted_voice import ScriptedVoiceAgent

    async with ScriptedVoiceAgent(delay_ms=300, protocol="sip", reply="I hear you.") as agent:
        assert agent.url is not None
        spec = sip_agent(agent.url, ivr=[{"digits": "1", "wait_secs": 1.0}])
        records = await _replay(spec, tmp_path / "run", short_set, final_only=True)
    assert [r.error.kind if r.error else None for r in records] == ["ivr_no_prompt"]
    assert "IVR menu 1 of 1: no prompt within 1 s" in records[0].error.reason
    (opening,) = read_openings(tmp_path / "run")
    assert opening.error is not None and opening.error.kind == "ivr_no_prompt"


async def test_a_load_of_sip_calls_is_timed_recorded_and_counts_a_busy_answer(
    tmp_path: Path, short_set
):
    """Three callers at once over SIP, the first call answered 486: that call is the load's
    one failure, by its SIP kind; every answered turn is timed as the agent sent it, and each
    call's recording, read back, gives the same TTFAs."""
    from voicebench.fixtures import load_manifest
    from voicebench.live import read_load, run_load, summarize_load
    from voicebench.testing.scripted_voice import ScriptedVoiceAgent

    items = [d for d in short_set.dialogues if len(d.seeker_turn_indices) == 2][:3]
    out = tmp_path / "load"
    async with ScriptedVoiceAgent(
        delay_ms=300, protocol="sip", faults=["busy"], reply="I hear you."
    ) as agent:
        assert agent.url is not None
        turns = await run_load(
            sip_agent(agent.url),
            items,
            load_manifest(short_set.fixtures_dir),
            short_set.fixtures_dir,
            out,
            callers=3,
            ramp_s=1.0,
            duration_s=2.0,
            turn_timeout_s=10,
            record_calls=True,
        )
        sent = {t["first_audio_sent_ns"] for t in agent.turns()}
    header, saved = read_load(out)
    assert saved == turns and header.callers == 3
    failed = [t.turn.error for t in turns if t.turn.error]
    assert [e.kind for e in failed] == ["busy"] and failed[0].reason.endswith(": 486 Busy")
    assert summarize_load(turns, budget_ttfa_ms=1000, turn_timeout_s=10).failures == {"busy": 1}
    ok = [t for t in turns if t.turn.error is None]
    assert len(ok) >= 4 and max(t.concurrency for t in turns) >= 2
    for t in ok:
        timing = t.turn.timing
        assert timing is not None and timing.ttfa_ms is not None
        # heard one jitter buffer (40 ms) after one of the agent's logged sends, within a frame
        assert (
            min(abs(timing.ttfa_ms - ((s - timing.speech_end_ns) / 1e6 + 40)) for s in sent) <= 20
        )
    for calls in {(t.caller, t.call) for t in ok}:
        played = [t.turn for t in ok if (t.caller, t.call) == calls]
        (name,) = {r.call.path for r in played if r.call is not None}
        heard = call_turns(read_recording(out / name))
        assert len(heard) == len(played)
        for r, h in zip(played, heard, strict=True):
            assert h.latency_s * 1000 == pytest.approx(r.timing.ttfa_ms, abs=20)


async def test_a_simulated_call_over_sip_is_heard_timed_and_recorded(tmp_path: Path):
    """``converse`` with a SIP agent behind an IVR menu: the caller goes through the menu
    before its first line, the seeker hears the agent's words as Whisper transcribes them off
    the call, every turn is timed against the end of its speech, and the call's recording
    gives the same TTFAs."""
    import json

    from voicebench.api import converse_async
    from voicebench.testing.scripted_server import ScriptedLLMServer
    from voicebench.testing.scripted_voice import ScriptedVoiceAgent

    report = {"intensity_before": 4, "intensity_after": 3, "felt_heard": 4}
    with ScriptedLLMServer(ttft_ms=20) as seeker:
        seeker.enqueue("Thank you, that helps a little. Goodbye. [END]")
        seeker.enqueue(json.dumps({**report, "would_call_again": True}))
        seeker_path = tmp_path / "seeker.toml"
        seeker_path.write_text(
            f'name = "scripted-seeker"\n[llm]\nprovider = "openai-compatible"\n'
            f'model = "scripted-llm"\nbase_url = "{seeker.base_url}"\n'
        )
        async with ScriptedVoiceAgent(
            delay_ms=300,
            protocol="sip",
            ivr=("1",),
            reply="That sounds hard. How have you been sleeping?",
        ) as agent:
            assert agent.url is not None
            result = await converse_async(
                sip_agent(agent.url, ivr=[{"digits": "1"}]),
                ids=["adv-linear-ramp-01"],
                seeker=seeker_path,
                out=tmp_path / "calls",
                turns=6,
            )
            sent = [t["first_audio_sent_ns"] for t in agent.turns()]
            menus = agent.logged("ivr")
    assert [(m["digits"], m["ok"]) for m in menus] == [("1", True)]
    (call,) = result.calls
    assert call.ended_by == "goodbye" and call.valid
    assert all("sleeping" in e.heard.lower() for e in call.exchanges)
    records = list(result.run.records)
    assert len(records) == len(sent) == 2
    for r, s in zip(records, sent, strict=True):
        assert r.error is None, r.error
        assert r.timing is not None and r.timing.ttfa_ms is not None
        assert abs(r.timing.ttfa_ms - ((s - r.timing.speech_end_ns) / 1e6 + 40)) <= 20
    assert call.audio_path is not None
    heard = call_turns(read_recording(tmp_path / "calls" / call.audio_path))
    assert len(heard) == len(records)
    for r, h in zip(records, heard, strict=True):
        assert h.latency_s * 1000 == pytest.approx(r.timing.ttfa_ms, abs=20)


class KnownTaste:
    """A judge that prefers the reply with more of ``favourite``'s words (ties by text, never
    by slot)."""

    def __init__(self, favourite: set[str]) -> None:
        self.favourite = favourite
        self.asked = 0

    async def ask(self, messages):
        import json

        from voicebench.llm import ChatText

        self.asked += 1
        user = messages[-1]["content"]
        a = user.split("Reply A (as heard):\n")[1].split("\n\nReply B")[0].lower()
        b = user.split("Reply B (as heard):\n")[1].split("\n\nWhich reply")[0].lower()

        def score(text: str) -> int:
            return sum(w.strip(".,?!") in self.favourite for w in text.split())

        winner = "A" if (score(a), a) > (score(b), b) else "B"
        dims = {"H": winner, "E": winner, "A": None, "R": None, "T": None}
        answer = {"winner": winner, "strength": 4, "dimensions": dims, "rationale": "Specific."}
        return ChatText(f"```json\n{json.dumps(answer)}\n```", 5.0)


async def test_replies_heard_over_sip_are_transcribed_off_the_line_and_judged(
    tmp_path: Path, short_set
):
    """Two agents called over SIP, each answering a known reply: judging transcribes each
    reply from what came down the phone line (8 kHz G.711, through the jitter buffer), and a
    judge of known taste ranks the warm one above the curt one."""
    from voicebench.judging import judge_runs, read_replies
    from voicebench.testing.scripted_voice import ScriptedVoiceAgent

    said = {
        "warm": "Losing that would shake anyone. What scares you most about the next weeks?",
        "curt": "Okay. You should update your resume.",
    }
    runs = []
    for name, reply in said.items():
        async with ScriptedVoiceAgent(delay_ms=300, protocol="sip", reply=reply) as agent:
            assert agent.url is not None
            spec = sip_agent(agent.url).model_copy(update={"name": name, "family": name})
            (record,) = await _replay(spec, tmp_path / name, short_set, final_only=True)
        assert record.error is None, record.error
        runs.append(tmp_path / name)
    (tmp_path / "rubric.md").write_text("Judge the replies.\n")
    (tmp_path / "judge.toml").write_text(
        'name = "t"\nrubric = "rubric.md"\n[[judges]]\nprovider = "openai-compatible"\n'
        'model = "taste"\nfamily = "testjudge"\nbase_url = "http://127.0.0.1:9/v1"\n'
    )
    judge = KnownTaste({"scares", "shake", "losing", "weeks"})

    async def ready(_spec, _stack):
        return judge

    out = tmp_path / "judged"
    result = await judge_runs(runs, tmp_path / "judge.toml", out, client_factory=ready)
    heard = {r.contestant: r.heard.lower() for r in read_replies(out)}
    assert "scares" in heard["warm"] and "anyone" in heard["warm"], heard
    assert "resume" in heard["curt"], heard
    by_pair = {frozenset((p.first, p.second)): p.winner for p in result.pairs}
    assert by_pair[frozenset(("warm", "curt"))] == "warm"
    assert by_pair[frozenset(("warm", "human/reference"))] == "warm"
    assert judge.asked == len(result.verdicts) > 0


async def test_a_reliable_ringing_through_a_proxy_is_pracked_along_its_route(
    tmp_path: Path, short_set, monkeypatch: pytest.MonkeyPatch
):
    """An agent behind kamailio that rings reliably (RFC 3262) and waits for the PRACK before
    it answers: the PRACK follows the 180's Record-Route through the proxy (straight to the
    agent's address, the proxy would refuse it), the agent has it, and the call goes on."""
    from voicebench.testing.scripted_voice import ScriptedVoiceAgent

    users = {"alice": "alice-pass-5150"}
    monkeypatch.setenv("VB_SIP_USER", "alice")
    monkeypatch.setenv("VB_SIP_PASSWORD", users["alice"])
    with kamailio(tmp_path / "proxy", users) as proxy:
        async with ScriptedVoiceAgent(
            delay_ms=300, protocol="sip", reliable_ringing=True, reply="I hear you."
        ) as agent:
            assert agent.url is not None
            host, port = proxy.address
            spec = sip_agent(
                agent.url,
                proxy=f"{host}:{port}",
                username_env="VB_SIP_USER",
                password_env="VB_SIP_PASSWORD",
            )
            (record,) = await _replay(spec, tmp_path / "run", short_set, final_only=True)
            pracks = agent.logged("pracked")
    assert record.error is None, record.error
    assert [p["pracked"] for p in pracks] == [True], pracks
