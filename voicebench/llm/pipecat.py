"""An endpoint as a pipecat LLM service, for voice pipelines (replay, ``serve``).

The SDK client sits on an HTTP client timed at the socket (``voicebench.llm.arrival``):
``on_request_sent`` is called once a request has been written, the "LLM request sent"
milestone, and ``on_answer_arrived`` with the age of the first answer token's bytes when the
service reaches that token, the "first token received" milestone. Between them lies only the
model's time and the wire, not the SDK's request building or its parsing of the reply, nor
the event loop's lateness in reading it. Pipecat's own retry timeout is off: a slow model is a
measurement, not a fault to abandon and re-issue.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from voicebench.errors import MissingExtraError
from voicebench.llm.arrival import Wire
from voicebench.llm.connect import Connection

OnRequestSent = Callable[[], None]
OnAnswerArrived = Callable[[int], None]
"""Called with how long ago (ns) the reply's first answer token arrived."""


def _answer_timed(base: type, wire: Wire, on_answer_arrived: OnAnswerArrived) -> type:
    """``base`` (a pipecat LLM service) reporting its first answer token's arrival.

    Pipecat starts TTFB at each request and stops time-to-first-answer-token at the first
    chunk with answer text (or a tool call), whatever the metrics settings."""

    class AnswerTimed(base):
        _answer_pending = False

        async def start_ttfb_metrics(self, *, start_time: float | None = None) -> None:
            self._answer_pending = True
            await super().start_ttfb_metrics(start_time=start_time)

        async def stop_ttfat_metrics(self, *, end_time: float | None = None) -> None:
            if self._answer_pending:
                self._answer_pending = False
                age = wire.arrived_age_ns()
                if age is not None:
                    on_answer_arrived(age)
            await super().stop_ttfat_metrics(end_time=end_time)

    return AnswerTimed


def pipecat_llm(
    conn: Connection,
    system_prompt: str,
    on_request_sent: OnRequestSent = lambda: None,
    on_answer_arrived: OnAnswerArrived = lambda _age_ns: None,
) -> Any:
    """The pipecat LLM service for a connected endpoint."""
    return conn.provider.wire_api.pipecat_llm(
        conn, system_prompt, Wire(on_request_sent), on_answer_arrived
    )


def openai_llm(
    conn: Connection, system_prompt: str, wire: Wire, on_answer_arrived: OnAnswerArrived
) -> Any:
    try:
        from openai import NOT_GIVEN, AsyncOpenAI, DefaultAsyncHttpxClient
        from pipecat.services.openai.llm import OpenAILLMService
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise MissingExtraError("openai", "pipecat-ai[openai]") from exc
    endpoint = conn.endpoint

    class WireTimedOpenAILLMService(_answer_timed(OpenAILLMService, wire, on_answer_arrived)):  # type: ignore[misc]
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
                http_client=DefaultAsyncHttpxClient(**wire.httpx_options(DefaultAsyncHttpxClient)),
            )

    settings = OpenAILLMService.Settings(
        model=endpoint.model, temperature=endpoint.temperature, system_instruction=system_prompt
    )
    setattr(settings, conn.provider.token_field, endpoint.max_tokens)
    return WireTimedOpenAILLMService(
        api_key=conn.key, base_url=conn.base_url, settings=settings, retry_timeout_secs=None
    )


def anthropic_llm(
    conn: Connection, system_prompt: str, wire: Wire, on_answer_arrived: OnAnswerArrived
) -> Any:
    try:
        from anthropic import AsyncAnthropic, DefaultAsyncHttpxClient
        from pipecat.services.anthropic.llm import AnthropicLLMService
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise MissingExtraError("anthropic", "pipecat-ai[anthropic]") from exc
    endpoint = conn.endpoint
    key = endpoint.api_key() or ""
    kwargs: dict[str, Any] = {
        "api_key": key,
        "http_client": DefaultAsyncHttpxClient(**wire.httpx_options(DefaultAsyncHttpxClient)),
    }
    if conn.base_url is not None:
        kwargs["base_url"] = conn.base_url
    if endpoint.timeout_s is not None:
        kwargs["timeout"] = endpoint.timeout_s
    service = _answer_timed(AnthropicLLMService, wire, on_answer_arrived)
    return service(
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
