"""A converse killed with SIGKILL at seeded moments and started again with the same command
ends with every call whole: none lost or doubled, each with its turns timed and their audio,
its call audio and its saved item, and a killed call's stray turns gone."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from processes import KILL_AGENT, kill_seeds, kill_until_done, voicebench

from voicebench.calling import read_calls
from voicebench.dialogues import load_dialogues
from voicebench.runlog import read_turns
from voicebench.testing.scripted_server import ScriptedLLMServer

pytestmark = pytest.mark.slow

SEEDS = kill_seeds((21, 22))
ITEMS = ("short-dog", "short-move", "short-friend")


@pytest.mark.parametrize("seed", SEEDS)
def test_a_converse_killed_mid_call_resumes_whole_calls(tmp_path: Path, short_set, seed: int):
    agent = tmp_path / "kill-test.toml"
    agent.write_text(KILL_AGENT)
    out = tmp_path / "calls"
    with ScriptedLLMServer(ttft_ms=20, reply="Maybe. I don't know yet.") as seeker:
        spec = tmp_path / "seeker.toml"
        spec.write_text(
            'name = "s"\n[llm]\nprovider = "openai-compatible"\nmodel = "scripted-llm"\n'
            f'base_url = "{seeker.base_url}"\n'
        )
        ids = [a for item in ITEMS for a in ("--id", item)]
        log = kill_until_done(
            voicebench(
                *("converse", "--agent", str(agent), *ids, "--turns", "2"),
                *("--dialogues", str(short_set.dialogues_path), "--seeker", str(spec)),
                *("--out", str(out)),
            ),
            seed,
            window_s=(6, 30),
            max_kills=2,
            log_dir=tmp_path,
            done=lambda: len(read_calls(out)) if (out / "calls.jsonl").exists() else 0,
        )
    assert len(log.kills_at_s) == 2 and log.left_running == []
    calls = read_calls(out)
    assert [c.call_id for c in calls] == list(ITEMS)  # each once, in order
    records = read_turns(out)
    # Exactly each call's two turns: none doubled by a resumed call, none left from a killed one.
    assert sorted((r.dialogue_id, r.turn_index) for r in records) == sorted(
        (c.call_id, e.turn_index) for c in calls for e in c.exchanges
    )
    assert all(len(c.exchanges) == 2 and c.ended_by == "turns" for c in calls)
    for r in records:
        assert r.error is None and r.timing is not None and (out / r.audio_path).is_file()
    for c in calls:
        assert (out / c.audio_path).is_file()
    saved = load_dialogues(out / "items.jsonl")
    assert sorted(d.id for d in saved) == sorted(f"call-{i}" for i in ITEMS)
    # Every line a saved item speaks is in its fixtures, so it replays.
    manifest = json.loads((out / "fixtures" / "manifest.json").read_text())
    texts = {e["text"] for e in manifest["entries"]}
    assert all(t.text in texts for d in saved for t in d.turns if t.role.value == "seeker")
