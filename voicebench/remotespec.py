"""A running voice agent voicebench calls (an agent spec's ``[remote]`` section): where it is,
the protocol it speaks, and the token it checks. The full schema, with the other sections, is
in ``voicebench.agentspec``."""

from __future__ import annotations

import os
from typing import Literal, get_args

from pydantic import Field, field_validator, model_validator

from voicebench._model import FrozenModel

__all__ = [
    "PROTOCOLS",
    "SIP_SCHEMES",
    "TELEPHONY",
    "IvrStep",
    "Protocol",
    "RemoteAuth",
    "RemoteSpec",
    "SipSettings",
]

Protocol = Literal["pcm", "pipecat", "twilio", "telnyx", "webrtc", "sip"]
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


ENV_NAME = r"^[A-Za-z_][A-Za-z0-9_]*$"
SIP_SCHEMES = ("sip:", "sips:")
"""How a SIP URI starts: ``sips:`` asks for TLS."""
SIP_JITTER_MS = 40
"""A SIP call's jitter buffer when the spec gives none: two packets, as a desk phone holds on
a clean line."""


class IvrStep(FrozenModel):
    """One menu of an IVR in front of the agent (``[[remote.sip.ivr]]``): wait for its prompt,
    then press ``digits``."""

    digits: str = Field(pattern=r"^[0-9A-Da-d*#]{1,32}$")
    """The keys to press once the prompt has played, in order (``0-9``, ``*``, ``#``,
    ``A-D``), each an RFC 4733 telephone event."""
    wait_secs: float = Field(default=15.0, gt=0.0, le=120.0)
    """How long to wait for the prompt to start; a prompt that does not come fails the call
    (``ivr_no_prompt``)."""


class SipSettings(FrozenModel):
    """How a SIP call is placed (``[remote.sip]``): the signalling's transport, the codecs
    offered, an outbound proxy, and digest credentials named by environment variables (read
    when dialling, never written anywhere)."""

    transport: Literal["udp", "tcp", "tls"] = "udp"
    """The signalling's transport (a ``sips:`` URI is called over TLS whatever this says)."""
    tls_ca_file: str | None = None
    """TLS: a PEM file of the authorities the agent's certificate is checked against (None:
    the system's); the certificate must name the URI's host."""
    codecs: tuple[Literal["pcmu", "pcma"], ...] = Field(default=("pcmu", "pcma"), min_length=1)
    """The G.711 codecs offered, in order of preference."""
    proxy: str | None = Field(default=None, pattern=r"^[^\s:/]+:\d{1,5}$")
    """``HOST:PORT`` of an outbound proxy the INVITE goes through (None: straight to the
    URI's host)."""
    username_env: str | None = Field(default=None, pattern=ENV_NAME)
    """The variable holding the digest user name (None: the caller is ``voicebench``)."""
    password_env: str | None = Field(default=None, pattern=ENV_NAME)
    """The variable holding the digest password (None: no credentials)."""

    ivr: tuple[IvrStep, ...] = Field(default=(), exclude_if=lambda v: not v)
    """Menus to go through before the agent answers for itself: for each, the prompt is heard
    out (audio, then ``quiet_secs`` of silence) and the step's digits are pressed. What
    follows the last press, the agent's greeting if it gives one, is heard out too, so the
    first turn is not said over it."""

    @field_validator("tls_ca_file")
    @classmethod
    def _a_file(cls, path: str | None) -> str | None:
        if path is not None and not os.path.isfile(path):
            raise ValueError(f"{path}: no such file")
        return path

    def credentials(self) -> tuple[str | None, str | None]:
        """The user name and password, read from the environment now."""
        user = os.environ.get(self.username_env) if self.username_env else None
        password = os.environ.get(self.password_env) if self.password_env else None
        return user or None, password or None


class RemoteSpec(FrozenModel):
    """A running voice agent reached over WebSocket."""

    url: str = Field(pattern=r"^((wss?|https?)://[^\s/]+(/\S*)?|sips?:[^\s@:;]+@[^\s@;]+)$")
    """``ws://host:port/path`` or ``wss://...``; for ``webrtc``, the ``http(s)://`` endpoint
    that takes the SDP offer (pipecat's ``/api/offer``); for ``sip``, ``sip:USER@HOST[:PORT]``
    (``sips:``: over TLS)."""
    protocol: Protocol = "pcm"
    """``pcm``: raw 16-bit mono PCM frames and JSON control messages (voicebench's protocol);
    ``pipecat``: pipecat's protobuf frame serializer, as pipecat's WebSocket server transport
    speaks it; ``twilio`` and ``telnyx``: the phone platform's side of its media stream (JSON
    events, 8 kHz mu-law), as an agent that answers phone calls is reached; ``webrtc``: a
    browser's call (an SDP offer posted to ``url``, Opus both ways,
    ``voicebench.remote.webrtc``); ``sip``: a phone call placed with SIP (G.711 over RTP,
    ``voicebench.remote.sip_caller``)."""
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
    """``webrtc`` and ``sip``: how much audio the caller's jitter buffer holds before playing,
    as a browser's or a phone's does (a browser about one 20 ms packet on a clean link,
    aiortc's own default is 80; a SIP call ``SIP_JITTER_MS`` when not given)."""
    sip: SipSettings | None = Field(default=None, exclude_if=lambda v: v is None)
    """``sip`` only: how the call is placed (``SipSettings``; its defaults when not given)."""
    quiet_secs: float = Field(default=1.5, gt=0.0, le=10.0)
    """After the agent has spoken, this much time with no new audio ends its turn (unless
    it says so first with a ``bot_stopped`` message)."""

    @model_validator(mode="before")
    @classmethod
    def _phone_lines_are_8k(cls, data: object) -> object:
        if isinstance(data, dict) and data.get("protocol") == "sip":
            if data.get("sample_rate", 8_000) != 8_000:
                raise ValueError("a sip call is 8 kHz G.711; leave sample_rate out")
            data = {"jitter_ms": SIP_JITTER_MS, **data, "sample_rate": 8_000}
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
        if self.url.startswith(SIP_SCHEMES) != (self.protocol == "sip"):
            raise ValueError(
                "a sip agent is reached at a sip:USER@HOST[:PORT] URI"
                if self.protocol == "sip"
                else 'a sip: URI is called with protocol = "sip"'
            )
        if self.sip is not None and self.protocol != "sip":
            raise ValueError('[remote.sip] goes with protocol = "sip"')
        if self.protocol == "sip":
            return self
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
