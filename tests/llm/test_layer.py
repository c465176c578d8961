"""The LLM layer: providers by name (plug-ins included), endpoints shared by agents and judges,
and helper servers that start without blocking the event loop and always stop."""

from __future__ import annotations

import asyncio
import contextlib
import sys

import pytest
from openai import AsyncOpenAI

from voicebench.agentspec import LLMSpec
from voicebench.errors import InputError, RunError
from voicebench.judging.spec import JudgeModelSpec
from voicebench.llm import (
    AnswerFormat,
    Endpoint,
    HelperServer,
    connect,
    get_provider,
    providers,
)
from voicebench.testing import ScriptedLLMServer


def test_built_in_providers_and_the_scripted_plug_in_are_known_by_name():
    assert {"openai", "anthropic", "openai-compatible", "local", "scripted"} <= set(providers())
    scripted = get_provider("scripted")  # found through its entry point
    assert scripted.api == "openai" and scripted.start is not None
    with pytest.raises(InputError, match=r"provider: unknown LLM provider 'nope' \(known: "):
        get_provider("nope")


def test_each_provider_asks_for_structured_answers_in_its_own_form():
    answer = AnswerFormat("x", {"type": "object"}, grammar_schema={"type": "object", "n": 1})
    assert get_provider("openai").response_format(answer) == {
        "type": "json_schema",
        "json_schema": {"name": "x", "strict": True, "schema": {"type": "object"}},
    }
    assert get_provider("local").response_format(answer) == {
        "type": "json_object",
        "schema": {"type": "object", "n": 1},
    }
    assert get_provider("openai-compatible").response_format(answer) is None
    assert get_provider("openai").token_field == "max_completion_tokens"


def test_agent_and_judge_specs_are_one_endpoint_model():
    llm = LLMSpec(
        provider="openai-compatible", model="m", base_url="http://127.0.0.1:9/v1/", timeout_s=30
    )
    judge = JudgeModelSpec(
        provider="openai-compatible", model="m", family="f", base_url="http://127.0.0.1:9/v1"
    )
    assert isinstance(llm, Endpoint) and isinstance(judge, Endpoint)
    assert (
        llm.url == judge.url == "http://127.0.0.1:9/v1"
        and llm.id == judge.id == "openai-compatible/m"
    )
    assert llm.timeout_s == 30 and judge.timeout_s == 120 and llm.max_tokens == 120
    for bad, why in (
        (dict(provider="openai-compatible", model="m"), "base_url is required"),
        (dict(provider="openai", model="m"), "api_key_env is required"),
        (dict(provider="local", model="m", api_key_env="sk-123"), "not a key"),
    ):
        with pytest.raises(ValueError, match=why):
            Endpoint(**bad)


async def test_connect_starts_a_plug_in_helper_and_the_stack_stops_it():
    endpoint = LLMSpec(
        provider="scripted", model="scripted-llm", ttft_ms=5, token_delay_ms=0, reply="Hello there."
    )
    async with contextlib.AsyncExitStack() as stack:
        conn = await connect(endpoint, stack)
        assert conn.base_url is not None and conn.base_url.startswith("http://127.0.0.1:")
        assert conn.key == "scripted"
        client = AsyncOpenAI(base_url=conn.base_url, api_key=conn.key, max_retries=0)
        reply = await client.chat.completions.create(
            model="scripted-llm", messages=[{"role": "user", "content": "hi"}]
        )
        await client.close()
        assert reply.choices[0].message.content == "Hello there."
    client = AsyncOpenAI(base_url=conn.base_url, api_key="x", max_retries=0, timeout=2)
    with pytest.raises(Exception, match="Connection error"):
        await client.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])
    await client.close()


async def test_a_helper_starting_up_does_not_block_the_event_loop():
    ticks = 0

    async def tick() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.01)
            ticks += 1

    ticker = asyncio.create_task(tick())
    try:
        async with ScriptedLLMServer(ttft_ms=0) as server:
            started_ticks = ticks
            assert server.port is not None
    finally:
        ticker.cancel()
    assert started_ticks >= 5  # the loop ran while the child imported and bound its port


def test_a_helper_that_never_gets_ready_fails_with_its_log_and_is_stopped():
    code = "import sys, time; print('starting', file=sys.stderr, flush=True); time.sleep(60)"
    server = HelperServer(
        [sys.executable, "-c", code], ready_pattern=r"READY (\S+)", start_timeout_s=1.0
    )
    with pytest.raises(RunError, match=r"did not become ready within 1 s[\s\S]*starting"):
        server.start()
    assert server.process is not None and server.process.poll() is not None


def test_a_registered_provider_can_be_named_by_agent_and_judge_specs(monkeypatch):
    from voicebench.llm import Provider, registry

    with pytest.raises(ValueError, match="Input should be a registered LLM provider: anthropic"):
        LLMSpec(provider="acme", model="m")
    monkeypatch.setitem(
        registry._PROVIDERS, "acme", Provider("acme", api="openai", structured="prompt")
    )
    assert LLMSpec(provider="acme", model="m").id == "acme/m"
    assert JudgeModelSpec(provider="acme", model="m", family="a").id == "acme/m"
    assert "acme" in providers()


async def test_a_plugin_adds_a_wire_api_whose_clients_and_offers_are_its_own(monkeypatch):
    """A wire API is a registered class: a provider that speaks it is asked through the
    clients it makes, and what it does not offer (completions, log-probabilities, a pipeline
    service) is refused with a line naming the provider."""
    from voicebench.llm import Provider, registry
    from voicebench.llm.chat import chat_client, completion_client
    from voicebench.llm.pipecat import pipecat_llm
    from voicebench.llm.retry import ChatText

    closed: list[bool] = []

    class Echo:
        async def ask(self, messages: list[dict[str, str]]) -> ChatText:
            return ChatText("echo: " + messages[-1]["content"], 0.0)

        async def aclose(self) -> None:
            closed.append(True)

    class EchoApi(registry.WireApi):
        name = "echo"

        def chat(self, conn, answer):
            return Echo()

    monkeypatch.setitem(registry._APIS, "echo", EchoApi())
    monkeypatch.setitem(
        registry._PROVIDERS, "echoer", Provider("echoer", api="echo", structured="prompt")
    )
    spec = LLMSpec(provider="echoer", model="m")
    async with contextlib.AsyncExitStack() as stack:
        conn = await connect(spec, stack)
        client = chat_client(conn, stack)
        assert (await client.ask([{"role": "user", "content": "hi"}])).text == "echo: hi"
        with pytest.raises(InputError, match="provider 'echoer' has no text completions"):
            completion_client(conn, stack, stop=["\n"])
        with pytest.raises(InputError, match="echo, which a cascaded pipeline cannot stream"):
            pipecat_llm(conn, "be kind")
    assert closed == [True]
    with pytest.raises(ValueError, match="needs log-probabilities, which provider 'echoer'"):
        JudgeModelSpec(provider="echoer", model="m", family="a", method="letter-margin")
    # the built-in APIs say what they offer
    assert registry.get_api("openai").logprobs and registry.get_api("openai").completions
    assert not registry.get_api("anthropic").logprobs
    assert registry.get_api("gemini-live").realtime
