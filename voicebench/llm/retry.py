"""What a failed LLM request means, and when to ask again.

One classification of provider errors for every caller (``classify``): the openai and
anthropic SDKs raise exceptions of the same shape, which map to a kind and whether asking
again may help. Refused credentials are never retried: they stop the job (``RunError``).
Error text passes through ``redact`` so a key echoed by a provider never reaches a record.

One retry policy (``RetryPolicy``, ``ask_parsed``): call failures that may pass (rate limits,
5xx, timeouts, dropped connections) are retried with exponential backoff and jitter,
``Retry-After`` honoured, up to ``max_attempts`` calls; an answer the caller cannot parse is
asked again up to ``parse_retries`` times; then the outcome is returned as a failure with its
kind and reason, never raised.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Generic, Protocol, TypeVar

from voicebench.errors import RunError, redact

BACKOFF_BASE_S = 0.5
BACKOFF_MAX_S = 30.0
T = TypeVar("T")


class LLMCallError(Exception):
    """A request that produced no text; ``retryable`` says whether asking again may help."""

    def __init__(
        self, kind: str, reason: str, *, retryable: bool, retry_after: float | None = None
    ) -> None:
        super().__init__(f"{kind}: {reason}")
        self.kind, self.reason = kind, reason
        self.retryable, self.retry_after = retryable, retry_after


def _retry_after(response: Any) -> float | None:
    try:
        value = response.headers.get("retry-after")
        return float(value) if value is not None else None
    except (AttributeError, TypeError, ValueError):
        return None


def classify(exc: Exception, key: str | None, sdk: ModuleType) -> LLMCallError:
    """Map an SDK exception (``sdk`` is the openai or anthropic module) to an LLMCallError;
    refused credentials raise RunError instead."""
    message = redact(str(exc), key)
    if isinstance(exc, sdk.APITimeoutError):
        return LLMCallError("timeout", "the request timed out", retryable=True)
    if isinstance(exc, sdk.APIConnectionError):
        return LLMCallError("connection", message, retryable=True)
    if isinstance(exc, sdk.AuthenticationError | sdk.PermissionDeniedError):
        raise RunError(f"the provider refused the credentials: {message}") from None
    if isinstance(exc, sdk.RateLimitError):
        return LLMCallError(
            "rate_limited", message, retryable=True, retry_after=_retry_after(exc.response)
        )
    if isinstance(exc, sdk.APIStatusError):
        if exc.status_code >= 500:
            return LLMCallError(
                "server_error",
                f"HTTP {exc.status_code}: {message}",
                retryable=True,
                retry_after=_retry_after(exc.response),
            )
        return LLMCallError("bad_request", f"HTTP {exc.status_code}: {message}", retryable=False)
    return LLMCallError("error", message, retryable=False)


@dataclass(frozen=True)
class ChatText:
    """One answer: its text and how long the request took."""

    text: str
    latency_ms: float


class ChatClient(Protocol):
    """One request in, the answer's text out; failures raise ``LLMCallError``. Closed with
    ``aclose`` when no more are asked."""

    async def ask(self, messages: list[dict[str, str]]) -> ChatText: ...

    async def aclose(self) -> None: ...


@dataclass(frozen=True)
class RetryPolicy:
    max_attempts: int = 5
    """Calls at most, counting the first, for failures that may pass."""
    parse_retries: int = 2
    """Extra calls when an answer does not parse."""


@dataclass(frozen=True)
class Asked(Generic[T]):
    """The outcome of asking with retries: a parsed value, or why there is none."""

    value: T | None
    failure: str | None
    """``KIND: reason`` when there is no value."""
    raw: str | None
    """The last unparseable text, when that is why."""
    attempts: int
    latency_ms: float | None


def backoff_s(attempt: int, retry_after: float | None) -> float:
    """The wait before call ``attempt + 1``: the server's word, else exponential with jitter."""
    if retry_after is not None:
        return min(max(retry_after, 0.0), BACKOFF_MAX_S)
    return min(BACKOFF_BASE_S * 2 ** (attempt - 1), BACKOFF_MAX_S) * (0.5 + random.random() / 2)


async def ask_parsed(
    client: ChatClient,
    messages: list[dict[str, str]],
    parse: Callable[[str], T],
    policy: RetryPolicy,
) -> Asked[T]:
    """Ask until ``parse`` accepts the answer (it refuses with ValueError), under ``policy``.
    Never raises for a provider's failure (refused credentials stop the job: RunError)."""
    attempts = call_failures = parse_failures = 0
    while True:
        attempts += 1
        try:
            reply = await client.ask(messages)
        except LLMCallError as exc:
            call_failures += 1
            if exc.retryable and call_failures < policy.max_attempts:
                await asyncio.sleep(backoff_s(call_failures, exc.retry_after))
                continue
            return Asked(None, f"{exc.kind}: {exc.reason}", None, attempts, None)
        try:
            value = parse(reply.text)
        except ValueError as exc:
            parse_failures += 1
            if parse_failures <= policy.parse_retries:
                continue
            return Asked(None, f"unparseable: {exc}", reply.text[:4000], attempts, None)
        return Asked(value, None, None, attempts, reply.latency_ms)
