"""A turn's scenario on both sides of the line, apart from the turn itself: what the agent
hears (the caller's speech through noise or a phone line, a pause inside it, a backchannel
said while the agent answers) and what the caller hears back (the reply through the line),
with what the scenario did measured (``voicebench.scenarios``)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import numpy as np

from voicebench.agent.interface import HeardTurn, TurnCue
from voicebench.fixtures import FixtureEntry
from voicebench.runlog import ScenarioOutcome
from voicebench.scenarios import TurnScenario
from voicebench.scenarios.apply import agent_audio, seeker_audio, spoken_word
from voicebench.scenarios.overlap import (
    backchannel_outcome,
    barge_in_outcome,
    insert_pause,
    pause_outcome,
)
from voicebench.timing import EventKind

RATE = 16_000
NS_PER_S = 1_000_000_000


@dataclasses.dataclass(frozen=True)
class Said:
    """The caller's side of a turn: the utterance as the agent is to hear it, where its speech
    ends, the cue (a backchannel, with its moment), and what shaping it measured."""

    pcm: np.ndarray
    speech_end_sample: int
    speech_start_sample: int
    cue: TurnCue
    word_lead: int = 0
    """A backchannel's samples before its first sound."""
    measured: dict[str, float] = dataclasses.field(default_factory=dict)


def shape_said(
    scenario: TurnScenario | None,
    pcm: np.ndarray,
    entry: FixtureEntry,
    cue: TurnCue,
    *,
    word: Callable[[str], tuple[np.ndarray, FixtureEntry]],
    others: Callable[[], list[np.ndarray]],
    rng: np.random.Generator,
) -> Said:
    """The utterance ``pcm`` (its manifest ``entry``) through ``scenario``: ``word`` gives a
    backchannel's fixture, ``others`` every other utterance (babble is made of them)."""
    said = Said(pcm, entry.speech_end_sample, entry.speech_start_sample, cue)
    if scenario is None:
        return said
    if scenario.name == "pause":
        paused, _ = insert_pause(pcm, float(scenario.params["pause_ms"]))
        end = entry.speech_end_sample + paused.size - entry.num_samples
        return dataclasses.replace(said, pcm=paused, speech_end_sample=end)
    if scenario.name == "backchannel":
        aside, word_entry = word(spoken_word(str(scenario.params["words"])))
        lead = word_entry.speech_start_sample
        delay_ms = float(scenario.params["delay_ms"]) - lead * 1000 / RATE
        shaped = dataclasses.replace(cue, aside=aside, aside_ms=delay_ms)
        return dataclasses.replace(said, cue=shaped, word_lead=lead)
    degraded, measured = seeker_audio(scenario, pcm, rng, others)
    return dataclasses.replace(said, pcm=degraded, measured=measured)


def shape_heard(
    scenario: TurnScenario,
    said: Said,
    heard: HeardTurn,
    *,
    answered: bool,
    rng: np.random.Generator,
) -> tuple[HeardTurn, ScenarioOutcome]:
    """The turn as the caller heard it back through ``scenario``, and what the scenario did
    (``answered``: the turn has no error)."""
    audio, down = agent_audio(scenario, heard.audio, rng)
    heard = dataclasses.replace(heard, audio=audio)
    measured = {**said.measured, **down, **_overlap(scenario, said, heard)}
    if scenario.name == "barge-in" and measured.get("agent_speaking"):
        measured["answered"] = answered
    return heard, ScenarioOutcome(name=scenario.name, params=scenario.params, **measured)


def _overlap(scenario: TurnScenario, said: Said, heard: HeardTurn) -> dict:
    """What a barge-in, backchannel or pause did, read off the agent's audible spans."""
    cuts = (
        None if heard.black_box else [e.ns for e in heard.events if e.kind is EventKind.AUDIO_CUT]
    )
    speech_start_ns = heard.start_ns + said.speech_start_sample * NS_PER_S // RATE
    if scenario.name == "barge-in":
        return barge_in_outcome(heard.played, cuts, speech_start_ns, heard.speech_end_ns)
    if scenario.name == "backchannel":
        if heard.aside_ns is None:  # the reply ended before the word was due
            return {"agent_speaking": False}
        word_ns = heard.aside_ns + said.word_lead * NS_PER_S // RATE
        return backchannel_outcome(heard.played, cuts, word_ns, heard.ended_ns)
    if scenario.name == "pause":
        return pause_outcome(heard.played, speech_start_ns, heard.speech_end_ns)
    return {}
