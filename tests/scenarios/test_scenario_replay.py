"""Scenarios in a real replay: the agent hears the seeker through noise or a phone line, the
caller hears the reply through the line, and every turn records what it drew and measured."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from scripted_agent import scripted

from voicebench.dialogues import BUILTIN_DIALOGUES, load_dialogues
from voicebench.errors import RunError
from voicebench.fixtures import (
    BUILTIN_FIXTURES,
    load_manifest,
    lookup_fixture,
    read_wav,
    synthesize_fixtures,
)
from voicebench.replaying import replay
from voicebench.runlog import read_header
from voicebench.scenarios import draw_turn, parse_scenario
from voicebench.scenarios.apply import backchannel_texts

pytestmark = pytest.mark.slow

SCENARIOS = ["noise:kind=white,snr_db=10", "phone-line:loss_pct=3"]
SEED = 3  # draws both scenarios on the dialogue used


def high_band_fraction(pcm: np.ndarray, rate: int = 16_000) -> float:
    power = np.abs(np.fft.rfft(pcm.astype(float))) ** 2
    freqs = np.fft.rfftfreq(pcm.size, 1 / rate)
    return float(power[freqs > 4_000].sum() / power.sum())


async def test_each_turn_plays_its_drawn_scenario_and_records_it(tmp_path: Path, short_set):
    dialogue = short_set.item("short-tired")  # three short spoken turns
    out = tmp_path / "run"
    kwargs = short_set.run([dialogue], out)
    records = await replay(scripted(), scenarios=SCENARIOS, seed=SEED, **kwargs)

    parsed = [parse_scenario(s) for s in SCENARIOS]
    assert read_header(out).scenarios == tuple(SCENARIOS) and read_header(out).seed == SEED
    for r in records:
        assert r.error is None, r.error
        assert r.scenario is not None
        drawn = draw_turn(parsed, SEED, dialogue.id, r.turn_index)
        assert drawn is not None
        assert (r.scenario.name, r.scenario.params) == (drawn.name, drawn.params)
        assert r.asr_wer is not None  # the agent still heard and transcribed the seeker
        reply = read_wav(out / r.audio_path, expect_rate=16_000)
        if r.scenario.name == "noise":
            assert r.scenario.snr_db is not None and abs(r.scenario.snr_db - 10.0) <= 0.5
            assert r.scenario.line_delay_ms is None
        else:
            assert r.scenario.uplink_loss_pct is not None
            assert r.scenario.downlink_loss_pct is not None
            assert r.scenario.line_delay_ms == 120.0
            # What is kept is what the caller hears: the reply through an 8 kHz line.
            assert high_band_fraction(reply) < 1e-3
    assert {r.scenario.name for r in records} == {"noise", "phone-line"}

    with pytest.raises(RunError, match="seed differs from the run being resumed"):
        await replay(scripted(), scenarios=SCENARIOS, seed=SEED + 1, **kwargs)


def test_backchannel_words_are_synthesized_once_and_kept_by_content_hash(tmp_path: Path):
    words = backchannel_texts([parse_scenario("backchannel:words=uh-huh/okay")])
    assert words == ["Uh huh.", "Okay."]
    d = load_dialogues(BUILTIN_DIALOGUES)[:1]
    first = synthesize_fixtures(d, tmp_path, extra=words)
    for text in words:
        entry = lookup_fixture(first.manifest, text)
        assert entry is not None and entry.speech_end_sample > entry.speech_start_sample
    again = synthesize_fixtures(d, tmp_path, extra=words)
    assert again.synthesized == 0 and again.reused == first.synthesized
    # The built-in fixtures already hold the default words: a run synthesizes nothing.
    defaults = backchannel_texts([parse_scenario("backchannel")])
    assert all(lookup_fixture(load_manifest(BUILTIN_FIXTURES), t) for t in defaults)
