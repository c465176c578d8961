"""Providers by name: what API a provider speaks, how it is asked for structured answers,
and the helper server it may need.

Built-in providers (``voicebench.llm.builtin``): ``openai``, ``anthropic``,
``openai-compatible`` (any server speaking OpenAI's Chat Completions) and ``local`` (a
llama.cpp server voicebench starts). More register from outside with ``register_provider``;
a package can also name a module under the entry-point group ``voicebench.providers``, which
is imported the first time its provider is asked for (that is how the test doubles'
``scripted`` provider is found, without any stage importing them).

SDKs are imported only when a client is built; a missing one raises ``MissingExtraError``
with the install command.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.metadata
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from voicebench.errors import InputError

ENTRY_POINT_GROUP = "voicebench.providers"


class ServedModel(Protocol):
    """What a helper server is started for: an ``Endpoint`` (the endpoint module reads the
    provider names from here, so this module names only what a helper reads)."""

    @property
    def model(self) -> str: ...
    @property
    def n_ctx(self) -> int: ...
    @property
    def n_threads(self) -> int | None: ...


HelperStart = Callable[[ServedModel, contextlib.AsyncExitStack, str | None], Awaitable[str]]
"""Start a provider's helper server for an endpoint (kept alive by the stack; the string is
a system prompt to warm its cache with, or None) and return its OpenAI-compatible base URL."""


@dataclass(frozen=True)
class AnswerFormat:
    """The JSON an LLM is asked for: a name and a schema with no references, every field
    required and nothing extra (what strict modes and grammar builders accept).
    ``grammar_schema``, when given, replaces ``schema`` where a grammar enforces it (llama.cpp):
    a tighter schema keeps a small model's answer short."""

    name: str
    schema: dict[str, Any]
    grammar_schema: dict[str, Any] | None = None


StructuredAs = Literal["json_schema", "grammar", "prompt", "output_config"]


@dataclass(frozen=True)
class Provider:
    name: str
    api: Literal["openai", "anthropic", "openai-realtime", "gemini-live"]
    """The wire API and SDK (``openai-realtime``, ``gemini-live``: a speech-to-speech model's
    realtime WebSocket, ``voicebench.llm.realtime``)."""
    structured: StructuredAs
    """How a JSON answer is asked for: OpenAI's strict ``json_schema`` response format, a
    llama.cpp ``grammar`` from the schema, only in the ``prompt`` (servers differ in which
    forms they accept), or Anthropic's ``output_config``."""
    token_field: str = "max_tokens"
    """The request field that bounds the answer's length."""
    start: HelperStart | None = None
    """The helper server it needs, if any."""
    fallback_key: str = "not-needed"
    """Sent when the endpoint names no key variable (local servers want some string)."""

    def response_format(self, answer: AnswerFormat) -> dict[str, Any] | None:
        """The Chat Completions ``response_format`` asking for ``answer`` (OpenAI API only)."""
        if self.structured == "json_schema":
            return {
                "type": "json_schema",
                "json_schema": {"name": answer.name, "strict": True, "schema": answer.schema},
            }
        if self.structured == "grammar":
            return {"type": "json_object", "schema": answer.grammar_schema or answer.schema}
        return None


_PROVIDERS: dict[str, Provider] = {}


def register_provider(provider: Provider) -> Provider:
    """Make ``provider`` available by its name (a later registration replaces an earlier one)."""
    _PROVIDERS[provider.name] = provider
    return provider


def _load_plugin(name: str) -> None:
    for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP, name=name):
        ep.load()


def get_provider(name: str) -> Provider:
    """The provider registered as ``name``; InputError naming the known ones otherwise."""
    if name not in _PROVIDERS:
        _load_plugin(name)
    if name not in _PROVIDERS:
        raise InputError(
            f"unknown LLM provider {name!r} (known: {', '.join(providers())})", field="provider"
        )
    return _PROVIDERS[name]


@functools.cache
def _offered() -> frozenset[str]:
    """Provider names that installed packages offer through the entry-point group."""
    return frozenset(ep.name for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP))


def providers() -> tuple[str, ...]:
    """Every provider name: registered ones and those plugins offer."""
    return tuple(sorted(set(_PROVIDERS) | _offered()))
