"""The scripted LLM server, driven by the real OpenAI client over real HTTP."""

from __future__ import annotations

import asyncio
import time

import openai
import pytest

from voicebench.testing import RequestRecord, ScriptedLLMServer

REPLY = "Hello there. How are you?"
MESSAGES = [{"role": "user", "content": "I lost my job today."}]


def _client(server: ScriptedLLMServer, **kwargs: object) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(base_url=server.base_url, api_key="x", max_retries=0, **kwargs)


async def _stream(client: openai.AsyncOpenAI) -> tuple[str, int | None, str | None]:
    """Content, client-measured ns to the first non-empty content delta, finish reason."""
    start = time.perf_counter_ns()
    first_ns, parts, finish = None, [], None
    stream = await client.chat.completions.create(
        model="scripted-llm", messages=MESSAGES, stream=True
    )
    async for chunk in stream:
        for choice in chunk.choices:
            if choice.delta.content:
                if first_ns is None:
                    first_ns = time.perf_counter_ns() - start
                parts.append(choice.delta.content)
            finish = choice.finish_reason or finish
    return "".join(parts), first_ns, finish


async def test_stream_reproduces_reply_after_the_injected_ttft() -> None:
    async with ScriptedLLMServer(ttft_ms=200, token_delay_ms=5, reply=REPLY) as server:
        content, client_ttft_ns, finish = await _stream(_client(server))
        records = server.requests(at_least=1)
    assert content == REPLY
    assert finish == "stop"
    assert client_ttft_ns is not None and client_ttft_ns >= 200_000_000
    [record] = records
    assert record.stream is True and record.n_messages == 1 and record.fault is None
    assert record.model == "scripted-llm"
    assert record.received_ns <= record.first_token_sent_ns <= record.done_ns
    # The server's own delay: exact to well under a millisecond, lenient for loaded machines.
    assert 200_000_000 <= record.first_token_sent_ns - record.received_ns < 250_000_000
    # Four more tokens on a 5 ms grid that starts at the first token's deadline.
    assert record.done_ns - record.received_ns >= 220_000_000


async def test_usage_chunk_when_asked() -> None:
    async with ScriptedLLMServer(ttft_ms=0, token_delay_ms=0, reply=REPLY) as server:
        stream = await _client(server).chat.completions.create(
            model="m", messages=MESSAGES, stream=True, stream_options={"include_usage": True}
        )
        usage = [c.usage async for c in stream if c.usage is not None]
    assert [(u.completion_tokens, u.prompt_tokens) for u in usage] == [(5, 5)]


async def test_non_streaming_and_default_reply() -> None:
    async with ScriptedLLMServer(ttft_ms=50, token_delay_ms=1) as server:
        client = _client(server)
        completion = await client.chat.completions.create(model="m", messages=MESSAGES)
        models = await client.models.list()
        records = server.requests()
    assert completion.object == "chat.completion"
    assert completion.choices[0].finish_reason == "stop"
    assert completion.choices[0].message.content == (
        "That sounds really hard. Can you tell me more about how you lost your job today?"
    )
    assert [m.id for m in models.data] == ["scripted-llm"]
    [record] = records
    assert record.stream is False and record.model == "m"
    assert record.ttft_ms is not None and record.ttft_ms >= 50


async def test_faults_apply_to_successive_requests() -> None:
    faults = ("429", "500", "empty", "truncate", "hang")
    async with ScriptedLLMServer(
        ttft_ms=10, token_delay_ms=1, reply=REPLY, faults=faults
    ) as server:
        client = _client(server, timeout=1.0)
        with pytest.raises(openai.RateLimitError) as rate_limited:
            await _stream(client)
        assert rate_limited.value.response.headers["retry-after"] == "1"
        assert rate_limited.value.code == "rate_limit_exceeded"
        with pytest.raises(openai.InternalServerError):
            await _stream(client)
        assert await _stream(client) == ("", None, "stop")  # empty
        try:  # truncate: the client raises (openai 3.x) or sees a stream that never finished
            content, _, finish = await _stream(client)
        except openai.APIConnectionError:
            pass
        else:
            assert content == "Hello" and finish is None
        with pytest.raises(openai.APITimeoutError):  # hang
            await _stream(client)
        content, _, finish = await _stream(client)  # past the script: normal again
        assert (content, finish) == (REPLY, "stop")
        await asyncio.sleep(0.2)  # the hung request is logged once the server sees the disconnect
        records = server.requests()
    assert sorted(r.fault or "" for r in records) == sorted([*faults, ""])
    by_fault = {r.fault: r for r in records}
    assert by_fault["hang"].first_token_sent_ns is None
    assert by_fault["empty"].first_token_sent_ns is None
    assert by_fault["truncate"].first_token_sent_ns is not None


def test_sync_context_manager_leaves_no_process() -> None:
    with ScriptedLLMServer(ttft_ms=0) as server:
        process = server.process
        assert process is not None and process.poll() is None
        assert server.port is not None and server.base_url.endswith(f":{server.port}/v1")
        assert server.requests() == []
    assert process.poll() is not None
    assert process.returncode == 0  # SIGTERM is a clean exit, not a kill


async def test_async_context_manager_leaves_no_process() -> None:
    async with ScriptedLLMServer() as server:
        process = server.process
    assert process is not None and process.poll() is not None


def test_unknown_fault_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown faults"):
        ScriptedLLMServer(faults=("teapot",))  # type: ignore[arg-type]


def test_record_ttft() -> None:
    record = RequestRecord(
        received_ns=1_000,
        first_token_sent_ns=2_501_000,
        done_ns=3_000_000,
        model="m",
        n_messages=2,
        stream=True,
    )
    assert record.ttft_ms == 2.5
