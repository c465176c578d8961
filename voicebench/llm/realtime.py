"""A speech-to-speech model's endpoint: one model hears the caller's audio and speaks its
answer, over a realtime WebSocket (an agent spec's ``[s2s]`` section)::

    [s2s]
    provider = "openai-realtime"      # a registered realtime provider (below)
    model = "gpt-realtime"
    base_url = "wss://api.openai.com/v1/realtime"   # optional; any server speaking the protocol
    api_key_env = "OPENAI_API_KEY"    # (gemini-live: GOOGLE_API_KEY)
    voice = "marin"                   # optional: the model's voice
    turn_detection = "server"         # the model's own VAD ends the turn; "local": voicebench's
                                      # Silero VAD and [turn] user_speech_timeout end it
    delay_ms = 700                    # scripted-realtime only: end of speech to first audio

Providers speak a realtime API (``Provider.api``): ``openai-realtime`` is OpenAI's Realtime
API through pipecat's ``OpenAIRealtimeLLMService``; ``gemini-live`` is Google's Gemini Live API
through pipecat's ``GeminiLiveLLMService`` (the ``[gemini]`` extra: google-genai). The test
doubles' ``scripted-realtime`` and ``scripted-gemini`` start a scripted server on 127.0.0.1
speaking each protocol (a measuring instrument with a known delay). Other speech-to-speech
services pipecat ships are not built (Nova Sonic's SDK needs Python 3.12; Ultravox's calls
are created over its REST API): a spec naming them is refused with the known providers.
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from voicebench.llm.endpoint import Endpoint


class RealtimeEndpoint(Endpoint):
    """A speech-to-speech model: an ``Endpoint`` whose ``base_url`` is a WebSocket."""

    REALTIME: ClassVar[bool] = True

    base_url: str | None = Field(default=None, pattern=r"^wss?://[^\s/]+(/\S*)?$")  # type: ignore[assignment]
    """``wss://...`` (default: the provider's own API)."""
    voice: str | None = None
    """The voice the model speaks with (default: the provider's)."""
    turn_detection: Literal["server", "local"] = "server"
    """Who decides the caller has finished: the model's ``server`` (its own VAD, as deployed
    by default) or voicebench's ``local`` Silero VAD with the spec's ``[vad]`` and ``[turn]``
    ``user_speech_timeout`` (the model is then asked to answer explicitly)."""
    delay_ms: float = Field(default=700.0, ge=0.0)
    """Scripted provider only: the end of the caller's speech to the first audible sample of
    the answer."""
    reply: str | None = None
    """Scripted provider only: what the answer says (default: a fixed supportive line)."""

    @property
    def url(self) -> str | None:
        return self.base_url.rstrip("/") if self.base_url is not None else None
