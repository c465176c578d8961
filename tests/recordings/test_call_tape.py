"""A call's recording laid from its turns: each stretch of the agent's audio and each caller
utterance at the sample its clock reading gives, a later run's turns after a gap on their own
clock, and nothing written for a turn that never reached the clock; the file says which channel
is the caller's, so an analysis need not guess."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
import soundfile
from known_calls import AGENT_LINES, CALLER_LINES, speech

from voicebench.agent.interface import HeardTurn
from voicebench.recordings.calls import (
    CALLER_COMMENT,
    GAP_S,
    LEAD_S,
    CallTape,
    call_name,
    written_caller,
)
from voicebench.recordings.folder import analyze_recordings, hear_call

S = 1_000_000_000
RATE = 16_000


def tone(n: int, value: int) -> np.ndarray:
    return np.full(n, value, np.int16)


def heard(audio, placed, before=(), ended_ns=0) -> HeardTurn:
    return HeardTurn(0, (), audio, False, placed=placed, before=before, ended_ns=ended_ns)


def stereo(path: Path) -> np.ndarray:
    data, rate = soundfile.read(str(path), dtype="int16", always_2d=True)
    assert rate == RATE and data.shape[1] == 2
    return data


def test_each_stretch_lies_where_its_clock_reading_says(tmp_path: Path):
    tape = CallTape(tmp_path, call_name("d1"))
    tape.begin()
    t0 = 100 * S  # the caller's first sample, on the agent's clock
    # the reply played in two stretches, a gap between them (TTS fell behind)
    reply = np.concatenate([tone(800, 1000), tone(400, 2000)])
    ref = tape.add(
        [(t0, tone(1600, 500))],
        heard(reply, ((0, t0 + 2 * S), (800, t0 + 3 * S)), ended_ns=t0 + 4 * S),
    )
    assert ref is not None and ref.path == "calls/d1.wav"
    assert ref.sample(t0) == int(LEAD_S * RATE)
    data = stereo(tmp_path / "calls" / "d1.wav")
    caller, agent = data[:, 0], data[:, 1]
    at = ref.sample
    assert np.all(caller[at(t0) : at(t0) + 1600] == 500) and caller[at(t0) - 1] == 0
    assert np.all(agent[at(t0 + 2 * S) : at(t0 + 2 * S) + 800] == 1000)
    assert np.all(agent[at(t0 + 2 * S) + 800 : at(t0 + 3 * S)] == 0)  # the gap kept
    assert np.all(agent[at(t0 + 3 * S) : at(t0 + 3 * S) + 400] == 2000)
    assert data.shape[0] == at(t0 + 4 * S)  # runs on to the turn's end

    # a barge-in: the talk said over played before the reply, and is laid down too
    t1 = t0 + 5 * S
    tape.add(
        [(t1, tone(800, 600))],
        heard(tone(160, 3000), ((0, t1 + S),), before=((t1 - S // 10, tone(3200, 4000)),)),
    )
    agent = stereo(tmp_path / "calls" / "d1.wav")[:, 1]
    assert np.all(agent[at(t1 - S // 10) : at(t1 - S // 10) + 3200] == 4000)
    assert np.all(agent[at(t1 + S) : at(t1 + S) + 160] == 3000)
    # a turn that failed before it was said adds nothing
    assert tape.add([(0, tone(10, 1))], heard(np.zeros(0, np.int16), ())) is None


def test_a_resumed_call_goes_on_after_a_gap_on_its_own_clock(tmp_path: Path):
    first = CallTape(tmp_path, call_name("d1", repeat=2))
    first.add([(50 * S, tone(1600, 500))], heard(tone(160, 900), ((0, 51 * S),)))
    name = tmp_path / "calls" / "d1__r2.wav"
    before = stereo(name)
    # a later run (a new agent, a new clock) resumes the dialogue
    later = CallTape(tmp_path, call_name("d1", repeat=2))
    ref = later.add([(7 * S, tone(800, 700))], heard(tone(160, 800), ((0, 8 * S),)))
    assert ref is not None
    data = stereo(name)
    assert np.array_equal(data[: before.shape[0]], before)  # what it held is kept
    assert ref.sample(7 * S) == before.shape[0] + int(GAP_S * RATE)
    assert data[ref.sample(7 * S), 0] == 700 and data[ref.sample(8 * S), 1] == 800
    # a call redone whole starts again; a deferred one is written when flushed
    again = CallTape(tmp_path, call_name("d1", repeat=2), fresh=True, deferred=True)
    assert not name.exists()
    again.add([(S, tone(100, 1))], heard(tone(100, 2), ((0, 2 * S),)))
    assert not name.exists()
    again.flush()
    assert stereo(name).shape[0] == again.audio.shape[0]


def test_a_call_says_its_caller_is_on_the_left_so_auto_does_not_guess(tmp_path: Path):
    # the caller speaks first and the agent talks on, never talked over: a guess takes the
    # first speaker for an agent answering the call, and calls the left the agent
    tape = CallTape(tmp_path, call_name("d1"))
    t, talks = 100 * S, []
    for said, reply in zip(CALLER_LINES[:2], AGENT_LINES[:2], strict=True):
        pcm = speech(said)
        end = t + pcm.size * S // RATE
        answer = np.concatenate([speech(reply), np.zeros(RATE, np.int16), speech(AGENT_LINES[2])])
        tape.add([(t, pcm)], heard(answer, ((0, end + 6 * S // 10),), ended_ns=end + 9 * S))
        talks.append(answer.size / RATE)
        t = end + 10 * S
    assert written_caller(tape.path) == "left"
    copied = shutil.copy(tape.path, tmp_path / "copied.wav")  # the file alone says it
    call = hear_call(Path(copied), "d1", "auto", lambda pcm: "").call
    assert call.caller == "left" and call.caller_source == "recording"
    assert call.caller_guess is None
    assert [t.latency_s for t in call.turns] == [pytest.approx(0.6, abs=1e-3)] * 2
    # the silence after the first answer, to the caller's next utterance 10 s after its end
    assert call.turns[0].dead_air_s == pytest.approx(10 - 0.6 - talks[0], abs=1e-3)
    # an analysis's own copy of a call (the caller on the left) says so too; a recording
    # voicebench did not write is still guessed
    analyze_recordings([Path(copied)], tmp_path / "out", transcribe=lambda pcm: "")
    assert written_caller(tmp_path / "out" / "calls" / "copied.wav") == "left"
    flac = tmp_path / "converted.flac"  # the comment carried over to another format
    with soundfile.SoundFile(str(flac), "w", RATE, 2, format="FLAC") as f:
        f.comment = CALLER_COMMENT
        f.write(stereo(tape.path))
    assert written_caller(flac) == "left"
    plain = tmp_path / "plain.wav"
    soundfile.write(str(plain), stereo(tape.path), RATE)
    assert written_caller(plain) is None
    guessed = hear_call(plain, "d1", "auto", lambda pcm: "").call
    assert guessed.caller_source == "guessed" and guessed.caller_guess
