"""A voice agent built from a spec as a real pipecat pipeline, driven one spoken turn at a time.

    mic (ReplayInputTransport) -> Silero VAD -> Whisper ASR -> user turn aggregator
      -> LLM -> Piper TTS [-> AudioHold] -> loudspeaker (CaptureOutputTransport)
      -> assistant aggregator

(``AudioHold`` only with ``[turn] speculate`` and ``hold = "audio"``: voicebench/pipeline/hold.py.)

Before each turn the driver sets the LLM context to the history it wants (the dialogue's
own turns when teacher-forced, the agent's earlier turns when free-running), queues the
seeker's utterance on the microphone and waits until the agent has finished answering.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import numpy as np

from voicebench.agent.inprocess import speak_in_process
from voicebench.agent.interface import AFTER_ASIDE_S, PLAIN, HeardTurn, TurnCue
from voicebench.agentspec import AgentSpec, VADSpec
from voicebench.budgets import TURN_TIMEOUT_S
from voicebench.llm import connect, pipecat_llm
from voicebench.runlog import TurnError
from voicebench.timing import EventKind, TurnEvent

SAMPLE_RATE = 16_000
UNSPOKEN_S = 2.0
"""How long after the LLM's end a turn whose reply never reached the TTS waits for audio."""
QUIET_TTS_S = 15.0
"""How long after the LLM's end a turn waits for the first audio of a TTS that took the reply
and reported nothing: on a busy machine Piper can take seconds over its first sentence."""


def _turn_done(events: list[TurnEvent], now_ns: int, aside_ns: int | None = None) -> bool:
    """The agent has answered the user's last words: its latest request came after the user's
    last VAD stop, its reply ended, was played, and the speaker fell silent. A request that the
    user talked over (a turn cut short) does not count. After a backchannel said at
    ``aside_ns``, the agent is given ``AFTER_ASIDE_S`` to take it as a turn; its VAD stops count
    only if it did."""

    def times(kind: EventKind, since: int = 0) -> list[int]:
        return [e.ns for e in events if e.kind is kind and e.ns >= since]

    requests = times(EventKind.LLM_REQUEST)
    if not requests:
        return False
    request = requests[-1]
    vad_stops = times(EventKind.VAD_STOP)
    if aside_ns is not None:
        if now_ns - aside_ns < AFTER_ASIDE_S * 1e9:
            return False
        if request < aside_ns:
            vad_stops = [ns for ns in vad_stops if ns < aside_ns]
    if vad_stops and vad_stops[-1] > request:
        return False
    ends = times(EventKind.LLM_END, request)
    if not ends:
        return False
    tts = times(EventKind.TTS_AUDIO, request)
    stopped = times(EventKind.BOT_STOPPED, request)
    if tts:
        return bool(stopped) and stopped[-1] > tts[-1]
    # No audio yet. A TTS that took the reply may just be slow; one that has nothing to say
    # says so (pipecat reports a reply's audio context that ended silent as an error).
    asked = times(EventKind.TTS_REQUEST, request)
    if asked and times(EventKind.ERROR, request):
        return True
    wait_s = QUIET_TTS_S if asked else UNSPOKEN_S
    return now_ns - ends[-1] > wait_s * 1e9


def silero_vad(spec: VADSpec):
    """pipecat's Silero VAD with the spec's settings."""
    from pipecat.audio.vad.silero import SileroVADAnalyzer
    from pipecat.audio.vad.vad_analyzer import VADParams

    params = VADParams(
        stop_secs=spec.stop_secs,
        start_secs=spec.start_secs,
        confidence=spec.confidence,
        min_volume=spec.min_volume,
    )
    return SileroVADAnalyzer(sample_rate=SAMPLE_RATE, params=params)


class VoiceAgent:
    """One pipeline for a whole run; use as ``async with VoiceAgent(spec) as agent``.

    ``transport(params, observer)`` makes the pipeline's transport: by default the replay's
    microphone and loudspeaker; ``voicebench serve`` gives it a WebSocket caller instead.
    A subclass builds another pipeline between them (``_processors``) and says when its turn
    is over (``_turn_done``): the speech-to-speech agent (``voicebench.pipeline.s2s``).
    """

    speech_to_speech = False
    in_rate = SAMPLE_RATE
    """The microphone's rate (the fixtures' speech is resampled to it whole)."""
    out_rate = SAMPLE_RATE
    """The loudspeaker's rate (what it played is kept at the fixtures' rate)."""
    out_chunk_ms = 40
    """What the loudspeaker is handed at a time (pipecat's default)."""

    def __init__(self, spec: AgentSpec, *, clock=None, transport=None) -> None:
        from voicebench.timing import RunClock, TimingObserver

        self.spec = spec
        if spec.llm is not None and spec.tts.provider == "openai":
            from voicebench.pipeline.tts import OPENAI_RATE

            # A streamed endpoint's audio is played as it comes, at its own rate: pipecat's
            # streaming resampler holds back up to 80 ms of 20 ms pieces, a 40 ms chunk 20 more.
            self.out_rate, self.out_chunk_ms = OPENAI_RATE, 20
        self._make_transport = transport
        self.clock = clock or RunClock()
        self.observer = TimingObserver()
        self._stack = contextlib.AsyncExitStack()
        self._runner_task: asyncio.Task | None = None
        self._speech_end_ns = 0
        """The true end of the caller's speech in the turn being spoken."""

    async def __aenter__(self) -> VoiceAgent:
        self._stack = contextlib.AsyncExitStack()
        await self._stack.__aenter__()
        try:
            await self._start()
        except BaseException:
            await self._stack.__aexit__(None, None, None)
            raise
        return self

    @property
    def connected(self) -> bool:
        """A pipeline in this process always answers once started."""
        return True

    async def __aexit__(self, *exc) -> None:
        try:
            await self._stop()
        finally:
            await self._stack.__aexit__(*exc)

    def _transport(self):
        """The pipeline's microphone and loudspeaker (``self.transport``), made once."""
        from pipecat.transports.base_transport import TransportParams

        from voicebench.pipeline.transports import ReplayTransport

        params = TransportParams(
            audio_in_enabled=True,
            audio_out_enabled=True,
            audio_in_sample_rate=self.in_rate,
            audio_out_sample_rate=self.out_rate,
            audio_out_10ms_chunks=self.out_chunk_ms // 10,
        )
        self.transport = (self._make_transport or ReplayTransport)(params, self.observer)
        return self.transport

    async def _processors(self) -> list[Any]:
        """The pipeline, microphone to loudspeaker and the assistant's side after it."""
        from pipecat.processors.aggregators.llm_context import LLMContext
        from pipecat.processors.aggregators.llm_response_universal import (
            LLMContextAggregatorPair,
            LLMUserAggregatorParams,
        )
        from pipecat.processors.audio.vad_processor import VADProcessor
        from pipecat.turns.user_start import (
            TranscriptionUserTurnStartStrategy,
            VADUserTurnStartStrategy,
        )
        from pipecat.turns.user_stop import SpeechTimeoutUserTurnStopStrategy
        from pipecat.turns.user_turn_strategies import UserTurnStrategies

        from voicebench.pipeline.hold import AudioHold, PassingGate
        from voicebench.pipeline.stt import load_whisper, stt_service
        from voicebench.pipeline.tts import tts_service
        from voicebench.pipeline.turns import (
            PendingTranscriptStopStrategy,
            SpeculativeStopStrategy,
            TranscriptGate,
        )

        spec = self.spec
        transport = self._transport()
        # The models load in worker threads: this loop may be serving other calls meanwhile
        # (`voicebench serve`), whose handshakes and audio must not wait on them.
        vad = VADProcessor(vad_analyzer=await asyncio.to_thread(silero_vad, spec.vad))
        self.gate = TranscriptGate()
        whisper = None
        if spec.stt.provider == "whisper":
            whisper = await asyncio.to_thread(load_whisper, spec.stt)
        stt = stt_service(spec.stt, self.gate, whisper=whisper)
        assert spec.llm is not None, "a remote agent has no pipeline"
        conn = await connect(
            spec.llm, self._stack, warm_prompt=spec.system_prompt if spec.llm.warmup else None
        )
        llm = pipecat_llm(
            conn,
            spec.system_prompt,
            on_request_sent=lambda: self.observer.record(EventKind.LLM_SENT, self.clock.get_time()),
            on_answer_arrived=lambda age_ns: self.observer.record(
                EventKind.LLM_TOKEN_ARRIVED, self.clock.get_time() - age_ns
            ),
        )
        tts = await asyncio.to_thread(tts_service, spec.tts)
        speaker_side: list[Any] = []
        if spec.turn.speculate and spec.turn.hold == "audio":
            # pipecat takes no gate argument; the LLM service's own is swapped before start.
            llm._speculation_gate = PassingGate(name=f"{llm}::PassingGate")
            speaker_side.append(AudioHold(self.observer))
        self.context = LLMContext()
        stop: Any
        if spec.turn.speculate:
            stop = SpeculativeStopStrategy(
                self.gate,
                stop_timeout=spec.turn.stop_timeout,
                unfinished_timeout=spec.turn.unfinished_timeout,
                user_speech_timeout=spec.turn.user_speech_timeout,
            )
        elif spec.turn.wait_for_all_segments:
            stop = PendingTranscriptStopStrategy(
                self.gate,
                stop_timeout=spec.turn.stop_timeout,
                unfinished_timeout=spec.turn.unfinished_timeout,
                user_speech_timeout=spec.turn.user_speech_timeout,
            )
        else:
            stop = SpeechTimeoutUserTurnStopStrategy(
                user_speech_timeout=spec.turn.user_speech_timeout
            )
        aggregators = LLMContextAggregatorPair(
            self.context,
            user_params=LLMUserAggregatorParams(
                user_turn_strategies=UserTurnStrategies(
                    start=[VADUserTurnStartStrategy(), TranscriptionUserTurnStartStrategy()],
                    stop=[stop],
                ),
                user_turn_stop_timeout=spec.turn.stop_timeout + 1.0,
            ),
        )
        return [
            transport.input(),
            vad,
            stt,
            aggregators.user(),
            llm,
            tts,
            *speaker_side,
            transport.output(),
            aggregators.assistant(),
        ]

    async def _start(self) -> None:
        from pipecat.pipeline.pipeline import Pipeline
        from pipecat.pipeline.worker import PipelineParams, PipelineWorker
        from pipecat.workers.runner import WorkerRunner

        self.worker = PipelineWorker(
            Pipeline(await self._processors()),
            params=PipelineParams(
                audio_in_sample_rate=self.in_rate,
                audio_out_sample_rate=self.out_rate,
                # The LLM's first-answer-token metrics frame marks when its first token
                # arrived, even while a speculative reply is held (timing.events).
                enable_metrics=True,
            ),
            observers=[self.observer],
            clock=self.clock,
            idle_timeout_secs=None,
            enable_rtvi=False,
            enable_turn_tracking=False,
        )
        started = asyncio.Event()

        @self.worker.event_handler("on_pipeline_started")
        async def _started(_worker, _frame):
            started.set()

        self.runner = WorkerRunner(handle_sigint=False)
        await self.runner.add_workers(self.worker)
        self._runner_task = asyncio.create_task(self.runner.run())
        waiter = asyncio.create_task(started.wait())
        done, _ = await asyncio.wait(
            {waiter, self._runner_task}, timeout=60, return_when=asyncio.FIRST_COMPLETED
        )
        if waiter not in done:
            waiter.cancel()
            if self._runner_task in done:
                self._runner_task.result()
            raise RuntimeError("the voice pipeline did not start within 60 s")

    async def _stop(self) -> None:
        if self._runner_task is None:
            return
        try:
            await self.worker.cancel(reason="replay finished")
            await asyncio.wait_for(self._runner_task, timeout=15)
        except (TimeoutError, asyncio.CancelledError):
            self._runner_task.cancel()
        finally:
            self._runner_task = None

    async def speak(
        self,
        history: list[dict[str, str]],
        pcm: np.ndarray,
        speech_end_sample: int,
        *,
        timeout_s: float = TURN_TIMEOUT_S,
        cue: TurnCue = PLAIN,
    ) -> HeardTurn:
        """Speak one seeker utterance after ``history`` and wait for the agent's answer."""
        return await speak_in_process(
            self,
            self.transport.input().say,
            self.transport.output(),
            history,
            pcm,
            speech_end_sample,
            timeout_s=timeout_s,
            cue=cue,
            speech_to_speech=self.speech_to_speech,
        )

    def _now(self) -> int:
        return self.clock.get_time()

    def _stopped(self) -> bool:
        return self._runner_task is not None and self._runner_task.done()

    async def _set_history(self, history: list[dict[str, str]]) -> None:
        # The system prompt is the LLM service's system instruction; the context is the history.
        self.context.set_messages(list(history))  # type: ignore[arg-type]

    def _turn_done(self, events: list[TurnEvent], now_ns: int, aside_ns: int | None) -> bool:
        return _turn_done(events, now_ns, aside_ns)

    def _heard(self, events: list[TurnEvent]) -> bool:
        """Whether anything shows the agent heard the caller this turn (a VAD's start)."""
        return any(e.kind is EventKind.VAD_START for e in events)

    def _failure(self) -> TurnError | None:
        """A failure the agent itself knows of (none in a cascade: its stages report errors
        as frames)."""
        return None
