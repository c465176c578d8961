"""Scenarios in a real replay: the agent hears the seeker through noise or a phone line, the
caller hears the reply through the line, and every turn records what it drew and measured."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from scripted_agent import builtin_run, scripted

from voicebench.dialogues import BUILTIN_DIALOGUES, load_dialogues
from voicebench.errors import InputError, RunError
from voicebench.fixtures import read_wav
from voicebench.replay import replay
from voicebench.runlog import read_header
from voicebench.scenarios import draw_turn, parse_scenario

pytestmark = pytest.mark.slow

SCENARIOS = ["noise:kind=white,snr_db=10", "phone-line:loss_pct=3"]
SEED = 3  # draws both scenarios on the dialogue used


def high_band_fraction(pcm: np.ndarray, rate: int = 16_000) -> float:
    power = np.abs(np.fft.rfft(pcm.astype(float))) ** 2
    freqs = np.fft.rfftfreq(pcm.size, 1 / rate)
    return float(power[freqs > 4_000].sum() / power.sum())


async def test_each_turn_plays_its_drawn_scenario_and_records_it(tmp_path: Path):
    dialogues = load_dialogues(BUILTIN_DIALOGUES)
    dialogue = next(d for d in dialogues if len(d.seeker_turn_indices) >= 3)
    out = tmp_path / "run"
    kwargs = builtin_run([dialogue], out)
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


async def test_a_scenario_not_yet_available_is_refused_before_anything_runs(tmp_path: Path):
    with pytest.raises(InputError, match=r"--scenario barge-in: not available yet"):
        await replay(
            scripted(),
            scenarios=["barge-in"],
            **builtin_run(load_dialogues(BUILTIN_DIALOGUES)[:1], tmp_path / "run"),
        )
    assert not (tmp_path / "run").exists()
