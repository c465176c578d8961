"""Local Piper TTS from the packaged voice, optionally speaking the reply's first clause early.

pipecat sends text to TTS a sentence at a time. With ``[tts] first_chunk = "clause"`` the
first piece of each reply goes out at the first comma, semicolon or colon once it holds at
least ``MIN_CLAUSE_WORDS`` words; the rest follows sentence by sentence. Piper phonemizes a
whole chunk before it yields audio, so a shorter first chunk means earlier first audio.

Piper starts every sentence with 40-50 ms of near silence. With ``[tts] trim_lead`` (the
default) a reply's first audio is cut to ``LEAD_KEEP_MS`` before its first sample above the
speech threshold (at most ``LEAD_MAX_MS`` is cut); pauses between sentences are left alone.

A speculative reply that is withdrawn (``[turn] hold = "audio"``, voicebench/pipeline/hold.py)
would be dropped unheard after TTS anyway, so Piper stops speaking it: the verdict passes TTS
at once, and no chunk of that reply is synthesized after it. On two cores the work saved is
CPU the next answer needs.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator
from pathlib import Path
from typing import TypeVar

import numpy as np
from pipecat.frames.frames import Frame, LLMFullResponseStartFrame, TTSAudioRawFrame
from pipecat.processors.frame_processor import FrameDirection
from pipecat.services.piper.tts import PiperTTSService
from pipecat.services.tts_service import TTSService
from pipecat.utils.text.base_text_aggregator import Aggregation, TextType
from pipecat.utils.text.simple_text_aggregator import (
    SimpleTextAggregator,
    _LookaheadState,
)

from voicebench.agentspec import TTSSpec
from voicebench.fixtures.audio import first_speech_sample
from voicebench.fixtures.synth import packaged_voice_path
from voicebench.pipeline.hold import KEPT_VERDICTS, SPECULATION_KEY, SpeculationVerdictFrame
from voicebench.speechspec import endpoint_key

CLAUSE_PUNCTUATION = ",;:"
MIN_CLAUSE_WORDS = 4
LATER_CLAUSE_WORDS = 3
"""A later clause goes to TTS at its comma once it has this many words: the next piece of a
reply is ready sooner, before the piece playing ends (Piper makes a chunk whole before any of
its audio comes out, so a long sentence after a short one would leave a hole)."""
LEAD_KEEP_MS = 10
LEAD_MAX_MS = 200
OPENAI_RATE = 24_000
"""The rate of the PCM an OpenAI-compatible speech endpoint streams."""
READ_MS = 20
"""How much of an endpoint's streamed audio is passed on at a time (one frame)."""
TTSServiceT = TypeVar("TTSServiceT", bound=TTSService)


class FirstClauseAggregator(SimpleTextAggregator):
    """Sentence aggregation, except that a reply's first chunk may end at a clause boundary
    (``first``), and every later one too (``later``: at ``LATER_CLAUSE_WORDS``)."""

    def __init__(self, *, first: bool = True, later: bool = False, **kwargs) -> None:
        super().__init__(**kwargs)
        self._first_sent = False
        self._first, self._later = first, later

    def _clause_ends(self, char: str) -> bool:
        if char not in CLAUSE_PUNCTUATION:
            return False
        words = len(self._text.split())
        if not self._first_sent:
            return self._first and words >= MIN_CLAUSE_WORDS
        return self._later and words >= LATER_CLAUSE_WORDS

    async def aggregate(self, text: str) -> AsyncIterator[Aggregation]:
        for char in text:
            self._text += char
            if self._clause_ends(char):
                chunk, self._text = self._text.strip(" "), ""
                self._lookahead_state = _LookaheadState.IDLE
                self._first_sent = True
                yield Aggregation(text=chunk, type=TextType.SENTENCE)
                continue
            result = await self._check_sentence_with_lookahead(char)
            if result:
                self._first_sent = True
                yield result

    async def flush(self) -> Aggregation | None:
        self._first_sent = False
        return await super().flush()

    async def handle_interruption(self) -> None:
        self._first_sent = False
        await super().handle_interruption()

    async def reset(self) -> None:
        self._first_sent = False
        await super().reset()


class LocalPiperTTSService(PiperTTSService):
    """Piper that stops speaking a withdrawn speculative reply, and (``trim_lead``) cuts the
    silence before each reply's first word short."""

    def __init__(self, *, trim_lead: bool = True, **kwargs) -> None:
        super().__init__(**kwargs)
        self._trim_lead = trim_lead
        self._lead_left = 0
        """Samples of lead-in that may still be cut from the current reply (0: none); reset
        at each reply's start to ``LEAD_MAX_MS`` at the output sample rate."""
        self._speculation: int | None = None
        """The speculation number of the reply whose text is being spoken (None: not one)."""
        self._withdrawn: set[int] = set()
        self._silenced: set[str] = set()
        """Audio contexts cut short because their reply was withdrawn."""

    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        if isinstance(frame, SpeculationVerdictFrame) and not frame.confirmed:
            latest = frame.speculation
            self._withdrawn = {n for n in self._withdrawn if n > latest - KEPT_VERDICTS} | {latest}
        elif isinstance(frame, LLMFullResponseStartFrame):
            # Text frames are taken in order: this names the reply of the text that follows.
            self._speculation = frame.metadata.get(SPECULATION_KEY)
        await super().process_frame(frame, direction)

    def _speaking_withdrawn(self) -> bool:
        return self._speculation is not None and self._speculation in self._withdrawn

    async def run_tts(self, text: str, context_id: str) -> AsyncGenerator[Frame, None]:
        if self._speaking_withdrawn():
            self._silenced.add(context_id)
            return
        generator = super().run_tts(text, context_id)
        try:
            async for frame in generator:
                if self._speaking_withdrawn():
                    self._silenced.add(context_id)
                    break  # no further sentence of this chunk is synthesized
                yield frame
        finally:
            await generator.aclose()

    async def tts_process_generator(
        self, context_id: str, generator: AsyncGenerator[Frame | None, None]
    ) -> None:
        await super().tts_process_generator(context_id, generator)
        if context_id in self._silenced:
            # Piper yields its audio inline, so pipecat closes the reply's audio context when
            # the reply ends; it judges that from the last chunk having yielded audio. A chunk
            # not spoken yields none, and its context would then stay open until pipecat's
            # idle timeout, holding the next reply's audio back behind it.
            self._is_yielding_frames_synchronously = True

    async def _record_context_audio_outcome(self, context_id: str, received_audio: bool) -> None:
        # pipecat reports a context that ends without audio as an error (and enough in a row
        # as a service that will not speak again); one silenced on purpose is neither.
        if context_id in self._silenced:
            self._silenced.discard(context_id)
            if not received_audio:
                return
        await super()._record_context_audio_outcome(context_id, received_audio)

    async def push_frame(
        self, frame: Frame, direction: FrameDirection = FrameDirection.DOWNSTREAM
    ) -> None:
        if isinstance(frame, LLMFullResponseStartFrame) and self._trim_lead:
            self._lead_left = self.sample_rate * LEAD_MAX_MS // 1000
        elif self._lead_left and isinstance(frame, TTSAudioRawFrame) and not self._trim(frame):
            return  # all lead-in: nothing to play yet
        await super().push_frame(frame, direction)

    def _trim(self, frame: TTSAudioRawFrame) -> bool:
        """Cut ``frame``'s lead-in within what is left to cut; False when all of it is cut."""
        pcm = np.frombuffer(frame.audio, dtype=np.int16)
        speech = first_speech_sample(pcm)
        keep = frame.sample_rate * LEAD_KEEP_MS // 1000
        cut = min(pcm.size if speech is None else max(0, speech - keep), self._lead_left)
        whole = cut == pcm.size
        self._lead_left = self._lead_left - cut if whole else 0
        if whole:
            return False
        if cut:
            frame.audio = pcm[cut:].tobytes()
            frame.num_frames = pcm.size - cut
        return True


def tts_service(spec: TTSSpec) -> TTSService:
    """The spec's TTS as a pipecat service: Piper here (``piper_tts``), or pipecat's OpenAI
    service on ``spec.url``, its 24 kHz PCM played as it streams in."""
    if spec.provider == "piper":
        return piper_tts(spec)
    from pipecat.services.openai.tts import OpenAITTSService

    class StreamingOpenAITTSService(OpenAITTSService):
        """pipecat's OpenAI speech service, each 20 ms of audio passed on as it arrives.
        pipecat's own waits for half a second of it before passing any on: that adds up to
        half a second to the first audio of an endpoint streaming at real time, and turns a
        short hold into a longer stall that starts earlier."""

        @property
        def chunk_size(self) -> int:
            return self.sample_rate * READ_MS // 1000 * 2  # 16-bit samples

    tts = StreamingOpenAITTSService(
        api_key=endpoint_key(spec.api_key_env),
        base_url=spec.url,
        sample_rate=OPENAI_RATE,
        settings=OpenAITTSService.Settings(model=spec.model, voice=spec.voice),
    )
    return _with_aggregator(tts, spec)


def piper_tts(spec: TTSSpec) -> LocalPiperTTSService:
    """pipecat's in-process Piper service on a packaged voice (never downloads)."""
    voice_file = packaged_voice_path(spec.voice)
    tts = LocalPiperTTSService(
        trim_lead=spec.trim_lead,
        settings=PiperTTSService.Settings(voice=voice_file.stem),
        download_dir=Path(voice_file).parent,
    )
    return _with_aggregator(tts, spec)


def _with_aggregator(tts: TTSServiceT, spec: TTSSpec) -> TTSServiceT:
    first, later = spec.first_chunk == "clause", spec.later_chunks == "clause"
    if first or later:
        # pipecat takes no aggregator argument; its own is replaced before the pipeline starts.
        tts._text_aggregator = FirstClauseAggregator(
            first=first, later=later, language=tts._text_aggregator.language
        )
    return tts
