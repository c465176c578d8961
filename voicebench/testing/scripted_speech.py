"""Scripted speech endpoints with known delays: the OpenAI-compatible transcription and speech
API of ``voicebench.pipeline.speech_api``, answering with a fixed transcript ``stt_ms`` after a
request arrives and with a tone (``WORD_S`` a word) whose first audio leaves ``tts_ms`` after
one does. A measuring instrument for tests, not a model."""

from __future__ import annotations

import argparse
import asyncio
import time
from collections.abc import AsyncIterator

import numpy as np

from voicebench.pipeline.speech_api import OUT_RATE, SpeechServer, serve

WORD_S = 0.12
CHUNK_S = 0.1


class ScriptedModels:
    def __init__(self, *, transcript: str, stt_ms: float, tts_ms: float) -> None:
        self.transcript, self.stt_ms, self.tts_ms = transcript, stt_ms, tts_ms

    async def transcribe(self, pcm: np.ndarray) -> str:
        await asyncio.sleep(self.stt_ms / 1000)
        return self.transcript

    async def speak(self, text: str) -> AsyncIterator[np.ndarray]:
        asked = time.perf_counter()
        words = max(1, len(text.split()))
        t = np.arange(int(words * WORD_S * OUT_RATE)) / OUT_RATE
        tone = (0.3 * 32767 * np.sin(2 * np.pi * 220 * t)).astype(np.int16)
        await asyncio.sleep(max(0.0, asked + self.tts_ms / 1000 - time.perf_counter()))
        step = int(CHUNK_S * OUT_RATE)
        for i in range(0, tone.size, step):
            yield tone[i : i + step]


class ScriptedSpeechServer(SpeechServer):
    """``with ScriptedSpeechServer(stt_ms=100, tts_ms=150) as s: s.base_url``."""

    what = "scripted speech server"
    module = "voicebench.testing.scripted_speech"

    def __init__(
        self,
        *,
        transcript: str = "I have been feeling low lately.",
        stt_ms: float = 100,
        tts_ms: float = 150,
    ) -> None:
        super().__init__(
            args=("--transcript", transcript, "--stt-ms", str(stt_ms), "--tts-ms", str(tts_ms))
        )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m voicebench.testing.scripted_speech")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--stt-model", default=None, help="(ignored)")
    parser.add_argument("--transcript", default="I have been feeling low lately.")
    parser.add_argument("--stt-ms", type=float, default=100.0)
    parser.add_argument("--tts-ms", type=float, default=150.0)
    args = parser.parse_args(argv)
    models = ScriptedModels(transcript=args.transcript, stt_ms=args.stt_ms, tts_ms=args.tts_ms)
    asyncio.run(serve(models, port=args.port))


if __name__ == "__main__":
    main()
