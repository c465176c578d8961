"""LiveKit Agents agents (``[livekit]`` specs) run in this process, no room and no server:
the session's audio input and output are voicebench's microphone and loudspeaker
(``io``), and the agent is driven one spoken turn at a time (``agent``)."""
