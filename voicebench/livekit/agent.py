"""A LiveKit agent (``[livekit]``), as its author wrote it, run in this process with no room and
no LiveKit server, and driven one spoken turn at a time like every agent.

The spec's entrypoint returns the user's ``Agent`` and ``AgentSession``. The session is given
voicebench's microphone and loudspeaker (``voicebench.livekit.io``) as its audio input and
output, and started. Before each turn the agent's chat context is made the history asked for
(its instructions kept): the teacher-forced replay.

What is timed, on the run's clock, as the session goes:

- its user state (``speaking``, then ``listening``: its VAD's start and stop), and its final
  transcript;
- its ``llm_node`` (the request when it is called, its first text) and its ``tts_node`` (each
  piece of text as it is released to it, the end of the text, its first audio frame), wrapped
  on the agent object itself, the user's own overrides included. LiveKit may ask the LLM
  before the turn is over (preemptive generation) and hold its text until it is: that wait is
  the ``turn_hold`` stage, from the first text the LLM gave to its release. A non-streaming
  TTS's ``synthesize`` call marks the TTS request, once the text was cut into sentences;
- the loudspeaker's first audible sample, cut-offs and ends (``LiveKitSpeaker``);
- an error the session reports as unrecoverable, an exception raised in either node, and a
  session that closes mid-turn.

LiveKit's own figures for the turn (the metrics it attaches to the user's and the agent's
messages: end of turn, transcription, LLM TTFT, TTS TTFB, end to end) are kept beside the
measured waterfall as ``ReportedLatency``.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import inspect
from collections.abc import AsyncIterable, AsyncIterator
from typing import Any

import numpy as np

from voicebench.agent.inprocess import POLL_S, SETTLE_S, speak_in_process
from voicebench.agent.interface import PLAIN, HeardTurn, TurnCue
from voicebench.agent.realtime import FIXTURE_RATE
from voicebench.agentspec import AgentSpec
from voicebench.budgets import TURN_TIMEOUT_S
from voicebench.livekit.entry import start_agent
from voicebench.livekit.job import StandInJob
from voicebench.runlog import TurnError
from voicebench.timing import EventKind, ReportedLatency, TurnEvent

_SPOKE = frozenset(
    {EventKind.LLM_REQUEST, EventKind.TTS_REQUEST, EventKind.AUDIO_OUT, EventKind.ERROR}
)
"""What shows the agent began to say something."""


def _why(error: Any) -> str:
    """A LiveKit error in one line: what it wraps, by type, with its own message (an API
    error's, without the response body it also quotes)."""
    cause = getattr(error, "error", None) or error
    return f"{type(cause).__name__}: {getattr(cause, 'message', None) or cause}"


def _source(error: Any) -> str:
    """The stage a LiveKit error came from, as voicebench names stages."""
    name = type(error).__name__
    return {"LLMError": "llm", "STTError": "asr", "TTSError": "tts"}.get(name, "")


class LiveKitAgent:
    """One ``AgentSession`` for a whole run; ``async with LiveKitAgent(spec) as agent``."""

    speech_to_speech = False
    in_rate = FIXTURE_RATE

    def __init__(self, spec: AgentSpec, *, clock=None) -> None:
        from voicebench.timing import RunClock, TimingObserver

        assert spec.livekit is not None, "only a [livekit] spec names a LiveKit agent"
        self.spec = spec
        self.clock = clock or RunClock()
        self.observer = TimingObserver()
        self._lost: list[str] = []
        self._closed = False
        self._messages: list[tuple[int, str, dict[str, float]]] = []
        """(clock reading, role, LiveKit's metrics) of each message the session added."""
        self._stack = contextlib.AsyncExitStack()
        self._speech_end_ns = 0
        self._started_ns = 0
        """When the session was started: the call's opening is timed from it."""
        self._job: StandInJob | None = None
        self._opening_heard = False
        self.opening: HeardTurn | None = None
        """What the agent said when its session started, before the caller said anything
        (``hear_opening``)."""

    @property
    def connected(self) -> bool:
        return True

    def _now(self) -> int:
        return self.clock.get_time()

    async def __aenter__(self) -> LiveKitAgent:
        from voicebench.livekit.io import LiveKitMicrophone, LiveKitSpeaker
        from voicebench.livekit.servers import local_servers

        livekit = self.spec.livekit
        assert livekit is not None
        self._stack = contextlib.AsyncExitStack()
        try:
            await self._stack.enter_async_context(local_servers(livekit))
            self.microphone = LiveKitMicrophone(self._now, self.in_rate)
            self.speaker = LiveKitSpeaker(self._now, self.observer)
            self.speaker.start()
            self._stack.push_async_callback(self.speaker.aclose)
            self._stack.push_async_callback(self._close_session)
            self._job = await start_agent(livekit, self._bind, timeout_s=TURN_TIMEOUT_S)
            if self._job is not None:
                self._stack.push_async_callback(self._job.close)
        except BaseException:
            await self._stack.aclose()
            raise
        return self

    def _bind(self, agent: Any, session: Any) -> None:
        """Give the session voicebench's microphone and loudspeaker, and time it, from now."""
        self.agent, self.session = agent, session
        self._instrument()
        session.input.audio = self.microphone
        session.output.audio = self.speaker
        self._started_ns = self._now()

    async def hear_opening(self) -> HeardTurn | None:
        """What the agent said when its session started, before anyone spoke to it (a greeting
        from the entrypoint or the agent's ``on_enter``), heard to its end: the call's
        opening, timed from the session's start; None if it said nothing. Waited for once,
        when first asked (by the turn loop, or by the first turn), within the turn timeout."""
        if self._opening_heard:
            return self.opening
        self._opening_heard = True
        deadline = self._started_ns + int(TURN_TIMEOUT_S * 1e9)
        failure = None
        running = self._job.running if self._job is not None else None
        if running is not None:  # the entrypoint goes on (awaiting its greeting)
            await asyncio.wait({running}, timeout=max(0, deadline - self._now()) / 1e9)
            if running.done() and not running.cancelled() and running.exception() is not None:
                exc = running.exception()
                failure = TurnError(kind="entrypoint_error", reason=f"{type(exc).__name__}: {exc}")
        self.opening = await self._opening(deadline, failure)
        return self.opening

    async def _opening(self, deadline: int, failure: TurnError | None) -> HeardTurn | None:
        """Wait until nothing is said or left to play for ``SETTLE_S`` (or ``deadline``) and
        read what was said since the session started."""
        start, quiet = self._started_ns, None
        while (now := self._now()) < deadline:
            if self.session.current_speech is not None or not self.speaker.idle:
                quiet = None
            elif quiet is None:
                quiet = now
            elif now - quiet >= SETTLE_S * 1e9:
                break
            await asyncio.sleep(POLL_S)
        events = self.observer.since(start)
        spoke = any(e.kind in _SPOKE for e in events) or self.speaker.tape.samples > 0
        if not spoke and failure is None:
            return None
        audio, placed = self.speaker.tape.take(0, FIXTURE_RATE)
        assistant = [m for ns, role, m in self._messages if role == "assistant" and ns >= start]
        figures = assistant[0] if assistant else {}
        self._messages = []
        return HeardTurn(
            speech_end_ns=start,
            events=tuple(events),
            audio=audio,
            placed=placed,
            timed_out=now >= deadline,
            failure=failure or self._failure(),
            start_ns=start,
            played=self.speaker.audible.since(start),
            ended_ns=now,
            reported=ReportedLatency(
                llm_ttft_ms=_ms(figures, "llm_node_ttft"),
                tts_ttfb_ms=_ms(figures, "tts_node_ttfb"),
            ),
        )

    async def _close_session(self) -> None:
        if getattr(self, "session", None) is None:
            return
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.session.aclose(), timeout=15)

    async def __aexit__(self, *exc: object) -> None:
        await self._stack.aclose()

    def _instrument(self) -> None:
        """Stamp the session's events and wrap the agent's nodes (on the objects, not their
        classes) to time them."""
        session, record = self.session, self.observer.record

        @session.on("user_state_changed")
        def _user(ev: Any) -> None:
            if ev.new_state == "speaking":
                record(EventKind.VAD_START, self._now())
            elif ev.old_state == "speaking":
                record(EventKind.VAD_STOP, self._now())

        @session.on("user_input_transcribed")
        def _transcript(ev: Any) -> None:
            if ev.is_final:
                record(EventKind.TRANSCRIPT, self._now(), ev.transcript)

        @session.on("conversation_item_added")
        def _item(ev: Any) -> None:
            metrics = getattr(ev.item, "metrics", None) or {}
            role = getattr(ev.item, "role", "")
            self._messages.append((self._now(), role, dict(metrics)))

        @session.on("error")
        def _error(ev: Any) -> None:
            if not getattr(ev.error, "recoverable", False):
                record(EventKind.ERROR, self._now(), _why(ev.error), _source(ev.error))

        @session.on("close")
        def _close(ev: Any) -> None:
            self._closed = True
            why = f"the LiveKit session closed ({ev.reason})"
            if ev.error is not None:
                why += f": {_why(ev.error)}"
            self._lost.append(why)

        self._wrap_nodes()

    def _wrap_nodes(self) -> None:
        agent, record, now = self.agent, self.observer.record, self._now
        llm_node, tts_node = agent.llm_node, agent.tts_node
        tts = agent.tts or self.session.tts
        streaming_tts = tts is None or tts.capabilities.streaming

        async def timed_llm_node(*args: Any, **kwargs: Any) -> AsyncIterator[Any]:
            record(EventKind.LLM_REQUEST, now())
            first = True
            try:
                out = llm_node(*args, **kwargs)
                if inspect.isawaitable(out):
                    out = await out
                pieces = [out] if isinstance(out, str) else out
                if pieces is not None:
                    async for chunk in _aiter(pieces):
                        if first and (chunk if isinstance(chunk, str) else _chunk_text(chunk)):
                            record(EventKind.LLM_TOKEN_RECEIVED, now())
                            first = False
                        yield chunk
            except Exception as exc:
                record(EventKind.ERROR, now(), f"{type(exc).__name__}: {exc}", "llm")
                raise

        async def timed_tts_node(text: AsyncIterable[str], *args: Any, **kwargs: Any):
            async def arriving() -> AsyncIterator[str]:
                first = True
                async for piece in text:
                    record(EventKind.LLM_TOKEN, now(), piece)  # released to the speaker
                    if first and streaming_tts:
                        record(EventKind.TTS_REQUEST, now())
                    first = False
                    yield piece
                record(EventKind.LLM_END, now())

            first = True
            try:
                out = tts_node(arriving(), *args, **kwargs)
                if inspect.isawaitable(out):
                    out = await out
                if out is None:
                    return
                async for frame in out:
                    if first:
                        record(EventKind.TTS_AUDIO, now())
                        first = False
                    yield frame
            except Exception as exc:
                record(EventKind.ERROR, now(), f"{type(exc).__name__}: {exc}", "tts")
                raise

        agent.llm_node = timed_llm_node
        agent.tts_node = timed_tts_node
        if tts is not None and not streaming_tts:
            synthesize = tts.synthesize

            def timed_synthesize(*args: Any, **kwargs: Any) -> Any:
                record(EventKind.TTS_REQUEST, now())
                return synthesize(*args, **kwargs)

            tts.synthesize = timed_synthesize

    async def _set_history(self, history: list[dict[str, str]]) -> None:
        from livekit.agents import llm

        ctx = llm.ChatContext()
        for message in history:
            ctx.add_message(role=message["role"], content=message["content"])  # type: ignore[arg-type]
        await self.agent.update_chat_ctx(ctx)

    async def speak(
        self,
        history: list[dict[str, str]],
        pcm: np.ndarray,
        speech_end_sample: int,
        *,
        timeout_s: float = TURN_TIMEOUT_S,
        cue: TurnCue = PLAIN,
    ) -> HeardTurn:
        """Speak one seeker utterance after ``history`` and wait for the agent's answer (its
        greeting heard out first)."""
        await self.hear_opening()
        heard = await speak_in_process(
            self,
            self.microphone.mic.say,
            self.speaker,
            history,
            pcm,
            speech_end_sample,
            timeout_s=timeout_s,
            cue=cue,
        )
        self._messages = [m for m in self._messages if m[0] >= heard.start_ns]
        return dataclasses.replace(heard, reported=self._reported(heard.speech_end_ns))

    def _reported(self, speech_end_ns: int) -> ReportedLatency | None:
        """LiveKit's figures for the turn: the last user message it added after the end of
        speech, and the first reply it added after that."""
        users = [m for ns, role, m in self._messages if role == "user" and ns >= speech_end_ns]
        if not users:
            return None
        user = users[-1]
        user_ns = max(ns for ns, role, _ in self._messages if role == "user")
        replies = [m for ns, role, m in self._messages if role == "assistant" and ns >= user_ns]
        reply = replies[0] if replies else {}

        return ReportedLatency(
            end_of_turn_ms=_ms(user, "end_of_turn_delay"),
            transcription_ms=_ms(user, "transcription_delay"),
            on_user_turn_completed_ms=_ms(user, "on_user_turn_completed_delay"),
            llm_ttft_ms=_ms(reply, "llm_node_ttft"),
            tts_ttfb_ms=_ms(reply, "tts_node_ttfb"),
            e2e_ms=_ms(reply, "e2e_latency"),
        )

    def _turn_done(self, events: list[TurnEvent], now_ns: int, aside_ns: int | None) -> bool:
        """The session said it failed, or its answer was heard to its end (the pipeline's
        rule: the same events are stamped)."""
        from voicebench.pipeline.agent import _turn_done

        if any(e.kind is EventKind.ERROR for e in events):
            return True
        return _turn_done(events, now_ns, aside_ns)

    def _heard(self, events: list[TurnEvent]) -> bool:
        """Its VAD started: the session heard the caller."""
        return any(e.kind is EventKind.VAD_START for e in events)

    def _failure(self) -> TurnError | None:
        if not self._lost:
            return None
        return TurnError(kind="closed_mid_turn", reason=self._lost[0])

    def _stopped(self) -> bool:
        return self._closed


def _ms(source: dict[str, float], key: str) -> float | None:
    """One of LiveKit's figures (seconds) in ms."""
    value = source.get(key)
    return None if value is None else float(value) * 1000.0


async def _aiter(items: Any) -> AsyncIterator[Any]:
    """An async iterable, or a plain one, iterated asynchronously."""
    if hasattr(items, "__aiter__"):
        async for item in items:
            yield item
    else:
        for item in items:
            yield item


def _chunk_text(chunk: Any) -> str:
    """The text of a ``ChatChunk`` (empty for a tool call or usage)."""
    delta = getattr(chunk, "delta", None)
    return (getattr(delta, "content", None) or "") if delta is not None else ""
