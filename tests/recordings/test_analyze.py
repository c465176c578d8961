"""Two-channel call recordings timed from their audio alone, against a known truth: real speech
(Piper) placed on each channel at set times, read back as a 16 kHz WAV, a phone platform's
8 kHz mu-law WAV, Opus, and with noise; and bad files refused naming the file."""

from __future__ import annotations

from itertools import pairwise
from pathlib import Path

import numpy as np
import pytest
from known_calls import (
    AGENT_LINES,
    CALLER_LINES,
    RATE,
    KnownCall,
    gapped_call,
    known_call,
    speech,
    with_noise,
    write,
)

from voicebench.errors import InputError, MissingFileError
from voicebench.fixtures.audio import speech_bounds
from voicebench.recordings import (
    FRAME_S,
    RecordedTurn,
    call_turns,
    read_recording,
    speech_spans,
)
from voicebench.recordings.folder import analyze_recordings, hear_call
from voicebench.recordings.importing import import_recordings
from voicebench.text import wer

CALL = known_call(latencies_s=(0.6, 1.2), barge_after_s=1.0, stop_s=0.4)


def _turns(path: Path, caller: str = "left"):
    return call_turns(read_recording(path, caller=caller))


def _check(turns, within_s: float) -> None:
    assert len(turns) == len(CALL.truth)
    for got, truth in zip(turns, CALL.truth, strict=True):
        assert got.end_s == pytest.approx(truth["end_s"], abs=within_s)
        assert got.barge_in is truth["barge_in"]
        if truth["response_s"] is None:
            assert got.response_s is None
        else:
            assert got.response_s == pytest.approx(truth["response_s"], abs=FRAME_S)
        if truth["barge_in"]:
            assert got.stop_s == pytest.approx(truth["stop_s"], abs=within_s)
            assert got.talk_over_s > 0
        else:
            assert got.talk_over_s == 0 and not got.agent_talked_over
    # the latencies as set: 0.6 s and 1.2 s from the end of speech to the first answer
    assert [round(t.latency_s, 1) for t in turns[:2]] == [0.6, 1.2]


@pytest.mark.parametrize(
    ("name", "rate", "subtype"),
    [
        ("call.wav", 16_000, "PCM_16"),
        ("twilio.wav", 8_000, "ULAW"),  # as a phone platform records both legs
        ("call.ogg", 16_000, "OPUS"),
        ("call.flac", 44_100, "PCM_16"),
    ],
)
def test_a_recording_is_timed_within_one_vad_frame(tmp_path: Path, name, rate, subtype):
    path = write(tmp_path / name, CALL.stereo(), rate, subtype)
    _check(_turns(path), within_s=FRAME_S)


def test_in_noise_within_two_frames_and_either_channel_may_be_the_caller(tmp_path: Path):
    stereo = CALL.stereo()
    noisy = np.stack([with_noise(stereo[:, 0], 15.0), with_noise(stereo[:, 1], 15.0, 1)], 1)
    _check(_turns(write(tmp_path / "noisy.wav", noisy)), within_s=2 * FRAME_S)
    swapped = write(tmp_path / "swapped.wav", stereo[:, ::-1].copy())
    _check(_turns(swapped, caller="right"), within_s=FRAME_S)


def _paused(path: Path) -> tuple[Path, float, float]:
    """A call whose caller says three lines with pauses the VAD splits (over ``JOIN_S``) but
    the sample rule bridges (under ``TALK_GAP_S``), so each span is stretched over the next,
    and is answered in two lines 0.6 s after; with where the caller's speech starts and ends."""
    call = KnownCall()
    first = call.place("caller", speech(CALLER_LINES[0]), 0.5)
    second = call.place("caller", speech(CALLER_LINES[1]), first[1] + 0.35)
    third = call.place("caller", speech(CALLER_LINES[2]), second[1] + 0.4)
    reply = call.place("agent", speech(AGENT_LINES[0]), third[1] + 0.6)
    call.place("agent", speech(AGENT_LINES[1]), reply[1] + 0.3)
    return write(path, call.stereo()), first[0], third[1]


def test_an_utterance_with_short_pauses_is_one_span_and_heard_once(tmp_path: Path):
    path, start_s, end_s = _paused(tmp_path / "call.wav")
    rec = read_recording(path)
    said, answered = speech_spans(rec.caller), speech_spans(rec.agent, agent=True)
    for spans in (said, answered):
        assert all(a.end_s < b.start_s for a, b in pairwise(spans))
    assert [(s.start_s, s.end_s) for s in said] == [pytest.approx((start_s, end_s), abs=1 / RATE)]
    # each stretch of each channel transcribed once: the caller's words are its utterance's
    heard: list[int] = []

    def transcribe(pcm) -> str:
        heard.append(pcm.size)
        return f"clip{len(heard)}"

    got = hear_call(path, "call", "left", transcribe).call
    (turn,) = got.turns
    assert got.said == ("clip1",) and got.replies == ("clip2",)
    assert heard[0] == pytest.approx((end_s - start_s) * RATE, abs=2)
    assert turn.end_s == pytest.approx(end_s, abs=1 / RATE)
    assert turn.latency_s == pytest.approx(0.6, abs=1 / RATE) and turn.talk_over_s == 0


def test_an_utterance_of_several_spans_ends_by_the_rule_of_the_whole(tmp_path: Path):
    # a quiet sentence, then a loud one with a faint tail: under a fiftieth of the whole
    # utterance's peak (not speech, by the fixtures' rule), over the quiet sentence's
    call = KnownCall()
    said = call.place("caller", (speech(CALLER_LINES[0]) * 0.2).astype(np.int16), 0.5)
    loud = speech(CALLER_LINES[1])
    faint = 0.012 * np.abs(loud.astype(np.int32)).max()
    tail = (faint * np.sin(np.arange(640) * 2 * np.pi * 200 / RATE)).astype(np.int16)
    call.place("caller", np.concatenate([loud, tail]), said[1] + 0.35)
    for name, rate, subtype in (("call.wav", RATE, "PCM_16"), ("twilio.wav", 8_000, "ULAW")):
        caller = read_recording(write(tmp_path / name, call.stereo(), rate, subtype)).caller
        start, end = speech_bounds(caller)
        (span,) = speech_spans(caller)
        assert (span.start_s, span.end_s) == pytest.approx((start / RATE, end / RATE), abs=1e-4)


@pytest.mark.parametrize(
    ("rate", "subtype", "snr_db", "within_s"),
    [
        (RATE, "PCM_16", None, 1 / RATE),  # to the sample on a clean line
        (8_000, "ULAW", None, FRAME_S),
        # on 10 ms windows in noise; at 15 dB the 0.21 s pause between two of the reply's
        # sentences reads 0.3 s (its words' soft edges under the noise), a gap
        (RATE, "PCM_16", 20.0, 2 * FRAME_S),
    ],
)
def test_a_silence_inside_the_agents_reply_is_a_gap_and_a_breath_is_not(
    tmp_path: Path, rate, subtype, snr_db, within_s
):
    call, gap_at_s, breath_at_s = gapped_call()
    stereo = call.stereo()
    if snr_db is not None:
        stereo = np.stack([with_noise(stereo[:, k], snr_db, k) for k in (0, 1)], 1)
    path = write(tmp_path / "call.wav", stereo, rate, subtype)
    answered, plain = _turns(path)
    (gap,) = answered.gaps
    assert gap.at_s == pytest.approx(gap_at_s, abs=within_s)
    assert gap.length_s == pytest.approx(0.4, abs=within_s)
    assert answered.gap_count == 1
    assert answered.gap_total_s == answered.longest_gap_s == gap.length_s
    assert plain.gaps == () and plain.gap_count == 0 and plain.longest_gap_s == 0.0
    if snr_db is None:
        # a lower bar finds the breath as well, where it is
        finer = call_turns(read_recording(path), gap_s=0.08)[0].gaps
        (breath,) = [g for g in finer if g.at_s == pytest.approx(breath_at_s, abs=FRAME_S)]
        assert breath.length_s == pytest.approx(0.1, abs=FRAME_S)
        assert gap in finer


def test_a_turn_saved_before_gaps_were_read_loads_without_any():
    saved = {
        "index": 0,
        "start_s": 0.5,
        "end_s": 2.8,
        "response_s": 3.4,
        "barge_in": False,
        "stop_s": None,
        "agent_talked_over": False,
        "talk_over_s": 0.0,
        "dead_air_s": 0.0,
    }
    turn = RecordedTurn.model_validate(saved)
    assert turn.gaps == () and turn.gap_count == 0 and turn.gap_total_s == 0.0


@pytest.mark.slow
def test_what_was_said_in_pauses_is_transcribed_once(tmp_path: Path):
    from voicebench.pipeline.stt import Transcriber

    path, _, _ = _paused(tmp_path / "call.wav")
    got = hear_call(path, "call", "left", Transcriber()).call
    # each line once, as Whisper tiny.en hears it (it had been each line three times)
    assert wer(" ".join(CALLER_LINES), got.said[0]) <= 0.1
    assert wer(" ".join(AGENT_LINES[:2]), got.replies[0]) <= 0.1


def test_bad_files_are_refused_naming_the_file(tmp_path: Path):
    import soundfile

    mono = tmp_path / "mono.wav"
    soundfile.write(str(mono), np.zeros(RATE), RATE)
    with pytest.raises(InputError, match="1 channel") as raised:
        read_recording(mono)
    assert raised.value.file == str(mono)
    text = tmp_path / "notes.wav"
    text.write_text("not audio")
    with pytest.raises(InputError, match="not a recording that can be read"):
        read_recording(text)
    with pytest.raises(MissingFileError):
        read_recording(tmp_path / "gone.wav")
    # in a batch, a bad file is refused before anything is written, by either command
    good = write(tmp_path / "good.wav", CALL.stereo())
    for command in (analyze_recordings, import_recordings):
        with pytest.raises(InputError, match="1 channel"):
            command([good, mono], tmp_path / "out", transcribe=lambda _pcm: "")
        assert not (tmp_path / "out").exists()
