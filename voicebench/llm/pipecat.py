"""An endpoint as a pipecat LLM service, for voice pipelines (replay, ``serve``).

The SDK client sits on an HTTP client whose request hook calls ``on_request_sent`` as the
request leaves for the server. That is the "LLM request sent" milestone: the SDK's own request
building is not part of the model's time to first token. Pipecat's own retry timeout is off:
a slow model is a measurement, not a fault to abandon and re-issue.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from voicebench.errors import MissingExtraError
from voicebench.llm.registry import Connection

OnRequestSent = Callable[[], None]


def _request_hooks(on_request_sent: OnRequestSent) -> dict[str, list[Any]]:
    async def sent(_request: Any) -> None:
        on_request_sent()

    return {"request": [sent]}


def pipecat_llm(
    conn: Connection, system_prompt: str, on_request_sent: OnRequestSent = lambda: None
) -> Any:
    """The pipecat LLM service for a connected endpoint."""
    if conn.provider.api == "anthropic":
        return _anthropic(conn, system_prompt, on_request_sent)
    return _openai(conn, system_prompt, on_request_sent)


def _openai(conn: Connection, system_prompt: str, on_request_sent: OnRequestSent) -> Any:
    try:
        from openai import NOT_GIVEN, AsyncOpenAI, DefaultAsyncHttpxClient
        from pipecat.services.openai.llm import OpenAILLMService
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise MissingExtraError("openai", "pipecat-ai[openai]") from exc
    endpoint = conn.endpoint

    class WireTimedOpenAILLMService(OpenAILLMService):
        def create_client(
            self,
            api_key: Any = None,
            base_url: Any = None,
            organization: Any = None,
            project: Any = None,
            default_headers: Any = None,
            **kwargs: Any,
        ) -> AsyncOpenAI:
            return AsyncOpenAI(
                api_key=api_key,
                base_url=base_url,
                organization=organization,
                project=project,
                default_headers=default_headers,
                timeout=endpoint.timeout_s or NOT_GIVEN,
                http_client=DefaultAsyncHttpxClient(event_hooks=_request_hooks(on_request_sent)),
            )

    settings = OpenAILLMService.Settings(
        model=endpoint.model, temperature=endpoint.temperature, system_instruction=system_prompt
    )
    setattr(settings, conn.provider.token_field, endpoint.max_tokens)
    return WireTimedOpenAILLMService(
        api_key=conn.key, base_url=conn.base_url, settings=settings, retry_timeout_secs=None
    )


def _anthropic(conn: Connection, system_prompt: str, on_request_sent: OnRequestSent) -> Any:
    try:
        from anthropic import AsyncAnthropic, DefaultAsyncHttpxClient
        from pipecat.services.anthropic.llm import AnthropicLLMService
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise MissingExtraError("anthropic", "pipecat-ai[anthropic]") from exc
    endpoint = conn.endpoint
    key = endpoint.api_key() or ""
    kwargs: dict[str, Any] = {
        "api_key": key,
        "http_client": DefaultAsyncHttpxClient(event_hooks=_request_hooks(on_request_sent)),
    }
    if conn.base_url is not None:
        kwargs["base_url"] = conn.base_url
    if endpoint.timeout_s is not None:
        kwargs["timeout"] = endpoint.timeout_s
    return AnthropicLLMService(
        api_key=key,
        client=AsyncAnthropic(**kwargs),
        settings=AnthropicLLMService.Settings(
            model=endpoint.model,
            temperature=endpoint.temperature,
            max_tokens=endpoint.max_tokens,
            system_instruction=system_prompt,
        ),
        retry_timeout_secs=None,
    )
