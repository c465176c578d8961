"""A speech-to-speech model as the agent (``[s2s]``), built as a pipecat pipeline around the
model's own realtime service, driven one spoken turn at a time like every agent::

    mic (ReplayInputTransport) [-> Silero VAD] -> TurnTaking -> realtime service
      -> loudspeaker (CaptureOutputTransport)

The service is pipecat's ``OpenAIRealtimeLLMService`` (for ``openai-realtime`` and every
server speaking its protocol, the scripted one included) or ``GeminiLiveLLMService``
(``gemini-live``, ``voicebench.pipeline.gemini``), with the spec's system prompt as its
instructions and the spec's voice. Who ends the turn:

- ``turn_detection = "server"``: the model's own VAD. OpenAI's ``speech_stopped`` marks the end
  of the turn (``vad_stop``, stamped as it arrived; Gemini says nothing there) and the model
  answers on its own.
- ``"local"``: the model's VAD is off; the spec's Silero VAD and ``user_speech_timeout`` end the
  turn here, and the model is then asked to answer (``llm_request``: OpenAI's buffer committed
  and a response created; Gemini's activity ended).

Either way the caller talking marks an interruption (what is queued on the loudspeaker is
dropped). The waterfall has the stages that exist: endpointing, turn end (local only), the
model's first audio (its first audio frame of the answer), output; they add up to TTFA as
always. Before each turn the model's conversation is made the history asked for (OpenAI: the
items it holds are deleted and the history's messages created; Gemini: a new session seeded
with it): the teacher-forced replay. Its answers are heard as audio, and the transcript it
reports is kept as what it meant to say.

A connection the model closes ends the turn as ``closed_mid_turn``; an ``error`` event (Gemini:
a close with an error code) is an error frame, recorded as ``model_error``; a response with no
audio is ``no_audio``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from pipecat.frames.frames import (
    ErrorFrame,
    Frame,
    LLMFullResponseStartFrame,
    ProposedUserStartedSpeakingFrame,
    ProposedUserStoppedSpeakingFrame,
    TTSAudioRawFrame,
    TTSStartedFrame,
    UserStartedSpeakingFrame,
    UserStoppedSpeakingFrame,
    VADUserStartedSpeakingFrame,
    VADUserStoppedSpeakingFrame,
)
from pipecat.observers.base_observer import FramePushed
from pipecat.processors.frame_processor import FrameDirection, FrameProcessor
from pipecat.services.llm_service import LLMService

from voicebench.agent.interface import AFTER_ASIDE_S
from voicebench.agentspec import AgentSpec
from voicebench.errors import InputError
from voicebench.llm import connect, get_provider
from voicebench.pipeline.agent import VoiceAgent, silero_vad
from voicebench.pipeline.gemini import gemini_service
from voicebench.runlog import TurnError
from voicebench.timing.events import EventKind, TurnEvent
from voicebench.timing.observer import TimingObserver

MODEL_RATE = 24_000
"""The realtime protocol's PCM rate."""
NO_AUDIO_GRACE_NS = 2_000_000_000
"""After an answer that had no audio ends, how long before the turn is given up."""


class RealtimeObserver(TimingObserver):
    """The timing observer for a speech-to-speech pipeline: the model's turn boundaries, the
    answer asked for, and the model's first audio frame of each response."""

    def __init__(self) -> None:
        super().__init__()
        self._answering = False

    async def on_push_frame(self, data: FramePushed) -> None:
        frame, source, ns = data.frame, data.source, data.timestamp
        from_model = isinstance(source, LLMService)
        if isinstance(frame, ProposedUserStoppedSpeakingFrame) and from_model:
            self.record(EventKind.VAD_STOP, ns, frame_id=frame.id)
        elif isinstance(frame, ProposedUserStartedSpeakingFrame) and from_model:
            self.record(EventKind.VAD_START, ns, frame_id=frame.id)
        elif isinstance(frame, UserStoppedSpeakingFrame) and isinstance(source, TurnTaking):
            self.record(EventKind.LLM_REQUEST, ns, frame_id=frame.id)
        elif isinstance(frame, TTSStartedFrame) and from_model:
            self._answering = True  # (Gemini may say so with the answer's transcript, first)
        elif isinstance(frame, TTSAudioRawFrame) and from_model and self._answering:
            self._answering = False
            self.record(EventKind.MODEL_AUDIO, ns, frame_id=frame.id)
            await super().on_push_frame(data)
        elif isinstance(frame, ErrorFrame) and from_model:
            self.record(EventKind.ERROR, ns, frame.error, "model", frame.id)
        elif not isinstance(frame, LLMFullResponseStartFrame):
            # (a response's start is when its item arrived, not a request anyone made)
            await super().on_push_frame(data)


class TurnTaking(FrameProcessor):
    """Turns the caller's speech into interruptions and, with local turn detection, into the
    end of the turn ``user_speech_timeout`` after the VAD's stop (unless speech resumes)."""

    def __init__(self, *, local: bool, user_speech_timeout: float) -> None:
        super().__init__(name="turn-taking")
        self._local = local
        self._timeout_s = user_speech_timeout
        self._ending: asyncio.Task | None = None

    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        await super().process_frame(frame, direction)
        await self.push_frame(frame, direction)
        started = (
            isinstance(frame, VADUserStartedSpeakingFrame)
            if self._local
            else isinstance(frame, ProposedUserStartedSpeakingFrame)
        )
        if started:
            await self._cancel_ending()
            await self.broadcast_interruption()
            if self._local:
                await self.push_frame(UserStartedSpeakingFrame())
        elif self._local and isinstance(frame, VADUserStoppedSpeakingFrame):
            await self._cancel_ending()
            self._ending = self.create_task(self._end_turn())

    async def _end_turn(self) -> None:
        await asyncio.sleep(self._timeout_s)
        await self.push_frame(UserStoppedSpeakingFrame())

    async def _cancel_ending(self) -> None:
        if self._ending is not None:
            await self.cancel_task(self._ending)
            self._ending = None

    async def cleanup(self) -> None:
        await self._cancel_ending()
        await super().cleanup()


def realtime_service(spec: AgentSpec, base_url: str | None, key: str, lost: list[str]) -> Any:
    """pipecat's OpenAI Realtime service for ``spec``, able to set the model's conversation to
    a history, and putting in ``lost`` why the model's connection ended unasked (unless the
    model said why in an error event, which is recorded as an error frame)."""
    from pipecat.services.openai.realtime import events
    from pipecat.services.openai.realtime.llm import OpenAIRealtimeLLMService

    s2s = spec.s2s
    assert s2s is not None
    audio = events.AudioConfiguration(
        input=events.AudioInput(turn_detection=False if s2s.turn_detection == "local" else None),
        output=events.AudioOutput(voice=s2s.voice) if s2s.voice else None,
    )

    class Service(OpenAIRealtimeLLMService):
        def __init__(self, **kwargs: Any) -> None:
            super().__init__(**kwargs)
            self.items: list[str] = []
            self.said_error = False
            self.add_event_handler("on_conversation_item_created", self._item_created)

        async def _item_created(self, _service: Any, item_id: str, _item: Any) -> None:
            self.items.append(item_id)

        async def set_history(self, history: list[dict[str, str]]) -> None:
            """Make the model's conversation ``history``: what it holds is deleted, the
            messages are created (and, being ours, never taken for the model's answers)."""
            items, self.items = self.items, []
            for item_id in items:
                await self.send_client_event(events.ConversationItemDeleteEvent(item_id=item_id))
            for message in history:
                user = message["role"] == "user"
                item = events.ConversationItem(
                    type="message",
                    role="user" if user else "assistant",
                    content=[
                        events.ItemContent(
                            type="input_text" if user else "output_text", text=message["content"]
                        )
                    ],
                )
                self._messages_added_manually[item.id] = True
                await self.send_client_event(events.ConversationItemCreateEvent(item=item))

        async def _receive_task_handler(self) -> None:
            try:
                await super()._receive_task_handler()
            except Exception as exc:  # the socket broke, or the model sent what cannot be read
                self._lost(f"the model's connection failed: {exc}")
                return
            if not self._disconnecting:
                self._lost("the model closed its connection")

        async def _handle_evt_error(self, evt: Any) -> None:
            self.said_error = True  # the model said why its session ends
            await super()._handle_evt_error(evt)

        def _lost(self, why: str) -> None:
            self.set_audio_input_paused(True)  # nothing to send it to
            if not self.said_error and not lost:
                lost.append(why)

    settings = Service.Settings(
        model=s2s.model,
        system_instruction=spec.system_prompt,
        session_properties=events.SessionProperties(audio=audio),
    )
    options: dict[str, Any] = {"api_key": key, "settings": settings}
    if base_url is not None:
        options["base_url"] = base_url
    return Service(**options)


S2SService = Callable[[AgentSpec, str | None, str, list[str]], Any]
"""Makes a realtime API's pipecat service for a spec: (spec, base URL, key, a list the service
appends the reason to when its connection is lost unasked)."""

_SERVICES: dict[str, S2SService] = {}


def register_s2s_service(api: str, service: S2SService) -> None:
    """How the sessions of the realtime wire API named ``api`` are run (a plugin that registers
    a realtime ``WireApi`` registers its service here)."""
    _SERVICES[api] = service


def s2s_service(api: str) -> S2SService:
    """The service maker registered for a realtime wire API."""
    if api not in _SERVICES:
        raise InputError(
            f"no speech-to-speech service is registered for the wire API {api!r} "
            f"(known: {', '.join(sorted(_SERVICES))})",
            field="s2s.provider",
        )
    return _SERVICES[api]


register_s2s_service("openai-realtime", realtime_service)
register_s2s_service("gemini-live", gemini_service)


class SpeechToSpeechAgent(VoiceAgent):
    """One realtime connection for a whole run; ``async with SpeechToSpeechAgent(spec)``."""

    speech_to_speech = True
    out_rate = MODEL_RATE
    out_chunk_ms = 20
    """The model's audio is played as it comes, at its own rate (a 16 kHz loudspeaker fed
    through pipecat's streaming resampler, or a 40 ms chunk, would hold back its start)."""

    def __init__(self, spec: AgentSpec, *, clock=None, transport=None) -> None:
        super().__init__(spec, clock=clock, transport=transport)
        assert spec.s2s is not None, "only an [s2s] spec has a speech-to-speech model"
        self._api = get_provider(spec.s2s.provider).wire_api
        if spec.s2s.turn_detection == "server" and self._api.server_turns_at_model_rate:
            self.in_rate = MODEL_RATE  # heard at the model's rate: nothing resamples on the way
        self.observer = RealtimeObserver()
        self._lost: list[str] = []
        """Why the model's connection ended unasked (it stays so until the agent restarts)."""

    async def _processors(self) -> list[Any]:
        from pipecat.processors.audio.vad_processor import VADProcessor

        s2s = self.spec.s2s
        assert s2s is not None
        conn = await connect(s2s, self._stack)
        self.service = s2s_service(self._api.name)(self.spec, conn.base_url, conn.key, self._lost)
        local = s2s.turn_detection == "local"
        transport = self._transport()
        vad = [VADProcessor(vad_analyzer=silero_vad(self.spec.vad))] if local else []
        turns = TurnTaking(local=local, user_speech_timeout=self.spec.turn.user_speech_timeout)
        return [transport.input(), *vad, turns, self.service, transport.output()]

    async def _set_history(self, history: list[dict[str, str]]) -> None:
        await self.service.set_history(list(history))

    def _turn_done(self, events: list[TurnEvent], now_ns: int, aside_ns: int | None) -> bool:
        """The model's latest answer ended after the caller's last stop, and was heard to its
        end (or had no audio, and a moment has passed)."""
        if any(e.kind is EventKind.ERROR for e in events):
            return True  # the model said it failed (an error event ends its session)
        if aside_ns is not None and now_ns - aside_ns < AFTER_ASIDE_S * 1e9:
            return False

        def times(kind: EventKind) -> list[int]:
            return [e.ns for e in events if e.kind is kind]

        ends, stops = times(EventKind.LLM_END), times(EventKind.VAD_STOP)
        if not ends or (stops and stops[-1] > ends[-1]):
            return False
        audio = [ns for ns in times(EventKind.MODEL_AUDIO) if ns <= ends[-1]]
        # The answer to the whole turn began after its end (one before it answered a pause,
        # where a model that reports no stop of its own took the caller to have finished).
        end = max([self._speech_end_ns, *stops])
        if not audio or audio[-1] < end:
            return now_ns - ends[-1] > NO_AUDIO_GRACE_NS
        return any(ns > audio[-1] for ns in times(EventKind.BOT_STOPPED))

    def _heard(self, events: list[TurnEvent]) -> bool:
        """The model's VAD started, or it answered (Gemini's says nothing of the caller)."""
        answered = (EventKind.VAD_START, EventKind.MODEL_AUDIO, EventKind.LLM_END)
        return any(e.kind in answered for e in events)

    def _failure(self) -> TurnError | None:
        if not self._lost:
            return None
        return TurnError(kind="closed_mid_turn", reason=self._lost[0])
