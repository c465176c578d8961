"""Providers by name: what API a provider speaks, how it is asked for structured answers,
and the helper server it may need.

Each provider speaks a wire API (``WireApi``, registered by name with ``register_api``): the
API says what it offers (chat, text completions, log-probabilities, a realtime speech-to-speech
socket) and makes the clients that speak it, so a plugin adds an API by registering a subclass
(``voicebench.llm.apis`` holds the built-in ones: ``openai``, ``anthropic``,
``openai-realtime``, ``gemini-live``).

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
from typing import Any, ClassVar, Literal, Protocol

from voicebench.errors import InputError
from voicebench.llm.arrival import Wire
from voicebench.llm.retry import ChatClient

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


class WireApi:
    """A wire API that providers speak: what it offers, and the clients that speak it. A
    subclass says what differs; what it does not offer is refused with a line naming the
    provider. Its methods are given a ``voicebench.llm.connect.Connection`` (``conn``: the
    endpoint, its provider, where to reach it and the key)."""

    name: ClassVar[str]
    realtime: ClassVar[bool] = False
    """A speech-to-speech model's realtime WebSocket (an agent's ``[s2s]`` section), not chat."""
    logprobs: ClassVar[bool] = False
    """Answers can carry the log-probabilities of their tokens (the likelihood judges)."""
    completions: ClassVar[bool] = False
    """Text completions besides chat (a seeker's ``method = "completion"``)."""
    server_turns_at_model_rate: ClassVar[bool] = False
    """Realtime, with the model's own turn detection: the caller is heard at the model's
    sample rate (nothing resamples the audio on its way)."""

    def chat(self, conn: Any, answer: AnswerFormat | None) -> ChatClient:
        """A chat client on an open connection, asking for ``answer`` (None: free text)."""
        raise InputError(
            f"provider {conn.endpoint.provider!r} speaks {self.name}, which has no chat",
            field="provider",
        )

    def completion(self, conn: Any, stop: list[str], seed: int | None) -> ChatClient:
        """A text-completion client, stopping at ``stop``, sampling seeded with ``seed``."""
        raise InputError(
            f'provider {conn.endpoint.provider!r} has no text completions; use method "chat"',
            field="method",
        )

    def pipecat_llm(
        self,
        conn: Any,
        system_prompt: str,
        wire: Wire,
        on_answer_arrived: Callable[[int], None],
    ) -> Any:
        """The pipecat LLM service streaming from it inside a voice pipeline, its requests and
        answers timed on ``wire``."""
        raise InputError(
            f"provider {conn.endpoint.provider!r} speaks {self.name}, which a cascaded "
            "pipeline cannot stream from",
            field="provider",
        )


_APIS: dict[str, WireApi] = {}


def register_api(api: WireApi) -> WireApi:
    """Make a wire API available by its name (a later registration replaces an earlier one)."""
    _APIS[api.name] = api
    return api


def get_api(name: str) -> WireApi:
    """The wire API registered as ``name``."""
    if name not in _APIS:
        raise InputError(
            f"unknown wire API {name!r} (known: {', '.join(sorted(_APIS))})", field="api"
        )
    return _APIS[name]


@dataclass(frozen=True)
class Provider:
    name: str
    api: str
    """The name of the wire API it speaks (``WireApi``; ``openai-realtime``, ``gemini-live``:
    a speech-to-speech model's realtime WebSocket, ``voicebench.llm.realtime``)."""
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

    @property
    def wire_api(self) -> WireApi:
        """The wire API it speaks, with what it offers and the clients that speak it."""
        return get_api(self.api)

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
