"""Local Piper TTS from the packaged voice, optionally speaking the reply's first clause early.

pipecat sends text to TTS a sentence at a time. With ``[tts] first_chunk = "clause"`` the
first piece of each reply goes out at the first comma, semicolon or colon once it holds at
least ``MIN_CLAUSE_WORDS`` words; the rest follows sentence by sentence. Piper phonemizes a
whole chunk before it yields audio, so a shorter first chunk means earlier first audio.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

from pipecat.services.piper.tts import PiperTTSService
from pipecat.utils.text.base_text_aggregator import Aggregation, TextType
from pipecat.utils.text.simple_text_aggregator import (
    SimpleTextAggregator,
    _LookaheadState,
)

from voicebench.agentspec import TTSSpec
from voicebench.fixtures.synth import packaged_voice_path

CLAUSE_PUNCTUATION = ",;:"
MIN_CLAUSE_WORDS = 4


class FirstClauseAggregator(SimpleTextAggregator):
    """Sentence aggregation, except that a reply's first chunk may end at a clause boundary."""

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self._first_sent = False

    async def aggregate(self, text: str) -> AsyncIterator[Aggregation]:
        for char in text:
            self._text += char
            if (
                not self._first_sent
                and char in CLAUSE_PUNCTUATION
                and len(self._text.split()) >= MIN_CLAUSE_WORDS
            ):
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


def piper_tts(spec: TTSSpec) -> PiperTTSService:
    """pipecat's in-process Piper service on a packaged voice (never downloads)."""
    voice_file = packaged_voice_path(spec.voice)
    tts = PiperTTSService(
        settings=PiperTTSService.Settings(voice=voice_file.stem),
        download_dir=Path(voice_file).parent,
    )
    if spec.first_chunk == "clause":
        # pipecat takes no aggregator argument; its own is replaced before the pipeline starts.
        tts._text_aggregator = FirstClauseAggregator(language=tts._text_aggregator.language)
    return tts
