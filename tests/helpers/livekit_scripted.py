"""LiveKit agents for the tests, written as LiveKit's docs write one: its own OpenAI plugins
pointed at the scripted servers (the URLs from the environment) and its Silero VAD."""

from __future__ import annotations

import os

from livekit.agents import Agent, AgentSession
from livekit.plugins import openai, silero


def _session() -> AgentSession:
    speech, llm = os.environ["SCRIPTED_SPEECH_URL"], os.environ["SCRIPTED_LLM_URL"]
    return AgentSession(
        # the VAD's silence ends the turn: LiveKit's turn detector model would hold some
        # turns up to its 3 s maximum, which these tests do not look at
        turn_handling={"turn_detection": "vad"},
        vad=silero.VAD.load(),
        stt=openai.STT(base_url=speech, api_key="none", model="whisper-1"),
        llm=openai.LLM(base_url=llm, api_key="none", model="scripted-llm"),
        tts=openai.TTS(
            base_url=speech, api_key="none", model="tts-1", voice="alloy", response_format="pcm"
        ),
    )


def build():
    return Agent(instructions="You are a supportive listener."), _session()


class Broken(Agent):
    """An agent whose own LLM node raises on every turn."""

    async def llm_node(self, chat_ctx, tools, model_settings):
        raise RuntimeError("the knowledge base is down")
        yield  # an async generator, as LiveKit's nodes are


def build_broken():
    return Broken(instructions="You are a supportive listener."), _session()


def build_nothing():
    return 42
