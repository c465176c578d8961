"""Known truth for stalls: a scripted voice agent with a stall plan, measured by the harness.

Each case is a scripted agent (its own process) on one transport (WebSocket pcm and pipecat,
Twilio's and Telnyx's phone streams, and ``s2s``: a speech-to-speech agent run here, whose
model's Realtime socket is the scripted agent) with one plan, called by 1 and by 50 callers at
once (each replays the final turn of a built-in item). Two more are agents run in this process
whose TTS is the scripted speech endpoint (``voicebench.testing.scripted_speech``), streaming
one sentence with the plan: ``cascade`` (the pipeline voicebench builds, ``[stt]`` and ``[tts]
provider = "openai"``) and ``livekit`` (a LiveKit agent's ``openai.TTS`` plugin).

- ``hold``: after 600 ms of reply the caller is to hear nothing for 300 ms, after 1,500 ms for
  200 ms (the audio held back, what was sent ahead played out first);
- ``pauses``: no stall, but 600 ms of silence sent between the reply's sentences (pauses it
  means, which are not stalls);
- ``slow``: the reply sent at 0.8x real time, which must stall a quarter of its length less
  the agent's lead at that pace (``voicebench.timing.stalls``: less at most the jitter buffer).

The agent sends 200 ms ahead of the caller's playout, as streaming agents do. Every planned
stall must be measured within one 20 ms frame (``max_error_ms``), none missed, none found
where the plan has none (``false``), no turn failed (``ok``). A busy agent may send late and
stall where its plan has none: the agent logs where each stretch of what it sent must play
(from the kernel's send stamps), and ``sent_extra`` counts the stalls that makes beyond the
plan, ``vs_sent_max_error_ms``, ``vs_sent_missed`` and ``vs_sent_false`` compare the harness
with that, and ``short_of_plan`` counts the replies whose agent did not keep its plan (sending
late only adds stall time: ``voicebench.testing.scripted_plan.short_of_plan``). ``ok_vs_sent``
is the harness right on what was sent, by a frame, and the plan kept: what a case under load,
whose agent cannot send on time, must show. One JSON object a row::

    .venv/bin/python benchmarks/stalls.py [--callers 1 --callers 50] [--transport pcm]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import tempfile
from pathlib import Path

import numpy as np

from voicebench.agentspec import AgentSpec, RemoteSpec
from voicebench.dialogues import BUILTIN_DIALOGUES, load_dialogues
from voicebench.fixtures import BUILTIN_FIXTURES
from voicebench.llm.realtime import RealtimeEndpoint
from voicebench.replaying import replay
from voicebench.runlog import TurnRecord
from voicebench.testing.scripted_plan import (
    FRAME_MS,
    send_time_ns,
    sent_playback,
    short_of_plan,
    unmatched,
)
from voicebench.testing.scripted_voice import REALTIME, ScriptedVoiceAgent
from voicebench.testing.scripted_voice_agent import CHUNK_MS
from voicebench.timing.stalls import Playback, playback_of

REPLY = (
    "I hear you, and it makes sense that this has been weighing on you. "
    "Take your time. Tell me what feels heaviest right now."
)
LEAD_MS = 200.0
PACE = 0.8
HOLDS = ((600.0, 300.0), (1500.0, 200.0))
PLANS: dict[str, dict] = {
    "hold": {"holds": HOLDS},
    "pauses": {"pause_ms": 600.0},
    "slow": {"pace": PACE},
}
S2S = "s2s"
"""The speech-to-speech transport: the model's Realtime socket, called by pipecat here."""
S2S_KEY = "VOICEBENCH_STALLS_S2S_KEY"
IN_PROCESS = ("cascade", "livekit")
"""The transports whose agent runs here and speaks through the scripted speech endpoint."""
ONE_SENTENCE = (
    "I can hear how much this has been weighing on you lately and I am right here "
    "with you for as long as you need."
)
"""Their reply: one request to the speech endpoint, so the plan applies to it whole."""
HELPERS = Path(__file__).resolve().parents[1] / "tests" / "helpers"
MATCH_MS = 60.0
"""A measured stall is the planned one when it falls this near the plan's point in the audio."""


def planned(plan: str, entry: dict) -> Playback | None:
    """The stalls the plan must give the reply the agent logged in ``entry``: the harness's
    rule on the plan's own send times, each chunk arriving as it was planned to be sent."""
    settings = PLANS[plan]
    holds = [(int(a * 1e6), int(h * 1e6)) for a, h in settings.get("holds", ())]
    pace, lead = settings.get("pace", 1.0), int(LEAD_MS * 1e6)
    rate, size = entry["rate"], entry["reply_samples"]
    chunk = rate * CHUNK_MS // 1000
    placed, free = [], None
    for pos in range(0, size, chunk):
        arrives = send_time_ns(pos * 1_000_000_000 // rate, holds, pace, lead)
        plays = arrives if free is None else max(arrives, free)
        if plays != free:
            placed.append((pos, plays))
        free = plays + min(chunk, size - pos) * 1_000_000_000 // rate
    return playback_of(placed, np.full(size, 10_000, dtype=np.int16), rate)


def against(measured: Playback, truth: Playback) -> tuple[list[float], int]:
    """Each measured stall against the nearest stall of ``truth``: the errors, and how many
    measured stalls have none near them."""
    errors, false = [], 0
    left = list(truth.stalls)
    for s in measured.stalls:
        match = min(left, key=lambda t: abs(t.audio_ms - s.audio_ms), default=None)
        if match is None or abs(match.audio_ms - s.audio_ms) > MATCH_MS:
            false += 1
            continue
        left.remove(match)
        errors.append(abs(match.ms - s.ms))
    return errors, false


def score(plan: str, records: list[TurnRecord], sent: list[dict]) -> dict:
    """Planned against measured over these turns, and measured against what was sent."""
    errors: list[float] = []
    vs_sent: list[float] = []
    missed = false = stalls = planned_n = failed = vs_sent_false = sent_extra = short = 0
    vs_sent_missed = 0
    for r in records:
        if r.error is not None or r.playback is None or r.timing is None:
            failed += 1
            continue
        # the agent's answer to this turn: by both its end of speech and its first audio, each
        # answer taken once (50 callers on 30 items end their speech close together)
        timing = r.timing
        entry = min(
            (e for e in sent if e.get("first_audio_sent_ns", 0) is not None),
            key=lambda e: (
                abs(e["speech_end_ns"] - timing.speech_end_ns)
                + abs(e["first_audio_sent_ns"] - (timing.audio_out_ns or 0))
                if "speech_end_ns" in e
                # the speech endpoint knows no end of speech: its first chunk sent
                else abs(e["placed"][0][1] - (timing.audio_out_ns or 0))
            ),
        )
        sent.remove(entry)
        truth, want = sent_playback(entry), planned(plan, entry)
        assert want is not None
        planned_n += want.stall_count
        stalls += r.playback.stall_count
        if plan == "slow":  # many short stalls: their total is what the plan fixes
            errors.append(abs(r.playback.stalled_ms - want.stalled_ms))
            if truth is not None:
                vs_sent.append(abs(r.playback.stalled_ms - truth.stalled_ms))
            continue
        if truth is not None:
            vs_sent += against(r.playback, truth)[0]
            # as the tests hold it: a stall of a frame or less may be bridged on one side only
            vs_sent_false += len(unmatched(r.playback, truth))
            vs_sent_missed += len(unmatched(truth, r.playback))
            sent_extra += max(0, truth.stall_count - want.stall_count)
            short += bool(short_of_plan(truth, PLANS[plan].get("holds", ())))
        e, f = against(r.playback, want)
        errors += e
        false += f
        missed += want.stall_count - len(e)
    return {
        "turns": len(records),
        "failed": failed,
        "planned": planned_n,
        "measured": stalls,
        "max_error_ms": round(max(errors), 1) if errors else None,
        "missed": missed,
        "false": false,
        "sent_extra": sent_extra,
        "vs_sent_max_error_ms": round(max(vs_sent), 1) if vs_sent else None,
        "vs_sent_false": vs_sent_false,
        "short_of_plan": short,
        "ok": max(errors, default=0.0) <= FRAME_MS and not missed and not false and not failed,
        "vs_sent_missed": vs_sent_missed,
        "ok_vs_sent": not (
            max(vs_sent, default=0.0) > FRAME_MS
            or vs_sent_false
            or vs_sent_missed
            or short
            or failed
        ),
    }


def agent_spec(transport: str, url: str) -> AgentSpec:
    """A remote agent on ``transport``; ``s2s``: a speech-to-speech agent run here (pipecat's
    OpenAI Realtime service) whose model is the scripted agent."""
    if transport == S2S:
        os.environ.setdefault(S2S_KEY, "not-a-real-key")
        endpoint = RealtimeEndpoint(
            provider=REALTIME, model="gpt-realtime", base_url=url, api_key_env=S2S_KEY
        )
        return AgentSpec(name="scripted-s2s", family="scripted", s2s=endpoint)
    remote = RemoteSpec(url=url, protocol=transport)
    return AgentSpec(name="scripted-voice", family="scripted", remote=remote)


async def in_process_case(transport: str, plan: str, callers: int, items) -> tuple[list, list]:
    """The records of ``callers`` agents run here on ``transport``, and what the speech endpoint
    logged it sent them."""
    from voicebench.agentspec import LiveKitSpec, LLMSpec, STTSpec, TTSSpec
    from voicebench.testing.scripted_server import ScriptedLLMServer
    from voicebench.testing.scripted_speech import ScriptedSpeechServer

    async with (
        ScriptedLLMServer(ttft_ms=200, token_delay_ms=5, reply=ONE_SENTENCE) as llm,
        ScriptedSpeechServer(stt_ms=100, tts_ms=150, lead_ms=LEAD_MS, **PLANS[plan]) as speech,
    ):
        if transport == "livekit":
            os.environ["SCRIPTED_LLM_URL"] = llm.base_url
            os.environ["SCRIPTED_SPEECH_URL"] = speech.base_url
            where = LiveKitSpec(entrypoint="livekit_scripted:build", path=str(HELPERS))
            spec = AgentSpec(name="lk-scripted", family="scripted", livekit=where)
        else:
            model = LLMSpec(
                provider="scripted",
                model="scripted-llm",
                ttft_ms=200,
                token_delay_ms=5,
                reply=ONE_SENTENCE,
            )
            tts = TTSSpec(provider="openai", base_url=speech.base_url, model="tts-1")
            # the caller heard by the endpoint too: 50 local Whispers would measure the cores
            stt = STTSpec(provider="openai", base_url=speech.base_url)
            spec = AgentSpec(name="cascade", family="scripted", stt=stt, llm=model, tts=tts)
        runs = await replay_callers(spec, callers, items)
        return [r for run in runs for r in run], speech.answers()


async def replay_callers(spec: AgentSpec, callers: int, items) -> list:
    with tempfile.TemporaryDirectory() as tmp:
        return await asyncio.gather(
            *(
                replay(
                    spec,
                    spec_path=Path("stalls.toml"),
                    dialogues=[items[k % len(items)]],
                    dialogues_path=BUILTIN_DIALOGUES,
                    fixtures_dir=BUILTIN_FIXTURES,
                    out_dir=Path(tmp) / f"caller-{k}",
                    final_only=True,
                )
                for k in range(callers)
            )
        )


async def one_case(transport: str, plan: str, callers: int, items) -> dict:
    if transport in IN_PROCESS:
        records, sent = await in_process_case(transport, plan, callers, items)
        case = {"transport": transport, "plan": plan, "callers": callers}
        return {**case, **score(plan, records, sent)}
    protocol = REALTIME if transport == S2S else transport
    async with ScriptedVoiceAgent(
        delay_ms=300, reply=REPLY, protocol=protocol, lead_ms=LEAD_MS, **PLANS[plan]
    ) as agent:
        assert agent.url is not None
        spec = agent_spec(transport, agent.url)
        runs = await replay_callers(spec, callers, items)
        sent = agent.turns()
    records = [r for run in runs for r in run]
    return {
        "transport": transport,
        "plan": plan,
        "callers": callers,
        **score(plan, records, sent),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--callers", type=int, action="append", default=None)
    parser.add_argument("--transport", action="append", default=None)
    parser.add_argument("--plan", action="append", default=None, choices=sorted(PLANS))
    args = parser.parse_args()
    items = load_dialogues(BUILTIN_DIALOGUES)
    for transport in args.transport or ["pcm", "pipecat", "twilio", "telnyx", S2S, *IN_PROCESS]:
        for plan in args.plan or list(PLANS):
            for callers in args.callers or [1, 50]:
                row = asyncio.run(one_case(transport, plan, callers, items))
                print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
