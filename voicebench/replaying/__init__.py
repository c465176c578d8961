"""Replay: dialogues spoken through a real pipecat voice pipeline, every turn timed."""

from voicebench.replaying.run import (
    RunProgress,
    demo_items,
    plan_turns,
    replay,
    run_replay,
    select_dialogues,
)
from voicebench.replaying.speak import drawn_scenario, hand_over_ms, speak_turn

__all__ = [
    "RunProgress",
    "demo_items",
    "drawn_scenario",
    "hand_over_ms",
    "plan_turns",
    "replay",
    "run_replay",
    "select_dialogues",
    "speak_turn",
]
