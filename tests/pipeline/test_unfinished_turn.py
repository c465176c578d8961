"""The turn rule's wait for a caller who stops mid-sentence (``[turn] unfinished_timeout``):
the stop strategy fed VAD and transcript frames directly, on the event loop's own timers. A
transcript that ends a sentence ends the turn after ``user_speech_timeout``; one that stops
mid-sentence holds it until ``unfinished_timeout``, and the caller going on cancels that."""

from __future__ import annotations

import asyncio

import pytest
from pipecat.frames.frames import (
    TranscriptionFrame,
    VADUserStartedSpeakingFrame,
    VADUserStoppedSpeakingFrame,
)
from pipecat.processors.frame_processor import FrameProcessorSetup
from pipecat.utils.asyncio.task_manager import TaskManager
from pipecat.utils.time import time_now_iso8601

from voicebench.agentspec import TurnSpec
from voicebench.pipeline.turns import PendingTranscriptStopStrategy, TranscriptGate
from voicebench.text import unfinished

SHORT_S = 0.05
"""``user_speech_timeout``: the ordinary wait after the VAD stop."""
LONG_S = 30.0
"""``unfinished_timeout`` where a test shows the turn still open: far beyond its checks."""


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I lost my job last week.", False),
        ("Why does this keep happening to me?", False),
        ("I just can't anymore!", False),
        ('  I feel so alone." ', False),
        ("I have been feeling", True),
        ("I have been feeling,", True),
        ("and then my mother said...", True),
        ("It started when I moved to the.", True),
        ("I went back and.", True),
        ("My sister told me I'm.", True),
        ("", False),
    ],
)
def test_unfinished_reads_where_a_sentence_stops(text: str, expected: bool) -> None:
    assert unfinished(text) is expected


def test_unfinished_timeout_needs_every_segment() -> None:
    with pytest.raises(ValueError, match="unfinished_timeout needs wait_for_all_segments"):
        TurnSpec(unfinished_timeout=1.0, wait_for_all_segments=False)


async def _strategy(unfinished_timeout: float) -> tuple[PendingTranscriptStopStrategy, list]:
    gate = TranscriptGate()
    strategy = PendingTranscriptStopStrategy(
        gate,
        stop_timeout=LONG_S,
        unfinished_timeout=unfinished_timeout,
        user_speech_timeout=SHORT_S,
    )
    stops: list[float] = []

    @strategy.event_handler("on_user_turn_stopped")
    async def _stopped(*_args) -> None:
        stops.append(asyncio.get_running_loop().time())

    await strategy.setup(
        FrameProcessorSetup(
            clock=None,
            pipeline_worker=None,
            task_manager=TaskManager(loop=asyncio.get_running_loop()),
        )
    )
    return strategy, stops


async def _say(strategy: PendingTranscriptStopStrategy, text: str) -> float:
    """The caller speaks ``text`` and stops; returns the loop time just before the VAD stop
    was handed to the strategy (which reads its own clock while taking it: at this or later)."""
    await strategy.process_frame(VADUserStartedSpeakingFrame())
    strategy._gate.segment_started()
    stopped = asyncio.get_running_loop().time()
    await strategy.process_frame(VADUserStoppedSpeakingFrame(stop_secs=0.1))
    await strategy.process_frame(TranscriptionFrame(text, "caller", time_now_iso8601()))
    return stopped


async def _until(stops: list, timeout_s: float = 10.0) -> None:
    async def wait() -> None:
        while not stops:
            await asyncio.sleep(0.01)

    await asyncio.wait_for(wait(), timeout_s)


async def test_a_finished_sentence_ends_the_turn_after_the_ordinary_wait() -> None:
    strategy, stops = await _strategy(LONG_S)
    await _say(strategy, "I lost my job last week.")
    await _until(stops)
    assert len(stops) == 1
    await strategy.cleanup()


async def test_words_that_stop_mid_sentence_hold_the_turn_until_the_caller_goes_on() -> None:
    strategy, stops = await _strategy(LONG_S)
    await _say(strategy, "I have been feeling")
    await asyncio.sleep(20 * SHORT_S)  # the ordinary wait has long passed
    assert stops == []
    # the caller goes on: the open wait is dropped, and the whole turn ends normally
    await strategy.process_frame(VADUserStartedSpeakingFrame())
    strategy._gate.segment_started()
    await strategy.process_frame(VADUserStoppedSpeakingFrame(stop_secs=0.1))
    await strategy.process_frame(
        TranscriptionFrame(" really tired lately.", "caller", time_now_iso8601())
    )
    await _until(stops)
    assert len(stops) == 1
    await strategy.cleanup()


async def test_an_unfinished_turn_ends_once_its_longer_wait_has_passed() -> None:
    wait_s = 0.4
    strategy, stops = await _strategy(wait_s)
    stopped = await _say(strategy, "and then my mother said")
    await _until(stops)
    assert stops[0] - stopped >= wait_s  # timers never fire early; late is the machine's load
    await strategy.cleanup()
