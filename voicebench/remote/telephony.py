"""Phone platforms' media streams over WebSocket: Twilio Media Streams and Telnyx media
streaming, from either end.

The platform opens the WebSocket to the voice agent and speaks JSON text messages; audio is
8 kHz G.711 mu-law, base64 in ``media`` events. ``TelephonyCaller`` is the platform's side
(what voicebench plays when it calls an agent), ``TelephonyAgentSide`` the agent's (what the
scripted voice agent and ``voicebench serve`` speak).

Platform to agent:

- ``connected``, then ``start``: the stream and call ids, the media format and any custom
  parameters (Twilio: ``start.streamSid``, ``start.callSid``, ``start.customParameters``;
  Telnyx: ``stream_id``, ``start.call_control_id``, ``start.custom_parameters``);
- ``media``: 20 ms of the caller's audio, numbered (``sequenceNumber`` or ``sequence_number``,
  ``media.chunk``, ``media.timestamp`` in ms from the stream's start);
- ``mark``: a mark the agent sent, returned once the audio queued before it has played, or at
  once when a ``clear`` dropped it;
- ``stop``: the call is over.

Agent to platform: ``media`` (its voice, any length; the platform queues and plays it in
order), ``mark`` (a name to be told about when the audio before it has played) and ``clear``
(drop the queued audio now: how an agent stops talking when the caller interrupts).

The ids are made up per call in the platforms' own shapes. The stream id on the agent's
messages is not checked.
"""

from __future__ import annotations

import base64
import json
import uuid
from collections.abc import Callable
from typing import Any

import numpy as np

from voicebench.remote.wire import Incoming, control_object
from voicebench.remotespec import TELEPHONY
from voicebench.scenarios.signal import mulaw_decode, mulaw_encode

LINE_RATE = 8_000
"""Both platforms carry 8 kHz mu-law."""
FRAME_MS = 20


def _payload(message: dict[str, Any]) -> bytes | None:
    media = message.get("media")
    payload = media.get("payload") if isinstance(media, dict) else None
    if not isinstance(payload, str) or not payload:
        return None
    try:
        return base64.b64decode(payload, validate=True)
    except ValueError:
        return None


def _decode(
    message: str | bytes, control: Callable[[str, dict[str, Any]], Incoming | None]
) -> Incoming | None:
    """A message from either end: ``media`` as audio, ``mark`` with its name, and any other
    event as ``control`` makes it."""
    data = control_object(message)
    if data is None:
        return None
    event = data.get("event")
    if event == "media":
        payload = _payload(data)
        return Incoming(audio=_pcm_of(payload)) if payload else None
    if event == "mark":
        mark = data.get("mark")
        name = mark.get("name") if isinstance(mark, dict) else None
        return Incoming(control={"type": "mark", "name": str(name or "")})
    return control(str(event), data)


def _pcm_of(payload: bytes) -> bytes:
    return mulaw_decode(payload).tobytes()


def _mulaw_of(pcm: bytes) -> str:
    samples = np.frombuffer(pcm[: len(pcm) // 2 * 2], dtype="<i2")
    return base64.b64encode(mulaw_encode(samples)).decode("ascii")


class TelephonyCaller:
    """The platform's side of a call: ``hello`` and ``bye`` around it, the caller's audio as
    ``media`` events, marks returned with ``mark``. ``decode`` gives the agent's voice as 16-bit
    PCM at 8 kHz, and ``clear`` and ``mark`` as control objects."""

    telephony = True

    def __init__(self, platform: str, parameters: dict[str, str] | None = None) -> None:
        assert platform in TELEPHONY
        self.platform = platform
        self.sample_rate = LINE_RATE
        self.parameters = dict(parameters or {})
        self._sequence = 0
        self._chunk = 0
        if platform == "twilio":
            self.account_id = "AC" + uuid.uuid4().hex
            self.stream_id = "MZ" + uuid.uuid4().hex
            self.call_id = "CA" + uuid.uuid4().hex
        else:
            self.account_id = str(uuid.uuid4())
            self.stream_id = str(uuid.uuid4())
            self.call_id = "v3:" + uuid.uuid4().hex
        self.session_id = str(uuid.uuid4())

    def _numbered(self, event: str, **body: Any) -> str:
        self._sequence += 1
        if self.platform == "twilio":
            head = {"event": event, "sequenceNumber": str(self._sequence)}
            return json.dumps({**head, **body, "streamSid": self.stream_id})
        head = {"event": event, "sequence_number": str(self._sequence)}
        return json.dumps({**head, **body, "stream_id": self.stream_id})

    def hello(self) -> list[str | bytes]:
        if self.platform == "twilio":
            start = {
                "accountSid": self.account_id,
                "streamSid": self.stream_id,
                "callSid": self.call_id,
                "tracks": ["inbound"],
                "mediaFormat": {
                    "encoding": "audio/x-mulaw",
                    "sampleRate": LINE_RATE,
                    "channels": 1,
                },
                "customParameters": self.parameters,
            }
            connected = {"event": "connected", "protocol": "Call", "version": "1.0.0"}
        else:
            start = {
                "user_id": self.account_id,
                "call_control_id": self.call_id,
                "call_session_id": self.session_id,
                "from": "+15550100",
                "to": "+15550199",
                "custom_parameters": self.parameters,
                "media_format": {"encoding": "PCMU", "sample_rate": LINE_RATE, "channels": 1},
            }
            connected = {"event": "connected", "version": "1.0.0"}
        return [json.dumps(connected), self._numbered("start", start=start)]

    def context(self, messages: list[dict[str, str]]) -> list[str | bytes]:
        return []  # a phone line carries no transcript: the agent keeps its own history

    def audio(self, pcm: bytes) -> str | bytes:
        """20 ms of the caller's 8 kHz 16-bit PCM as a ``media`` event."""
        self._chunk += 1
        media = {
            "track": "inbound",
            "chunk": str(self._chunk),
            "timestamp": str((self._chunk - 1) * FRAME_MS),
            "payload": _mulaw_of(pcm),
        }
        return self._numbered("media", media=media)

    def mark(self, name: str) -> str:
        """The platform's word that the audio before mark ``name`` has played (or was cleared)."""
        return self._numbered("mark", mark={"name": name})

    def bye(self) -> list[str | bytes]:
        if self.platform == "twilio":
            stop = {"accountSid": self.account_id, "callSid": self.call_id}
        else:
            stop = {"user_id": self.account_id, "call_control_id": self.call_id}
        return [self._numbered("stop", stop=stop)]

    def decode(self, message: str | bytes) -> Incoming | None:
        return _decode(
            message,
            lambda event, _: Incoming(control={"type": "clear"}) if event == "clear" else None,
        )


class TelephonyAgentSide:
    """The agent's side of a call: ``decode`` gives the caller's audio (8 kHz 16-bit PCM) and
    the ``start`` and ``stop`` events as control objects (``start`` with ``stream_id``,
    ``call_id`` and ``parameters``); ``audio``, ``mark`` and ``clear`` make the agent's
    messages."""

    telephony = True

    def __init__(self, platform: str) -> None:
        assert platform in TELEPHONY
        self.platform = platform
        self.sample_rate = LINE_RATE
        self.stream_id = ""

    def _stream(self) -> dict[str, str]:
        if self.platform == "twilio":
            return {"streamSid": self.stream_id}
        return {}  # Telnyx's agent messages name no stream

    def decode(self, message: str | bytes) -> Incoming | None:
        return _decode(message, self._control)

    def _control(self, event: str, data: dict[str, Any]) -> Incoming | None:
        if event == "stop":
            return Incoming(control={"type": "stop"})
        if event != "start":
            return None
        start = data.get("start")
        start = start if isinstance(start, dict) else {}
        if self.platform == "twilio":
            self.stream_id = str(start.get("streamSid") or data.get("streamSid") or "")
            call, params = start.get("callSid"), start.get("customParameters")
        else:
            self.stream_id = str(data.get("stream_id") or "")
            call, params = start.get("call_control_id"), start.get("custom_parameters")
        return Incoming(
            control={
                "type": "start",
                "stream_id": self.stream_id,
                "call_id": str(call or ""),
                "parameters": params if isinstance(params, dict) else {},
            }
        )

    def audio(self, pcm: bytes) -> str | bytes:
        return json.dumps(
            {"event": "media", **self._stream(), "media": {"payload": _mulaw_of(pcm)}}
        )

    def mark(self, name: str) -> str:
        return json.dumps({"event": "mark", **self._stream(), "mark": {"name": name}})

    def clear(self) -> str:
        return json.dumps({"event": "clear", **self._stream()})
