"""What the overlap scenarios read off the agent's audible spans, on known spans; the pause put
into a known utterance; and which turns may barge in."""

from __future__ import annotations

import numpy as np
import pytest

from voicebench.agent.realtime import Audible
from voicebench.fixtures.audio import speech_bounds
from voicebench.scenarios import draw_dialogue, draw_turn, parse_scenario
from voicebench.scenarios.overlap import (
    backchannel_outcome,
    barge_in_outcome,
    insert_pause,
    pause_outcome,
    talk_at,
    talks,
)

MS = 1_000_000
# A reply from 1 s to 6 s with a 300 ms breath at 3 s, then an answer from 9 s to 10 s.
SPANS = [(1000 * MS, 3000 * MS), (3300 * MS, 6000 * MS), (9000 * MS, 10_000 * MS)]


def test_talks_join_breaths_and_split_at_half_a_second_of_silence():
    assert talks(SPANS) == [(1000 * MS, 6000 * MS), (9000 * MS, 10_000 * MS)]
    assert talk_at(SPANS, 3100 * MS) == (1000 * MS, 6000 * MS)  # in the breath: still talking
    assert talk_at(SPANS, 6400 * MS) == (1000 * MS, 6000 * MS)  # 0.4 s after: not yet over
    assert talk_at(SPANS, 6600 * MS) is None
    assert talk_at(SPANS, 500 * MS) is None


def test_a_barge_in_reads_the_stop_the_yield_and_the_talk_over():
    # The seeker speaks from 2.0 s to 4.0 s over a reply that stopped at 2.15 s.
    spans = [(1000 * MS, 2150 * MS), (5000 * MS, 7000 * MS)]
    inproc = barge_in_outcome(spans, [2100 * MS], 2000 * MS, 4000 * MS)
    assert inproc == {
        "agent_speaking": True,
        "at_ms": 1000.0,
        "stop_ms": 150.0,
        "yielded": True,
        "talk_over_s": 0.15,
    }
    # A black box yields when its talk stops within 2 s; in-process, only on an interruption.
    assert barge_in_outcome(spans, None, 2000 * MS, 4000 * MS)["yielded"] is True
    assert barge_in_outcome(spans, [], 2000 * MS, 4000 * MS)["yielded"] is False
    # An agent that talks on through the seeker: stop at its reply's end, 4 s later.
    on = barge_in_outcome(SPANS, None, 2000 * MS, 4000 * MS)
    assert on["stop_ms"] == 4000.0 and on["yielded"] is False
    assert on["talk_over_s"] == pytest.approx(1.7)  # 2-3 s and 3.3-4 s
    assert barge_in_outcome(SPANS, None, 7000 * MS, 8000 * MS) == {"agent_speaking": False}


def test_a_backchannel_reads_false_yields_and_the_seconds_lost():
    # The word at 2 s; the agent stops at 2.1 s and answers the word at 3.5 s.
    spans = [(1000 * MS, 2100 * MS), (3500 * MS, 4000 * MS)]
    out = backchannel_outcome(spans, [2050 * MS], 2000 * MS, 9000 * MS)
    assert out == {"agent_speaking": True, "at_ms": 1000.0, "false_yield": True, "lost_s": 1.4}
    # Never spoke again: lost until the turn ended.
    silent = backchannel_outcome([(1000 * MS, 2100 * MS)], [2050 * MS], 2000 * MS, 5000 * MS)
    assert silent["lost_s"] == 2.9
    # An agent that kept talking through the word.
    kept = backchannel_outcome(SPANS, [], 2000 * MS, 9000 * MS)
    assert kept == {"agent_speaking": True, "at_ms": 1000.0, "false_yield": False}
    # An interruption long after the word is not a yield to it.
    assert not backchannel_outcome(SPANS, [4500 * MS], 2000 * MS, 9000 * MS)["false_yield"]


def test_a_pause_reads_a_reply_before_the_true_end_of_speech():
    # The seeker speaks from 0.5 s to 5 s; the agent began at 3.3 s, in the pause.
    spans = [(3300 * MS, 3900 * MS), (6000 * MS, 8000 * MS)]
    assert pause_outcome(spans, 500 * MS, 5000 * MS) == {"premature": True, "early_ms": 1700.0}
    assert pause_outcome([(6000 * MS, 8000 * MS)], 500 * MS, 5000 * MS) == {"premature": False}


def test_a_pause_goes_into_the_gap_between_words_and_moves_the_end_of_speech():
    rate = 16_000
    word = (np.sin(np.arange(rate // 2) * 0.2) * 8000).astype(np.int16)  # 0.5 s of sound
    gap = np.zeros(rate // 10, np.int16)  # 100 ms between words
    lead = np.zeros(rate // 4, np.int16)
    pcm = np.concatenate([lead, word, gap, word, gap, word, lead])
    out, at = insert_pause(pcm, 800.0)
    assert out.size == pcm.size + int(0.8 * rate)
    first_gap = lead.size + word.size
    assert first_gap <= at <= first_gap + gap.size  # in the first gap between words
    before, after = speech_bounds(pcm), speech_bounds(out)
    assert before is not None and after is not None
    assert after[0] == before[0] and after[1] == before[1] + int(0.8 * rate)
    assert not out[at : at + int(0.8 * rate)].any()


def test_a_pause_goes_between_words_not_into_the_gap_between_sentences():
    rate = 16_000
    word = (np.sin(np.arange(rate // 4) * 0.2) * 8000).astype(np.int16)  # 0.25 s of sound
    # 40 ms of breath under the speech threshold; the 300 ms between sentences is quieter
    between_words = np.full(rate // 25, 100, np.int16)
    between_sentences = np.zeros(3 * rate // 10, np.int16)
    lead = np.zeros(rate // 4, np.int16)
    sentence = np.concatenate([word, *([between_words, word] * 4)])
    pcm = np.concatenate([lead, sentence, between_sentences, sentence, lead])
    out, at = insert_pause(pcm, 800.0)
    gap_start = lead.size + sentence.size
    assert not gap_start <= at <= gap_start + between_sentences.size
    starts = [lead.size, gap_start + between_sentences.size]  # each sentence's first word
    word_gaps = [
        s + word.size + k * (word.size + between_words.size) for s in starts for k in range(4)
    ]
    assert any(g <= at <= g + between_words.size for g in word_gaps)
    assert not out[at : at + int(0.8 * rate)].any()
    assert speech_bounds(out)[1] == speech_bounds(pcm)[1] + int(0.8 * rate)


def test_the_loudspeaker_marks_each_talk_onset_and_keeps_the_talk_under_way():
    rate = 16_000
    loud = np.full(320, 3000, np.int16)
    quiet = np.zeros(320, np.int16)
    heard = Audible()
    chunks = [loud, quiet, loud] + [quiet] * 30 + [loud]  # a 20 ms breath, then 0.6 s of silence
    onsets = [heard.add(i * 20 * MS, c, rate) for i, c in enumerate(chunks)]
    assert [i for i, o in enumerate(onsets) if o is not None] == [0, 33]
    assert heard.spans == [(0, 60 * MS), (660 * MS, 680 * MS)]
    assert heard.since(650 * MS) == ((660 * MS, 680 * MS),)
    assert heard.since(40 * MS) == tuple(heard.spans)  # the talk under way at 40 ms, whole


def test_a_barge_in_is_played_only_where_a_reply_is_there_to_talk_over():
    both = [parse_scenario("barge-in"), parse_scenario("backchannel")]
    turns = [1, 3, 5, 7]
    played = {"barge-in": 0, "backchannel": 0}
    for seed in range(40):
        raw = [draw_turn(both, seed, "item", k) for k in turns]
        names = [d.name for d in raw]  # type: ignore[union-attr]
        plan = list(draw_dialogue(both, seed, "item", turns).values())
        for i, (drawn, got) in enumerate(zip(raw, plan, strict=True)):
            first_barge = i == 0 and names[i] == "barge-in"
            word_cut = names[i] == "backchannel" and names[i + 1 : i + 2] == ["barge-in"]
            assert got == (None if first_barge or word_cut else drawn)
            if got is not None:
                played[got.name] += 1
    assert played["barge-in"] > 40 and played["backchannel"] > 30  # of 160 turns
