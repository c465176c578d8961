"""The speech stages of a pipeline voicebench builds (``[stt]`` and ``[tts]`` in an agent
spec, ``voicebench.agentspec``)."""

from __future__ import annotations

import os
from typing import Literal

from pydantic import Field, HttpUrl, model_validator

from voicebench._model import FrozenModel

_WHISPER_ONLY = ("beam_size", "cpu_threads", "compute_type", "window")


def _check_endpoint_fields(spec: STTSpec | TTSSpec, local: str | None) -> None:
    """A speech spec's endpoint fields: none of them for a model run here (``local``, its name;
    None for an endpoint), and ``api_key_env`` a variable's name, never a key."""
    if local is not None:
        for name in ("base_url", "api_key_env"):
            if getattr(spec, name) is not None:
                raise ValueError(f'{name} is for provider = "openai", not {local}')
    key = spec.api_key_env
    if key is not None and not key.replace("_", "").isalnum():
        raise ValueError("api_key_env must be an environment variable name, not a key")


def endpoint_url(base_url: HttpUrl | None) -> str:
    """Where an ``openai`` speech provider's requests go: ``base_url``, else OpenAI's."""
    return str(base_url or "https://api.openai.com/v1").rstrip("/")


def endpoint_key(api_key_env: str | None) -> str:
    """The key an ``openai`` speech provider sends, from the environment; the client insists on
    one, so a local server without one is sent a placeholder."""
    return (os.environ.get(api_key_env) if api_key_env else None) or "no-key"


class STTSpec(FrozenModel):
    """Speech to text: faster-whisper run here, or any OpenAI-compatible transcription endpoint
    (OpenAI's own, ``voicebench serve-speech``, a server of your own)."""

    provider: Literal["whisper", "openai"] = "whisper"
    """``whisper`` runs faster-whisper in this process; ``openai`` posts each segment the VAD
    cuts, as WAV, to ``base_url``'s ``/audio/transcriptions``."""
    model: str = "tiny.en"
    """Whisper: ``tiny.en`` (packaged) or a path to a CTranslate2 Whisper model folder.
    OpenAI: the transcription model asked for (``whisper-1`` if not given)."""
    base_url: HttpUrl | None = None
    """OpenAI only: the endpoint's base URL (OpenAI's when not given)."""
    api_key_env: str | None = None
    """OpenAI only: the variable holding the key; keys never live in specs. None sends no key
    (a local server)."""
    beam_size: int = Field(default=1, ge=1, le=10)
    """Decoder beam width; 1 is greedy."""
    cpu_threads: int = Field(default=2, ge=0, le=64)
    """CTranslate2 threads (0 = library default)."""
    compute_type: str = "int8"
    """CTranslate2 compute type."""
    window: Literal["speech", "full"] = "speech"
    """What the encoder sees: the utterance plus 1 s of silence and at least 12 s in all
    (``speech``: under half the time at a word error rate of 3.1% against 2.6% on held-out
    fixtures, ``benchmarks/asr_window.py``), or Whisper's 30 s window (``full``)."""

    @model_validator(mode="before")
    @classmethod
    def _model_of_provider(cls, data: object) -> object:
        if isinstance(data, dict) and data.get("provider") == "openai" and "model" not in data:
            return {**data, "model": "whisper-1"}
        return data

    @model_validator(mode="after")
    def _fields_of_provider(self) -> STTSpec:
        if self.provider == "openai":
            for name in _WHISPER_ONLY:
                if name in self.model_fields_set:
                    raise ValueError(f'{name} is for provider = "whisper", run here')
        _check_endpoint_fields(self, "Whisper" if self.provider == "whisper" else None)
        return self

    @property
    def url(self) -> str:
        """Where an ``openai`` provider's requests go."""
        return endpoint_url(self.base_url)


class TTSSpec(FrozenModel):
    """Text to speech: the packaged Piper voice run here, or any OpenAI-compatible speech
    endpoint (OpenAI's own, ``voicebench serve-speech``, a server of your own) streaming PCM."""

    provider: Literal["piper", "openai"] = "piper"
    """``piper`` runs a packaged voice in this process; ``openai`` asks ``base_url``'s
    ``/audio/speech`` for 24 kHz PCM and plays it as it streams in."""
    voice: str = "en_US-joe-medium"
    """Piper: a packaged voice. OpenAI: one of its voice names (``alloy`` if not given)."""
    model: str = "gpt-4o-mini-tts"
    """OpenAI only: the speech model asked for."""
    base_url: HttpUrl | None = None
    """OpenAI only: the endpoint's base URL (OpenAI's when not given)."""
    api_key_env: str | None = None
    """OpenAI only: the variable holding the key; keys never live in specs. None sends no key
    (a local server)."""
    first_chunk: Literal["sentence", "clause"] = "sentence"
    """Send a reply's first sentence to TTS whole, or its first clause as soon as it ends."""
    later_chunks: Literal["sentence", "clause"] = "sentence"
    """Send the rest of a reply to TTS a sentence at a time, or a clause at a time: the next
    piece is then ready before the one playing ends, where a long sentence after a short one
    would leave the caller a hole to wait through (a stall)."""
    trim_lead: bool = True
    """Piper only: cut the silence Piper puts before a reply's first word (about 40-50 ms),
    keeping ``LEAD_KEEP_MS`` of it: dead air the listener would otherwise wait through."""

    @model_validator(mode="before")
    @classmethod
    def _voice_of_provider(cls, data: object) -> object:
        if isinstance(data, dict) and data.get("provider") == "openai" and "voice" not in data:
            return {**data, "voice": "alloy"}
        return data

    @model_validator(mode="after")
    def _fields_of_provider(self) -> TTSSpec:
        _check_endpoint_fields(self, "Piper" if self.provider == "piper" else None)
        return self

    @property
    def url(self) -> str:
        """Where an ``openai`` provider's requests go."""
        return endpoint_url(self.base_url)
