"""The built-in wire APIs and providers."""

from __future__ import annotations

import asyncio
import contextlib

from voicebench.llm.apis import AnthropicApi, GeminiLiveApi, OpenAIApi, OpenAIRealtimeApi
from voicebench.llm.registry import Provider, ServedModel, register_api, register_provider

for api in (OpenAIApi(), AnthropicApi(), OpenAIRealtimeApi(), GeminiLiveApi()):
    register_api(api)


async def _start_local(
    endpoint: ServedModel, stack: contextlib.AsyncExitStack, warm_prompt: str | None
) -> str:
    from voicebench.llm.local import LlamaServer, resolve_gguf

    server = await stack.enter_async_context(
        LlamaServer(
            resolve_gguf(endpoint.model),
            n_ctx=endpoint.n_ctx,
            n_threads=endpoint.n_threads,
            model_alias=endpoint.model,
        )
    )
    if warm_prompt is not None:
        await asyncio.to_thread(server.warm_up, warm_prompt)
    return server.base_url


register_provider(
    Provider("openai", api="openai", structured="json_schema", token_field="max_completion_tokens")
)
register_provider(Provider("openai-compatible", api="openai", structured="prompt"))
register_provider(Provider("anthropic", api="anthropic", structured="output_config"))
register_provider(Provider("openai-realtime", api="openai-realtime", structured="prompt"))
register_provider(Provider("gemini-live", api="gemini-live", structured="prompt"))
register_provider(
    Provider("local", api="openai", structured="grammar", start=_start_local, fallback_key="local")
)
