"""A running voice agent voicebench calls (an agent spec's ``[remote]`` section): where it is,
the protocol it speaks, and the token it checks. The full schema, with the other sections, is
in ``voicebench.agentspec``."""

from __future__ import annotations

import os
from typing import Literal, get_args

from pydantic import Field, model_validator

from voicebench._model import FrozenModel

__all__ = ["PROTOCOLS", "TELEPHONY", "Protocol", "RemoteAuth", "RemoteSpec"]

Protocol = Literal["pcm", "pipecat", "twilio", "telnyx", "webrtc"]
PROTOCOLS: tuple[str, ...] = get_args(Protocol)
TELEPHONY: tuple[str, ...] = ("twilio", "telnyx")
"""The phone platforms' media streams: 8 kHz mu-law in JSON events."""


class RemoteAuth(FrozenModel):
    """A token the agent checks on connecting, read from the environment when dialling."""

    token_env: str = Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")
    """Name of the environment variable holding the token; never the token itself."""
    header: str | None = Field(default="Authorization", pattern=r"^[A-Za-z0-9-]+$")
    """The handshake header that carries it (None: no header)."""
    scheme: str = Field(default="Bearer", pattern=r"^[A-Za-z0-9_-]*$")
    """Written before the token in the header; empty sends the token alone."""
    query: str | None = Field(default=None, pattern=r"^[A-Za-z0-9_.-]+$")
    """A query parameter of the URL that carries it too (None: none)."""

    @model_validator(mode="after")
    def _somewhere(self) -> RemoteAuth:
        if self.header is None and self.query is None:
            raise ValueError("give header or query (or both): where the token goes")
        return self

    def token(self) -> str | None:
        return os.environ.get(self.token_env) or None


class RemoteSpec(FrozenModel):
    """A running voice agent reached over WebSocket."""

    url: str = Field(pattern=r"^(wss?|https?)://[^\s/]+(/\S*)?$")
    """``ws://host:port/path`` or ``wss://...``; for ``webrtc``, the ``http(s)://`` endpoint
    that takes the SDP offer (pipecat's ``/api/offer``)."""
    protocol: Protocol = "pcm"
    """``pcm``: raw 16-bit mono PCM frames and JSON control messages (voicebench's protocol);
    ``pipecat``: pipecat's protobuf frame serializer, as pipecat's WebSocket server transport
    speaks it; ``twilio`` and ``telnyx``: the phone platform's side of its media stream (JSON
    events, 8 kHz mu-law), as an agent that answers phone calls is reached; ``webrtc``: a
    browser's call (an SDP offer posted to ``url``, Opus both ways,
    ``voicebench.remote.webrtc``)."""
    sample_rate: int = Field(default=16_000, ge=8_000, le=48_000)
    """Sample rate of the audio sent and received (``pcm`` and ``pipecat``; on a phone stream
    it is 8 kHz, set so when left out)."""
    parameters: dict[str, str] = Field(default_factory=dict, exclude_if=lambda v: not v)
    """``twilio`` and ``telnyx``: custom parameters sent in the stream's ``start`` event."""
    auth: RemoteAuth | None = Field(default=None, exclude_if=lambda v: v is None)
    """A token to present on connecting."""
    connect_timeout_secs: float = Field(default=10.0, gt=0.0, le=120.0)
    """Give up connecting after this long."""
    jitter_ms: int = Field(default=20, ge=20, le=320, multiple_of=20)
    """``webrtc`` only: how much audio the caller's jitter buffer holds before playing, as a
    browser's does (about one 20 ms packet on a clean link; aiortc's own default is 80)."""
    quiet_secs: float = Field(default=1.5, gt=0.0, le=10.0)
    """After the agent has spoken, this much time with no new audio ends its turn (unless
    it says so first with a ``bot_stopped`` message)."""

    @model_validator(mode="before")
    @classmethod
    def _phone_lines_are_8k(cls, data: object) -> object:
        if isinstance(data, dict) and data.get("protocol") == "webrtc":
            if data.get("sample_rate", 48_000) != 48_000:
                raise ValueError("a webrtc call is 48 kHz Opus; leave sample_rate out")
            data = {**data, "sample_rate": 48_000}
        if isinstance(data, dict) and data.get("protocol") in TELEPHONY:
            if data.get("sample_rate", 8_000) != 8_000:
                raise ValueError(
                    f"a {data['protocol']} stream is 8 kHz mu-law; leave sample_rate out"
                )
            data = {**data, "sample_rate": 8_000}
        return data

    @model_validator(mode="after")
    def _url_fits_protocol(self) -> RemoteSpec:
        web = self.url.startswith(("http://", "https://"))
        if web != (self.protocol == "webrtc"):
            raise ValueError(
                "a webrtc agent is reached at its http(s):// offer endpoint"
                if self.protocol == "webrtc"
                else f"a {self.protocol} agent is reached at a ws:// or wss:// URL"
            )
        return self

    @model_validator(mode="after")
    def _parameters_need_a_phone_stream(self) -> RemoteSpec:
        if self.parameters and self.protocol not in TELEPHONY:
            raise ValueError("parameters are sent only in a twilio or telnyx stream's start")
        return self

    def dial(self) -> tuple[str, dict[str, str], str | None]:
        """The URL to dial, the handshake headers and the token (to keep out of anything
        shown), the token read from the environment now."""
        token = self.auth.token() if self.auth is not None else None
        if self.auth is None or token is None:
            return self.url, {}, None
        url, headers = self.url, {}
        if self.auth.query is not None:
            from urllib.parse import quote

            url += ("&" if "?" in url else "?") + f"{self.auth.query}={quote(token, safe='')}"
        if self.auth.header is not None:
            headers[self.auth.header] = f"{self.auth.scheme} {token}".strip()
        return url, headers, token
