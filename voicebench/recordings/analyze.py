"""A two-channel call recording timed turn by turn, from its audio alone.

Reading. WAV (PCM or 8 kHz mu-law/A-law, as phone platforms record), FLAC or Opus in Ogg, at any
common rate; each channel is resampled to 16 kHz. One channel is the caller, the other the agent;
which is which is given (``caller="left"`` or ``"right"``). A mono file, or one that is not
audio, is refused in one line naming the file.

Speech. Each channel's speech is found as ``recordings.speech`` says: Silero VAD in frames of 32
ms, the edges then moved on the signal's energy in 10 ms windows and, on a clean line, to the
sample.

Turns. The caller's spans closer than ``PAUSE_S`` are one utterance (a pause within a sentence).
Each utterance is a turn:

- its end of speech is the end of its last span;
- the agent's first audio after it is the start of the first agent span that starts after the
  end of speech, and the response latency is the gap between them;
- when the agent was already talking as the caller began, the caller barged in, and the agent's
  stop time is from the caller's first sound to the end of that talk. The agent's talk is its
  spans with no silence of ``TALK_GAP_S`` inside (a pause between its sentences is part of its
  talk), as the harness reads an agent's talk off what it plays (``agent.realtime``);
- when the agent began while the caller was still talking, the agent talked over the caller;
- talk-over is the time both spoke at once during the turn;
- dead air is the time neither spoke, in silences of ``DEAD_AIR_S`` or more, from the end of
  speech to the caller's next utterance;
- gaps are the silences inside the agent's reply: from its first audio to the end of that talk
  (or the caller's next utterance, if sooner), each a silence of the agent's channel of
  ``MIN_GAP_S`` or more (and shorter than ``TALK_GAP_S``, which would end the talk) while the
  caller was silent too, placed as the spans' edges are (to the sample on a clean line, 10 ms in
  noise: ``speech.talk_silences``).

A gap is what the caller heard, not why: a recording cannot tell a stall (the agent's audio
arrived late, so the line fell silent) from a pause the agent meant (silence it sent). Only the
run that played the reply knows which (``timing.stalls``); here they are gaps, never stalls.

When the caller's channel is not given, ``guess_caller`` guesses it and says why.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np

from voicebench._model import FrozenModel
from voicebench.errors import InputError, MissingFileError
from voicebench.fixtures.audio import resample, to_int16
from voicebench.recordings.speech import (
    RATE,
    TALK_GAP_S,
    Span,
    joined,
    speech_spans,
    talk_silences,
)

PAUSE_S = 0.7
DEAD_AIR_S = 2.0
"""Silence on both channels this long or longer is dead air."""
YIELD_S = 2.0
"""Talk that ends this soon after the other side starts over it was given up to it."""
MIN_GAP_S = 0.3
"""Silence inside the agent's reply this long or longer is a gap. Shorter ones are speech's
own: the pause a TTS voice leaves between sentences (about 0.2 s for the packaged Piper voice)
and the breath between words that the VAD bridges (``speech.JOIN_S``, 0.25 s); 0.5 s
(``TALK_GAP_S``) ends the talk."""

Side = Literal["left", "right"]


@dataclass(frozen=True)
class Recording:
    path: Path
    rate: int
    """The file's own sample rate."""
    caller: np.ndarray
    agent: np.ndarray
    """Each channel at 16 kHz, 16-bit."""

    @property
    def duration_s(self) -> float:
        return self.caller.size / RATE


class Gap(FrozenModel):
    """A silence inside the agent's reply, read off a recording: a stall or a pause the agent
    meant, which a recording cannot tell apart."""

    at_s: float
    """Where it begins, in seconds after the reply's first audio (``RecordedTurn.response_s``)."""
    length_s: float
    """How long the agent's channel was silent, in seconds."""


class RecordedTurn(FrozenModel):
    """One utterance of the caller and what the agent did about it."""

    index: int
    """The utterance's place in the call, from 0."""
    start_s: float
    """The caller's first sound."""
    end_s: float
    """The caller's end of speech."""
    response_s: float | None
    """The agent's first audio after the end of speech (None: it never spoke again)."""
    barge_in: bool
    """The agent was talking when the caller began."""
    stop_s: float | None
    """After a barge-in: the caller's first sound to the end of the agent's talk."""
    agent_talked_over: bool
    """The agent began while the caller was still talking."""
    talk_over_s: float
    """Seconds both spoke at once, from the caller's first sound to its end of speech."""
    dead_air_s: float = 0.0
    """Seconds neither spoke, in silences of ``DEAD_AIR_S`` or more, from the end of speech
    to the caller's next utterance (or the end of the recording)."""
    gaps: tuple[Gap, ...] = ()
    """Each silence of ``MIN_GAP_S`` or more (or the analysis's ``gap_s``) inside the agent's
    reply, both channels silent, from its first audio to the end of its talk or the caller's
    next utterance, in order; none without a reply (and in results saved before gaps were
    read)."""

    @property
    def latency_s(self) -> float | None:
        """End of speech to the agent's first audio after it."""
        return None if self.response_s is None else self.response_s - self.end_s

    @property
    def gap_count(self) -> int:
        return len(self.gaps)

    @property
    def gap_total_s(self) -> float:
        """All the gaps together, in seconds."""
        return round(sum(g.length_s for g in self.gaps), 4)

    @property
    def longest_gap_s(self) -> float:
        """The longest gap in seconds; 0 without one."""
        return max((g.length_s for g in self.gaps), default=0.0)


def check_recording(path: Path) -> None:
    """Refuse a missing, unreadable or mono file, or one at a rate outside 8-48 kHz, naming it,
    from its header alone (before a batch writes anything)."""
    import soundfile

    if not path.is_file():
        raise MissingFileError("recording", path)
    try:
        info = soundfile.info(str(path))
    except (RuntimeError, soundfile.LibsndfileError) as exc:
        raise InputError(f"not a recording that can be read: {exc}", file=path) from None
    if info.channels != 2:
        raise InputError(
            f"has {info.channels} channel(s): a call recording needs two, the caller on one "
            "and the agent on the other",
            file=path,
        )
    if not 8_000 <= info.samplerate <= 48_000:
        raise InputError(
            f"sample rate {info.samplerate} Hz: 8-48 kHz recordings are read", file=path
        )


def read_recording(path: Path, *, caller: Side = "left") -> Recording:
    """Both channels of a call recording at 16 kHz; a missing, unreadable or mono file is bad
    input naming the file."""
    import soundfile

    check_recording(path)
    try:
        data, rate = soundfile.read(str(path), dtype="float32", always_2d=True)
    except (RuntimeError, soundfile.LibsndfileError) as exc:
        raise InputError(f"not a recording that can be read: {exc}", file=path) from None
    left, right = (to_int16(resample(data[:, k].astype(np.float64), rate, RATE)) for k in (0, 1))
    said, heard = (left, right) if caller == "left" else (right, left)
    return Recording(path=path, rate=int(rate), caller=said, agent=heard)


def call_turns(rec: Recording, *, gap_s: float = MIN_GAP_S) -> list[RecordedTurn]:
    """A recording's turns: its channels' speech, each by its own rule, read as turns, with the
    gaps of ``gap_s`` or more inside the agent's replies."""
    heard = speech_spans(rec.agent, agent=True)
    return recorded_turns(
        speech_spans(rec.caller), heard, rec.duration_s, talk_silences(rec.agent, heard, gap_s)
    )


def _overlap(a: Span, b: Span) -> float:
    return max(0.0, min(a.end_s, b.end_s) - max(a.start_s, b.start_s))


def _dead_air(caller: list[Span], agent: list[Span], start_s: float, end_s: float) -> float:
    """Seconds in ``[start_s, end_s)`` that neither channel spoke, in silences of
    ``DEAD_AIR_S`` or more."""
    spoken = sorted(
        (s for s in (*caller, *agent) if s.end_s > start_s and s.start_s < end_s),
        key=lambda s: s.start_s,
    )
    quiet, at = 0.0, start_s
    for s in spoken:
        if s.start_s - at >= DEAD_AIR_S:
            quiet += s.start_s - at
        at = max(at, s.end_s)
    if end_s - at >= DEAD_AIR_S:
        quiet += end_s - at
    return round(quiet, 3)


def _gaps(
    silences: Sequence[Span], caller: list[Span], talks: list[Span], start_s: float, end_s: float
) -> tuple[Gap, ...]:
    """The ``silences`` inside the reply whose first audio is at ``start_s``, up to the end of
    its talk or ``end_s``, whichever is sooner, during which the caller was silent too."""
    talk = next((t for t in talks if t.start_s <= start_s < t.end_s), None)
    until = end_s if talk is None else min(end_s, talk.end_s)
    return tuple(
        Gap(at_s=round(s.start_s - start_s, 4), length_s=round(s.end_s - s.start_s, 4))
        for s in silences
        if start_s < s.start_s and s.end_s <= until and not any(_overlap(s, c) for c in caller)
    )


def recorded_turns(
    caller: list[Span],
    agent: list[Span],
    duration_s: float | None = None,
    silences: Sequence[Span] = (),
) -> list[RecordedTurn]:
    """The caller's utterances as turns, each with what the agent did (module docstring);
    ``duration_s``, the recording's length, bounds the last turn's dead air; ``silences``, the
    agent's inside its talks (``speech.talk_silences``), are each reply's gaps."""
    turns = []
    talks = joined(agent, TALK_GAP_S)
    said = joined(caller, PAUSE_S)
    for k, u in enumerate(said):
        until = said[k + 1].start_s if k + 1 < len(said) else duration_s or u.end_s
        talking = next((a for a in talks if a.start_s < u.start_s < a.end_s), None)
        response = next((a.start_s for a in agent if a.start_s >= u.end_s), None)
        turns.append(
            RecordedTurn(
                index=k,
                start_s=u.start_s,
                end_s=u.end_s,
                response_s=response,
                barge_in=talking is not None,
                stop_s=None if talking is None else round(talking.end_s - u.start_s, 3),
                agent_talked_over=any(u.start_s < a.start_s < u.end_s for a in agent),
                talk_over_s=round(sum(_overlap(u, a) for a in agent), 3),
                dead_air_s=_dead_air(caller, agent, u.end_s, until),
                gaps=() if response is None else _gaps(silences, caller, talks, response, until),
            )
        )
    return turns


def guess_caller(left: list[Span], right: list[Span]) -> tuple[Side, str]:
    """Which channel is the caller's, from the speech alone, and why. An agent stops when it
    is talked over and a caller seldom does: the channel that more often fell silent within
    ``YIELD_S`` of the other starting over it is the agent's. Without such moments, the channel
    that spoke first is the agent's (it answers the call with a greeting), unless the other
    began before it had finished. Failing both, the left (where phone platforms record the
    inbound leg)."""
    yields = {
        side: sum(
            any(t.start_s < o.start_s < t.end_s <= o.start_s + YIELD_S for o in other)
            for t in joined(mine, TALK_GAP_S)
        )
        for side, mine, other in (("left", left, right), ("right", right, left))
    }
    if yields["left"] != yields["right"]:
        agent = max(yields, key=lambda k: yields[k])
        caller: Side = "right" if agent == "left" else "left"
        return caller, (
            f"guessed: the {agent} channel stopped when talked over {yields[agent]} time(s), "
            f"the {caller} {yields[caller]}, as an agent does"
        )
    if left and right:
        first, second = (left, right) if left[0].start_s <= right[0].start_s else (right, left)
        side = "left" if first is left else "right"
        if second[0].start_s >= first[0].end_s:
            caller = "right" if side == "left" else "left"
            return caller, f"guessed: the {side} channel spoke first, as an agent answering does"
    return "left", "guessed: nothing told the channels apart; the left, as phone platforms record"
