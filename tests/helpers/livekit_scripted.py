"""LiveKit agents for the tests, written as LiveKit's docs write one: its own OpenAI plugins
pointed at the scripted servers (the URLs from the environment) and its Silero VAD.
``entrypoint`` is LiveKit's quick-start: a worker entrypoint taking a ``JobContext``, the
plugins at their defaults (``openai.TTS()`` asks for mp3), a greeting when the session starts."""

from __future__ import annotations

import os

from livekit import agents
from livekit.agents import Agent, AgentSession, APIConnectOptions
from livekit.agents.voice.agent_session import SessionConnectOptions
from livekit.plugins import openai, silero


def _session(**options) -> AgentSession:
    speech, llm = os.environ["SCRIPTED_SPEECH_URL"], os.environ["SCRIPTED_LLM_URL"]
    return AgentSession(
        **options,
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


def build_failing():
    """The LLM plugin fails on every turn at once (the scripted server answers 500; no retry)."""
    once = APIConnectOptions(max_retry=0)
    return Agent(instructions="You are a supportive listener."), _session(
        conn_options=SessionConnectOptions(llm_conn_options=once)
    )


class Assistant(Agent):
    def __init__(self) -> None:
        super().__init__(instructions="You are a supportive listener.")


async def entrypoint(ctx: agents.JobContext):
    await ctx.connect()
    speech, llm = os.environ["SCRIPTED_SPEECH_URL"], os.environ["SCRIPTED_LLM_URL"]
    session: AgentSession = AgentSession(
        turn_handling={"turn_detection": "vad"},
        stt=openai.STT(base_url=speech, api_key="none"),
        llm=openai.LLM(base_url=llm, api_key="none"),
        tts=openai.TTS(base_url=speech, api_key="none"),
        vad=silero.VAD.load(),
    )
    await session.start(room=ctx.room, agent=Assistant())
    await session.generate_reply(instructions="Greet the user and offer your assistance.")


async def entrypoint_idle(ctx: agents.JobContext):
    """Joins the room and starts nothing."""
    await ctx.connect()


if __name__ == "__main__":
    agents.cli.run_app(agents.WorkerOptions(entrypoint_fnc=entrypoint))
