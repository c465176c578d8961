"""What goes over the WebSocket to a remote voice agent, in either protocol.

``pcm``: voicebench's own protocol, version 1. Binary messages are audio, 16-bit signed
little-endian mono PCM at the spec's sample rate; text messages are JSON control objects
with a ``type``.

Caller to agent:

- ``{"type": "start", "protocol": "voicebench-pcm/1", "sample_rate": 16000}``, once, first.
- ``{"type": "context", "messages": [{"role": "user" | "assistant", "content": "..."}]}``
  before a turn: the conversation so far (an agent may use or ignore it).
- binary: the caller's microphone, 20 ms per message, sent in real time, silence between
  utterances included (the agent's own VAD decides when the caller has finished).

Agent to caller (all optional except audio):

- binary: the agent's voice, any chunk size, as it is produced.
- ``{"type": "ready"}`` once it is listening; ``{"type": "transcript", "text": ...}`` what it
  heard; ``{"type": "reply", "text": ...}`` what it meant to say; ``{"type":
  "bot_started"}`` and ``{"type": "bot_stopped"}`` around its speech; ``{"type": "error",
  "message": ...}``, which fails the turn whose context it came after.

``pipecat``: pipecat's ``ProtobufFrameSerializer``, as pipecat's WebSocket transports speak
it. Audio goes both ways as ``audio`` frames; a ``transcription`` frame is what the agent
heard and a ``text`` frame part of what it said. There is no context message: a pipecat bot
keeps its own history.

``twilio`` and ``telnyx``: the phone platforms' media streams (``voicebench.remote.telephony``),
8 kHz mu-law in JSON events.

``voicebench.remote.codecs`` gives each protocol's codec by name.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

PCM_PROTOCOL = "voicebench-pcm/1"


@dataclass(frozen=True)
class Incoming:
    """One decoded message from the agent: audio bytes, or a control object."""

    audio: bytes | None = None
    control: dict[str, Any] = field(default_factory=dict)


def control_object(message: str | bytes) -> dict[str, Any] | None:
    """A control message as a JSON object, or None for anything else: not JSON, not text,
    not an object, or nested past the parser's depth. Never raises: it reads what a stranger
    sent."""
    try:
        data = json.loads(message)
    except (ValueError, RecursionError):  # JSONDecodeError and UnicodeDecodeError among them
        return None
    return data if isinstance(data, dict) else None


class PCMCodec:
    telephony = False

    def __init__(self, sample_rate: int) -> None:
        self.sample_rate = sample_rate

    def hello(self) -> list[str | bytes]:
        return [
            json.dumps({"type": "start", "protocol": PCM_PROTOCOL, "sample_rate": self.sample_rate})
        ]

    def context(self, messages: list[dict[str, str]]) -> list[str | bytes]:
        return [json.dumps({"type": "context", "messages": messages})]

    def bye(self) -> list[str | bytes]:
        return []

    def audio(self, pcm: bytes) -> str | bytes:
        return pcm

    def decode(self, message: str | bytes) -> Incoming | None:
        if isinstance(message, bytes):
            return Incoming(audio=message)
        data = control_object(message)
        return Incoming(control=data) if data is not None else None


class MediaCodec(PCMCodec):
    """``webrtc``: the call's media carries the audio both ways (``voicebench.remote.webrtc``);
    what reaches the loudspeaker is decoded PCM, and there are no control messages."""

    def hello(self) -> list[str | bytes]:
        return []

    def context(self, messages: list[dict[str, str]]) -> list[str | bytes]:
        return []


class PipecatCodec:
    """pipecat's protobuf frames; the serializer is pipecat's own, so a pipecat bot's server
    transport reads what is sent unchanged."""

    telephony = False

    def __init__(self, sample_rate: int) -> None:
        from pipecat.serializers.protobuf import ProtobufFrameSerializer

        self.sample_rate = sample_rate
        self._serializer = ProtobufFrameSerializer()

    def hello(self) -> list[str | bytes]:
        return []

    def context(self, messages: list[dict[str, str]]) -> list[str | bytes]:
        return []

    def bye(self) -> list[str | bytes]:
        return []

    def audio(self, pcm: bytes) -> str | bytes:
        from pipecat.frames.protobufs import frames_pb2

        frame = frames_pb2.Frame()  # type: ignore[attr-defined]
        frame.audio.audio = pcm
        frame.audio.sample_rate = self.sample_rate
        frame.audio.num_channels = 1
        return frame.SerializeToString()

    def decode(self, message: str | bytes) -> Incoming | None:
        from pipecat.frames.protobufs import frames_pb2

        if isinstance(message, str):
            message = message.encode()
        try:
            frame = frames_pb2.Frame.FromString(message)  # type: ignore[attr-defined]
        except Exception:
            return None
        which = frame.WhichOneof("frame")
        if which == "audio":
            return Incoming(audio=frame.audio.audio)
        if which == "transcription":
            return Incoming(control={"type": "transcript", "text": frame.transcription.text})
        if which == "text":
            return Incoming(control={"type": "reply", "text": frame.text.text})
        if which == "message":
            data = control_object(frame.message.data)
            return Incoming(control=data if data is not None else {"type": "message"})
        return None
