"""A LiveKit voice agent, written as LiveKit's quick-start writes one, that runs offline: its
speech to text, LLM and text to speech are LiveKit's own OpenAI plugins pointed at local
servers, and LiveKit's Silero VAD finds the turns.

In a LiveKit room (copy this file into your project)::

    python livekit_agent.py dev                  # LiveKit's worker, as usual

Measured by voicebench, in its own process, with no room and no LiveKit server::

    voicebench run --agent livekit-example --limit 6

``livekit-example.toml``, beside this file, names ``build`` as the entrypoint and asks
voicebench to start the local servers first: faster-whisper and Piper behind OpenAI's audio
API (``VOICEBENCH_SPEECH_URL``; ``voicebench serve-speech`` runs the same by hand) and SmolLM2
on llama.cpp (``VOICEBENCH_LLM_URL``). Point the URLs at your own servers, or swap in any other
plugin: voicebench measures whatever ``build`` returns.
"""

from __future__ import annotations

import os

from livekit.agents import Agent, AgentSession, JobContext, WorkerOptions, cli
from livekit.plugins import openai, silero


class Listener(Agent):
    def __init__(self) -> None:
        super().__init__(
            instructions=(
                "You are a warm, patient listener on a phone call with someone who is having a "
                "hard time. Answer in one or two short spoken sentences: say back what you "
                "heard them feel, then ask one gentle question. No lists, no advice they did "
                "not ask for."
            )
        )


def build() -> tuple[Agent, AgentSession[None]]:
    """The agent and its session: what voicebench runs, and what the worker below starts."""
    speech_url = os.environ.get("VOICEBENCH_SPEECH_URL", "http://127.0.0.1:8000/v1")
    llm_url = os.environ.get("VOICEBENCH_LLM_URL", "http://127.0.0.1:8080/v1")
    session: AgentSession[None] = AgentSession(
        vad=silero.VAD.load(),
        stt=openai.STT(base_url=speech_url, api_key="local", model="whisper-1", language="en"),
        llm=openai.LLM(base_url=llm_url, api_key="local", model="smollm2-135m", temperature=0.0),
        tts=openai.TTS(
            base_url=speech_url,
            api_key="local",
            model="tts-1",
            voice="alloy",
            response_format="pcm",
        ),
    )
    return Listener(), session


async def entrypoint(ctx: JobContext) -> None:
    agent, session = build()
    await session.start(agent=agent, room=ctx.room)
    await ctx.connect()


if __name__ == "__main__":
    cli.run_app(WorkerOptions(entrypoint_fnc=entrypoint))
