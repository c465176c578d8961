"""Scenarios: what happens to a call besides a clean turn (noise, a phone line, a caller who
talks over the agent, says "mm-hmm" or pauses mid-sentence)."""

from voicebench.scenarios.signal import (
    NOISE_KINDS,
    LineResult,
    PhoneLine,
    alaw_decode,
    alaw_encode,
    band_limit,
    mix_at_snr,
    mulaw_decode,
    mulaw_encode,
    noise,
    snr_db,
)
from voicebench.scenarios.spec import (
    SCENARIO_NAMES,
    Scenario,
    TurnScenario,
    barges_in,
    draw_dialogue,
    draw_turn,
    parse_scenario,
)

__all__ = [
    "NOISE_KINDS",
    "SCENARIO_NAMES",
    "LineResult",
    "PhoneLine",
    "Scenario",
    "TurnScenario",
    "alaw_decode",
    "alaw_encode",
    "band_limit",
    "barges_in",
    "draw_dialogue",
    "draw_turn",
    "mix_at_snr",
    "mulaw_decode",
    "mulaw_encode",
    "noise",
    "parse_scenario",
    "snr_db",
]
