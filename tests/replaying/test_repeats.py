"""A repeated run (``--repeat``) with a test agent in place of the pipeline: every item played
in each pass, each turn marked with its pass and its reply kept apart, each pass drawing its
scenarios with its own seed (the first with the run's), a killed run resumed pass by pass, and
the passes side by side in the run's figures and its report."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from voicebench.agent.interface import HeardTurn
from voicebench.agentspec import AgentSpec, LLMSpec
from voicebench.dialogues import BUILTIN_DIALOGUES, load_dialogues
from voicebench.errors import InputError, RunError
from voicebench.fixtures import BUILTIN_FIXTURES
from voicebench.metrics import spread
from voicebench.replaying import replay
from voicebench.reporting import build_report
from voicebench.runlog import read_header, read_turns
from voicebench.timing import EventKind, TurnEvent

MS = 1_000_000


class CountingAgent:
    """Answers each turn 10 ms later than the one before: passes differ, and a test knows by
    how much."""

    turns = 0

    def __init__(self, _spec: AgentSpec) -> None:
        pass

    async def __aenter__(self):
        return self

    async def __aexit__(self, *exc):
        return None

    async def speak(self, history, pcm, speech_end_sample, *, timeout_s, cue=None):
        CountingAgent.turns += 1
        out = 600 + 10 * CountingAgent.turns
        events = tuple(
            TurnEvent(kind, ms * MS, text)
            for kind, ms, text in (
                (EventKind.VAD_STOP, 200, ""),
                (EventKind.TRANSCRIPT, 300, "hello there"),
                (EventKind.LLM_REQUEST, 301, ""),
                (EventKind.LLM_SENT, 302, ""),
                (EventKind.LLM_TOKEN, 400, "I hear you."),
                (EventKind.TTS_REQUEST, 401, ""),
                (EventKind.LLM_END, 450, ""),
                (EventKind.TTS_AUDIO, out - 20, ""),
                (EventKind.AUDIO_OUT, out, ""),
                (EventKind.BOT_STOPPED, out + 1000, ""),
            )
        )
        return HeardTurn(0, events, np.full(1600, 1000, dtype=np.int16), False)


SPEC = AgentSpec(
    name="counting",
    family="test",
    llm=LLMSpec(provider="openai-compatible", model="m", base_url="http://127.0.0.1:9/v1"),
)
ITEMS = load_dialogues(BUILTIN_DIALOGUES)[:2]


def _replay(out: Path, **kwargs):
    return replay(
        SPEC,
        spec_path=Path("counting.toml"),
        dialogues=ITEMS,
        dialogues_path=BUILTIN_DIALOGUES,
        fixtures_dir=BUILTIN_FIXTURES,
        out_dir=out,
        agent_factory=CountingAgent,
        **kwargs,
    )


async def test_every_item_is_played_in_each_pass_and_resumed_pass_by_pass(tmp_path: Path):
    CountingAgent.turns = 0
    out = tmp_path / "run"
    per_pass = sum(len(d.seeker_turn_indices) for d in ITEMS)
    records = await _replay(out, repeats=3, scenarios=["noise"], seed=7)
    assert len(records) == 3 * per_pass
    assert [r.repeat for r in records] == [0] * per_pass + [1] * per_pass + [2] * per_pass
    assert read_header(out).repeats == 3 and read_turns(out) == records
    # each pass's reply audio kept apart
    paths = [r.audio_path for r in records]
    assert len(set(paths)) == len(paths) and all((out / p).is_file() for p in paths)
    assert paths[per_pass] == f"audio/{ITEMS[0].id}__t{ITEMS[0].seeker_turn_indices[0]:02d}__r1.wav"
    # the same turn draws a different noise in each pass; the first pass draws as a run of one
    first = [(r.dialogue_id, r.turn_index, r.scenario.params) for r in records[:per_pass]]
    again = [
        (r.dialogue_id, r.turn_index, r.scenario.params) for r in records[per_pass:][:per_pass]
    ]
    assert first != again and [x[:2] for x in first] == [x[:2] for x in again]
    once = await _replay(tmp_path / "once", scenarios=["noise"], seed=7)
    assert [r.scenario.params for r in once] == [r.scenario.params for r in records[:per_pass]]

    # a run killed in its second pass: the kept turns are read back, the rest played
    lines = (out / "turns.jsonl").read_text().splitlines(keepends=True)
    (out / "turns.jsonl").write_text("".join(lines[: per_pass + 1]))
    played = CountingAgent.turns
    resumed = await _replay(out, repeats=3, scenarios=["noise"], seed=7)
    assert CountingAgent.turns - played == 2 * per_pass - 1
    assert [(r.repeat, r.dialogue_id, r.turn_index) for r in resumed] == [
        (r.repeat, r.dialogue_id, r.turn_index) for r in records
    ]
    # a different number of passes is a different run
    with pytest.raises(RunError, match="repeats differs"):
        await _replay(out, repeats=2, scenarios=["noise"], seed=7)
    with pytest.raises(InputError, match="at least 1"):
        await _replay(tmp_path / "none", repeats=0)


async def test_the_passes_side_by_side_in_the_figures_and_the_report(tmp_path: Path):
    CountingAgent.turns = 0
    out = tmp_path / "run"
    records = await _replay(out, repeats=2)
    per_pass = len(records) // 2
    report = build_report([out], tmp_path / "report")
    (latency,) = report.report.agents
    first, second = latency.passes
    assert (first.repeat, second.repeat) == (0, 1) and first.turns == second.turns == per_pass
    # every turn of the second pass is per_pass x 10 ms later than its twin in the first
    assert second.ttfa_p50_ms - first.ttfa_p50_ms == pytest.approx(10.0 * per_pass)
    assert spread(latency.passes)["ttfa_p50_ms"] == pytest.approx(10.0 * per_pass)
    assert latency.ttfa.n == 2 * per_pass and latency.ttfa.clusters == len(ITEMS)
    page = (tmp_path / "report" / "index.html").read_text()
    assert "Repeats: each pass over the items" in page
