"""Whisper on a window fitted to the speech: the same words as the 30 s window on fixture
speech, nothing for silence, and a runaway decode redone on the full window."""

from __future__ import annotations

import numpy as np
import pytest
import soundfile as sf

from voicebench.agentspec import STTSpec
from voicebench.fixtures import BUILTIN_FIXTURES
from voicebench.fixtures.manifest import load_manifest
from voicebench.pipeline import stt
from voicebench.text import word_errors


@pytest.fixture(scope="module")
def model():
    return stt.load_whisper(STTSpec())


@pytest.fixture(scope="module")
def clips():
    entries = load_manifest(BUILTIN_FIXTURES).entries[:3]
    out = []
    for e in entries:
        pcm, _ = sf.read(BUILTIN_FIXTURES / e.path, dtype="int16")
        out.append((e.text, pcm[: e.speech_end_sample + 1600]))
    return out


def test_fitted_window_hears_what_the_full_window_hears(model, clips):
    for text, pcm in clips:
        fitted = stt.transcribe_pcm(model, pcm, window="speech")
        full = stt.transcribe_pcm(model, pcm, window="full")
        assert fitted, text
        errors, words = word_errors(text, fitted)
        assert errors <= max(1, word_errors(text, full)[0]), (text, fitted, full)
        assert words == len(text.split())


def test_silence_is_not_speech(model):
    assert stt.transcribe_pcm(model, np.zeros(stt.SAMPLE_RATE, np.int16)) == ""


def test_a_decode_without_room_to_finish_falls_back_to_the_full_window(model, clips, monkeypatch):
    text, pcm = clips[0]
    calls = []
    real = stt._transcribe_fitted

    def spy(*args, **kwargs):
        calls.append(result := real(*args, **kwargs))
        return result

    monkeypatch.setattr(stt, "_transcribe_fitted", spy)
    monkeypatch.setattr(stt, "TOKENS_PER_S", 0)  # 16 tokens: too few for this utterance
    heard = stt.transcribe_pcm(model, pcm)
    assert calls == [None]
    assert heard == stt.transcribe_pcm(model, pcm, window="full")
    assert word_errors(text, heard)[0] <= 2


def test_audio_longer_than_the_window_goes_to_the_full_window(model, clips, monkeypatch):
    called = []
    monkeypatch.setattr(stt, "_transcribe_fitted", lambda *a, **k: called.append(1))
    long = np.concatenate([clips[0][1]] * 6)  # over 30 s
    assert len(long) / stt.SAMPLE_RATE > stt.WINDOW_S
    assert stt.transcribe_pcm(model, long)
    assert called == []
