"""Judge providers: one request in, the judge's raw text out, failures classified.

A provider is registered by name and imports its SDK lazily. SDK-level retries are off: the
judging loop retries itself, so every attempt is counted and ``Retry-After`` is honoured.

- ``openai``: Chat Completions with strict JSON-schema structured output.
- ``openai-compatible``: the same API on any server; the answer is asked for in the prompt
  and parsed strictly (servers differ in which structured-output forms they accept).
- ``local``: the packaged SmolLM2 (or any GGUF) on a llama.cpp server voicebench starts on
  127.0.0.1, with the answer schema enforced as a grammar.
- ``anthropic``: the Messages API with JSON-schema structured output (``output_config``). The
  current Messages API takes no sampling temperature; the others are asked for 0.

Error text passes through ``redact`` so a key echoed by a provider never reaches a verdict,
a log or a report.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

from voicebench.errors import MissingExtraError, RunError, redact
from voicebench.judging.prompt import (
    JSON_INSTRUCTION,
    answer_schema,
    context_of,
    user_message,
)
from voicebench.judging.spec import JudgeModelSpec


class JudgeCallError(Exception):
    """A request that produced no text; ``retryable`` says whether asking again may help."""

    def __init__(self, kind: str, reason: str, *, retryable: bool,
                 retry_after: float | None = None) -> None:
        super().__init__(f"{kind}: {reason}")
        self.kind, self.reason = kind, reason
        self.retryable, self.retry_after = retryable, retry_after


@dataclass(frozen=True)
class JudgeText:
    text: str
    latency_ms: float


@dataclass(frozen=True)
class AnswerFormat:
    """The JSON an LLM is asked for: a name and a schema with no references, every field
    required and nothing extra (what strict modes and grammar builders accept)."""

    name: str
    schema: dict

    @staticmethod
    def verdict() -> AnswerFormat:
        return AnswerFormat("heart_verdict", answer_schema())


class JudgeClient(Protocol):
    async def ask(self, messages: list[dict[str, str]]) -> JudgeText: ...


Opener = Callable[[JudgeModelSpec, contextlib.AsyncExitStack, AnswerFormat],
                  Awaitable[JudgeClient]]
_PROVIDERS: dict[str, Opener] = {}


def register_judge(name: str) -> Callable[[Opener], Opener]:
    def wrap(fn: Opener) -> Opener:
        _PROVIDERS[name] = fn
        return fn
    return wrap


async def open_judge(spec: JudgeModelSpec, stack: contextlib.AsyncExitStack,
                     answer: AnswerFormat | None = None) -> JudgeClient:
    """A ready client for ``spec`` asking for ``answer`` (default: a HEART verdict); resources
    (a local server) are released by ``stack``."""
    return await _PROVIDERS[spec.provider](spec, stack, answer or AnswerFormat.verdict())


def _retry_after(response) -> float | None:
    try:
        value = response.headers.get("retry-after")
        return float(value) if value is not None else None
    except (AttributeError, TypeError, ValueError):
        return None


def _classify(exc: Exception, key: str | None, sdk) -> JudgeCallError:
    """Map an SDK exception (openai and anthropic share the shape) to a JudgeCallError."""
    message = redact(str(exc), key)
    if isinstance(exc, sdk.APITimeoutError):
        return JudgeCallError("timeout", "the request timed out", retryable=True)
    if isinstance(exc, sdk.APIConnectionError):
        return JudgeCallError("connection", message, retryable=True)
    if isinstance(exc, (sdk.AuthenticationError, sdk.PermissionDeniedError)):
        raise RunError(f"the judge refused the credentials: {message}") from None
    if isinstance(exc, sdk.RateLimitError):
        return JudgeCallError("rate_limited", message, retryable=True,
                              retry_after=_retry_after(exc.response))
    if isinstance(exc, sdk.APIStatusError):
        if exc.status_code >= 500:
            return JudgeCallError("server_error", f"HTTP {exc.status_code}: {message}",
                                  retryable=True, retry_after=_retry_after(exc.response))
        return JudgeCallError("bad_request", f"HTTP {exc.status_code}: {message}", retryable=False)
    return JudgeCallError("error", message, retryable=False)


class OpenAIJudge:
    """Chat Completions on OpenAI or any compatible server."""

    def __init__(self, spec: JudgeModelSpec, *, base_url: str | None, key: str | None,
                 response_format: dict | None) -> None:
        try:
            import openai
        except ImportError:  # pragma: no cover - a core dependency
            raise MissingExtraError("openai") from None
        self._sdk = openai
        self._spec, self._key, self._format = spec, key, response_format
        self._client = openai.AsyncOpenAI(base_url=base_url, api_key=key or "not-needed",
                                          max_retries=0, timeout=spec.timeout_s)

    async def ask(self, messages: list[dict[str, str]]) -> JudgeText:
        kwargs = {"response_format": self._format} if self._format else {}
        start = time.perf_counter_ns()
        try:
            resp = await self._client.chat.completions.create(
                model=self._spec.model, messages=messages, temperature=self._spec.temperature,
                max_tokens=self._spec.max_tokens, **kwargs)
        except self._sdk.OpenAIError as exc:
            raise _classify(exc, self._key, self._sdk) from None
        latency = (time.perf_counter_ns() - start) / 1e6
        choices = resp.choices or []
        text = (choices[0].message.content or "") if choices else ""
        return JudgeText(text, latency)

    async def aclose(self) -> None:
        await self._client.close()


LETTER_INSTRUCTION = "Which reply is better for this seeker? Answer with one letter: A or B."
BLANK = "(no reply)"


class CalibratedLetterJudge:
    """A smoke judge for tiny local models, which pick a slot rather than a reply.

    Each comparison asks for one token and reads the log-probabilities of "A" and "B"; the
    same prompt with both replies blanked out gives the model's bias for each slot on that
    conversation (asked once per conversation, then cached). The winner is the side whose
    log-probability rose most above its blank baseline (contextual calibration); strength
    grows with the margin, 1 per 0.5 nats up to 5. Dimensions are not judged (null).
    """

    def __init__(self, spec: JudgeModelSpec, *, base_url: str) -> None:
        import openai

        self._sdk = openai
        self._spec = spec
        self._client = openai.AsyncOpenAI(base_url=base_url, api_key="local", max_retries=0,
                                          timeout=spec.timeout_s)
        self._baseline: dict[str, tuple[float, float]] = {}

    async def _letters(self, messages: list[dict[str, str]], question: str) -> tuple[float, float]:
        asked = [*messages[:-1], {"role": "user", "content": question}]
        try:
            resp = await self._client.chat.completions.create(
                model=self._spec.model, messages=asked, temperature=0.0, max_tokens=1,
                logprobs=True, top_logprobs=20)
        except self._sdk.OpenAIError as exc:
            raise _classify(exc, None, self._sdk) from None
        tops = resp.choices[0].logprobs.content[0].top_logprobs if resp.choices[0].logprobs else []
        floor = min((t.logprob for t in tops), default=-30.0) - 1.0
        found: dict[str, float] = {}
        for t in tops:
            letter = t.token.strip().upper()
            if letter in ("A", "B") and letter not in found:
                found[letter] = t.logprob
        return found.get("A", floor), found.get("B", floor)

    async def ask(self, messages: list[dict[str, str]]) -> JudgeText:
        start = time.perf_counter_ns()
        user = messages[-1]["content"]
        context = context_of(user)
        if context not in self._baseline:
            blank = user_message(context, BLANK, BLANK, LETTER_INSTRUCTION)
            self._baseline[context] = await self._letters(messages, blank)
        a0, b0 = self._baseline[context]
        a, b = await self._letters(messages, user.replace(JSON_INSTRUCTION, LETTER_INSTRUCTION))
        margin = (a - a0) - (b - b0)
        answer = {"winner": "A" if margin >= 0 else "B",
                  "strength": max(1, min(5, 1 + int(abs(margin) / 0.5))),
                  "dimensions": {d: None for d in ("H", "E", "A", "R", "T")},
                  "rationale": f"calibrated letter log-probability margin {margin:+.2f} nats"}
        return JudgeText(json.dumps(answer), (time.perf_counter_ns() - start) / 1e6)

    async def aclose(self) -> None:
        await self._client.close()


class AnthropicJudge:
    """The Messages API with the answer schema as its structured output format."""

    def __init__(self, spec: JudgeModelSpec, *, key: str | None,
                 schema: dict | None = None) -> None:
        try:
            import anthropic
        except ImportError:
            raise MissingExtraError("anthropic") from None
        self._sdk = anthropic
        self._spec, self._key = spec, key
        self._schema = schema or answer_schema()
        self._client = anthropic.AsyncAnthropic(api_key=key, base_url=_base_url(spec), max_retries=0,
                                                timeout=spec.timeout_s)

    async def ask(self, messages: list[dict[str, str]]) -> JudgeText:
        system = "\n\n".join(m["content"] for m in messages if m["role"] == "system")
        turns = [m for m in messages if m["role"] != "system"]
        start = time.perf_counter_ns()
        try:
            resp = await self._client.messages.create(
                model=self._spec.model, system=system, messages=turns,
                max_tokens=self._spec.max_tokens,
                output_config={"format": {"type": "json_schema", "schema": self._schema}})
        except self._sdk.AnthropicError as exc:
            raise _classify(exc, self._key, self._sdk) from None
        latency = (time.perf_counter_ns() - start) / 1e6
        text = "".join(getattr(b, "text", "") for b in resp.content)
        return JudgeText(text, latency)

    async def aclose(self) -> None:
        await self._client.close()


def _base_url(spec: JudgeModelSpec) -> str | None:
    return str(spec.base_url).rstrip("/") if spec.base_url else None


@register_judge("openai")
async def _openai(spec: JudgeModelSpec, stack: contextlib.AsyncExitStack,
                  answer: AnswerFormat) -> JudgeClient:
    rf = {"type": "json_schema",
          "json_schema": {"name": answer.name, "strict": True, "schema": answer.schema}}
    client = OpenAIJudge(spec, base_url=_base_url(spec), key=spec.api_key(), response_format=rf)
    stack.push_async_callback(client.aclose)
    return client


@register_judge("openai-compatible")
async def _compatible(spec: JudgeModelSpec, stack: contextlib.AsyncExitStack,
                      answer: AnswerFormat) -> JudgeClient:
    client = OpenAIJudge(spec, base_url=_base_url(spec), key=spec.api_key(), response_format=None)
    stack.push_async_callback(client.aclose)
    return client


@register_judge("local")
async def _local(spec: JudgeModelSpec, stack: contextlib.AsyncExitStack,
                 answer: AnswerFormat) -> JudgeClient:
    from voicebench.local_llm import LlamaServer, resolve_gguf

    server = await stack.enter_async_context(LlamaServer(resolve_gguf(spec.model), n_ctx=spec.n_ctx))
    verdicts = answer.name == AnswerFormat.verdict().name
    if spec.method == "calibrated-letter" and verdicts:
        letters = CalibratedLetterJudge(spec, base_url=server.base_url)
        stack.push_async_callback(letters.aclose)
        return letters
    schema = answer_schema(rationale_max_chars=300) if verdicts else answer.schema
    rf = {"type": "json_object", "schema": schema}
    client = OpenAIJudge(spec, base_url=server.base_url, key="local", response_format=rf)
    stack.push_async_callback(client.aclose)
    return client


@register_judge("anthropic")
async def _anthropic(spec: JudgeModelSpec, stack: contextlib.AsyncExitStack,
                     answer: AnswerFormat) -> JudgeClient:
    client = AnthropicJudge(spec, key=spec.api_key(), schema=answer.schema)
    stack.push_async_callback(client.aclose)
    return client


BACKOFF_BASE_S = 0.5
BACKOFF_MAX_S = 30.0
T = TypeVar("T")


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
    if retry_after is not None:
        return min(max(retry_after, 0.0), BACKOFF_MAX_S)
    return min(BACKOFF_BASE_S * 2 ** (attempt - 1), BACKOFF_MAX_S) * (0.5 + random.random() / 2)


async def ask_parsed(client: JudgeClient, messages: list[dict[str, str]],
                     parse: Callable[[str], T], *, max_attempts: int,
                     parse_retries: int) -> Asked[T]:
    """Ask until ``parse`` accepts the answer. Retryable call failures (rate limits, 5xx,
    timeouts, dropped connections) are retried with backoff, ``Retry-After`` honoured, up to
    ``max_attempts`` calls; an answer ``parse`` refuses (with ValueError) is asked again up to
    ``parse_retries`` times. Never raises for a provider's failure (refused credentials stop
    the job: RunError)."""
    attempts = call_failures = parse_failures = 0
    while True:
        attempts += 1
        try:
            reply = await client.ask(messages)
        except JudgeCallError as exc:
            call_failures += 1
            if exc.retryable and call_failures < max_attempts:
                await asyncio.sleep(backoff_s(call_failures, exc.retry_after))
                continue
            return Asked(None, f"{exc.kind}: {exc.reason}", None, attempts, None)
        try:
            value = parse(reply.text)
        except ValueError as exc:
            parse_failures += 1
            if parse_failures <= parse_retries:
                continue
            return Asked(None, f"unparseable: {exc}", reply.text[:4000], attempts, None)
        return Asked(value, None, None, attempts, reply.latency_ms)
