"""A scripted speculating LLM through pipecat's own LLM service, on a fake clock: it answers a
known time after each request, and records the request leaving as the HTTP hook does."""

from __future__ import annotations

import asyncio
import contextlib

from pipecat.frames.frames import (
    Frame,
    LLMContextFrame,
    LLMFullResponseEndFrame,
    LLMFullResponseStartFrame,
)
from pipecat.pipeline.pipeline import Pipeline
from pipecat.pipeline.worker import PipelineParams, PipelineWorker
from pipecat.processors.frame_processor import FrameDirection
from pipecat.services.llm_service import LLMService
from pipecat.services.settings import LLMSettings
from pipecat.workers.runner import WorkerRunner

from voicebench.timing import EventKind, RunClock, TimingObserver

MS = 1_000_000
TTFT_MS = 237


class FakeNow:
    def __init__(self) -> None:
        self.ns = 1_000 * MS

    def __call__(self) -> int:
        return self.ns


class ScriptedSpeculatingLLM(LLMService):
    """Answers every context after ``ttft_ns`` of fake time; the request leaving is recorded as
    the HTTP hook records it in a real run."""

    def __init__(
        self,
        now: FakeNow,
        observer: TimingObserver,
        ttft_ns: int,
        replies: list[str] | None = None,
    ) -> None:
        fields = (
            "system_instruction temperature max_tokens top_p top_k frequency_penalty "
            "presence_penalty seed filter_incomplete_user_turns user_turn_completion_config"
        )
        super().__init__(settings=LLMSettings(model="scripted", **dict.fromkeys(fields.split())))
        self._now, self._observer, self._ttft_ns = now, observer, ttft_ns
        self._replies = list(replies or ["That sounds hard."])

    def can_generate_metrics(self) -> bool:
        return True  # as every streaming LLM service of pipecat's does

    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        await super().process_frame(frame, direction)
        if not isinstance(frame, LLMContextFrame):
            await self.push_frame(frame, direction)
            return
        self._observer.record(EventKind.LLM_SENT, self._now())
        await self.start_ttfb_metrics()
        self._now.ns += self._ttft_ns
        await self.stop_ttfb_metrics()  # the first chunk, as pipecat's OpenAI service does
        await self.push_frame(LLMFullResponseStartFrame())
        reply = self._replies.pop(0) if len(self._replies) > 1 else self._replies[0]
        first, rest = reply.split(" ", 1)
        await self._push_llm_text(first + " ")
        await self._push_llm_text(rest)
        await self.push_frame(LLMFullResponseEndFrame())


@contextlib.asynccontextmanager
async def running(processors: list, observer: TimingObserver, clock: RunClock):
    """A pipeline of ``processors`` watched by ``observer`` on ``clock``, running in its own
    task; yields its worker, and stops it on the way out."""
    worker = PipelineWorker(
        Pipeline(processors),
        params=PipelineParams(enable_metrics=True),
        observers=[observer],
        clock=clock,
        idle_timeout_secs=None,
        enable_rtvi=False,
        enable_turn_tracking=False,
    )
    runner = WorkerRunner(handle_sigint=False)
    await runner.add_workers(worker)
    run = asyncio.create_task(runner.run())
    try:
        yield worker
    finally:
        await worker.cancel(reason="test finished")
        await asyncio.wait_for(run, 15)


async def until(predicate, timeout_s: float = 10.0) -> None:
    async with asyncio.timeout(timeout_s):
        while not predicate():
            await asyncio.sleep(0.005)
