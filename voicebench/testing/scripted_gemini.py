"""The scripted voice agent speaking Google's Gemini Live protocol: a speech-to-speech model
with a known delay, for testing ``[s2s]`` agents on ``gemini-live`` exactly (``python -m
voicebench.testing.scripted_voice --protocol gemini-live``; ``ScriptedVoiceAgent(protocol=
"gemini-live")``).

It plays the model's server of ``BidiGenerateContent``: the client's first message is its
``setup``, answered with ``setupComplete``; history comes as ``clientContent``; the caller's
audio as ``realtimeInput.audio`` (base64 PCM16 at 16 kHz). The end of its speech is found as
the scripted agent finds it in any protocol, and the answer's first audible sample is placed
``delay_ms`` after it, as ``serverContent.modelTurn`` parts of 24 kHz audio in real time, its
transcript (``outputTranscription``) after the first of them, then ``turnComplete``. With
automatic activity detection on (the default) it answers by itself, and says ``interrupted``
when the caller speaks over an answer; with it off (``realtimeInputConfig.
automaticActivityDetection.disabled``) it answers once the client has sent ``activityEnd``.

Faults, per call (``--fault``): ``close`` closes the socket (code 1000) where the answer would
start, ``error`` closes it with code 1011 and a reason, as the service reports its errors,
``silent`` completes the turn with no audio. Every server message is read back through
google-genai's own parser before it is sent, so the client reads it as it reads the real
service's.
"""

from __future__ import annotations

import asyncio
import base64
import json
from typing import Any

from voicebench.remote.wire import Incoming, control_object
from voicebench.testing.scripted_voice_agent import Agent

IN_RATE = 16_000
"""The caller's audio, as the protocol takes it."""
OUT_RATE = 24_000
"""The model's audio."""
ERROR_CODE = 1011
"""The WebSocket close code the service ends a session with on an internal error."""


def field(data: dict[str, Any], name: str) -> Any:
    """``data[name]``, the name in camelCase or snake_case (the API takes both, and clients
    write either)."""
    snake = "".join(f"_{c.lower()}" if c.isupper() else c for c in name)
    return data.get(name, data.get(snake))


class GeminiWire:
    """One call's side of the protocol: decodes what the client sends, encodes audio."""

    telephony = False

    def __init__(self) -> None:
        self.local = False
        """Automatic activity detection is off: answers wait for ``activityEnd``."""
        self.asked = asyncio.Event()
        self.replying = False

    @staticmethod
    def message(data: dict[str, Any]) -> str:
        """A server message, read back as the client reads it (raises if it could not)."""
        from google.genai import _live_converters as live_converters
        from google.genai import types

        read = live_converters._LiveServerMessage_from_mldev(data)
        if not read:
            raise ValueError(f"not a Live API server message: {data}")
        types.LiveServerMessage._from_response(response=read, kwargs={})
        return json.dumps(data)

    def content(self, **fields: Any) -> str:
        return self.message({"serverContent": fields})

    def decode(self, message: str | bytes) -> Incoming | None:
        data = control_object(message)
        if data is None:
            return None
        heard = field(data, "realtimeInput") or {}
        audio = heard.get("audio") or next(iter(field(heard, "mediaChunks") or []), None)
        if isinstance(audio, dict) and "data" in audio:
            # (URL-safe base64, as google-genai writes bytes, or the standard alphabet)
            return Incoming(audio=base64.b64decode(audio["data"], altchars=b"-_"))
        return Incoming(control=data)

    def audio(self, pcm: bytes) -> str:
        data = base64.b64encode(pcm).decode()
        part = {"inlineData": {"mimeType": f"audio/pcm;rate={OUT_RATE}", "data": data}}
        return self.content(modelTurn={"parts": [part]})


class GeminiAgent(Agent):
    """The scripted agent as a Gemini Live model's server."""

    def codec(self) -> GeminiWire:
        return GeminiWire()

    async def control(self, ws, wire: GeminiWire, call: int, message: dict, now_ns: int) -> None:
        if "setup" in message:
            heard = field(message["setup"], "realtimeInputConfig") or {}
            detection = field(heard, "automaticActivityDetection") or {}
            wire.local = bool(detection.get("disabled"))
            await ws.send(wire.message({"setupComplete": {}}))
        elif (content := field(message, "clientContent")) is not None:
            self._write({"call": call, "history": content.get("turns", [])})
        elif field(field(message, "realtimeInput") or {}, "activityEnd") is not None:
            wire.asked.set()

    async def speech_began(self, ws, wire: GeminiWire, sample: int) -> None:
        if wire.replying and not wire.local:
            await ws.send(wire.content(interrupted=True))

    async def answer(
        self, ws, wire: GeminiWire, call, fault, spoken_end_ns, over, found_end_ns=None
    ) -> None:
        if not await self.model_answer_begins(ws, wire, fault):
            return
        if fault == "error":
            await ws.close(ERROR_CODE, "scripted model error")
            return
        wire.replying = True
        try:
            if fault != "silent":
                await super().answer(ws, wire, call, None, spoken_end_ns, over, found_end_ns)
                await ws.send(wire.content(outputTranscription={"text": self.reply_text}))
            await ws.send(wire.content(generationComplete=True))
            usage = {"promptTokenCount": 0, "responseTokenCount": 0, "totalTokenCount": 0}
            await ws.send(
                wire.message({"serverContent": {"turnComplete": True}, "usageMetadata": usage})
            )
        finally:
            wire.replying = False
