"""The scripted voice agent speaking OpenAI's Realtime protocol: a speech-to-speech model with
a known delay, for testing ``[s2s]`` agents exactly (``python -m voicebench.testing.scripted_voice
--protocol openai-realtime``; ``ScriptedVoiceAgent(protocol="openai-realtime")``).

It plays the model's server: ``session.created`` on connecting, ``session.updated`` for each
``session.update``, and the conversation's item events for what the client creates and deletes.
The caller's audio comes as ``input_audio_buffer.append`` (base64 PCM16 at 24 kHz); the end of
its speech is found as the scripted agent finds it in any protocol, and the answer's first
audible sample is placed ``delay_ms`` after it. With the session's turn detection on (the
default) it says ``input_audio_buffer.speech_started`` and ``speech_stopped`` and answers by
itself; with it off (``turn_detection: null``) it answers once the client has created a
response. An answer is ``response.created``, the assistant item, its transcript, its audio as
``response.output_audio.delta`` events in real time, and ``response.done``.

Faults, per call (``--fault``): ``close`` closes the socket where the answer would start,
``error`` sends an ``error`` event instead, ``silent`` sends a response with no audio.
Every server event is built from pipecat's own event models, so the client reads them as it
reads the real service's.
"""

from __future__ import annotations

import asyncio
import base64
import itertools
import json
from typing import Any

from voicebench.remote.wire import Incoming, control_object
from voicebench.testing.scripted_voice_agent import Agent

RATE = 24_000
"""The protocol's PCM rate."""


class RealtimeWire:
    """One call's side of the protocol: decodes what the client sends, encodes audio into the
    current response."""

    telephony = False

    def __init__(self) -> None:
        self._ids = itertools.count()
        self.local = False
        """The session's turn detection is off: answers wait for ``response.create``."""
        self.asked = asyncio.Event()
        self.response_id = ""
        self.item_id = ""

    def event(self, type_: str, **fields: Any) -> str:
        """A server event, validated against pipecat's model of it."""
        from pipecat.services.openai.realtime import events

        data = {"event_id": f"event_{next(self._ids)}", "type": type_, **fields}
        events.parse_server_event(json.dumps(data))  # raises if the client could not read it
        return json.dumps(data)

    def new_id(self, prefix: str) -> str:
        return f"{prefix}_{next(self._ids)}"

    def decode(self, message: str | bytes) -> Incoming | None:
        data = control_object(message)
        if data is None:
            return None
        if data.get("type") == "input_audio_buffer.append":
            return Incoming(audio=base64.b64decode(data.get("audio", "")))
        return Incoming(control=data)

    def audio(self, pcm: bytes) -> str:
        return self.event(
            "response.output_audio.delta",
            response_id=self.response_id,
            item_id=self.item_id,
            output_index=0,
            content_index=0,
            delta=base64.b64encode(pcm).decode(),
        )


class RealtimeAgent(Agent):
    """The scripted agent as a realtime model's server."""

    def codec(self) -> RealtimeWire:
        return RealtimeWire()

    async def opened(self, ws, wire: RealtimeWire) -> None:
        await ws.send(wire.event("session.created", session={"type": "realtime"}))

    async def control(self, ws, wire: RealtimeWire, call: int, message: dict, now_ns: int) -> None:
        kind = message.get("type")
        if kind == "session.update":
            session = message.get("session") or {}
            heard = (session.get("audio") or {}).get("input") or {}
            # Off is ``null`` (pipecat sends ``false`` as that); left out is the server's VAD.
            wire.local = "turn_detection" in heard and heard["turn_detection"] in (None, False)
            await ws.send(wire.event("session.updated", session=session))
        elif kind == "conversation.item.create":
            await ws.send(wire.event("conversation.item.added", item=message["item"]))
        elif kind == "conversation.item.delete":
            await ws.send(wire.event("conversation.item.deleted", item_id=message["item_id"]))
        elif kind == "input_audio_buffer.commit":
            await ws.send(wire.event("input_audio_buffer.committed", item_id=wire.new_id("item")))
        elif kind == "response.create":
            wire.asked.set()

    async def speech_began(self, ws, wire: RealtimeWire, sample: int) -> None:
        await self._server_vad(ws, wire, "speech_started", audio_start_ms=sample * 1000 // RATE)

    async def speech_ended(self, ws, wire: RealtimeWire, sample: int) -> None:
        await self._server_vad(ws, wire, "speech_stopped", audio_end_ms=sample * 1000 // RATE)

    async def _server_vad(self, ws, wire: RealtimeWire, what: str, **at_ms: int) -> None:
        """The server VAD's word on the caller's speech (said only when its VAD is on)."""
        if not wire.local:
            event = wire.event(f"input_audio_buffer.{what}", item_id=wire.new_id("item"), **at_ms)
            await ws.send(event)

    async def answer(
        self, ws, wire: RealtimeWire, call, fault, spoken_end_ns, over, found_end_ns=None
    ) -> None:
        if not await self.model_answer_begins(ws, wire, fault):
            return
        if fault == "error":
            error = {"type": "server_error", "code": "scripted", "message": "scripted model error"}
            await ws.send(wire.event("error", error=error))
            return
        wire.response_id, wire.item_id = wire.new_id("resp"), wire.new_id("item")
        await ws.send(
            wire.event(
                "response.created",
                response={"id": wire.response_id, "object": "realtime.response"},
            )
        )
        item = {"id": wire.item_id, "type": "message", "role": "assistant", "content": []}
        await ws.send(wire.event("conversation.item.added", item=item))
        if fault != "silent":
            await ws.send(
                wire.event(
                    "response.output_audio_transcript.delta",
                    response_id=wire.response_id,
                    item_id=wire.item_id,
                    output_index=0,
                    content_index=0,
                    delta=self.reply_text,
                )
            )
            await super().answer(ws, wire, call, None, spoken_end_ns, over, found_end_ns)
        done = {"id": wire.response_id, "object": "realtime.response", "status": "completed"}
        await ws.send(wire.event("response.done", response=done))
