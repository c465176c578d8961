"""Asking an LLM one thing: a request in, the answer's text out, failures classified.

SDK-level retries are off: callers retry through ``ask_parsed``, so every attempt is counted
and ``Retry-After`` is honoured. ``open_chat`` picks the client by the provider's API:

- OpenAI API (``openai``, ``openai-compatible``, ``local``, plugins): Chat Completions, with
  the structured-answer form the provider takes (``Provider.response_format``);
- Anthropic API: the Messages API with the schema as ``output_config``. The current Messages
  API takes no sampling temperature; the others are asked for the endpoint's.
"""

from __future__ import annotations

import contextlib
import time
from typing import Any

from voicebench.errors import MissingExtraError
from voicebench.llm.connect import Connection, connect
from voicebench.llm.endpoint import Endpoint
from voicebench.llm.registry import AnswerFormat
from voicebench.llm.retry import ChatClient, ChatText, classify


class OpenAIChat:
    """Chat Completions on OpenAI or any compatible server."""

    def __init__(
        self,
        endpoint: Endpoint,
        *,
        base_url: str | None,
        key: str | None,
        response_format: dict[str, Any] | None,
        token_field: str = "max_tokens",
    ) -> None:
        try:
            import openai
        except ImportError:  # pragma: no cover - a core dependency
            raise MissingExtraError("openai") from None
        self._sdk = openai
        self._endpoint, self._key, self._format = endpoint, key, response_format
        self._token_field = token_field
        self._client = openai.AsyncOpenAI(
            base_url=base_url,
            api_key=key or "not-needed",
            max_retries=0,
            timeout=endpoint.timeout_s or openai.NOT_GIVEN,
        )

    async def ask(self, messages: list[dict[str, str]]) -> ChatText:
        kwargs: dict[str, Any] = {self._token_field: self._endpoint.max_tokens}
        if self._format:
            kwargs["response_format"] = self._format
        start = time.perf_counter_ns()
        try:
            resp = await self._client.chat.completions.create(
                model=self._endpoint.model,
                messages=messages,  # type: ignore[arg-type]
                temperature=self._endpoint.temperature,
                **kwargs,
            )
        except self._sdk.OpenAIError as exc:
            raise classify(exc, self._key, self._sdk) from None
        latency = (time.perf_counter_ns() - start) / 1e6
        choices = resp.choices or []
        text = (choices[0].message.content or "") if choices else ""
        return ChatText(text, latency)

    async def aclose(self) -> None:
        await self._client.close()


class OpenAICompletion(OpenAIChat):
    """Text completions (``/v1/completions``) on an OpenAI-compatible server: the messages'
    contents, joined by blank lines, are a prompt to continue, up to the first ``stop``. A chat
    model asked so continues a transcript as itself, without an assistant's voice."""

    def __init__(
        self,
        endpoint: Endpoint,
        *,
        base_url: str | None,
        key: str | None,
        stop: list[str],
        seed: int | None = None,
    ):
        super().__init__(endpoint, base_url=base_url, key=key, response_format=None)
        self._stop, self._seed = stop, seed

    async def ask(self, messages: list[dict[str, str]]) -> ChatText:
        prompt = "\n\n".join(m["content"] for m in messages)
        start = time.perf_counter_ns()
        try:
            resp = await self._client.completions.create(
                model=self._endpoint.model,
                prompt=prompt,
                temperature=self._endpoint.temperature,
                max_tokens=self._endpoint.max_tokens,
                stop=self._stop,
                seed=self._seed,
            )
        except self._sdk.OpenAIError as exc:
            raise classify(exc, self._key, self._sdk) from None
        latency = (time.perf_counter_ns() - start) / 1e6
        choices = resp.choices or []
        return ChatText(choices[0].text if choices else "", latency)


class AnthropicChat:
    """The Messages API with the answer's schema as its structured output format."""

    def __init__(
        self,
        endpoint: Endpoint,
        *,
        key: str | None,
        schema: dict[str, Any] | None,
        base_url: str | None = None,
    ) -> None:
        try:
            import anthropic
        except ImportError:
            raise MissingExtraError("anthropic") from None
        self._sdk = anthropic
        self._endpoint, self._key, self._schema = endpoint, key, schema
        self._client = anthropic.AsyncAnthropic(
            api_key=key,
            base_url=base_url or endpoint.url,
            max_retries=0,
            timeout=endpoint.timeout_s or anthropic.NOT_GIVEN,
        )

    async def ask(self, messages: list[dict[str, str]]) -> ChatText:
        system = "\n\n".join(m["content"] for m in messages if m["role"] == "system")
        turns = [m for m in messages if m["role"] != "system"]
        kwargs: dict[str, Any] = {}
        if self._schema is not None:
            kwargs["output_config"] = {"format": {"type": "json_schema", "schema": self._schema}}
        start = time.perf_counter_ns()
        try:
            resp = await self._client.messages.create(
                model=self._endpoint.model,
                system=system,
                messages=turns,  # type: ignore[arg-type]
                max_tokens=self._endpoint.max_tokens,
                **kwargs,
            )
        except self._sdk.AnthropicError as exc:
            raise classify(exc, self._key, self._sdk) from None
        latency = (time.perf_counter_ns() - start) / 1e6
        text = "".join(getattr(b, "text", "") for b in resp.content)
        return ChatText(text, latency)

    async def aclose(self) -> None:
        await self._client.close()


async def open_chat(
    endpoint: Endpoint, stack: contextlib.AsyncExitStack, answer: AnswerFormat | None = None
) -> ChatClient:
    """A ready client for ``endpoint`` asking for ``answer`` (None: free text); what it needs
    (a helper server, the HTTP client) is released by ``stack``."""
    return chat_client(await connect(endpoint, stack), stack, answer)


def chat_client(
    conn: Connection, stack: contextlib.AsyncExitStack, answer: AnswerFormat | None = None
) -> ChatClient:
    """A chat client on an open connection (several may share one, and its server), made by
    the wire API its provider speaks."""
    client = conn.provider.wire_api.chat(conn, answer)
    stack.push_async_callback(client.aclose)
    return client


def completion_client(
    conn: Connection, stack: contextlib.AsyncExitStack, stop: list[str], seed: int | None = None
) -> ChatClient:
    """A text-completion client on an open connection, where its provider's wire API has them
    (the OpenAI API: local and openai-compatible servers); ``seed`` seeds its sampling where
    the server takes one."""
    client = conn.provider.wire_api.completion(conn, stop, seed)
    stack.push_async_callback(client.aclose)
    return client
