"""The LLM request and its first answer token, timed at the socket: a pipecat LLM service built
by ``pipecat_llm`` against the scripted server, over real HTTP on loopback."""

from __future__ import annotations

import asyncio
import contextlib
import time

import pytest
from pipecat.frames.frames import LLMContextFrame
from pipecat.processors.aggregators.llm_context import LLMContext
from speculating import running

from voicebench import _arrivals
from voicebench.agentspec import LLMSpec
from voicebench.llm import connect, pipecat_llm
from voicebench.testing import ScriptedLLMServer
from voicebench.timing import EventKind, RunClock, TimingObserver, TurnEvent, derive_timing

MS = 1_000_000
TTFT_MS = 300
ROLE_MS = 40
BUSY_FROM_MS, BUSY_MS = TTFT_MS - 100, 250
"""The event loop is kept busy over the token's arrival: it is read and parsed late."""

needs_stamps = pytest.mark.skipif(not _arrivals.SUPPORTED, reason="no kernel arrival stamps")


async def _one_reply(server: ScriptedLLMServer, busy: list[int]) -> TimingObserver:
    """One request through the service; ``busy`` gets when the loop was blocked and freed."""
    observer, clock = TimingObserver(), RunClock()
    async with contextlib.AsyncExitStack() as stack:
        spec = LLMSpec(provider="openai-compatible", model="m", base_url=server.base_url)
        conn = await connect(spec, stack)

        def sent() -> None:
            observer.record(EventKind.LLM_SENT, clock.get_time())
            asyncio.get_running_loop().call_later(BUSY_FROM_MS / 1000, block)

        def block() -> None:
            busy.append(time.perf_counter_ns())
            time.sleep(BUSY_MS / 1000)  # the loop does nothing else meanwhile
            busy.append(time.perf_counter_ns())

        llm = pipecat_llm(
            conn,
            "Be kind.",
            on_request_sent=sent,
            on_answer_arrived=lambda age: observer.record(
                EventKind.LLM_TOKEN_ARRIVED, clock.get_time() - age
            ),
        )
        async with running([llm], observer, clock) as worker:
            context = LLMContext([{"role": "user", "content": "I lost my job."}])
            await worker.queue_frame(LLMContextFrame(context=context))
            async with asyncio.timeout(20):
                while EventKind.LLM_END not in {e.kind for e in observer.events}:
                    await asyncio.sleep(0.01)
    return observer


@needs_stamps
async def test_the_first_answer_token_is_stamped_at_its_arrival_not_its_reading():
    async with ScriptedLLMServer(
        ttft_ms=TTFT_MS, token_delay_ms=5, role_chunk_ms=ROLE_MS, reply="I am here."
    ) as server:
        busy: list[int] = []
        observer = await _one_reply(server, busy)
        [request] = server.requests()
    events = observer.since(0)

    def first(kind: EventKind) -> int:
        return min(e.ns for e in events if e.kind is kind)

    assert [e.kind for e in events].count(EventKind.LLM_TOKEN_ARRIVED) == 1
    sent, arrived = first(EventKind.LLM_SENT), first(EventKind.LLM_TOKEN_ARRIVED)
    parsed, released = first(EventKind.LLM_TOKEN_RECEIVED), first(EventKind.LLM_TOKEN)
    freed = busy[1]
    token_written = request.received_ns + TTFT_MS * MS  # the server waits for this, then writes
    # The answer token's bytes, not the role-only chunk's that came ROLE_MS after the request:
    assert arrived >= token_written
    # ...stamped when they came in, while the loop was still busy, not when it got to them.
    assert busy[0] < token_written
    assert arrived < freed <= parsed <= released
    # The request's time starts once it has been written: the server had it by then.
    assert request.received_ns <= sent + MS
    timing = derive_timing(events, speech_end_ns=sent - 10 * MS)
    assert timing.llm_request_ns == sent and timing.llm_first_token_ns == arrived
    assert timing.llm_release_ns == released


def test_the_arrival_is_preferred_to_the_service_report_when_there_is_one():
    def events(*pairs: tuple[EventKind, int]) -> list[TurnEvent]:
        return [TurnEvent(kind, ms * MS) for kind, ms in pairs]

    reported = events(
        (EventKind.LLM_REQUEST, 100),
        (EventKind.LLM_SENT, 101),
        (EventKind.LLM_TOKEN_RECEIVED, 400),
        (EventKind.LLM_TOKEN, 402),
    )
    assert derive_timing(reported, speech_end_ns=0).llm_first_token_ns == 400 * MS
    arrived = reported + events(
        (EventKind.LLM_TOKEN_ARRIVED, 397),
        (EventKind.LLM_TOKEN_ARRIVED, 900),  # a later inference's, after this release
    )
    timing = derive_timing(arrived, speech_end_ns=0)
    assert timing.llm_first_token_ns == 397 * MS and timing.ttft_ms == 296.0
    assert timing.llm_release_ns == 402 * MS
