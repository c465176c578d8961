"""The speech endpoint answers in every format OpenAI's does, each decoding back to what was
synthesized: the scripted voice's tone (``WORD_S`` a word of 220 Hz at 24 kHz), asked for with
OpenAI's own SDK, served on 127.0.0.1, decoded by FFmpeg through PyAV."""

from __future__ import annotations

import io
from typing import Literal

import av
import numpy as np
import openai
import pytest
from aiohttp import web

from voicebench.pipeline.speech_api import OUT_RATE, build_app
from voicebench.testing.scripted_speech import WORD_S, ScriptedModels

SAID = "one two three four five six seven eight nine ten"
SECONDS = len(SAID.split()) * WORD_S
Format = Literal["mp3", "opus", "aac", "flac", "wav", "pcm"]
PADDING_S = 0.1
"""What a lossy encoder may add: its start-up delay and the padding of its last frame."""


@pytest.fixture
async def speech_url():
    runner = web.AppRunner(build_app(ScriptedModels(transcript="", stt_ms=0, tts_ms=0)))
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    try:
        yield f"http://127.0.0.1:{runner.addresses[0][1]}/v1"
    finally:
        await runner.cleanup()


def decode(data: bytes) -> tuple[np.ndarray, int]:
    """The first channel of a file as float samples, and the rate it decodes at."""
    with av.open(io.BytesIO(data), mode="r") as container:
        frames = [f.to_ndarray().astype(np.float64) for f in container.decode(audio=0)]
        rate = container.streams.audio[0].codec_context.sample_rate
    scale = 32768.0 if frames and np.abs(frames[0]).max() > 2 else 1.0  # s16 or float
    return np.concatenate([f[0] for f in frames]) / scale, rate


def peak_hz(samples: np.ndarray, rate: int) -> float:
    spectrum = np.abs(np.fft.rfft(samples * np.hanning(samples.size)))
    return float(np.fft.rfftfreq(samples.size, 1 / rate)[int(np.argmax(spectrum))])


@pytest.mark.parametrize(
    ("fmt", "content_type", "rate"),
    [
        ("mp3", "audio/mpeg", OUT_RATE),
        ("opus", "audio/opus", 48_000),  # Opus always decodes at 48 kHz
        ("aac", "audio/aac", OUT_RATE),
        ("flac", "audio/flac", OUT_RATE),
        ("wav", "audio/wav", OUT_RATE),
    ],
)
async def test_each_of_openais_formats_decodes_back_to_the_synthesized_audio(
    speech_url: str, fmt: Format, content_type: str, rate: int
):
    client = openai.AsyncOpenAI(base_url=speech_url, api_key="local")
    reply = await client.audio.speech.create(
        model="gpt-4o-mini-tts", voice="ash", input=SAID, response_format=fmt
    )
    assert reply.response.headers["content-type"] == content_type
    samples, decoded_rate = decode(reply.content)
    assert decoded_rate == rate
    seconds = samples.size / decoded_rate
    assert SECONDS - 0.005 <= seconds < SECONDS + PADDING_S, seconds
    assert peak_hz(samples, decoded_rate) == pytest.approx(220, abs=2)
    middle = samples[samples.size // 4 : -samples.size // 4]
    rms = float(np.sqrt(np.mean(middle**2)))
    assert rms == pytest.approx(0.3 / np.sqrt(2), rel=0.05)  # the tone's own level
    await client.close()


async def test_pcm_is_the_samples_themselves_and_mp3_is_the_default(speech_url: str):
    client = openai.AsyncOpenAI(base_url=speech_url, api_key="local")
    pcm = await client.audio.speech.create(
        model="tts-1", voice="alloy", input=SAID, response_format="pcm"
    )
    samples = np.frombuffer(pcm.content, dtype="<i2")
    assert samples.size == round(SECONDS * OUT_RATE)
    assert peak_hz(samples.astype(float), OUT_RATE) == pytest.approx(220, abs=2)
    # A request that names no format gets OpenAI's default, as LiveKit's openai.TTS() asks.
    async with client.with_streaming_response.audio.speech.create(
        model="tts-1", voice="alloy", input=SAID
    ) as default:
        assert default.headers["content-type"] == "audio/mpeg"
        assert decode(await default.read())[1] == OUT_RATE
    with pytest.raises(openai.BadRequestError, match="mp3, opus, aac, flac, wav or pcm"):
        await client.audio.speech.create(
            model="tts-1",
            voice="alloy",
            input=SAID,
            response_format="ogg",  # type: ignore[arg-type]
        )
    await client.close()
