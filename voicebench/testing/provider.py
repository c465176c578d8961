"""The ``scripted`` LLM provider: the scripted server (``ScriptedLLMServer``) as an agent's LLM;
and ``scripted-realtime`` / ``scripted-gemini``, the scripted voice agent speaking OpenAI's
Realtime or Google's Gemini Live protocol as an ``[s2s]`` agent's model.

It is a measuring instrument with a known time to first token, not a model. It registers
through the entry-point group ``voicebench.providers`` (see ``pyproject.toml``), so the LLM
layer finds it when a spec names it, and no stage imports the test doubles.
"""

from __future__ import annotations

import contextlib

from voicebench.llm import Provider, ServedModel, register_provider


async def _start_scripted(
    endpoint: ServedModel, stack: contextlib.AsyncExitStack, warm_prompt: str | None
) -> str:
    from voicebench.testing.scripted_server import ScriptedLLMServer

    server = await stack.enter_async_context(
        ScriptedLLMServer(
            ttft_ms=getattr(endpoint, "ttft_ms", 300.0),
            token_delay_ms=getattr(endpoint, "token_delay_ms", 15.0),
            reply=getattr(endpoint, "reply", None),
            model=endpoint.model,
        )
    )
    return server.base_url


def _start_scripted_voice(protocol: str):
    """Starts the scripted voice agent speaking ``protocol`` for an ``[s2s]`` endpoint."""

    async def start(
        endpoint: ServedModel, stack: contextlib.AsyncExitStack, warm_prompt: str | None
    ) -> str:
        from voicebench.testing.scripted_voice import ScriptedVoiceAgent

        server = await stack.enter_async_context(
            ScriptedVoiceAgent(
                protocol=protocol,
                delay_ms=getattr(endpoint, "delay_ms", 700.0),
                reply=getattr(endpoint, "reply", None),
            )
        )
        assert server.url is not None
        return server.url

    return start


SCRIPTED_REALTIME = register_provider(
    Provider(
        "scripted-realtime",
        api="openai-realtime",
        structured="prompt",
        start=_start_scripted_voice("openai-realtime"),
        fallback_key="scripted",
    )
)
"""A speech-to-speech model's server with a known delay (``voicebench.llm.realtime``)."""

SCRIPTED_GEMINI = register_provider(
    Provider(
        "scripted-gemini",
        api="gemini-live",
        structured="prompt",
        start=_start_scripted_voice("gemini-live"),
        fallback_key="scripted",
    )
)
"""The same, speaking the Gemini Live protocol."""

SCRIPTED = register_provider(
    Provider(
        "scripted",
        api="openai",
        structured="prompt",
        start=_start_scripted,
        fallback_key="scripted",
    )
)
