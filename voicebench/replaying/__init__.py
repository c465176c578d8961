"""Replay: dialogues spoken to a voice agent in real time, every turn timed.

Every agent implements one interface (``voicebench.agent.Agent``: start, speak a turn, stop):
the local pipecat pipeline (``voicebench.pipeline``) and the remote callers
(``voicebench.remote``). One turn loop (``play_dialogue``) speaks to any of them and yields a
``TurnRecord`` per turn; a run (``replay``), each call of a load and every campaign cell go
through it.
"""

from voicebench.agent.interface import Agent, AgentFactory, HeardTurn, TurnCue
from voicebench.replaying.play import play_dialogue, turn_history
from voicebench.replaying.run import (
    RunProgress,
    demo_items,
    plan_turns,
    replay,
    run_replay,
    select_dialogues,
)
from voicebench.replaying.speak import SpokenTurn, drawn_scenario, hand_over_ms, speak_turn

__all__ = [
    "Agent",
    "AgentFactory",
    "HeardTurn",
    "RunProgress",
    "SpokenTurn",
    "TurnCue",
    "demo_items",
    "drawn_scenario",
    "hand_over_ms",
    "plan_turns",
    "play_dialogue",
    "replay",
    "run_replay",
    "select_dialogues",
    "speak_turn",
    "turn_history",
]
