"""What text goes to TTS first (a whole sentence, or the reply's first clause), and the silent
lead-in cut from a reply's first audio."""

from __future__ import annotations

import numpy as np
from pipecat.frames.frames import TTSAudioRawFrame

from voicebench.fixtures.audio import first_speech_sample
from voicebench.pipeline.tts import (
    LEAD_KEEP_MS,
    LEAD_MAX_MS,
    FirstClauseAggregator,
    LocalPiperTTSService,
)


async def chunks(aggregator, tokens: list[str]) -> list[str]:
    out = []
    for token in tokens:
        async for aggregation in aggregator.aggregate(token):
            out.append(aggregation.text)
    rest = await aggregator.flush()
    if rest is not None and rest.text:
        out.append(rest.text)
    return out


TOKENS = [
    "I'm ",
    "so ",
    "sorry ",
    "you ",
    "lost ",
    "your ",
    "job, ",
    "that ",
    "is ",
    "a ",
    "lot. ",
    "Have, ",
    "you ",
    "told ",
    "anyone ",
    "yet?",
]


async def test_first_clause_goes_out_at_the_comma_then_sentences_follow():
    agg = FirstClauseAggregator()
    assert await chunks(agg, TOKENS) == [
        "I'm so sorry you lost your job,",
        "that is a lot.",
        "Have, you told anyone yet?",
    ]
    # The next reply starts over with its own first clause.
    assert (await chunks(agg, ["Oh, ", "no. ", "That ", "is ", "hard, ", "truly."]))[0] == "Oh, no."


async def test_later_clauses_go_out_at_their_commas_when_asked():
    """A short first sentence, then a long one: its clauses go to TTS one by one, so the next
    piece is made before the first has played out."""
    words = "I'm so sorry. It's completely normal, especially when you are this tired, to feel it."
    tokens = [w + " " for w in words.split()]
    later = FirstClauseAggregator(first=True, later=True)
    assert await chunks(later, tokens) == [
        "I'm so sorry.",
        "It's completely normal,",
        "especially when you are this tired,",
        "to feel it.",
    ]
    # without it, the rest goes a sentence at a time, as before
    assert (await chunks(FirstClauseAggregator(), tokens))[1] == (
        "It's completely normal, especially when you are this tired, to feel it."
    )


async def test_a_short_opening_clause_is_not_split_off():
    agg = FirstClauseAggregator()
    assert await chunks(agg, ["Oh, ", "I ", "see. ", "Go ", "on."]) == ["Oh, I see.", "Go on."]


def _audio(*parts: tuple[int, int]) -> TTSAudioRawFrame:
    """16 kHz PCM from (ms, amplitude) parts: 0 is silence, anything else a square wave."""
    pcm = np.concatenate(
        [np.where(np.arange(16 * ms) % 20 < 10, amp, -amp).astype(np.int16) for ms, amp in parts]
    )
    return TTSAudioRawFrame(audio=pcm.tobytes(), sample_rate=16_000, num_channels=1)


def _trimmer() -> LocalPiperTTSService:
    tts = LocalPiperTTSService.__new__(LocalPiperTTSService)
    tts._lead_left = 16 * LEAD_MAX_MS  # a reply has just started
    return tts


def test_a_replys_lead_in_is_cut_to_ten_ms_before_the_first_word():
    tts, frame = _trimmer(), _audio((45, 0), (100, 8000))
    assert tts._trim(frame) is True
    pcm = np.frombuffer(frame.audio, dtype=np.int16)
    assert frame.num_frames == pcm.size == 16 * (LEAD_KEEP_MS + 100)
    assert first_speech_sample(pcm) == 16 * LEAD_KEEP_MS
    # Done for this reply: the next frame's pauses are the speech's own.
    later = _audio((45, 0), (20, 8000))
    assert tts._trim(later) is True and later.num_frames == 16 * 65


def test_silent_frames_before_the_first_word_are_dropped_within_the_limit():
    tts = _trimmer()
    assert tts._trim(_audio((30, 0))) is False
    frame = _audio((30, 0), (20, 8000))
    assert tts._trim(frame) is True and frame.num_frames == 16 * (LEAD_KEEP_MS + 20)
    # A reply that stays silent for longer than LEAD_MAX_MS keeps the rest of its silence.
    tts = _trimmer()
    frame = _audio((LEAD_MAX_MS + 50, 0), (20, 8000))
    assert tts._trim(frame) is True and frame.num_frames == 16 * (50 + 20)
