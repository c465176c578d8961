"""One endpoint model for everything that calls an LLM: agents, judges, classifiers, rewriters.

An agent spec's ``[llm]`` and a judge spec's ``[[judges]]`` are both an ``Endpoint`` with a few
fields of their own (``LLMSpec`` in ``voicebench.agentspec``, ``JudgeModelSpec`` in
``voicebench.judging.spec``), so the same TOML keys mean the same thing everywhere::

    provider = "openai-compatible"   # a registered provider (voicebench.llm.registry)
    model = "gpt-4o-mini"            # as the provider names it; for "local", a packaged
                                     # model name or a path to a .gguf file
    base_url = "http://127.0.0.1:8000/v1"   # required for openai-compatible
    api_key_env = "OPENAI_API_KEY"   # the variable's name, never the key
    temperature = 0.0                # sampling
    max_tokens = 120
    timeout_s = 60                   # per request (default: the SDK's own)
    n_ctx = 2048                     # local only: context window
    n_threads = 2                    # local only: llama.cpp threads
"""

from __future__ import annotations

import ipaddress
import os
from typing import ClassVar

from pydantic import Field, HttpUrl, field_validator, model_validator
from pydantic_core import PydanticCustomError

from voicebench._model import FrozenModel
from voicebench.llm.registry import get_provider, providers

KEYED_PROVIDERS = ("openai", "anthropic", "openai-realtime", "gemini-live")
"""Providers that always need a key variable."""
PROVIDER_HOSTS = {
    "openai": "api.openai.com",
    "anthropic": "api.anthropic.com",
    "openai-realtime": "api.openai.com",
    "gemini-live": "generativelanguage.googleapis.com",
}
"""Where a provider's own API is."""


def _this_machine(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:  # a name, not an address
        return False


def warn_if_sent_away(
    variable: str | None, url: str | None, provider: str, *, file: object, field: str
) -> None:
    """Warn (``SecretDestinationWarning``) when the secret in ``variable`` would go to ``url``
    and its host is neither ``provider``'s own nor this machine. A spec is trusted with the
    keys it names: one from someone else can send yours anywhere."""
    import warnings
    from urllib.parse import urlsplit

    from voicebench.errors import SecretDestinationWarning

    if not variable or url is None:
        return
    host = (urlsplit(url).hostname or "").lower()
    if _this_machine(host) or host == PROVIDER_HOSTS.get(provider):
        return
    warnings.warn(
        SecretDestinationWarning(
            f"{file}: {field}: sends the value of {variable} to {host}, which is not "
            f"{PROVIDER_HOSTS.get(provider, 'this machine')}: use this spec only if you trust "
            "where it came from"
        ),
        stacklevel=3,
    )


class Endpoint(FrozenModel):
    """Where an LLM is and how to ask it."""

    REALTIME: ClassVar[bool] = False
    """Whether this kind of endpoint is a realtime speech-to-speech model's (its provider's
    wire API ``realtime``) rather than a chat model's."""

    provider: str = Field(min_length=1)
    """A registered provider name (``voicebench.llm.providers()``)."""
    model: str = Field(min_length=1)
    """Model id as the provider names it; for ``local``, a packaged model name
    (``smollm2-135m``) or a path to a .gguf file."""
    base_url: HttpUrl | None = None
    """Endpoint of the server (required for ``openai-compatible``; optional for ``openai`` and
    ``anthropic``, whose default is their public API)."""
    api_key_env: str | None = None
    """Name of the environment variable holding the key; never the key itself."""
    temperature: float = Field(default=0.0, ge=0.0, le=2.0)
    """Sampling temperature."""
    max_tokens: int = Field(default=120, ge=1, le=4096)
    """Upper bound on an answer's length."""
    # Left out of a dump when unset, so run logs keep the fields they always had.
    timeout_s: float | None = Field(default=None, gt=0.0, le=900.0, exclude_if=lambda v: v is None)
    """Per request; None leaves the SDK's default."""
    n_ctx: int = Field(default=2048, ge=256, le=131072)
    """Local provider only: context window of the llama.cpp server."""
    n_threads: int | None = Field(default=None, ge=1, le=256)
    """Local provider only: llama.cpp threads (default: llama.cpp's choice)."""

    @field_validator("provider")
    @classmethod
    def _registered(cls, name: str) -> str:
        known = providers()
        if name not in known:
            raise PydanticCustomError(
                "unknown_provider",
                "Input should be a registered LLM provider: {known}",
                {"known": ", ".join(known)},
            )
        return name

    @model_validator(mode="after")
    def _endpoint_fields(self) -> Endpoint:
        api = get_provider(self.provider).wire_api
        if api.realtime != self.REALTIME:
            raise ValueError(
                f"provider {self.provider!r} speaks {api.name}, "
                + (
                    "a realtime speech-to-speech API: it goes in an agent's [s2s] section"
                    if api.realtime
                    else "a chat API, not a realtime speech-to-speech one"
                )
            )
        if self.provider == "openai-compatible" and self.base_url is None:
            raise ValueError("base_url is required for provider 'openai-compatible'")
        if self.provider in KEYED_PROVIDERS and not self.api_key_env:
            raise ValueError(f"api_key_env is required for provider '{self.provider}'")
        if self.api_key_env is not None and not self.api_key_env.replace("_", "").isalnum():
            raise ValueError("api_key_env must be an environment variable name, not a key")
        return self

    @property
    def id(self) -> str:
        """``provider/model``."""
        return f"{self.provider}/{self.model}"

    @property
    def url(self) -> str | None:
        """``base_url`` as a string without a trailing slash, or None."""
        return str(self.base_url).rstrip("/") if self.base_url is not None else None

    def api_key(self) -> str | None:
        """The key, read from the environment at the moment it is needed."""
        return os.environ.get(self.api_key_env) if self.api_key_env else None
