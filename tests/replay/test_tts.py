"""What text goes to TTS first: a whole sentence, or the reply's first clause."""

from __future__ import annotations

from voicebench.replay.tts import FirstClauseAggregator


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


async def test_a_short_opening_clause_is_not_split_off():
    agg = FirstClauseAggregator()
    assert await chunks(agg, ["Oh, ", "I ", "see. ", "Go ", "on."]) == ["Oh, I see.", "Go on."]
