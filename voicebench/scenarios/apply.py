"""A turn's scenario played on its audio: noise or the phone line on the seeker's speech as the
agent hears it, and the phone line again on the agent's reply as the caller hears it.

The samples keep their times (nothing is delayed or cut), so the true end of the seeker's
speech stays where the fixture manifest puts it. What was measured on the way goes on the
turn record's ``scenario`` (``voicebench.runlog.ScenarioOutcome``).
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from voicebench.scenarios.signal import PhoneLine, mix_at_snr, noise, snr_db
from voicebench.scenarios.spec import TurnScenario

RATE = 16_000
SEEKER_SIDE = ("noise", "phone-line")
"""Scenarios that change what the agent hears."""
OVERLAP = ("barge-in", "backchannel", "pause")
"""Scenarios that change when the caller speaks (``scenarios.overlap``)."""


def spoken_word(word: str) -> str:
    """The text the seeker's voice says for a backchannel word: ``uh-huh`` -> ``Uh huh.``
    (the hyphen spelled as a space, which the packaged voice says as one sound)."""
    return word.replace("-", " ").strip().capitalize() + "."


def backchannel_texts(scenarios: Sequence[Any]) -> list[str]:
    """What the backchannel scenarios among ``scenarios`` (``Scenario``) may say."""
    words: list[str] = []
    for scenario in scenarios:
        if scenario.name == "backchannel":
            setting = scenario.settings["words"]
            words += [str(w) for w in (setting if isinstance(setting, tuple) else (setting,))]
    return [spoken_word(w) for w in dict.fromkeys(words)]


def audio_rng(seed: int, dialogue_id: str, turn_index: int, leg: int) -> np.random.Generator:
    """The noise and losses of one leg (0: the seeker's speech, 1: the agent's reply) of a turn,
    fixed by the seed, the dialogue and the turn."""
    return np.random.default_rng([seed, zlib.crc32(dialogue_id.encode()), turn_index, 1, leg])


def phone_line(params: dict[str, Any]) -> PhoneLine:
    return PhoneLine(
        loss_pct=float(params["loss_pct"]),
        burst_packets=float(params["burst_packets"]),
        jitter_ms=float(params["jitter_ms"]),
        buffer_ms=float(params["buffer_ms"]),
    )


def seeker_audio(
    turn: TurnScenario,
    pcm: np.ndarray,
    rng: np.random.Generator,
    talkers: Callable[[], Sequence[np.ndarray]],
) -> tuple[np.ndarray, dict[str, float]]:
    """The seeker's 16 kHz speech as the agent hears it, and what was measured on it.
    ``talkers`` gives other seeker utterances, for babble."""
    if turn.name == "noise":
        kind = str(turn.params["kind"])
        samples = noise(kind, pcm.size, rng, talkers() if kind == "babble" else ())
        mixed = mix_at_snr(pcm, samples, float(turn.params["snr_db"]))
        return mixed, {"snr_db": round(snr_db(pcm, mixed), 2)}
    if turn.name == "phone-line":
        line = phone_line(turn.params)
        carried = line.carry(pcm, RATE, rng)
        measured = {
            "uplink_loss_pct": round(carried.loss_pct, 2),
            "line_delay_ms": 2 * line.buffer_ms,
        }
        return carried.pcm, measured
    return pcm, {}


def agent_audio(
    turn: TurnScenario, pcm: np.ndarray, rng: np.random.Generator
) -> tuple[np.ndarray, dict[str, float]]:
    """The agent's 16 kHz reply as the caller hears it, and what was measured on it."""
    if turn.name == "phone-line" and pcm.size:
        carried = phone_line(turn.params).carry(pcm, RATE, rng)
        return carried.pcm, {"downlink_loss_pct": round(carried.loss_pct, 2)}
    return pcm, {}
