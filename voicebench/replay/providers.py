"""LLM providers: a small registry from an agent spec's ``llm.provider`` to a pipecat service.

Each provider imports its SDK only when used; a missing SDK raises ``MissingExtraError``
with the install command. A provider may need a helper process for the run's duration
(the scripted server); ``open_llm`` returns the service inside an async context that owns it.

Every provider builds its SDK client on an HTTP client whose request hook calls
``on_request_sent`` as the request leaves for the server. That is the "LLM request sent"
milestone: the SDK's own request building is not part of the model's time to first token.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable
from typing import Any

from voicebench.agentspec import AgentSpec, api_key
from voicebench.errors import MissingExtraError, VoicebenchError

OnRequestSent = Callable[[], None]
LLMFactory = Callable[[AgentSpec, contextlib.AsyncExitStack, OnRequestSent], Any]
_REGISTRY: dict[str, LLMFactory] = {}


def register_llm(name: str) -> Callable[[LLMFactory], LLMFactory]:
    """Register an LLM provider under ``name``."""

    def wrap(factory: LLMFactory) -> LLMFactory:
        _REGISTRY[name] = factory
        return factory

    return wrap


def llm_providers() -> tuple[str, ...]:
    return tuple(sorted(_REGISTRY))


@contextlib.asynccontextmanager
async def open_llm(spec: AgentSpec, on_request_sent: OnRequestSent = lambda: None
                   ) -> AsyncIterator[Any]:
    """The pipecat LLM service for ``spec``, with whatever it needs kept alive until exit."""
    factory = _REGISTRY.get(spec.llm.provider)
    if factory is None:
        raise VoicebenchError(
            f"unknown LLM provider {spec.llm.provider!r} (known: {', '.join(llm_providers())})"
        )
    async with contextlib.AsyncExitStack() as stack:
        result = factory(spec, stack, on_request_sent)
        if hasattr(result, "__await__"):
            result = await result
        yield result


def _request_hooks(on_request_sent: OnRequestSent) -> dict[str, list]:
    async def sent(_request) -> None:
        on_request_sent()

    return {"request": [sent]}


def _openai_service(spec: AgentSpec, on_request_sent: OnRequestSent, *, base_url: str | None,
                    key: str | None, token_field: str = "max_tokens"):
    try:
        from openai import AsyncOpenAI, DefaultAsyncHttpxClient
        from pipecat.services.openai.llm import OpenAILLMService
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise MissingExtraError("openai", "pipecat-ai[openai]") from exc

    class WireTimedOpenAILLMService(OpenAILLMService):
        def create_client(self, api_key=None, base_url=None, organization=None, project=None,
                          default_headers=None, **kwargs):
            return AsyncOpenAI(
                api_key=api_key,
                base_url=base_url,
                organization=organization,
                project=project,
                default_headers=default_headers,
                http_client=DefaultAsyncHttpxClient(event_hooks=_request_hooks(on_request_sent)),
            )
    settings = OpenAILLMService.Settings(
        model=spec.llm.model,
        temperature=spec.llm.temperature,
        system_instruction=spec.system_prompt,
    )
    setattr(settings, token_field, spec.llm.max_tokens)
    return WireTimedOpenAILLMService(
        api_key=key or "not-needed",
        base_url=base_url,
        settings=settings,
        # A slow local model is a measurement, not a fault: never abandon and re-issue.
        retry_timeout_secs=None,
    )


@register_llm("openai-compatible")
def _openai_compatible(spec: AgentSpec, stack: contextlib.AsyncExitStack, sent: OnRequestSent):
    return _openai_service(spec, sent, base_url=str(spec.llm.base_url), key=api_key(spec))


@register_llm("openai")
def _openai(spec: AgentSpec, stack: contextlib.AsyncExitStack, sent: OnRequestSent):
    base = str(spec.llm.base_url) if spec.llm.base_url else None
    return _openai_service(spec, sent, base_url=base, key=api_key(spec),
                           token_field="max_completion_tokens")


@register_llm("anthropic")
def _anthropic(spec: AgentSpec, stack: contextlib.AsyncExitStack, sent: OnRequestSent):
    try:
        from anthropic import AsyncAnthropic, DefaultAsyncHttpxClient
        from pipecat.services.anthropic.llm import AnthropicLLMService
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise MissingExtraError("anthropic", "pipecat-ai[anthropic]") from exc
    key = api_key(spec) or ""
    kwargs: dict[str, Any] = {
        "api_key": key,
        "http_client": DefaultAsyncHttpxClient(event_hooks=_request_hooks(sent)),
    }
    if spec.llm.base_url is not None:
        kwargs["base_url"] = str(spec.llm.base_url)
    return AnthropicLLMService(
        api_key=key,
        client=AsyncAnthropic(**kwargs),
        settings=AnthropicLLMService.Settings(
            model=spec.llm.model,
            temperature=spec.llm.temperature,
            max_tokens=spec.llm.max_tokens,
            system_instruction=spec.system_prompt,
        ),
        retry_timeout_secs=None,
    )


async def start_helper(spec: AgentSpec, stack: contextlib.AsyncExitStack) -> str | None:
    """Start the server a ``local`` or ``scripted`` LLM needs, kept alive by ``stack``, and
    return its OpenAI-compatible base URL; None for providers that need none."""
    llm = spec.llm
    if llm.provider == "local":
        from voicebench.local_llm import LlamaServer, resolve_gguf

        server = await stack.enter_async_context(
            LlamaServer(resolve_gguf(llm.model), n_ctx=llm.n_ctx, n_threads=llm.n_threads,
                        model_alias=llm.model)
        )
        if llm.warmup:
            server.warm_up(spec.system_prompt)
        return server.base_url
    if llm.provider == "scripted":
        from voicebench.testing.scripted_llm import ScriptedLLMServer

        server = await stack.enter_async_context(
            ScriptedLLMServer(ttft_ms=llm.ttft_ms, token_delay_ms=llm.token_delay_ms,
                              reply=llm.reply, model=llm.model)
        )
        return server.base_url
    return None


@register_llm("local")
async def _local(spec: AgentSpec, stack: contextlib.AsyncExitStack, sent: OnRequestSent):
    return _openai_service(spec, sent, base_url=await start_helper(spec, stack), key="local")


@register_llm("scripted")
async def _scripted(spec: AgentSpec, stack: contextlib.AsyncExitStack, sent: OnRequestSent):
    return _openai_service(spec, sent, base_url=await start_helper(spec, stack), key="scripted")
