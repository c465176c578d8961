"""Scenarios as asked for (``--scenario NAME[:key=value,...]``, ``--seed N``) and what each turn
draws from them.

Every scenario has settings with defaults; a setting given on the command line replaces its
default. A range is ``LOW-HIGH`` (drawn uniformly), a choice is ``A/B/C`` (drawn with equal
odds), anything else one value::

    --scenario barge-in                       delay_ms 300-1500 after the agent's first audio
    --scenario backchannel:words=uh-huh/yeah  one of the words, 300-1500 ms into the reply
    --scenario pause:pause_ms=800-1000        a pause that long, mid-sentence
    --scenario noise:snr_db=10,kind=pink      pink noise at 10 dB SNR
    --scenario phone-line:loss_pct=1-5        mu-law at 8 kHz, 1-5 % packets lost

With several scenarios each turn gets one of them. What a turn draws depends only on the seed,
the dialogue and the turn (never on which turns ran before or were resumed), so the same seed
gives the same scenario, settings and audio on every run.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal, get_args

import numpy as np

from voicebench.errors import InputError

ScenarioName = Literal["barge-in", "backchannel", "pause", "noise", "phone-line"]
SCENARIO_NAMES: tuple[str, ...] = get_args(ScenarioName)

Value = float | str
Setting = tuple[float, float] | tuple[Value, ...] | Value
"""A range (two floats, low and high), a choice (a tuple of values) or one value."""

DEFAULTS: dict[str, dict[str, Setting]] = {
    "barge-in": {"delay_ms": (300.0, 1500.0)},
    "backchannel": {"words": ("uh-huh", "yeah", "right"), "delay_ms": (300.0, 1500.0)},
    "pause": {"pause_ms": (600.0, 1200.0)},
    "noise": {"kind": ("white", "pink", "babble"), "snr_db": (20.0, 10.0, 5.0)},
    "phone-line": {
        "loss_pct": (1.0, 5.0),
        "burst_packets": 3.0,
        "jitter_ms": 20.0,
        "buffer_ms": 60.0,
    },
}
RANGES = {"delay_ms", "pause_ms", "loss_pct"}
"""Settings whose two values are a range to draw from, not a choice between two."""
NEEDS_REPLY = ("barge-in",)
"""Scenarios that talk over the reply to the turn before (``draw_dialogue``)."""


@dataclass(frozen=True)
class Scenario:
    """One ``--scenario``: a name and its settings (defaults filled in)."""

    name: str
    settings: dict[str, Setting]

    def draw(self, rng: np.random.Generator) -> dict[str, Value]:
        """One turn's values: a number from each range, one of each choice."""
        drawn: dict[str, Value] = {}
        for key, setting in self.settings.items():
            if isinstance(setting, tuple) and key in RANGES:
                low, high = float(setting[0]), float(setting[1])
                drawn[key] = round(float(rng.uniform(low, high)), 3)
            elif isinstance(setting, tuple):
                drawn[key] = setting[int(rng.integers(len(setting)))]
            else:
                drawn[key] = setting
        return drawn


@dataclass(frozen=True)
class TurnScenario:
    """What one turn drew: which scenario, with which values."""

    name: str
    params: dict[str, Value]


def scenario_name(text: str) -> str:
    """The ``NAME`` of a ``--scenario`` option ``NAME[:key=value,...]``."""
    return text.partition(":")[0].strip()


def barges_in(texts: Iterable[str]) -> bool:
    """Whether any of these ``--scenario`` options is a barge-in, which talks over the reply
    to the turn before and so needs that turn played."""
    return any(scenario_name(t) == "barge-in" for t in texts)


def parse_scenario(text: str) -> Scenario:
    """``NAME[:key=value,...]`` as given to ``--scenario``; InputError naming the problem."""
    name = scenario_name(text)
    rest = text.partition(":")[2]
    if name not in DEFAULTS:
        raise InputError(
            f"--scenario: unknown scenario {name!r}; known: {', '.join(SCENARIO_NAMES)}"
        )
    settings = dict(DEFAULTS[name])
    for item in filter(None, (part.strip() for part in rest.split(","))):
        key, eq, raw = item.partition("=")
        key = key.strip()
        if not eq or key not in settings:
            known = ", ".join(settings)
            raise InputError(f"--scenario {name}: {item!r} is not key=value with a key of {known}")
        settings[key] = _parse_value(name, key, raw.strip())
    return Scenario(name, settings)


def _number(name: str, key: str, raw: str) -> float:
    try:
        return float(raw)
    except ValueError:
        raise InputError(f"--scenario {name}: {key}: {raw!r} is not a number") from None


def _parse_value(name: str, key: str, raw: str) -> Setting:
    textual = key in ("kind", "words")
    if "/" in raw:
        parts = [p.strip() for p in raw.split("/") if p.strip()]
        return tuple(parts) if textual else tuple(_number(name, key, p) for p in parts)
    if textual:
        return (raw,)
    low, dash, high = raw.partition("-")
    if dash and low:  # LOW-HIGH; a leading "-" is a negative number
        if key not in RANGES:
            raise InputError(f"--scenario {name}: {key} takes values (A/B/C), not a range")
        a, b = _number(name, key, low), _number(name, key, high)
        if a > b:
            raise InputError(f"--scenario {name}: {key}: the range {raw!r} runs backwards")
        return (a, b)
    return _number(name, key, raw)


def turn_rng(seed: int, dialogue_id: str, turn_index: int) -> np.random.Generator:
    """The generator for one turn's draws: fixed by the seed, the dialogue and the turn."""
    return np.random.default_rng([seed, zlib.crc32(dialogue_id.encode()), turn_index])


def draw_turn(
    scenarios: Sequence[Scenario], seed: int, dialogue_id: str, turn_index: int
) -> TurnScenario | None:
    """The scenario turn ``turn_index`` of ``dialogue_id`` draws, and its values, on its own
    (``draw_dialogue`` then settles where a barge-in can be played)."""
    if not scenarios:
        return None
    rng = turn_rng(seed, dialogue_id, turn_index)
    chosen = scenarios[int(rng.integers(len(scenarios)))]
    return TurnScenario(chosen.name, chosen.draw(rng))


def draw_dialogue(
    scenarios: Sequence[Scenario], seed: int, dialogue_id: str, seeker_turns: Sequence[int]
) -> dict[int, TurnScenario | None]:
    """What each seeker turn of a dialogue plays. A barge-in talks over the reply to the turn
    before, so a dialogue's first seeker turn that draws one plays clean; and a backchannel
    turn followed by a barge-in plays clean (a backchannel needs its reply to run its course,
    to see whether the agent stops for the word; the barge-in needs it cut)."""
    drawn = {k: draw_turn(scenarios, seed, dialogue_id, k) for k in seeker_turns}
    out: dict[int, TurnScenario | None] = {}
    for i, k in enumerate(seeker_turns):
        d = drawn[k]
        following = drawn[seeker_turns[i + 1]] if i + 1 < len(seeker_turns) else None
        if d is not None and d.name in NEEDS_REPLY and i == 0:
            d = None
        elif d is not None and d.name == "backchannel" and following is not None:
            d = None if following.name in NEEDS_REPLY else d
        out[k] = d
    return out
