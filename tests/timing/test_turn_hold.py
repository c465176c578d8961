"""A speculating LLM through pipecat's own LLM service and speculation gate, on a fake clock:
its first token arrives a known time after the request and is held a known time until the
turn is confirmed. The timing gives the model's TTFT and the hold apart, to the nanosecond."""

from __future__ import annotations

import asyncio

from pipecat.frames.frames import LLMContextFrame, UserStoppedSpeakingFrame
from pipecat.processors.aggregators.llm_context import LLMContext
from speculating import MS, TTFT_MS, FakeNow, ScriptedSpeculatingLLM, running, until

from voicebench.timing import EventKind, RunClock, TimingObserver, derive_timing

HOLD_MS = 412


async def test_a_held_reply_gives_exact_llm_ttft_and_turn_hold():
    now, observer = FakeNow(), TimingObserver()
    async with running(
        [ScriptedSpeculatingLLM(now, observer, TTFT_MS * MS)], observer, RunClock(now)
    ) as worker:
        speech_end_ns = now.ns
        now.ns += 300 * MS  # the early VAD stop: the LLM is asked before the turn is confirmed
        await worker.queue_frame(LLMContextFrame(context=LLMContext(), speculation=True))

        def kinds() -> list[EventKind]:
            return [e.kind for e in observer.events]

        await until(lambda: EventKind.LLM_TOKEN_RECEIVED in kinds())
        await asyncio.sleep(0.1)  # whatever the gate lets through has been pushed by now
        assert EventKind.LLM_TOKEN not in kinds(), "a speculative reply must be held"
        now.ns += HOLD_MS * MS  # the turn is confirmed: the gate releases the reply
        await worker.queue_frame(UserStoppedSpeakingFrame())
        await until(lambda: EventKind.LLM_TOKEN in kinds())
        now.ns += 50 * MS
        observer.record(EventKind.AUDIO_OUT, now.ns)

    t = derive_timing(observer.since(0), speech_end_ns)
    assert t.ttft_ms == TTFT_MS
    assert t.stages_ms["llm_ttft"] == TTFT_MS
    assert t.stages_ms["turn_hold"] == HOLD_MS
    assert t.llm_release_ns - t.llm_first_token_ns == HOLD_MS * MS
    assert sum(v for v in t.stages_ns().values() if v is not None) == t.audio_out_ns - speech_end_ns
