"""Two-channel call recordings timed from their audio alone, against a known truth: real speech
(Piper) placed on each channel at set times, read back as a 16 kHz WAV, a phone platform's
8 kHz mu-law WAV, Opus, and with noise; and bad files refused naming the file."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from known_calls import RATE, known_call, with_noise, write

from voicebench.errors import InputError, MissingFileError
from voicebench.recordings import FRAME_S, call_turns, read_recording
from voicebench.recordings.folder import analyze_recordings
from voicebench.recordings.importing import import_recordings

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
