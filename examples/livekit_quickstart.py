"""LiveKit's voice AI quick-start, as LiveKit writes it, with one change: the OpenAI plugins'
``base_url`` points at local servers (voicebench's speech endpoints on port 8000, a llama.cpp
server on port 8080) instead of OpenAI.

Measured by voicebench, in its own process, with no room and no LiveKit server (its spec,
``livekit-quickstart.toml`` beside this file, starts both servers on those ports; the plugins
read a key from the environment, and the local servers take any)::

    OPENAI_API_KEY=local voicebench run --agent examples/livekit-quickstart.toml --limit 2

In a LiveKit room, as usual (``voicebench serve-speech`` serves the speech endpoints)::

    python livekit_quickstart.py dev
"""

from dotenv import load_dotenv
from livekit import agents
from livekit.agents import Agent, AgentSession
from livekit.plugins import openai, silero

load_dotenv(".env.local")


class Assistant(Agent):
    def __init__(self) -> None:
        super().__init__(instructions="You are a helpful voice AI assistant.")


async def entrypoint(ctx: agents.JobContext):
    await ctx.connect()

    session = AgentSession(
        stt=openai.STT(base_url="http://127.0.0.1:8000/v1"),
        llm=openai.LLM(model="gpt-4o-mini", base_url="http://127.0.0.1:8080/v1"),
        tts=openai.TTS(voice="ash", base_url="http://127.0.0.1:8000/v1"),
        vad=silero.VAD.load(),
    )

    await session.start(room=ctx.room, agent=Assistant())

    await session.generate_reply(instructions="Greet the user and offer your assistance.")


if __name__ == "__main__":
    agents.cli.run_app(agents.WorkerOptions(entrypoint_fnc=entrypoint))
