"""The built-in wire APIs: OpenAI's (Chat Completions and text completions: OpenAI, local
llama.cpp and any OpenAI-compatible server), Anthropic's Messages, and the two realtime
speech-to-speech sockets (their sessions are run by ``voicebench.pipeline.s2s``)."""

from __future__ import annotations

from typing import Any

from voicebench.llm.arrival import Wire
from voicebench.llm.chat import AnthropicChat, OpenAIChat, OpenAICompletion
from voicebench.llm.connect import Connection
from voicebench.llm.pipecat import OnAnswerArrived, anthropic_llm, openai_llm
from voicebench.llm.registry import AnswerFormat, WireApi
from voicebench.llm.retry import ChatClient


class OpenAIApi(WireApi):
    name = "openai"
    logprobs = True
    completions = True

    def chat(self, conn: Connection, answer: AnswerFormat | None) -> ChatClient:
        return OpenAIChat(
            conn.endpoint,
            base_url=conn.base_url,
            key=conn.key,
            response_format=conn.provider.response_format(answer) if answer else None,
            token_field=conn.provider.token_field,
        )

    def completion(self, conn: Connection, stop: list[str], seed: int | None) -> ChatClient:
        return OpenAICompletion(
            conn.endpoint, base_url=conn.base_url, key=conn.key, stop=stop, seed=seed
        )

    def pipecat_llm(
        self, conn: Connection, system_prompt: str, wire: Wire, on_answer_arrived: OnAnswerArrived
    ) -> Any:
        return openai_llm(conn, system_prompt, wire, on_answer_arrived)


class AnthropicApi(WireApi):
    name = "anthropic"

    def chat(self, conn: Connection, answer: AnswerFormat | None) -> ChatClient:
        return AnthropicChat(
            conn.endpoint,
            key=conn.endpoint.api_key(),
            schema=answer.schema if answer else None,
            base_url=conn.base_url,
        )

    def pipecat_llm(
        self, conn: Connection, system_prompt: str, wire: Wire, on_answer_arrived: OnAnswerArrived
    ) -> Any:
        return anthropic_llm(conn, system_prompt, wire, on_answer_arrived)


class OpenAIRealtimeApi(WireApi):
    name = "openai-realtime"
    realtime = True
    server_turns_at_model_rate = True


class GeminiLiveApi(WireApi):
    name = "gemini-live"
    realtime = True
