"""A reply that stalled, in the report: the budget table's stalled share and longest stall,
and under the reply's player where the caller heard nothing."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from synthetic_runs import make_judging, make_run, verdict
from test_call_moments import _replies_from

from voicebench.dialogues import BUILTIN_DIALOGUES, load_dialogues
from voicebench.fixtures.audio import write_wav
from voicebench.reporting import build_report
from voicebench.runlog import read_turns
from voicebench.timing.stalls import Playback, Stall

STALLED = Playback(audio_ms=2000.0, stalls=(Stall(at_ms=600, audio_ms=600, ms=300.0),))


def test_a_stalled_reply_shows_where_it_stalled_and_its_agent_how_much(tmp_path: Path):
    items = load_dialogues(BUILTIN_DIALOGUES)[:2]
    run = make_run(tmp_path, "fast", items, 900, playbacks=[STALLED, Playback(audio_ms=2000.0)])
    turns = []
    for t in read_turns(run):  # each reply with its audio, as a replay writes it
        write_wav(run / f"audio/{t.dialogue_id}.wav", np.full(32_000, 900, np.int16), 16_000)
        turns.append(t.model_copy(update={"audio_path": f"audio/{t.dialogue_id}.wav"}))
    (run / "turns.jsonl").write_text("".join(t.model_dump_json() + "\n" for t in turns))
    verdicts = [verdict(d.id, "fast", "human/reference", "A") for d in items]
    judged = make_judging(
        tmp_path / "judged", [run], items, ("fast", "human/reference"), verdicts, audio=True
    )
    _replies_from(judged, run)
    built = build_report([judged], tmp_path / "report")

    stalls = {
        item.item_id: r.stalls
        for item in built.report.replies
        for r in item.replies
        if r.contestant == "fast"
    }
    assert stalls == {items[0].id: STALLED.stalls, items[1].id: ()}
    (agent,) = built.report.agents
    assert agent.stalls is not None
    assert (agent.stalls.stalled, agent.stalls.replies, agent.stalls.longest_ms) == (1, 2, 300)
    page = (built.out_dir / "index.html").read_text()
    assert page.count("The caller heard nothing for 300 ms at 0.60 s of this audio") == 1
    assert "6.5%; 1 of 2 replies, longest 300 ms" in page  # 300 of 2,300 ms, and 0
    markdown = (built.out_dir / "report.md").read_text()
    assert "stalled 300 ms at 0.60 s" in markdown
