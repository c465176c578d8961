"""The OpenAI-compatible speech endpoints (faster-whisper and Piper), called with OpenAI's own
SDK as any agent would call them: what one speaks, the other hears."""

from __future__ import annotations

import io
import wave

import numpy as np
import openai
import pytest

from voicebench.pipeline.speech_api import OUT_RATE, SpeechServer
from voicebench.text import wer

pytestmark = pytest.mark.slow

SAID = "It has been a long week, and I just need someone to listen."


def test_what_the_speech_endpoint_says_the_transcription_endpoint_hears():
    with SpeechServer() as server:
        client = openai.OpenAI(base_url=server.base_url, api_key="local")
        pcm = client.audio.speech.create(
            model="tts-1", voice="alloy", input=SAID, response_format="pcm"
        ).content
        samples = np.frombuffer(pcm, dtype="<i2")
        assert 2.0 < samples.size / OUT_RATE < 8.0  # about 3 s of speech at 24 kHz
        assert np.abs(samples).max() > 3000
        wav = client.audio.speech.create(
            model="tts-1", voice="alloy", input=SAID, response_format="wav"
        ).content
        assert wav[:4] == b"RIFF" and wav[8:12] == b"WAVE"

        buffer = io.BytesIO()
        with wave.open(buffer, "wb") as w:
            w.setnchannels(1)
            w.setsampwidth(2)
            w.setframerate(OUT_RATE)
            w.writeframes(pcm)
        heard = client.audio.transcriptions.create(
            model="whisper-1", file=("said.wav", buffer.getvalue(), "audio/wav")
        ).text
        assert wer(SAID, heard) < 0.2, heard

        with pytest.raises(openai.BadRequestError, match="mp3, opus, aac, flac, wav or pcm"):
            client.audio.speech.create(
                model="tts-1",
                voice="alloy",
                input=SAID,
                response_format="ogg",  # type: ignore[arg-type]
            )
        with pytest.raises(openai.BadRequestError, match="not audio this server reads"):
            client.audio.transcriptions.create(
                model="whisper-1", file=("notes.txt", b"not a sound", "text/plain")
            )
