"""What every voice agent is to voicebench, whichever side of a wire it runs on: the ``Agent``
interface (start, speak one seeker turn, stop) with what goes in (``TurnCue``) and comes back
(``HeardTurn``), and the real-time microphone and loudspeaker clocks (``realtime``) that the
local pipeline, the remote callers and ``voicebench serve`` all play audio through."""

from voicebench.agent.interface import AFTER_ASIDE_S, Agent, AgentFactory, HeardTurn, TurnCue

__all__ = ["AFTER_ASIDE_S", "Agent", "AgentFactory", "HeardTurn", "TurnCue"]
