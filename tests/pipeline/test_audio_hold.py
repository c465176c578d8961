"""A speculative reply whose audio, not text, waits for the turn end (``[turn] hold = "audio"``):
pipecat's LLM service with the passing gate, real Piper, then ``AudioHold``, on a fake clock.
Nothing of a reply reaches the speaker before its turn is confirmed, a withdrawn reply never
does and leaves no events behind, and the hold is its own exact stage."""

from __future__ import annotations

import asyncio

from pipecat.frames.frames import (
    EagerEndOfTurnCancelFrame,
    Frame,
    LLMContextFrame,
    SystemFrame,
    TTSAudioRawFrame,
    TTSTextFrame,
    UserStartedSpeakingFrame,
    UserStoppedSpeakingFrame,
)
from pipecat.pipeline.pipeline import Pipeline
from pipecat.pipeline.worker import PipelineParams, PipelineWorker
from pipecat.processors.aggregators.llm_context import LLMContext
from pipecat.processors.frame_processor import FrameDirection, FrameProcessor
from pipecat.workers.runner import WorkerRunner
from speculating import MS, TTFT_MS, FakeNow, ScriptedSpeculatingLLM, until

from voicebench.agentspec import TTSSpec
from voicebench.pipeline.hold import AudioHold, PassingGate
from voicebench.pipeline.tts import piper_tts
from voicebench.timing import EventKind, RunClock, TimingObserver, derive_timing

HOLD_MS = 321


class Speaker(FrameProcessor):
    """The end of the line: what was let through to be played."""

    def __init__(self) -> None:
        super().__init__()
        self.spoken: list[str] = []
        """The text of each sentence that went on to be played."""
        self.audio_frames = 0

    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        await super().process_frame(frame, direction)
        if isinstance(frame, TTSTextFrame):
            self.spoken.append(frame.text)
        elif isinstance(frame, TTSAudioRawFrame):
            self.audio_frames += 1
        await self.push_frame(frame, direction)


class Valve(FrameProcessor):
    """Keeps every frame but system frames until opened: TTS slower than the verdicts."""

    def __init__(self) -> None:
        super().__init__()
        self.kept: list[tuple[Frame, FrameDirection]] = []
        self.closed = True

    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        await super().process_frame(frame, direction)
        if self.closed and not isinstance(frame, SystemFrame):
            self.kept.append((frame, direction))
        else:
            await self.push_frame(frame, direction)

    async def open(self) -> None:
        self.closed = False
        for frame, direction in self.kept:
            await self.push_frame(frame, direction)


class Line:
    """LLM -> Piper [-> Valve] -> AudioHold -> Speaker, started on a fake clock."""

    def __init__(self, replies: list[str], *, valve: bool = False) -> None:
        self.now, self.observer = FakeNow(), TimingObserver()
        self.llm = ScriptedSpeculatingLLM(self.now, self.observer, TTFT_MS * MS, replies)
        self.llm._speculation_gate = PassingGate()
        self.speaker = Speaker()
        self.valve = Valve()
        self.tts = piper_tts(TTSSpec())
        self.chunks_spoken: list[str] = []
        """Every text chunk Piper was asked to synthesize and did, in order."""
        synthesize = self.tts._voice.synthesize

        def spy(text, *args, **kwargs):
            yield from synthesize(text, *args, **kwargs)
            self.chunks_spoken.append(text)

        self.tts._voice.synthesize = spy
        processors = [self.llm, self.tts, AudioHold(self.observer), self.speaker]
        if valve:
            processors.insert(2, self.valve)
        self.worker = PipelineWorker(
            Pipeline(processors),
            params=PipelineParams(enable_metrics=True, audio_out_sample_rate=16_000),
            observers=[self.observer],
            clock=RunClock(self.now),
            idle_timeout_secs=None,
            enable_rtvi=False,
            enable_turn_tracking=False,
        )

    async def __aenter__(self) -> Line:
        self.runner = WorkerRunner(handle_sigint=False)
        await self.runner.add_workers(self.worker)
        self.run = asyncio.create_task(self.runner.run())
        return self

    async def __aexit__(self, *exc) -> None:
        await self.worker.cancel(reason="test finished")
        await asyncio.wait_for(self.run, 15)

    async def send(self, frame: Frame) -> None:
        await self.worker.queue_frame(frame)

    def count(self, kind: EventKind) -> int:
        return sum(e.kind is kind for e in self.observer.events)

    async def synthesized(self, n: int) -> None:
        """Wait until Piper has made audio for ``n`` replies, and a moment more."""
        await until(lambda: self.count(EventKind.TTS_AUDIO) >= n, 30)
        await asyncio.sleep(0.2)


async def test_the_audio_waits_for_the_turn_end_and_the_hold_is_exact():
    async with Line(["That sounds hard."]) as line:
        await line.send(UserStartedSpeakingFrame())
        speech_end_ns = line.now.ns
        line.now.ns += 300 * MS  # the early VAD stop: asked before the turn is confirmed
        await line.send(LLMContextFrame(context=LLMContext(), speculation=True))
        await line.synthesized(1)
        # The text went on at once and TTS spoke it; only the audio waits.
        assert line.count(EventKind.LLM_TOKEN) == 2
        assert line.speaker.audio_frames == 0 and line.speaker.spoken == []
        assert line.count(EventKind.AUDIO_RELEASE) == 0
        line.now.ns += HOLD_MS * MS
        await line.send(UserStoppedSpeakingFrame())
        await until(lambda: line.speaker.audio_frames > 0)
        line.now.ns += 7 * MS
        line.observer.record(EventKind.AUDIO_OUT, line.now.ns)
        await until(lambda: line.speaker.spoken == ["That sounds hard."])

    t = derive_timing(line.observer.since(0), speech_end_ns)
    assert t.ttft_ms == TTFT_MS and t.stages_ms["llm_ttft"] == TTFT_MS
    assert t.stages_ms["turn_hold"] == 0.0
    assert t.stages_ms["audio_hold"] == HOLD_MS
    assert t.stages_ms["output"] == 7.0
    assert t.ttfa_ms == 300 + TTFT_MS + HOLD_MS + 7
    assert sum(v for v in t.stages_ns().values() if v is not None) == t.audio_out_ns - speech_end_ns


async def test_a_withdrawn_reply_is_never_heard_and_leaves_no_events():
    async with Line(["Wrong answer.", "Right answer."]) as line:
        await line.send(UserStartedSpeakingFrame())
        await line.send(LLMContextFrame(context=LLMContext(), speculation=True))
        await line.synthesized(1)
        await line.send(EagerEndOfTurnCancelFrame())  # the user went on talking
        await until(lambda: line.count(EventKind.LLM_REQUEST) == 0)
        speech_end_ns = line.now.ns
        line.now.ns += 250 * MS
        await line.send(LLMContextFrame(context=LLMContext(), speculation=True))
        await line.synthesized(1)
        line.now.ns += HOLD_MS * MS
        await line.send(UserStoppedSpeakingFrame())
        await until(lambda: line.speaker.spoken != [])
        line.observer.record(EventKind.AUDIO_OUT, line.now.ns)
        await asyncio.sleep(0.2)

    assert line.speaker.spoken == ["Right answer."]
    events = line.observer.since(0)
    assert sum(e.kind is EventKind.LLM_REQUEST for e in events) == 1
    assert sum(e.kind is EventKind.LLM_SENT for e in events) == 2  # both were asked
    t = derive_timing(events, speech_end_ns)
    assert t.stages_ms["audio_hold"] == HOLD_MS
    assert t.ttfa_ms == 250 + TTFT_MS + HOLD_MS


async def test_a_verdict_ahead_of_its_reply_is_kept_for_it():
    async with Line(["Too soon.", "In time."], valve=True) as line:
        # Both verdicts pass TTS before either reply's frames come out of it.
        await line.send(UserStartedSpeakingFrame())
        await line.send(LLMContextFrame(context=LLMContext(), speculation=True))
        await until(lambda: line.count(EventKind.LLM_END) == 1)
        await line.send(EagerEndOfTurnCancelFrame())
        await line.send(LLMContextFrame(context=LLMContext(), speculation=True))
        await until(lambda: line.count(EventKind.LLM_END) == 2)
        await line.send(UserStoppedSpeakingFrame())
        # Piper has spoken the reply in play (the withdrawn one too, if it was quicker).
        await until(lambda: line.chunks_spoken[-1:] == ["In time."], 30)
        await asyncio.sleep(0.3)
        await line.valve.open()
        await until(lambda: line.speaker.spoken != [], 30)
        await asyncio.sleep(0.3)
    assert line.speaker.spoken == ["In time."]
    assert sum(e.kind is EventKind.LLM_REQUEST for e in line.observer.events) == 1


async def test_piper_stops_speaking_a_withdrawn_reply():
    sentences = [f"This is sentence number {n} of a long answer." for n in range(1, 9)]
    async with Line([" ".join(sentences), "Right answer."]) as line:
        # A reply's audio context left open would hold the next reply back this long.
        line.tts._stop_frame_timeout_s = 600
        await line.send(UserStartedSpeakingFrame())
        await line.send(LLMContextFrame(context=LLMContext(), speculation=True))
        await until(lambda: line.chunks_spoken != [], 30)
        await line.send(EagerEndOfTurnCancelFrame())  # while Piper is still on the reply
        await line.send(LLMContextFrame(context=LLMContext(), speculation=True))
        await line.send(UserStoppedSpeakingFrame())
        await until(lambda: line.speaker.spoken == ["Right answer."], 30)
    # At most the chunk in hand when the verdict came was finished; the rest was never spoken.
    assert line.chunks_spoken[-1] == "Right answer."
    assert len(line.chunks_spoken) <= 3
    assert line.count(EventKind.ERROR) == 0  # a silenced reply is not a TTS failure
