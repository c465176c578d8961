"""OpenAI-compatible speech endpoints on 127.0.0.1: faster-whisper behind
``POST /v1/audio/transcriptions`` and Piper behind ``POST /v1/audio/speech``, so that an agent
built on any OpenAI client (a LiveKit agent's ``openai.STT`` and ``openai.TTS``, pipecat's, the
SDK's own) runs on the packaged models with no key and no network.

- ``/v1/audio/transcriptions``: a multipart form with ``file`` (WAV, FLAC or Ogg; any rate, the
  first channel is heard), ``model`` (ignored: the server's model answers), and
  ``response_format`` ``json`` (default, ``{"text": ...}``) or ``text``.
- ``/v1/audio/speech``: JSON with ``input`` and ``response_format``, any of OpenAI's: ``mp3``
  (the default, as OpenAI's), ``opus``, ``aac``, ``flac``, ``wav`` or ``pcm`` (16-bit mono at
  24 kHz, as OpenAI sends it), each with OpenAI's ``Content-Type``
  (``voicebench.pipeline.speech_formats``); ``model``, ``voice`` and any other field are ignored
  (the server's voice speaks). The audio is streamed a sentence at a time, each encoded as soon
  as Piper has made it.

Both run their model in a worker thread, one request at a time per model. ``voicebench
serve-speech`` runs it; ``SpeechServer`` runs it as a helper process.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import os
import signal
from collections.abc import AsyncIterator
from typing import Protocol

import numpy as np
from aiohttp import web

from voicebench.errors import RunError
from voicebench.llm.helper import HOST, HelperServer, free_port
from voicebench.pipeline.speech_formats import (
    DEFAULT_FORMAT,
    FORMATS,
    StreamEncoder,
    content_type,
)

OUT_RATE = 24_000
"""The rate of the speech endpoint's PCM (OpenAI's)."""
IN_RATE = 16_000
"""The rate Whisper hears."""
START_S = 90.0
"""How long the models are given to load."""


class SpeechModels(Protocol):
    """What answers the two endpoints."""

    async def transcribe(self, pcm: np.ndarray) -> str:
        """The text of 16 kHz 16-bit ``pcm``."""
        ...

    def speak(self, text: str) -> AsyncIterator[np.ndarray]:
        """``text`` as 16-bit PCM at ``OUT_RATE``, a piece at a time."""
        ...


class LocalModels:
    """faster-whisper (a packaged model, or a CTranslate2 folder) and a packaged Piper voice,
    loaded once."""

    def __init__(self, *, stt_model: str = "tiny.en", voice: str | None = None) -> None:
        from voicebench.agentspec import STTSpec
        from voicebench.fixtures.synth import DEFAULT_VOICE, PiperSpeaker
        from voicebench.pipeline.stt import load_whisper

        self._whisper = load_whisper(STTSpec(model=stt_model))
        self._piper = PiperSpeaker(voice or DEFAULT_VOICE)
        self._stt_lock = asyncio.Lock()
        self._tts_lock = asyncio.Lock()

    async def transcribe(self, pcm: np.ndarray) -> str:
        from voicebench.fixtures.audio import speech_bounds
        from voicebench.pipeline.stt import transcribe_pcm

        if speech_bounds(pcm) is None:
            return ""
        async with self._stt_lock:
            return await asyncio.to_thread(transcribe_pcm, self._whisper, pcm)

    async def speak(self, text: str) -> AsyncIterator[np.ndarray]:
        from voicebench.fixtures.audio import resample, to_int16

        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[np.ndarray | BaseException | None] = asyncio.Queue()

        def synthesize() -> None:
            try:
                for sentence in self._piper.stream(text):
                    loop.call_soon_threadsafe(queue.put_nowait, sentence)
            except BaseException as exc:  # handed to the request, which answers with it
                loop.call_soon_threadsafe(queue.put_nowait, exc)
            loop.call_soon_threadsafe(queue.put_nowait, None)

        async with self._tts_lock:
            worker = asyncio.ensure_future(asyncio.to_thread(synthesize))
            try:
                while (item := await queue.get()) is not None:
                    if isinstance(item, BaseException):
                        raise item
                    yield to_int16(resample(item, self._piper.sample_rate, OUT_RATE))
            finally:
                await worker


def read_audio(data: bytes) -> np.ndarray:
    """An uploaded file's first channel as 16 kHz 16-bit PCM; ValueError when it is not
    audio soundfile reads."""
    import soundfile

    from voicebench.fixtures.audio import resample, to_int16

    try:
        samples, rate = soundfile.read(io.BytesIO(data), dtype="float32", always_2d=True)
    except Exception as exc:
        raise ValueError(
            f"the file is not audio this server reads (WAV, FLAC, Ogg): {exc}"
        ) from None
    return to_int16(resample(samples[:, 0], int(rate), IN_RATE))


def _error(status: int, message: str, param: str | None = None) -> web.Response:
    body = {"error": {"message": message, "type": "invalid_request_error", "param": param}}
    return web.json_response(body, status=status)


def build_app(models: SpeechModels) -> web.Application:
    """The aiohttp application serving both endpoints."""

    async def health(_: web.Request) -> web.Response:
        return web.json_response({"status": "ok"})

    async def transcriptions(request: web.Request) -> web.Response:
        try:
            form = await request.post()
        except ValueError as exc:
            return _error(400, f"expected a multipart form: {exc}")
        upload = form.get("file")
        if not isinstance(upload, web.FileField):
            return _error(400, "the form has no file", "file")
        try:
            pcm = read_audio(upload.file.read())
        except ValueError as exc:
            return _error(400, str(exc), "file")
        text = await models.transcribe(pcm)
        if form.get("response_format", "json") == "text":
            return web.Response(text=text)
        return web.json_response({"text": text})

    async def speech(request: web.Request) -> web.StreamResponse:
        try:
            body = await request.json()
        except (ValueError, json.JSONDecodeError):
            return _error(400, "the body is not JSON")
        text = body.get("input") if isinstance(body, dict) else None
        if not isinstance(text, str) or not text.strip():
            return _error(400, "input must be non-empty text", "input")
        fmt = body.get("response_format", DEFAULT_FORMAT)
        if fmt not in FORMATS:
            return _error(
                400,
                f"response_format {fmt!r}: this server sends "
                f"{', '.join(FORMATS[:-1])} or {FORMATS[-1]}",
                "response_format",
            )
        encoder = StreamEncoder(fmt, OUT_RATE)
        response = web.StreamResponse(headers={"Content-Type": content_type(fmt)})
        await response.prepare(request)
        async for pcm in models.speak(text):
            if data := encoder.encode(pcm):
                await response.write(data)
        if data := encoder.finish():
            await response.write(data)
        await response.write_eof()
        return response

    app = web.Application(client_max_size=64 * 1024 * 1024)
    app.router.add_get("/health", health)
    app.router.add_post("/v1/audio/transcriptions", transcriptions)
    app.router.add_post("/v1/audio/speech", speech)
    return app


async def serve(models: SpeechModels, *, port: int, ready=None) -> None:
    """Serve on 127.0.0.1:``port`` until SIGTERM or SIGINT; ``ready(url)`` once listening."""
    runner = web.AppRunner(build_app(models), access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, HOST, port)
    await site.start()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    try:
        if ready is not None:
            ready(f"http://{HOST}:{runner.addresses[0][1]}/v1")
        await stop.wait()
    finally:
        await runner.cleanup()


class SpeechServer(HelperServer):
    """The speech endpoints in a helper process; ``with SpeechServer() as s: s.base_url``."""

    what = "speech server"

    def __init__(
        self,
        *,
        stt_model: str = "tiny.en",
        voice: str | None = None,
        args=(),
        port: int | None = None,
    ) -> None:
        """On ``port`` of 127.0.0.1: a free one unless given."""
        self.port = port or free_port()
        extra = ["--voice", voice] if voice else []
        super().__init__(
            self.python_module(
                self.module, "--port", str(self.port), "--stt-model", stt_model, *extra, *args
            ),
            health_url=f"http://{HOST}:{self.port}/health",
            start_timeout_s=START_S,
        )

    module = "voicebench.pipeline.speech_api"

    @property
    def base_url(self) -> str:
        return f"http://{HOST}:{self.port}/v1"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m voicebench.pipeline.speech_api",
        description="OpenAI-compatible speech endpoints on faster-whisper and Piper.",
    )
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--stt-model", default="tiny.en")
    parser.add_argument("--voice", default=None)
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")

    async def run() -> None:
        models = LocalModels(stt_model=args.stt_model, voice=args.voice)
        await serve(models, port=args.port, ready=lambda url: print(f"READY {url}", flush=True))

    try:
        asyncio.run(run())
    except OSError as exc:
        raise SystemExit(f"cannot serve on {HOST}:{args.port}: {exc}") from None
    except RunError as exc:
        raise SystemExit(str(exc)) from None


if __name__ == "__main__":
    main()
